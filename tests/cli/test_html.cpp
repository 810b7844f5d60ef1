// `--html PATH` on run, workload, compare and sweep: one self-contained page (inline SVG figures from
// gnuplot, tables, the resolved config; no script, no network). Each page is opened in a real
// headless browser (Debian's chromium): the DOM it builds must hold every figure's <svg> and every
// table, and the browser must log no console message (a blocked fetch or a script error would).
// The browser tests skip when chromium is not installed (scripts/setup.sh installs it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>

#include "tests/cli/cli_harness.hpp"

namespace gtsim::test {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("gtsim_html_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

std::string find_chromium() {
  for (const char* exe : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string cmd = std::string("command -v ") + exe + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return exe;
  }
  return "";
}

struct Rendered {
  std::string dom, console;  // the DOM chromium built; its console messages (one per line)
};

// Opens the page in headless chromium and returns the DOM it built and every console message.
Rendered render(const std::string& browser, const fs::path& page) {
  fs::path dir = page.parent_path(), dom = dir / "dom.html", log = dir / "chromium.log";
  std::string cmd = browser + " --headless --no-sandbox --disable-gpu --user-data-dir=" + (dir / "profile").string() +
                    " --enable-logging=stderr --v=0 --dump-dom 'file://" + fs::absolute(page).string() + "' > " +
                    dom.string() + " 2> " + log.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(log);
  Rendered r{slurp(dom), ""};
  std::istringstream in(slurp(log));
  for (std::string line; std::getline(in, line);)
    if (line.find(":CONSOLE") != std::string::npos) r.console += line + "\n";
  return r;
}

// The page as written: `figures` inline SVGs in <figure>s, `tables` tables, the config, nothing
// fetched or run; then the same in the DOM chromium builds from it, with no console message.
void expect_page(const fs::path& page, size_t figures, size_t tables, const std::string& config_text) {
  ASSERT_TRUE(fs::exists(page));
  std::string html = slurp(page);
  EXPECT_EQ(count(html, "<figure"), figures);
  EXPECT_EQ(count(html, "<svg"), figures);
  EXPECT_EQ(count(html, "<table"), tables);
  EXPECT_NE(html.find("<section id=\"config\">"), std::string::npos);
  EXPECT_NE(html.find(config_text), std::string::npos) << "the resolved config is on the page";
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*['"]?(https?:|//))")))
      << "nothing is fetched from a network";
  std::string browser = find_chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  Rendered r = render(browser, page);
  EXPECT_EQ(r.console, "") << "the browser logged console messages";
  EXPECT_EQ(count(r.dom, "<figure"), figures);
  EXPECT_EQ(count(r.dom, "<svg"), figures);
  EXPECT_EQ(count(r.dom, "<table"), tables);
  // every figure drew something: gnuplot's plot groups survive in the DOM
  EXPECT_GE(count(r.dom, "gnuplot_plot_1"), figures);
  EXPECT_NE(r.dom.find(config_text), std::string::npos);
}

TEST(HtmlReport, RunPageShowsStallAndBytesFiguresTablesAndConfigInChromium) {
  fs::path d = temp_dir("run"), page = d / "run.html";
  auto r = gtsim_cli(
      "run --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=65536 "
      "--html " +
      page.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("gtsim run: stream_copy"), std::string::npos) << "the text report is still printed";
  expect_page(page, 2, 2, "name: teach-tiny");
  std::string html = slurp(page);
  EXPECT_NE(html.find("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), std::string::npos);
  EXPECT_NE(html.find("Written by <code>gtsim run --hw hw_configs/teach-tiny.yaml"), std::string::npos);
  fs::remove_all(d);
}

TEST(HtmlReport, WorkloadPageShowsOneBarFigureAndTheKernelTable) {
  fs::path d = temp_dir("workload"), page = d / "w.html";
  auto r = gtsim_cli(
      "workload --hw hw_configs/teach-tiny.yaml --workload kernels_ir/workloads/fusion_sincos.yaml "
      "--param n=65536 --no-fusion --html " +
      page.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_page(page, 1, 1, "name: teach-tiny");
  // one table row per kernel: sin, cos, two squares, the add
  std::string html = slurp(page);
  size_t body = html.find("<tbody>");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(count(html.substr(body, html.find("</tbody>") - body), "<tr>"), 5u);
  fs::remove_all(d);
}

TEST(HtmlReport, ComparePageShowsTheBarsAndEachMachinesConfig) {
  fs::path d = temp_dir("compare"), page = d / "c.html";
  auto r = gtsim_cli(
      "compare --workload kernels_ir/workloads/fusion_sincos.yaml --param n=65536 --hw "
      "hw_configs/teach-tiny.yaml --hw hw_configs/tpu-v5e.yaml --html " +
      page.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_page(page, 1, 2, "name: teach-tiny");
  std::string html = slurp(page);
  EXPECT_NE(html.find("resolved config: hw_configs/tpu-v5e.yaml"), std::string::npos);
  EXPECT_NE(html.find("resolved config: hw_configs/teach-tiny.yaml"), std::string::npos);
  fs::remove_all(d);
}

TEST(HtmlReport, SweepPageShowsTheCurveAndOneTableRowPerPoint) {
  fs::path d = temp_dir("sweep"), page = d / "s.html";
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=4096:32768:4096 --csv " +
      (d / "s.csv").string() + " --html " + page.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  expect_page(page, 1, 1, "name: teach-tiny");
  std::string html = slurp(page);
  size_t body = html.find("<tbody>");
  EXPECT_EQ(count(html.substr(body, html.find("</tbody>") - body), "<tr>"), 8u);
  fs::remove_all(d);
}

TEST(HtmlReport, PathWithoutHtmlExtensionIsRefusedBeforeTheRun) {
  fs::path d = temp_dir("bad");
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=4096:8192:4096 --csv " +
      (d / "s.csv").string() + " --html " + (d / "r.txt").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("expected a path ending in .html"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "no simulation ran";
  EXPECT_TRUE(fs::is_empty(d));
  fs::remove_all(d);
}

TEST(HtmlReport, MissingFolderIsRefusedBeforeTheRun) {
  auto r = gtsim_cli(
      "sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir "
      "--param n=4096:8192:4096 --csv /dev/null --html /nonexistent_gtsim_dir/s.html");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("/nonexistent_gtsim_dir/s.html"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(HtmlReport, MissingGnuplotIsRefusedBeforeTheRun) {
  fs::path d = temp_dir("nognuplot"), err = d / "err.txt";
  // gtsim started by its full path with a PATH that holds no gnuplot
  std::string cmd = std::string("cd ") + GTSIM_SOURCE_DIR + " && PATH=/nonexistent " + GTSIM_BIN +
                    " sweep --hw hw_configs/teach-tiny.yaml --kernel kernels_ir/lib/stream_copy.kir --param n=4096 "
                    "--csv " +
                    (d / "s.csv").string() + " --html " + (d / "r.html").string() + " > /dev/null 2> " + err.string();
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
  EXPECT_NE(slurp(err).find("gnuplot, which is not on the PATH"), std::string::npos) << slurp(err);
  EXPECT_FALSE(fs::exists(d / "r.html"));
  EXPECT_FALSE(fs::exists(d / "s.csv")) << "no simulation ran";
  fs::remove_all(d);
}

}  // namespace
}  // namespace gtsim::test
