#include "kernels_ir/parser.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernels_ir/lexer.hpp"
#include "kernels_ir/ops.hpp"
#include "kernels_ir/tpu_dialect.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {
namespace {

struct BinOp {
  std::string_view text;
  ExprOp op;
  int prec;
};
constexpr BinOp kBinOps[] = {
    {"||", ExprOp::kLOr, 1}, {"&&", ExprOp::kLAnd, 2}, {"|", ExprOp::kOr, 3},   {"^", ExprOp::kXor, 4},
    {"&", ExprOp::kAnd, 5},  {"==", ExprOp::kEq, 6},   {"!=", ExprOp::kNe, 6},  {"<", ExprOp::kLt, 7},
    {"<=", ExprOp::kLe, 7},  {">", ExprOp::kGt, 7},    {">=", ExprOp::kGe, 7},  {"<<", ExprOp::kShl, 8},
    {">>", ExprOp::kShr, 8}, {"+", ExprOp::kAdd, 9},   {"-", ExprOp::kSub, 9},  {"*", ExprOp::kMul, 10},
    {"/", ExprOp::kDiv, 10}, {"%", ExprOp::kMod, 10},
};

class Parser {
 public:
  Parser(std::string_view text, std::string file) : toks_(lex(text)), file_(std::move(file)) {}

  std::unique_ptr<Kernel> kernel() {
    auto k = std::make_unique<Kernel>();
    k->file = file_;
    k->loc = loc();
    if (accept_word("tpu_kernel")) k->tpu = tpu_ = true;
    else expect_word("kernel", "the kernel header 'kernel NAME(PARAMS) {'");
    k->name = ident("a kernel name");
    expect("(", "'(' after the kernel name");
    if (!is(")")) params(*k);
    expect(")", "')' closing the parameter list");
    expect("{", "'{' opening the kernel body");
    while (!is("}") && !at_end()) top_item(*k);
    expect("}", "'}' closing the kernel body");
    if (!at_end()) fail("unexpected '" + cur().text + "' after the kernel, expected end of file (one kernel per file)");
    return k;
  }

 private:
  std::vector<Token> toks_;
  size_t p_ = 0;
  std::string file_;
  bool tpu_ = false;  // a tpu_kernel: mnemonics are checked by the TPU verifier, not decoded here

  const Token& cur() const { return toks_[p_]; }
  const Token& peek(size_t n = 1) const { return toks_[std::min(p_ + n, toks_.size() - 1)]; }
  bool at_end() const { return cur().kind == Tok::kEnd; }
  bool is(std::string_view t) const { return cur().kind == Tok::kPunct && cur().text == t; }
  bool is_word(std::string_view w) const { return cur().kind == Tok::kIdent && cur().text == w; }
  Loc loc() const { return Loc{cur().line, cur().col}; }
  std::string shown() const { return at_end() ? "end of file" : "'" + cur().text + "'"; }

  [[noreturn]] void fail(const std::string& msg, const Token* at = nullptr) const {
    const Token& t = at ? *at : cur();
    throw InputError(SourcePos{file_, t.line, t.col}, msg);
  }
  [[noreturn]] void unexpected(const std::string& expected) const { fail("unexpected " + shown() + ", expected " + expected); }
  void expect(std::string_view t, const std::string& what) {
    if (!is(t)) unexpected(what);
    ++p_;
  }
  void expect_word(std::string_view w, const std::string& what) {
    if (!is_word(w)) unexpected(what);
    ++p_;
  }
  bool accept(std::string_view t) {
    if (!is(t)) return false;
    ++p_;
    return true;
  }
  std::string ident(const std::string& what) {
    if (cur().kind != Tok::kIdent) unexpected(what);
    return toks_[p_++].text;
  }

