#include "kernels_ir/printer.hpp"

#include <string_view>

namespace gtsim::ir {
namespace {

struct OpText {
  ExprOp op;
  std::string_view text;
  int prec;
};
constexpr OpText kOps[] = {
    {ExprOp::kLOr, "||", 1}, {ExprOp::kLAnd, "&&", 2}, {ExprOp::kOr, "|", 3},   {ExprOp::kXor, "^", 4},
    {ExprOp::kAnd, "&", 5},  {ExprOp::kEq, "==", 6},   {ExprOp::kNe, "!=", 6},  {ExprOp::kLt, "<", 7},
    {ExprOp::kLe, "<=", 7},  {ExprOp::kGt, ">", 7},    {ExprOp::kGe, ">=", 7},  {ExprOp::kShl, "<<", 8},
    {ExprOp::kShr, ">>", 8}, {ExprOp::kAdd, "+", 9},   {ExprOp::kSub, "-", 9},  {ExprOp::kMul, "*", 10},
    {ExprOp::kDiv, "/", 10}, {ExprOp::kMod, "%", 10},
};

const OpText* binop(ExprOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return &o;
  return nullptr;
}

void print(const Expr& e, std::string& s);

// Prints `e` as an operand of a context with precedence `prec`; parenthesized when needed.
void print_prec(const Expr& e, int prec, std::string& s) {
  const OpText* b = binop(e.op);
  bool paren = b && b->prec < prec;
  if (paren) s += '(';
  print(e, s);
  if (paren) s += ')';
}

void print_call(const char* fn, const Expr& e, std::string& s) {
  s += fn;
  s += '(';
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (i) s += ", ";
    print(e.args[i], s);
  }
  s += ')';
}

void print(const Expr& e, std::string& s) {
  switch (e.op) {
    case ExprOp::kNum: s += std::to_string(e.num); return;
    case ExprOp::kName: s += e.name; return;
    case ExprOp::kIndex: s += e.name + "["; print(e.args[0], s); s += ']'; return;
    case ExprOp::kNeg: case ExprOp::kNot: case ExprOp::kBitNot:
      s += e.op == ExprOp::kNeg ? '-' : e.op == ExprOp::kNot ? '!' : '~';
      print_prec(e.args[0], 100, s);
      return;
    case ExprOp::kMin: print_call("min", e, s); return;
    case ExprOp::kMax: print_call("max", e, s); return;
    case ExprOp::kCdiv: print_call("cdiv", e, s); return;
    case ExprOp::kSelect: print_call("select", e, s); return;
    default: break;
  }
  const OpText* b = binop(e.op);
  print_prec(e.args[0], b->prec, s);
  s += ' ';
  s += b->text;
  s += ' ';
  print_prec(e.args[1], b->prec + 1, s);
}

std::string list(const std::vector<Expr>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    print(v[i], s);
  }
  return s;
}

void indent(std::string& s, int depth) { s.append(size_t(depth) * 2, ' '); }

void print_block(const std::vector<Stmt>& b, int depth, std::string& s);

void print_stmt(const Stmt& st, int depth, std::string& s) {
  indent(s, depth);
  switch (st.kind) {
    case StmtKind::kInstr: s += print_instr(st.instr) + "\n"; return;
    case StmtKind::kLet: s += "let " + st.name + " = " + print_expr(st.e[0]) + "\n"; return;
    case StmtKind::kReg: s += "reg " + st.name + "[" + print_expr(st.e[0]) + "]\n"; return;
    case StmtKind::kExit: s += st.is_return ? "return\n" : "exit\n"; return;
    case StmtKind::kLoop:
      s += "loop " + st.name + " in " + print_expr(st.e[0]) + " .. " + print_expr(st.e[1]);
      if (st.e.size() > 2) s += " step " + print_expr(st.e[2]);
      if (st.runtime_trip) s += " runtime";
      if (st.unroll) s += " unroll " + print_expr(*st.unroll);
      s += " {\n";
      print_block(st.body, depth + 1, s);
      break;
    case StmtKind::kIf:
      s += "if (" + print_expr(st.e[0]) + ") {\n";
      print_block(st.body, depth + 1, s);
      if (st.has_else) {
        indent(s, depth);
        s += "} else {\n";
        print_block(st.else_body, depth + 1, s);
      }
      break;
  }
  indent(s, depth);
  s += "}\n";
}

void print_block(const std::vector<Stmt>& b, int depth, std::string& s) {
  for (const auto& st : b) print_stmt(st, depth, s);
}

}  // namespace

std::string print_expr(const Expr& e) {
  std::string s;
  print(e, s);
  return s;
}

std::string print_instr(const Instr& in) {
  std::string s;
  if (in.pred) s += "@(" + print_expr(*in.pred) + ") ";
  if (!in.dsts.empty()) s += list(in.dsts) + " = ";
  std::string m = in.mnemonic;
  if (in.vec) {
    size_t p = m.find("v()");
    if (p != std::string::npos) m = m.substr(0, p) + "v(" + print_expr(*in.vec) + ")" + m.substr(p + 3);
  }
  s += m;
  if (!in.srcs.empty()) s += " " + list(in.srcs);
  return s;
}

std::string print_kernel(const Kernel& k) {
  std::string s = (k.tpu ? "tpu_kernel " : "kernel ") + k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (i) s += ", ";
    s += k.params[i].name;
    if (k.params[i].def) s += " = " + print_expr(*k.params[i].def);
  }
  s += ") {\n";
  if (!k.grid.empty()) s += "  grid " + list(k.grid) + "\n";
  if (!k.block.empty()) s += "  block " + list(k.block) + "\n";
  if (k.regs) s += "  regs " + print_expr(*k.regs) + "\n";
  if (k.smem) s += "  smem " + print_expr(*k.smem) + "\n";
  for (const auto& b : k.buffers) {
    s += (b.vmem ? "  vmem " : "  buffer ") + b.name + " : " + std::string(dtype_name(b.dtype)) + "[" + list(b.shape) + "]";
    if (b.has_layout) s += b.col_major ? " layout col" : " layout row";
    if (b.align) s += " align " + print_expr(*b.align);
    if (b.init == InitKind::kZero) s += " init zero";
    if (b.init == InitKind::kIota) s += " init iota";
    if (b.init == InitKind::kChase) s += " init chase(" + list(b.init_args) + ")";
    if (b.slots) s += " slots " + print_expr(*b.slots);
    s += "\n";
  }
  for (const auto& sh : k.shared)
    s += "  shared " + sh.name + " : " + std::string(dtype_name(sh.dtype)) + "[" + print_expr(sh.count) + "]\n";
  print_block(k.body, 1, s);
  s += "}\n";
  return s;
}

}  // namespace gtsim::ir
