// docs/validation.md says what `gtsim validate` wrote for the committed data and model: it records
// the fingerprint of the inputs it was written from, and any change to the model, the kernels, the
// configs or the data since then makes this test fail until the page is written again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "validation/inputs_fingerprint.hpp"

namespace gtsim::validation {
namespace {

namespace fs = std::filesystem;
const std::string kSourceRoot = GTSIM_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ValidationDoc, IsNotStale) {
  std::string doc = slurp(fs::path(kSourceRoot) / "docs" / "validation.md");
  std::string recorded = recorded_fingerprint(doc);
  ASSERT_FALSE(recorded.empty()) << "docs/validation.md records no inputs fingerprint: write it with gtsim validate";
  EXPECT_EQ(recorded, inputs_fingerprint(kSourceRoot))
      << "docs/validation.md is stale: the model, kernels, configs or data changed since it was written. Rerun "
         "scripts/validation_page.sh (gtsim calibrate --dry-run, then gtsim validate --write-error-bands "
         "--out-doc docs/validation.md) on a clean checkout and commit what it writes";
}

// The fingerprint sees a one-byte change in any input folder, and nothing outside them.
TEST(ValidationDoc, FingerprintSeesEveryInputAndOnlyThem) {
  fs::path d = fs::temp_directory_path() / ("gtsim_fp_" + std::to_string(::getpid()));
  fs::remove_all(d);
  for (const std::string& f : fingerprint_folders()) fs::create_directories(d / f);
  fs::create_directories(d / "docs");
  fs::create_directories(d / "validation" / "cuda");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; };
  write(d / "models" / "a.cpp", "int a = 1;\n");
  write(d / "validation" / "data.csv", "x,1\n");
  const std::string base = inputs_fingerprint(d);
  EXPECT_EQ(base.size(), 16u);
  write(d / "docs" / "page.md", "words");                  // not an input
  write(d / "validation" / "cuda" / "twin.cu", "kernel");  // the twins' sources are not the model
  fs::create_directories(d / "models" / "tpu");
  fs::create_directories(d / "kernels_ir" / "lib");
  write(d / "models" / "tpu" / "mxu.cpp", "int mxu;");  // the TPU model is not validated here
  write(d / "hw_configs" / "tpu-v5e.yaml", "target: tpu");
  write(d / "kernels_ir" / "lib" / "tpu_matmul.kir", "tpu");
  // the workload layer above the GPU model: validate never reads a workload
  for (const char* sub : {"graph", "workloads"}) fs::create_directories(d / "kernels_ir" / sub);
  fs::create_directories(d / "models" / "analytic");
  write(d / "kernels_ir" / "graph" / "lower_gpu.cpp", "lowering");
  write(d / "kernels_ir" / "workloads" / "mlp.yaml", "ops: []");
  write(d / "models" / "analytic" / "waves.cpp", "waves");
  fs::create_directories(d / "validation" / "data" / "library" / "h100" / "b45");  // never read by validate
  write(d / "validation" / "data" / "library" / "h100" / "b45" / "cublas_square.csv", "m,n,k\n");
  EXPECT_EQ(inputs_fingerprint(d), base);
  write(d / "kernels_ir" / "lib" / "gemm.kir", "gpu");  // a GPU kernel is
  EXPECT_NE(inputs_fingerprint(d), base);
  fs::remove(d / "kernels_ir" / "lib" / "gemm.kir");
  EXPECT_EQ(inputs_fingerprint(d), base);
  write(d / "models" / "a.cpp", "int a = 2;\n");
  const std::string changed = inputs_fingerprint(d);
  EXPECT_NE(changed, base);
  write(d / "models" / "a.cpp", "int a = 1;\n");
  EXPECT_EQ(inputs_fingerprint(d), base);
  write(d / "hw_configs" / "new.yaml", "");  // a new empty file counts
  EXPECT_NE(inputs_fingerprint(d), base);
  EXPECT_EQ(recorded_fingerprint("x\nInputs fingerprint: `" + base + "` (...)\n"), base);
  EXPECT_EQ(recorded_fingerprint("no line"), "");
  fs::remove_all(d);
}

}  // namespace
}  // namespace gtsim::validation