  // ---- expressions
  // Nesting (parser.hpp, kMaxNesting): nest_ counts the brackets, calls and unary operators being
  // parsed (the parser's own recursion); every expression function also returns the height of the
  // tree it built in `h`, so a long operator chain is refused at the operator that makes it too deep.
  int nest_ = 0;
  int stmt_nest_ = 0;  // if / loop bodies and else-if links being parsed
  struct Level {
    int* n;
    explicit Level(int* p) : n(p) {}
    Level(const Level&) = delete;
    ~Level() { --*n; }
  };
  static std::string too_deep() {
    return "expression nested deeper than " + std::to_string(kMaxNesting) + " levels, expected at most " +
           std::to_string(kMaxNesting) + " (split it with let)";
  }
  [[nodiscard]] Level enter(int& n, const Token& at, bool stmt = false) {
    if (n >= kMaxNesting)
      fail(stmt ? "statements nested deeper than " + std::to_string(kMaxNesting) +
                      " levels (if, loop, else if), expected at most " + std::to_string(kMaxNesting) +
                      " (move the inner part out of some levels)"
                : too_deep(),
           &at);
    ++n;
    return Level(&n);
  }
  void check_height(int h, const Token& at) const {
    if (h > kMaxNesting) fail(too_deep(), &at);
  }

  Expr expr(int min_prec = 1) {
    int h = 0;
    return expr_h(min_prec, h);
  }

  Expr expr_h(int min_prec, int& h) {
    Expr lhs = unary(h);
    while (cur().kind == Tok::kPunct) {
      const BinOp* b = nullptr;
      for (const auto& o : kBinOps)
        if (cur().text == o.text) b = &o;
      if (!b || b->prec < min_prec) break;
      const Token& op_tok = cur();
      check_height(h + 1, op_tok);  // this operator's node sits above the left operand
      Loc l = loc();
      ++p_;
      int rh = 0;
      Expr rhs = expr_h(b->prec + 1, rh);
      h = std::max(h, rh) + 1;
      check_height(h, op_tok);
      Expr e{b->op, 0, "", {}, l};
      e.args.push_back(std::move(lhs));
      e.args.push_back(std::move(rhs));
      lhs = std::move(e);
    }
    return lhs;
  }

  Expr unary(int& h) {
    Loc l = loc();
    for (auto [t, op] : {std::pair{"-", ExprOp::kNeg}, {"!", ExprOp::kNot}, {"~", ExprOp::kBitNot}}) {
      if (!is(t)) continue;
      const Token& at = cur();
      auto level = enter(nest_, at);
      ++p_;
      Expr e{op, 0, "", {}, l};
      e.args.push_back(unary(h));
      check_height(++h, at);
      return e;
    }
    return primary(h);
  }

  Expr primary(int& h) {
    Loc l = loc();
    const Token& start = cur();
    h = 1;
    if (cur().kind == Tok::kNum) {
      if (start.no_digits) fail("'" + start.text + "' has no digits after 0x, expected a hex literal such as 0x1f");
      if (start.out_of_range)
        fail("integer literal " + start.text + " is out of range, expected 0 .. 9223372036854775807 (INT64_MAX)");
      return Expr{ExprOp::kNum, toks_[p_++].num, "", {}, l};
    }
    if (is("(")) {
      auto level = enter(nest_, start);
      ++p_;
      Expr e = expr_h(1, h);
      expect(")", "')' closing the parenthesis");
      return e;
    }
    if (cur().kind != Tok::kIdent) unexpected("an expression");
    std::string name = toks_[p_++].text;
    static constexpr std::pair<std::string_view, ExprOp> kFns[] = {
        {"min", ExprOp::kMin}, {"max", ExprOp::kMax}, {"cdiv", ExprOp::kCdiv}, {"select", ExprOp::kSelect}};
    for (auto [fn, op] : kFns) {
      if (name != fn || !is("(")) continue;
      auto level = enter(nest_, start);
      ++p_;
      Expr e{op, 0, "", {}, l};
      int ah = 0;
      do {
        e.args.push_back(expr_h(1, ah));
        h = std::max(h, ah + 1);
      } while (accept(","));
      check_height(h, start);
      expect(")", "')' closing " + name + "(...)");
      size_t want = op == ExprOp::kSelect ? 3 : 2;
      if (op == ExprOp::kMin || op == ExprOp::kMax ? e.args.size() < 2 : e.args.size() != want)
        fail(name + "() takes " + (want == 3 ? "3 arguments" : op == ExprOp::kCdiv ? "2 arguments" : "at least 2 arguments"), nullptr);
      return e;
    }
    if (is("[") && !cur().space_before) {
      auto level = enter(nest_, start);
      ++p_;
      Expr e{ExprOp::kIndex, 0, name, {}, l};
      e.args.push_back(expr_h(1, h));
      check_height(++h, start);
      expect("]", "']' closing the index");
      return e;
    }
    return Expr{ExprOp::kName, 0, name, {}, l};
  }

