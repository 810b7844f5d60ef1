#include "common.cuh"
namespace twins {
int run_apps(const std::vector<std::string>&) {
  log("apps: not built in this binary\n");
  return 0;
}
void gemm_point(int, int, int, const char*) {}  // green.cu's GEMM sweep: nothing without the app twins
}  // namespace twins
