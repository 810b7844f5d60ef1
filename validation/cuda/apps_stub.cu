#include "common.cuh"
namespace twins {
int run_apps(const std::vector<std::string>&) {
  log("apps: not built in this binary\n");
  return 0;
}
}  // namespace twins