  std::vector<Expr> expr_list() {
    std::vector<Expr> v;
    do v.push_back(expr());
    while (accept(","));
    return v;
  }

  // ---- header
  void params(Kernel& k) {
    do {
      Param pr;
      pr.loc = loc();
      pr.name = ident("a parameter name");
      if (accept("=")) pr.def = expr();
      k.params.push_back(std::move(pr));
    } while (accept(","));
  }

  void top_item(Kernel& k) {
    auto once = [&](auto& field, const char* what) {
      if (!field.empty()) fail(std::string("'") + what + "' given twice, expected it once per kernel");
    };
    if (is_word("grid")) { once(k.grid, "grid"); ++p_; k.grid = dims("grid"); return; }
    if (is_word("block")) { once(k.block, "block"); ++p_; k.block = dims("block"); return; }
    if (is_word("regs")) { ++p_; k.regs = expr(); return; }
    if (is_word("smem")) { ++p_; k.smem = expr(); return; }
    if (is_word("buffer")) { k.buffers.push_back(buffer()); return; }
    if (is_word("shared")) { k.shared.push_back(shared()); return; }
    if (tpu_ && is_word("vmem")) { k.buffers.push_back(buffer()); return; }
    k.body.push_back(stmt());
  }

  std::vector<Expr> dims(const char* what) {
    auto v = expr_list();
    if (v.size() > 3) fail(std::string(what) + " has more than 3 dimensions, expected x[, y[, z]]");
    return v;
  }

  DType dtype() {
    const Token& t = cur();
    auto d = parse_dtype(ident("a dtype"));
    if (!d) fail("unknown dtype '" + t.text + "', expected u8 i8 e4m3 e5m2 f16 bf16 u16 i16 u32 i32 f32 tf32 u64 i64 f64", &t);
    return *d;
  }

  BufferDecl buffer() {
    BufferDecl b;
    b.loc = loc();
    b.vmem = is_word("vmem");
    ++p_;
    b.name = ident("a buffer name");
    expect(":", "':' then the element type");
    b.dtype = dtype();
    expect("[", "'[' and the shape");
    b.shape = expr_list();
    expect("]", "']' closing the shape");
    while (!cur().bol && cur().kind == Tok::kIdent) {
      if (accept_word("layout")) {
        b.has_layout = true;
        if (accept_word("col")) b.col_major = true;
        else if (!accept_word("row")) unexpected("'row' or 'col'");
      } else if (accept_word("align")) {
        b.align = expr();
      } else if (accept_word("init")) {
        init(b);
      } else if (b.vmem && accept_word("slots")) {
        b.slots = expr();
      } else {
        unexpected("'layout', 'align' or 'init'");
      }
    }
    return b;
  }

  void init(BufferDecl& b) {
    if (accept_word("zero")) { b.init = InitKind::kZero; return; }
    if (accept_word("iota")) { b.init = InitKind::kIota; return; }
    if (!accept_word("chase")) unexpected("an init pattern: zero, iota or chase(stride_bytes, seed)");
    b.init = InitKind::kChase;
    expect("(", "'(' then stride_bytes, seed");
    b.init_args = expr_list();
    if (b.init_args.size() != 2) fail("chase takes 2 arguments (stride_bytes, seed)");
    expect(")", "')' closing chase(...)");
  }

  bool accept_word(std::string_view w) {
    if (!is_word(w)) return false;
    ++p_;
    return true;
  }

  SharedDecl shared() {
    SharedDecl s;
    s.loc = loc();
    ++p_;
    s.name = ident("a shared array name");
    expect(":", "':' then the element type");
    s.dtype = dtype();
    expect("[", "'[' and the element count");
    s.count = expr();
    expect("]", "']' closing the element count");
    return s;
  }

  // ---- statements
  std::vector<Stmt> block() {
    auto level = enter(stmt_nest_, cur(), true);
    expect("{", "'{' opening a block");
    std::vector<Stmt> v;
    while (!is("}") && !at_end()) v.push_back(stmt());
    expect("}", "'}' closing the block");
    return v;
  }

