#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::ir {

std::string_view op_class_name(OpClass c) {
  static constexpr std::string_view kNames[] = {
      "int",           "fp32",        "fp16",      "fp64",        "sfu",         "shuffle",
      "mma",           "wgmma",       "ld_global", "st_global",   "atom_global", "ld_shared",
      "st_shared",     "atom_shared", "ldmatrix",  "stmatrix",    "cp_async",    "cp_async_commit",
      "cp_async_wait", "bar_sync",    "mbar_init", "mbar_arrive", "mbar_wait",   "tma_load",
      "wgmma_commit",  "wgmma_wait",  "branch",    "slot",        "exit"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == size_t(OpClass::kCount));
  return c < OpClass::kCount ? kNames[size_t(c)] : "?";
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::kU8:
    case DType::kI8:
    case DType::kE4M3:
    case DType::kE5M2:
      return 1;
    case DType::kF16:
    case DType::kBf16:
    case DType::kU16:
    case DType::kI16:
      return 2;
    case DType::kU32:
    case DType::kI32:
    case DType::kF32:
    case DType::kTf32:
      return 4;
    default:
      return 8;
  }
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",  "e4m3", "e5m2", "f16", "bf16", "u16", "i16",
                                                "u32", "i32", "f32",  "tf32", "u64", "i64",  "f64"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == size_t(DType::kCount));
  return t < DType::kCount ? kNames[size_t(t)] : "?";
}

}  // namespace gtsim::ir
