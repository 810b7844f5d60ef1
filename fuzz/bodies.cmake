# The fuzz bodies (fuzz/fuzz_*.cpp) as a library: linked by the libFuzzer executables (fuzz/CMakeLists.txt,
# GTSIM_FUZZ=ON, clang) and by the regression replay test (tests/fuzz, every build).
include_guard(GLOBAL)
add_library(gtsim_fuzz_bodies STATIC
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_kernel.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_workload.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz_tpu.cpp)
target_include_directories(gtsim_fuzz_bodies PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(gtsim_fuzz_bodies PUBLIC gtsim_models gtsim_workload gtsim_kernels_ir gtsim_sim)
target_compile_definitions(gtsim_fuzz_bodies PRIVATE GTSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