  Stmt stmt() {
    Stmt s;
    s.loc = loc();
    if (accept_word("let")) {
      s.kind = StmtKind::kLet;
      s.name = ident("a name after 'let'");
      expect("=", "'=' after the let name");
      s.e.push_back(expr());
    } else if (accept_word("reg")) {
      s.kind = StmtKind::kReg;
      s.name = ident("a register array name");
      expect("[", "'[' and the register count");
      s.e.push_back(expr());
      expect("]", "']' closing the register count");
    } else if (accept_word("loop")) {
      loop(s);
    } else if (accept_word("if")) {
      if_stmt(s);
    } else if (is_word("exit") || is_word("return")) {
      s.kind = StmtKind::kExit;
      s.is_return = cur().text == "return";
      ++p_;
    } else {
      s.kind = StmtKind::kInstr;
      s.instr = instr();
    }
    return s;
  }

  void loop(Stmt& s) {
    s.kind = StmtKind::kLoop;
    s.name = ident("a loop variable");
    expect_word("in", "'in' after the loop variable");
    s.e.push_back(expr());
    expect("..", "'..' between the loop bounds");
    s.e.push_back(expr());
    if (accept_word("step")) s.e.push_back(expr());
    if (accept_word("runtime")) s.runtime_trip = true;
    if (accept_word("unroll")) s.unroll = expr();
    if (!s.runtime_trip && accept_word("runtime")) s.runtime_trip = true;
    s.body = block();
  }

  void if_stmt(Stmt& s) {
    s.kind = StmtKind::kIf;
    expect("(", "'(' and the condition");
    s.e.push_back(expr());
    expect(")", "')' closing the condition");
    s.body = block();
    if (accept_word("else")) {
      s.has_else = true;
      if (is_word("if")) {
        auto level = enter(stmt_nest_, cur(), true);  // an else-if chain nests in the AST
        Stmt inner;
        inner.loc = loc();
        ++p_;
        if_stmt(inner);
        s.else_body.push_back(std::move(inner));
      } else {
        s.else_body = block();
      }
    }
  }

  bool instr_start() const {
    if (cur().kind != Tok::kIdent) return false;
    const Token& n = peek();
    return n.kind == Tok::kPunct && (n.text == "=" || n.text == "," || (n.text == "[" && !n.space_before));
  }

  Instr instr() {
    Instr in;
    in.loc = loc();
    if (accept("@")) {
      expect("(", "'(' after '@' and a predicate");
      in.pred = expr();
      expect(")", "')' closing the predicate");
    }
    if (cur().kind != Tok::kIdent) unexpected("an instruction or statement");
    if (instr_start()) {
      do in.dsts.push_back(dst());
      while (accept(","));
      expect("=", "'=' after the destination registers");
    }
    mnemonic(in);
    if (!cur().bol && !is("}") && !at_end()) {
      do in.srcs.push_back(expr());
      while (accept(","));
    }
    if (!cur().bol && !is("}") && !at_end()) unexpected("end of line after the instruction's operands");
    return in;
  }

  Expr dst() {
    Loc l = loc();
    std::string name = ident("a destination register");
    if (is("[") && !cur().space_before) {
      ++p_;
      Expr e{ExprOp::kIndex, 0, name, {}, l};
      e.args.push_back(expr());
      expect("]", "']' closing the register index");
      return e;
    }
    return Expr{ExprOp::kName, 0, name, {}, l};
  }

  void mnemonic(Instr& in) {
    const Token& start = cur();
    if (cur().kind != Tok::kIdent) unexpected("an instruction mnemonic");
    in.mnemonic = toks_[p_++].text;
    if (in.mnemonic.size() > 2 && in.mnemonic.ends_with(".v") && is("(") && !cur().space_before) {
      ++p_;
      in.vec = expr();
      expect(")", "')' closing .v(...)");
      in.mnemonic += "()";
      while (is(".") && !cur().space_before && peek().kind == Tok::kIdent && !peek().space_before) {
        in.mnemonic += "." + peek().text;
        p_ += 2;
      }
    }
    // TPU instructions are left to the verifiers: the TPU one checks them, the GPU one refuses them.
    if (tpu_ || is_tpu_mnemonic(in.mnemonic)) return;
    std::string err;
    if (!decode_mnemonic(in.mnemonic, &err)) fail(err, &start);
  }
};

}  // namespace

std::unique_ptr<Kernel> parse_kernel_string(std::string_view text, const std::string& name) {
  return Parser(text, name).kernel();
}

std::unique_ptr<Kernel> parse_kernel_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError(SourcePos{path, 0, 0}, "cannot open the kernel file, expected a readable .kir file");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_kernel_string(ss.str(), path);
}

}  // namespace gtsim::ir
