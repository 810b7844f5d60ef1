#include "kernels_ir/ops.hpp"

// GCC 12 reports a false -Wrestrict inside std::string assignment here (GCC bug 105329); clang has
// no such warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <charconv>
#include <vector>

namespace gtsim::ir {
namespace {

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t p = 0;
  while (true) {
    size_t q = s.find('.', p);
    out.push_back(s.substr(p, q == std::string_view::npos ? q : q - p));
    if (q == std::string_view::npos) break;
    p = q + 1;
  }
  return out;
}

bool to_int(std::string_view s, int* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

struct AluSpec {
  std::string_view name;
  OpClass op;
  int nsrc;
  uint32_t flops;
  bool is_int;
  ExprOp int_op;
  DType dtype;
};

constexpr AluSpec kAlu[] = {
    {"ffma", OpClass::kFp32, 3, 2, false, ExprOp::kNum, DType::kF32},
    {"fadd", OpClass::kFp32, 2, 1, false, ExprOp::kNum, DType::kF32},
    {"fsub", OpClass::kFp32, 2, 1, false, ExprOp::kNum, DType::kF32},
    {"fmul", OpClass::kFp32, 2, 1, false, ExprOp::kNum, DType::kF32},
    // FMNMX runs on the ALU (the INT pipe), at half the FFMA rate: 64 per SM per clock on the H200
    // (validation/data/h200/b26/op_latency.csv, fmax with 8 chains a thread)
    {"fmax", OpClass::kInt, 2, 0, false, ExprOp::kNum, DType::kF32},
    {"fmin", OpClass::kInt, 2, 0, false, ExprOp::kNum, DType::kF32},
    {"hfma2", OpClass::kFp16, 3, 4, false, ExprOp::kNum, DType::kF16},
    {"hadd2", OpClass::kFp16, 2, 2, false, ExprOp::kNum, DType::kF16},
    {"hmul2", OpClass::kFp16, 2, 2, false, ExprOp::kNum, DType::kF16},
    {"dfma", OpClass::kFp64, 3, 2, false, ExprOp::kNum, DType::kF64},
    {"dadd", OpClass::kFp64, 2, 1, false, ExprOp::kNum, DType::kF64},
    {"dmul", OpClass::kFp64, 2, 1, false, ExprOp::kNum, DType::kF64},
    {"sin", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"cos", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"ex2", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"lg2", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"rsqrt", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"rcp", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"sqrt", OpClass::kSfu, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"cvt", OpClass::kInt, 1, 0, false, ExprOp::kNum, DType::kF32},
    {"mov", OpClass::kInt, 1, 0, true, ExprOp::kNum, DType::kI64},
    {"iadd", OpClass::kInt, 2, 0, true, ExprOp::kAdd, DType::kI64},
    {"isub", OpClass::kInt, 2, 0, true, ExprOp::kSub, DType::kI64},
    {"imul", OpClass::kInt, 2, 0, true, ExprOp::kMul, DType::kI64},
    {"imad", OpClass::kInt, 3, 0, true, ExprOp::kSelect, DType::kI64},
    {"shl", OpClass::kInt, 2, 0, true, ExprOp::kShl, DType::kI64},
    {"shr", OpClass::kInt, 2, 0, true, ExprOp::kShr, DType::kI64},
    {"and", OpClass::kInt, 2, 0, true, ExprOp::kAnd, DType::kI64},
    {"or", OpClass::kInt, 2, 0, true, ExprOp::kOr, DType::kI64},
    {"xor", OpClass::kInt, 2, 0, true, ExprOp::kXor, DType::kI64},
    {"imin", OpClass::kInt, 2, 0, true, ExprOp::kMin, DType::kI64},
    {"imax", OpClass::kInt, 2, 0, true, ExprOp::kMax, DType::kI64},
};

struct CmpSpec {
  std::string_view name;
  ExprOp op;
};
constexpr CmpSpec kCmp[] = {{"lt", ExprOp::kLt}, {"le", ExprOp::kLe}, {"gt", ExprOp::kGt},
                            {"ge", ExprOp::kGe}, {"eq", ExprOp::kEq}, {"ne", ExprOp::kNe}};

bool is_atom_op(std::string_view s) {
  for (auto n : {"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"})
    if (s == n) return true;
  return false;
}

// Memory-op suffixes: cache hints, vector width, dtype, atomic op.
bool mem_suffix(std::string_view s, OpDesc& d, bool* atom_op, std::string* err) {
  if (s == "ca") {
    d.cache_global = true;
    return true;
  }
  if (s == "cg") {
    d.cache_global = false;
    return true;
  }
  if (s == "volatile" || s == "cs" || s == "lu" || s == "nc") return true;
  if (s == "v()") {
    d.vec = 0;
    return true;
  }
  if (s.size() > 1 && s[0] == 'v' && to_int(s.substr(1), &d.vec) && d.vec >= 1 && d.vec <= 32) return true;
  if (auto t = parse_dtype(s)) {
    d.dtype = *t;
    d.dtype_given = true;
    return true;
  }
  if (is_atom_op(s)) {
    *atom_op = true;
    return true;
  }
  *err = "unknown suffix '." + std::string(s) + "', expected ca, cg, vN, v(EXPR), a dtype or an atomic op";
  return false;
}

std::optional<OpDesc> decode_memory(const std::vector<std::string_view>& seg, std::string* err) {
  OpDesc d;
  if (seg.size() < 2 || (seg[1] != "global" && seg[1] != "shared")) {
    std::string op(seg[0]);
    *err = "'";
    err->append(op).append("' needs a space, expected ").append(op).append(".global or ").append(op).append(".shared");
    return std::nullopt;
  }
  bool global = seg[1] == "global";
  d.space = global ? MemSpace::kGlobal : MemSpace::kShared;
  bool atom_op = false;
  for (size_t i = 2; i < seg.size(); ++i)
    if (!mem_suffix(seg[i], d, &atom_op, err)) return std::nullopt;
  if (seg[0] == "ld") {
    d.form = Form::kLoad, d.op = global ? OpClass::kLdGlobal : OpClass::kLdShared, d.has_dst = true;
  } else if (seg[0] == "st") {
    d.form = Form::kStore, d.op = global ? OpClass::kStGlobal : OpClass::kStShared, d.min_src = d.max_src = 1;
  } else {
    bool red = seg[0] == "red";
    d.form = red ? Form::kRed : Form::kAtom, d.has_dst = !red, d.min_src = 1, d.max_src = 2;
    d.op = global ? OpClass::kAtomGlobal : OpClass::kAtomShared;
    if (!atom_op) {
      *err = "atomic needs an operation, expected e.g. ." + std::string(seg[0]) + "." + std::string(seg[1]) + ".add";
      return std::nullopt;
    }
  }
  if ((seg[0] == "ld" || seg[0] == "st") && atom_op) {
    *err = "an atomic op suffix on a plain load/store, expected atom or red";
    return std::nullopt;
  }
  return d;
}

std::optional<OpDesc> decode_mma(const std::vector<std::string_view>& seg, bool wgmma, std::string* err) {
  OpDesc d;
  d.form = Form::kMma, d.op = wgmma ? OpClass::kWgmma : OpClass::kMma, d.has_dst = true;
  d.min_src = 2, d.max_src = 3;
  size_t i = wgmma ? 1 : 2;
  if (!wgmma && (seg.size() < 2 || seg[1] != "sync")) {
    *err = "expected mma.sync";
    return std::nullopt;
  }
  if (seg.size() != i + 3) {
    *err = "expected " + std::string(wgmma ? "wgmma.m64nNk16" : "mma.sync.mMnNkK") + ".AB.ACC, e.g. .bf16.f32";
    return std::nullopt;
  }
  int m = 0, n = 0, k = 0;
  std::string shape(seg[i]);
  if (sscanf(shape.c_str(), "m%dn%dk%d", &m, &n, &k) != 3) {
    *err = "bad mma shape '" + shape + "', expected mMnNkK";
    return std::nullopt;
  }
  auto ab = parse_dtype(seg[i + 1]), acc = parse_dtype(seg[i + 2]);
  if (!ab || !acc) {
    *err = "bad mma dtypes, expected .AB.ACC such as .bf16.f32";
    return std::nullopt;
  }
  if (m < 1 || n < 1 || k < 1 || m > 256 || n > 256 || k > 256) {
    *err = "mma shape out of range";
    return std::nullopt;
  }
  d.mma = MmaKind{uint16_t(m), uint16_t(n), uint16_t(k), *ab, *acc};
  d.dtype = *ab;
  if (!valid_mma(d.mma, wgmma, err)) return std::nullopt;
  return d;
}

std::optional<OpDesc> decode_misc(const std::vector<std::string_view>& seg, std::string_view m, std::string* err) {
  OpDesc d;
  if (m == "cp.async.commit") {
    d.form = Form::kCommit, d.op = OpClass::kCpAsyncCommit;
    return d;
  }
  if (m == "cp.async.wait") {
    d.form = Form::kWait, d.op = OpClass::kCpAsyncWait, d.min_src = d.max_src = 1;
    return d;
  }
  if (m == "wgmma.commit") {
    d.form = Form::kCommit, d.op = OpClass::kWgmmaCommit;
    return d;
  }
  if (m == "wgmma.wait") {
    d.form = Form::kWait, d.op = OpClass::kWgmmaWait, d.min_src = d.max_src = 1;
    return d;
  }
  if (m == "wgmma.fence") {  // orders register accesses before wgmma reads them: an issue slot here
    d.form = Form::kAlu, d.op = OpClass::kSlot;
    return d;
  }
  if (m == "cp.async.bulk.tensor") {
    d.form = Form::kTma, d.op = OpClass::kTmaLoad, d.space = MemSpace::kShared, d.min_src = d.max_src = 3;
    return d;
  }
  if (m == "slot") {
    d.form = Form::kAlu, d.op = OpClass::kSlot;
    return d;
  }  // an issue slot, nothing else
  if (m == "bar.sync") {
    d.form = Form::kBar, d.op = OpClass::kBarSync, d.max_src = 1;
    return d;
  }
  struct Mbar {
    std::string_view name;
    Form form;
    OpClass op;
    int8_t srcs;  // the immediate: expected arrivals (init), phase parity (wait)
  };
  for (const Mbar& b : {Mbar{"mbarrier.init", Form::kMbarInit, OpClass::kMbarInit, 1},
                        Mbar{"mbarrier.arrive", Form::kMbarArrive, OpClass::kMbarArrive, 0},
                        Mbar{"mbarrier.wait", Form::kMbarWait, OpClass::kMbarWait, 1}})
    if (m == b.name) {
      d.form = b.form, d.op = b.op, d.min_src = d.max_src = b.srcs;
      d.space = MemSpace::kShared, d.dtype = DType::kU64;
      return d;
    }
  if (seg[0] == "cp" && seg.size() >= 3 && seg[1] == "async") {
    d.form = Form::kCpAsync, d.op = OpClass::kCpAsync, d.space = MemSpace::kShared;
    d.max_src = 1;  // optional src-size (bytes read from global; the rest of the copy is zero-filled)
    size_t i = 2;
    if (seg[i] == "ca" || seg[i] == "cg") d.cache_global = seg[i++] == "ca";
    if (i + 1 != seg.size() || !to_int(seg[i], &d.cp_bytes)) {
      *err = "expected cp.async(.ca|.cg).N with N = 4, 8 or 16 bytes";
      return std::nullopt;
    }
    return d;
  }
  if (seg[0] == "ldmatrix" || seg[0] == "stmatrix") {
    bool ld = seg[0] == "ldmatrix";
    d.form = ld ? Form::kLdMatrix : Form::kStMatrix, d.op = ld ? OpClass::kLdMatrix : OpClass::kStMatrix;
    d.space = MemSpace::kShared, d.has_dst = ld, d.min_src = d.max_src = ld ? 0 : 1, d.dtype = DType::kBf16;
    bool ok = seg.size() >= 2 && (seg[1] == "x1" || seg[1] == "x2" || seg[1] == "x4");
    for (size_t i = 2; ok && i < seg.size(); ++i) ok = seg[i] == "trans";
    if (!ok) {
      *err = "expected " + std::string(seg[0]) + ".x1|.x2|.x4 with optional .trans";
      return std::nullopt;
    }
    d.ldm_rows = seg[1][1] - '0';
    return d;
  }
  *err = "unknown instruction '" + std::string(m) + "', expected an instruction (see docs/ir.md)";
  return std::nullopt;
}

}  // namespace

std::optional<DType> parse_dtype(std::string_view s) {
  for (int i = 0; i < int(DType::kCount); ++i)
    if (dtype_name(DType(i)) == s) return DType(i);
  return std::nullopt;
}

bool valid_mma(const MmaKind& k, bool wgmma, std::string* error) {
  auto is = [&](DType t, std::initializer_list<DType> l) {
    for (auto x : l)
      if (x == t) return true;
    return false;
  };
  bool ok = false;
  using D = DType;
  if (wgmma) {
    ok = k.m == 64 && k.n >= 8 && k.n <= 256 && k.n % 8 == 0 &&
         ((k.k == 16 && is(k.ab, {D::kF16, D::kBf16})) || (k.k == 8 && k.ab == D::kTf32) ||
          (k.k == 32 && is(k.ab, {D::kE4M3, D::kE5M2})));
  } else if (k.m == 16 && k.n == 8 && k.k == 16) {
    ok = is(k.ab, {D::kF16, D::kBf16});
  } else if (k.m == 16 && k.n == 8 && k.k == 8) {
    ok = is(k.ab, {D::kTf32, D::kBf16, D::kF16});
  } else if (k.m == 16 && k.n == 8 && k.k == 32) {
    ok = is(k.ab, {D::kE4M3, D::kE5M2, D::kI8, D::kU8});
  } else if (k.m == 8 && k.n == 8 && k.k == 4) {
    ok = k.ab == D::kF64 && k.acc == D::kF64;
  }
  if (ok && k.ab != D::kF64) ok = is(k.acc, {D::kF32, D::kF16, D::kI32});
  if (!ok && error)
    *error = "mma shape m" + std::to_string(k.m) + "n" + std::to_string(k.n) + "k" + std::to_string(k.k) + " with " +
             std::string(dtype_name(k.ab)) + " -> " + std::string(dtype_name(k.acc)) +
             " is not supported, expected m16n8k16 f16/bf16, m16n8k8 tf32/bf16/f16, m16n8k32 e4m3/e5m2/i8, "
             "m8n8k4 f64 (wgmma: m64nNk16 f16/bf16, m64nNk8 tf32, m64nNk32 e4m3/e5m2)";
  return ok;
}

std::optional<OpDesc> decode_mnemonic(std::string_view m, std::string* err) {
  auto seg = split(m);
  for (const auto& a : kAlu) {
    if (seg[0] != a.name) continue;
    OpDesc d;
    d.form = a.is_int ? Form::kIntAlu : Form::kAlu, d.op = a.op, d.dtype = a.dtype, d.flops_per_lane = a.flops;
    d.min_src = d.max_src = a.nsrc, d.has_dst = true, d.int_op = a.int_op;
    if (seg.size() > 1 && !parse_dtype(seg.back())) {
      *err = "unknown suffix on '" + std::string(m) + "', expected a dtype";
      return std::nullopt;
    }
    return d;
  }
  if (seg[0] == "setp") {
    OpDesc d;
    d.form = Form::kIntAlu, d.op = OpClass::kInt, d.min_src = d.max_src = 2, d.has_dst = true, d.dtype = DType::kI32;
    for (const auto& c : kCmp)
      if (seg.size() >= 2 && seg[1] == c.name) {
        d.int_op = c.op;
        return d;
      }
    *err = "setp needs a comparison, expected setp.lt|le|gt|ge|eq|ne";
    return std::nullopt;
  }
  if (m == "iexpr") {
    OpDesc d;
    d.form = Form::kIExpr, d.op = OpClass::kInt, d.min_src = d.max_src = 1, d.has_dst = true, d.dtype = DType::kI64;
    return d;
  }
  if (seg[0] == "shfl") {
    OpDesc d;
    d.form = Form::kShfl, d.op = OpClass::kShuffle, d.min_src = d.max_src = 2, d.has_dst = true;
    static constexpr std::string_view kModes[] = {"bfly", "up", "down", "idx"};
    for (int i = 0; i < 4; ++i)
      if (seg.size() >= 2 && seg[1] == kModes[i]) {
        d.shfl = ShflMode(i);
        return d;
      }
    *err = "shfl needs a mode, expected shfl.bfly|up|down|idx";
    return std::nullopt;
  }
  if (seg[0] == "ld" || seg[0] == "st" || seg[0] == "atom" || seg[0] == "red") return decode_memory(seg, err);
  if (seg[0] == "mma") return decode_mma(seg, false, err);
  if (seg[0] == "wgmma" && !(seg.size() == 2 && (seg[1] == "commit" || seg[1] == "wait" || seg[1] == "fence")))
    return decode_mma(seg, true, err);
  return decode_misc(seg, m, err);
}

}  // namespace gtsim::ir
