// --plot on sweep, waves, roofline and compare (cli/plot.hpp): each command at small sizes writes
// the picture, its data (PATH.dat) and its gnuplot script (PATH.gp); the tests read the data blocks
// and the SVG. Bad --plot requests exit 2 before any simulation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_harness.hpp"

namespace fs = std::filesystem;
using gtsim::test::gtsim_cli;
using gtsim::test::slurp;

namespace {

// A fresh folder per test, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("gtsim_plots_" + std::to_string(::getpid()) + "_" + tag)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// The data file's blocks (separated by two blank lines, gnuplot's `index`), each a list of rows of
// whitespace-separated words ("quoted words" kept whole), comment lines left out.
using Rows = std::vector<std::vector<std::string>>;
std::vector<Rows> data_blocks(const std::string& path) {
  std::vector<Rows> blocks(1);
  std::istringstream in(slurp(path));
  std::string line;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2) blocks.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] == '#') continue;
    std::vector<std::string> words;
    std::regex word(R"("[^"]*"|\S+)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), word); it != std::sregex_iterator(); ++it)
      words.push_back(it->str());
    blocks.back().push_back(words);
  }
  return blocks;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

void expect_svg(const std::string& path) {
  ASSERT_TRUE(fs::exists(path)) << path;
  std::string svg = slurp(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

int64_t pow2_divisor(int64_t n) { return n & -n; }

// Three ops that stay three kernels (the softmax stops elementwise fusion), small enough for the
// teaching GPU: the roofline and compare tests' workload.
std::string small_workload(const TempDir& d) {
  std::ofstream(d / "small_ops.yaml") << "name: small_ops\n"
                                         "params: {R: 64, C: 256}\n"
                                         "tensors:\n"
                                         "  x: {dtype: f32, shape: [R, C]}\n"
                                         "ops:\n"
                                         "  - {name: scale, op: elementwise, expr: \"x * 2\", out: s}\n"
                                         "  - {name: softmax, op: softmax, input: s, out: p}\n"
                                         "  - {name: shift, op: elementwise, expr: \"p + 1\", out: y}\n"
                                         "outputs: [y]\n";
  return d / "small_ops.yaml";
}

}  // namespace

TEST(Plots, SweepPlotHasOnePointPerSweptNColouredByItsLargestPowerOfTwo) {
  TempDir d("sweep");
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=24:40:2 --no-progress --plot-y time_us --csv " +
      (d / "s.csv") + " --plot " + (d / "sweep.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_svg(d / "sweep.svg");
  auto blocks = data_blocks(d / "sweep.dat");
  ASSERT_GE(blocks.size(), 2u);
  // Block 0: every point in sweep order (n = 24, 26, ..., 40: 9 points).
  ASSERT_EQ(blocks[0].size(), 9u);
  std::set<int64_t> classes;
  size_t in_classes = 0;
  for (size_t b = 1; b < blocks.size(); ++b) {
    in_classes += blocks[b].size();
    ASSERT_FALSE(blocks[b].empty());
    int64_t k = std::stoll(blocks[b][0][2]);
    classes.insert(k);
    for (const auto& row : blocks[b]) {
      EXPECT_EQ(std::stoll(row[2]), k) << "one class per block";
      EXPECT_EQ(pow2_divisor(std::stoll(row[0])), int64_t(1) << k) << "n = " << row[0];
    }
  }
  EXPECT_EQ(in_classes, 9u) << "every point in exactly one colour class";
  EXPECT_EQ(classes, (std::set<int64_t>{1, 2, 3, 5})) << "24=8x3, 26=2x13, 28=4x7, 32=2^5, 40=8x5";
  // The SVG draws one point per sweep point plus one key sample per class.
  EXPECT_EQ(count(slurp(d / "sweep.svg"), "<use xlink:href='#gpPt6'"), 9u + classes.size());
  // The y column is the CSV's time (--plot-y time_us).
  std::istringstream csv(slurp(d / "s.csv"));
  std::string header, line;
  std::getline(csv, header);
  for (size_t i = 0; std::getline(csv, line); ++i) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    EXPECT_DOUBLE_EQ(std::stod(blocks[0][i][1]), std::stod(cells[1 + 2])) << line;
  }
}

TEST(Plots, WavesPlotHasOneStepPerWaveCount) {
  TempDir d("waves");
  auto r =
      gtsim_cli("waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --tile 64x64 --range N=32:256:32 --plot " +
                (d / "waves.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_svg(d / "waves.svg");
  auto blocks = data_blocks(d / "waves.dat");
  ASSERT_GE(blocks.size(), 3u);
  ASSERT_EQ(blocks[0].size(), 8u) << "N = 32, 64, ..., 256";
  std::vector<int64_t> starts;
  std::set<int64_t> waves;
  int64_t last = 0;
  for (const auto& row : blocks[0]) {
    int64_t w = std::stoll(row[1]);
    EXPECT_GE(w, last) << "waves never fall as N grows";
    if (w != last) starts.push_back(std::stoll(row[0]));
    last = w;
    waves.insert(w);
  }
  EXPECT_EQ(waves, (std::set<int64_t>{1, 2, 3, 4})) << "2 more tiles, one more wave, every 64 of N";
  ASSERT_EQ(blocks[1].size(), waves.size()) << "one step per wave count";
  std::string svg = slurp(d / "waves.svg");
  for (size_t i = 0; i < blocks[1].size(); ++i) {
    EXPECT_EQ(std::stoll(blocks[1][i][0]), starts[i]);
    int64_t w = std::stoll(blocks[1][i][1]);
    EXPECT_NE(svg.find(std::to_string(w) + (w == 1 ? " wave<" : " waves<")), std::string::npos) << w;
  }
  ASSERT_EQ(blocks[2].size(), 1u) << "the --gemm shape";
  EXPECT_EQ(blocks[2][0][0], "128");
}

TEST(Plots, WavesRangeWithoutPlotPrintsTheStaircase) {
  auto r = gtsim_cli(
      "waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --tile 64x64 --no-suggestions "
      "--range N=32:96:32 --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["range"].size(), 3u);
  EXPECT_EQ(j["range"][2]["N"], 96);
  EXPECT_GT(j["range"][2]["time_us"].get<double>(), 0);
}

TEST(Plots, RooflinePlotHasAnAttainedAndADatasheetRoofPerDtypeAndEachKernel) {
  TempDir d("roofline");
  auto r = gtsim_cli("roofline --hw hw_configs/teach-tiny.yaml --workload " + small_workload(d) + " --plot " +
                     (d / "roofline.svg") + " --json " + (d / "r.json"));
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_svg(d / "roofline.svg");
  auto j = nlohmann::json::parse(slurp(d / "r.json"));
  auto blocks = data_blocks(d / "roofline.dat");
  const size_t dtypes = j["ridges"].size();
  ASSERT_GE(dtypes, 1u);
  ASSERT_EQ(blocks.size(), 2 * dtypes + 1) << "two roofs per dtype, then the kernels";
  for (size_t b = 0; b < 2 * dtypes; ++b) {
    ASSERT_EQ(blocks[b].size(), 3u) << "a roof: the slope, the ridge, the flat top";
    EXPECT_LT(std::stod(blocks[b][0][1]), std::stod(blocks[b][2][1])) << "rises to the ridge";
    EXPECT_DOUBLE_EQ(std::stod(blocks[b][1][1]), std::stod(blocks[b][2][1])) << "flat after the ridge";
  }
  // Each kernel with FLOPs and DRAM bytes placed (a log axis has no 0), at its own figures, labelled.
  std::vector<nlohmann::json> placed;
  for (const auto& k : j["kernels"])
    if (k["attained_flops"].get<double>() > 0 && k["intensity"].get<double>() > 0) placed.push_back(k);
  ASSERT_EQ(blocks.back().size(), placed.size());
  ASSERT_GE(placed.size(), 1u);
  const std::string svg = slurp(d / "roofline.svg");
  for (size_t i = 0; i < placed.size(); ++i) {
    EXPECT_NEAR(std::stod(blocks.back()[i][0]), placed[i]["intensity"].get<double>(),
                1e-5 * placed[i]["intensity"].get<double>());
    EXPECT_NE(svg.find(placed[i]["op"].get<std::string>()), std::string::npos) << placed[i]["op"];
  }
}

TEST(Plots, ComparePlotHasOneBarPerOpAndMachineSplitIntoDeviceAndLaunch) {
  TempDir d("compare");
  auto r = gtsim_cli("compare --workload " + small_workload(d) +
                     " --hw hw_configs/teach-tiny.yaml --hw hw_configs/tpu-v5e.yaml --json " + (d / "c.json") +
                     " --plot " + (d / "compare.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_svg(d / "compare.svg");
  auto j = nlohmann::json::parse(slurp(d / "c.json"));
  auto blocks = data_blocks(d / "compare.dat");
  ASSERT_EQ(blocks.size(), j["machines"].size()) << "one block of bars per machine";
  const size_t ops = j["ops"].size();
  ASSERT_EQ(ops, 3u);
  for (size_t m = 0; m < blocks.size(); ++m) {
    const std::string name = j["machines"][m]["name"];
    ASSERT_EQ(blocks[m].size(), ops + 1) << "one bar per op, and the dispatch charged once";
    for (size_t i = 0; i < ops; ++i) {
      double device = std::stod(blocks[m][i][1]), launch = std::stod(blocks[m][i][2]);
      EXPECT_NEAR(device + launch, j["ops"][i]["machines"][name]["time_us"].get<double>(), 1e-3)
          << name << " " << j["ops"][i]["op"];
      EXPECT_GT(device, 0);
    }
    const bool gpu = j["machines"][m]["target"] == "gpu";
    EXPECT_EQ(std::stod(blocks[m][0][2]) > 0, gpu) << "a GPU op pays its launch; a TPU op none";
    EXPECT_EQ(std::stod(blocks[m][ops][2]) > 0, !gpu) << "a TPU pays its dispatch once per workload";
  }
}

TEST(Plots, UnknownPlotExtensionExitsTwoBeforeSimulating) {
  TempDir d("badext");
  auto t0 = std::chrono::steady_clock::now();
  // A sweep of 10^6 points would run for hours: exit 2 at once shows nothing was simulated.
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/gemm_tiled.kir "
      "--param M,N,K=1:1000000 --no-progress --csv " +
      (d / "s.csv") + " --plot " + (d / "x.pdf"));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--plot"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".svg or .png"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(d / "s.csv"));
  EXPECT_LT(s, 10.0);
  for (const char* cmd : {"waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --range N=32:64:32 --plot x.jpg",
                          "roofline --hw hw_configs/teach-tiny.yaml --plot x",
                          "compare --workload docs/figures/mlp_small.yaml --hw hw_configs/teach-tiny.yaml "
                          "--hw hw_configs/tpu-v5e.yaml --plot x.eps"}) {
    auto b = gtsim_cli(cmd);
    EXPECT_EQ(b.rc, 2) << cmd;
    EXPECT_NE(b.err.find(".svg or .png"), std::string::npos) << cmd << ": " << b.err;
    EXPECT_TRUE(b.out.empty()) << cmd;
  }
}

TEST(Plots, UnwritablePlotPathExitsTwoBeforeSimulating) {
  TempDir d("unwritable");
  for (const std::string& path : {std::string("/nonexistent/folder/p.svg"), d.path.string() + ".svg/"}) {
    auto r = gtsim_cli(
        "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/gemm_tiled.kir "
        "--param M,N,K=1:1000000 --no-progress --csv " +
        (d / "s.csv") + " --plot " + path);
    EXPECT_EQ(r.rc, 2) << path << ": " << r.err;
    EXPECT_NE(r.err.find(path.substr(0, 12)), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "s.csv"));
  }
  fs::create_directories(d / "dir.svg");
  auto r = gtsim_cli("roofline --hw hw_configs/teach-tiny.yaml --plot " + (d / "dir.svg"));
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("directory"), std::string::npos) << r.err;
}

TEST(Plots, MissingGnuplotExitsTwoBeforeSimulatingAndSaysWhatToInstall) {
  TempDir d("nognuplot");
  // No gnuplot on PATH (gtsim itself is named by its full path); a million-point sweep would run for
  // hours, so a quick exit 2 shows nothing was simulated.
  const std::string cmd = std::string("cd ") + GTSIM_SOURCE_DIR + " && PATH=/nonexistent-bin " + GTSIM_BIN +
                          " sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/gemm_tiled.kir "
                          "--param M,N,K=1:1000000 --no-progress --csv " +
                          (d / "s.csv") + " --plot " + (d / "p.svg") + " > " + (d / "out") + " 2> " + (d / "err");
  auto t0 = std::chrono::steady_clock::now();
  int status = std::system(cmd.c_str());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string err = slurp(d / "err");
  EXPECT_NE(err.find("gnuplot was not found"), std::string::npos) << err;
  EXPECT_NE(err.find("apt-get install"), std::string::npos) << err;
  EXPECT_TRUE(slurp(d / "out").empty());
  EXPECT_FALSE(fs::exists(d / "s.csv"));
  EXPECT_FALSE(fs::exists(d / "p.svg"));
  EXPECT_LT(s, 10.0);
}

TEST(Plots, SweepPlotRefusesTwoVaryingAxesAndShards) {
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/gemm_tiled.kir "
      "--param M=8:16:8 --param N=8:16:8 --param K=8 --no-progress --plot /tmp/gtsim_never.svg");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("one x axis"), std::string::npos) << r.err;
  auto s = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/gemm_tiled.kir "
      "--param M,N,K=8:16:8 --shard 0/2 --no-progress --plot /tmp/gtsim_never.svg");
  EXPECT_EQ(s.rc, 2);
  EXPECT_NE(s.err.find("shard"), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists("/tmp/gtsim_never.svg"));
}

// A waves plot without --range draws N from half to one and a half times the shape's: 9 sizes, the
// shape's own among them, and says so on stderr.
TEST(Plots, WavesPlotWithoutARangeDrawsNAroundTheShape) {
  TempDir d("waves_default");
  auto r = gtsim_cli("waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --tile 64x64 --no-suggestions --plot " +
                     (d / "w.svg") + " --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_svg(d / "w.svg");
  EXPECT_NE(r.err.find("--range N=64:192:16"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["range"].size(), 9u);
  EXPECT_EQ(j["range"][4]["N"], 128) << "the shape's own N in the middle";
}

TEST(Plots, WavesRangeNeedsKnownDimensions) {
  auto s = gtsim_cli("waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --range Q=1:4");
  EXPECT_EQ(s.rc, 2);
  EXPECT_NE(s.err.find("expected M, N or K"), std::string::npos) << s.err;
  auto t = gtsim_cli("waves --hw hw_configs/teach-tiny.yaml --gemm 128x128x64 --range N=64:32");
  EXPECT_EQ(t.rc, 2);
  EXPECT_NE(t.err.find("--range N=64:32"), std::string::npos) << t.err;
}

// Every figure under docs/figures/ is shown in a page of docs/ or README.md beside the command that
// made it, and scripts/figures.sh makes it.
TEST(Plots, EveryCommittedFigureIsShownWithItsCommandAndMadeByTheScript) {
  const fs::path root = GTSIM_SOURCE_DIR;
  std::string script = slurp(root / "scripts/figures.sh"), pages = slurp(root / "README.md");
  for (const auto& e : fs::recursive_directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") pages += slurp(e.path());
  size_t figures = 0;
  for (const auto& e : fs::directory_iterator(root / "docs/figures")) {
    if (e.path().extension() != ".svg") continue;
    ++figures;
    const std::string name = e.path().filename().string();
    EXPECT_NE(script.find("figures/" + name), std::string::npos) << name << " not made by scripts/figures.sh";
    EXPECT_NE(pages.find("figures/" + name + ")"), std::string::npos) << name << " not shown in docs";
    EXPECT_NE(pages.find("--plot docs/figures/" + name), std::string::npos) << name << ": no command beside it";
  }
  EXPECT_GE(figures, 4u);
}

// The documented commands still run: scripts/figures.sh regenerates every committed figure (into a
// temp folder, the same file names) from the current model.
TEST(Plots, FiguresScriptRegeneratesEveryCommittedFigure_Slow) {
  TempDir d("figures");
  const std::string cmd = std::string(GTSIM_SOURCE_DIR) + "/scripts/figures.sh " + GTSIM_BIN + " " + d.path.string() +
                          " > " + (d / "log") + " 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << slurp(d / "log");
  for (const auto& e : fs::directory_iterator(fs::path(GTSIM_SOURCE_DIR) / "docs/figures")) {
    if (e.path().extension() != ".svg") continue;
    const std::string again = d / e.path().filename().string();
    expect_svg(again);
    EXPECT_TRUE(fs::exists(d / (e.path().stem().string() + ".dat"))) << "its numbers beside it";
  }
}
