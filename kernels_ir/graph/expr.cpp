// Elementwise expression trees: parsing (`sin(x)^2 + cos(x)^2`), operation counts, printing.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>

#include "kernels_ir/graph/workload.hpp"
#include "kernels_ir/parser.hpp"

namespace gtsim::wl {

std::string_view ew_op_name(EwOp op) {
  switch (op) {
    case EwOp::kInput:
      return "input";
    case EwOp::kConst:
      return "const";
    case EwOp::kNeg:
      return "neg";
    case EwOp::kAdd:
      return "add";
    case EwOp::kSub:
      return "sub";
    case EwOp::kMul:
      return "mul";
    case EwOp::kDiv:
      return "div";
    case EwOp::kPow:
      return "pow";
    case EwOp::kSin:
      return "sin";
    case EwOp::kCos:
      return "cos";
    case EwOp::kExp:
      return "exp";
    case EwOp::kLog:
      return "log";
    case EwOp::kTanh:
      return "tanh";
    case EwOp::kSigmoid:
      return "sigmoid";
    case EwOp::kRelu:
      return "relu";
    case EwOp::kGelu:
      return "gelu";
    case EwOp::kSqrt:
      return "sqrt";
    case EwOp::kRsqrt:
      return "rsqrt";
  }
  return "?";
}

namespace {
const std::map<std::string, EwOp>& functions() {
  static const std::map<std::string, EwOp> f = {
      {"sin", EwOp::kSin},   {"cos", EwOp::kCos},         {"exp", EwOp::kExp},   {"log", EwOp::kLog},
      {"tanh", EwOp::kTanh}, {"sigmoid", EwOp::kSigmoid}, {"relu", EwOp::kRelu}, {"gelu", EwOp::kGelu},
      {"sqrt", EwOp::kSqrt}, {"rsqrt", EwOp::kRsqrt}};
  return f;
}

// x^n for a small integer n is n-1 multiplies; other exponents use ex2(lg2(x) * p) on the SFU.
bool pow_needs_sfu(const EwExpr& e) {
  if (e.args.size() != 2 || e.args[1].op != EwOp::kConst) return true;
  double p = e.args[1].value;
  return !(p >= 1 && p <= 8 && std::floor(p) == p);
}
int pow_alu(const EwExpr& e) { return pow_needs_sfu(e) ? 1 : int(e.args[1].value) - 1; }

// Recursive descent with explicit limits (kernels_ir/parser.hpp, kMaxNesting; kMaxExprNodes): the
// nesting of brackets, calls, unary minus and ^, and the height of the tree an operator chain builds
// (`a + b + c ...` is left-deep), so every later walk over the tree has bounded recursion; and the
// node count. Names are looked up in a hash map, so the parse is linear in the text.
class Parser {
 public:
  Parser(const std::string& s, std::vector<std::string>& names, const SourcePos& pos)
      : s_(s), names_(names), pos_(pos) {
    for (size_t k = 0; k < names_.size(); ++k) index_.emplace(names_[k], int(k));
  }

  EwExpr parse() {
    int h = 0;
    EwExpr e = sum(h);
    skip();
    if (i_ != s_.size())
      fail("unexpected '" + std::string(1, s_[i_]) + "', expected an operator (+ - * / ^) or the end");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    SourcePos p = pos_;
    if (p.col > 0) p.col += int(i_) + 1;  // inside the quoted scalar
    std::string shown = s_.size() > 60 ? s_.substr(0, 57) + "..." : s_;
    throw InputError(p, "expression \"" + shown + "\": " + what);
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  static std::string too_deep() {
    return "nested deeper than " + std::to_string(ir::kMaxNesting) + " levels, expected at most " +
           std::to_string(ir::kMaxNesting) + " (split it into several ops)";
  }
  struct Level {
    int* n;
    explicit Level(int* p) : n(p) {}
    Level(const Level&) = delete;
    ~Level() { --*n; }
  };
  [[nodiscard]] Level enter() {
    if (nest_ >= ir::kMaxNesting) fail(too_deep());
    ++nest_;
    return Level(&nest_);
  }
  EwExpr node(EwOp op) {
    if (++nodes_ > kMaxExprNodes)
      fail("more than " + std::to_string(kMaxExprNodes) + " operators and operands, expected at most " +
           std::to_string(kMaxExprNodes) + " (split it into several ops)");
    EwExpr e;
    e.op = op;
    return e;
  }
  EwExpr bin(EwOp op, EwExpr a, EwExpr b, int& h, int rh, size_t at) {
    h = std::max(h, rh) + 1;
    if (h > ir::kMaxNesting) {
      i_ = at;
      fail(too_deep());
    }
    EwExpr e = node(op);
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }
  EwExpr sum(int& h) {
    EwExpr e = product(h);
    for (;;) {
      size_t at = (skip(), i_);
      EwOp op = EwOp::kAdd;
      if (eat('+'))
        op = EwOp::kAdd;
      else if (eat('-'))
        op = EwOp::kSub;
      else
        return e;
      int rh = 0;
      EwExpr r = product(rh);
      e = bin(op, std::move(e), std::move(r), h, rh, at);
    }
  }
  EwExpr product(int& h) {
    EwExpr e = unary(h);
    for (;;) {
      size_t at = (skip(), i_);
      EwOp op = EwOp::kMul;
      if (eat('*'))
        op = EwOp::kMul;
      else if (eat('/'))
        op = EwOp::kDiv;
      else
        return e;
      int rh = 0;
      EwExpr r = unary(rh);
      e = bin(op, std::move(e), std::move(r), h, rh, at);
    }
  }
  EwExpr unary(int& h) {
    if (eat('-')) {
      --i_;
      auto level = enter();
      ++i_;
      EwExpr a = unary(h);
      if (a.op == EwOp::kConst) {
        a.value = -a.value;
        return a;
      }
      EwExpr e = node(EwOp::kNeg);
      e.args.push_back(std::move(a));
      ++h;
      return e;
    }
    return power(h);
  }
  EwExpr power(int& h) {
    EwExpr base = primary(h);
    size_t at = (skip(), i_);
    if (eat('^')) {
      i_ = at;
      auto level = enter();
      ++i_;
      int rh = 0;
      EwExpr r = unary(rh);
      return bin(EwOp::kPow, std::move(base), std::move(r), h, rh, at);
    }
    return base;
  }
  // A number: digits[.digits][e[+-]digits] or .digits[...]; anything else that starts like one
  // ("1.2.3", "1e", "1e999999") is an error at the number with the expected form.
  EwExpr number() {
    size_t start = i_;
    auto digits = [&] {
      size_t b = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      return i_ > b;
    };
    bool ok = digits();
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      ok = digits() || ok;
    }
    if (ok && i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      ok = digits();
    }
    // a number runs into no further digit, dot or letter ("1.2.3", "2x")
    if (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == '_'))
      ok = false;
    size_t end = i_;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '.' || s_[end] == '_'))
      ++end;
    std::string text = s_.substr(start, end - start);
    i_ = start;
    if (!ok) fail("malformed number '" + text + "', expected digits[.digits][e[+-]digits] such as 2, 0.5 or 1e-3");
    EwExpr e = node(EwOp::kConst);
    const char* first = s_.data() + start;
    auto [ptr, ec] = std::from_chars(first, s_.data() + end, e.value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(e.value)))
      fail("number '" + text + "' is out of range, expected a finite number (at most about 1.8e308)");
    if (ec != std::errc() || ptr != s_.data() + end)
      fail("malformed number '" + text + "', expected digits[.digits][e[+-]digits] such as 2, 0.5 or 1e-3");
    i_ = end;
    return e;
  }
  EwExpr primary(int& h) {
    skip();
    h = 1;
    if (i_ >= s_.size()) fail("unexpected end, expected a name, a number or '('");
    char c = s_[i_];
    if (c == '(') {
      auto level = enter();
      ++i_;
      EwExpr e = sum(h);
      if (!eat(')')) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
        ++i_;
      std::string name = s_.substr(start, i_ - start);
      if (eat('(')) {
        auto it = functions().find(name);
        if (it == functions().end()) {
          i_ = start;
          fail("unknown function '" + name + "' (known: sin cos exp log tanh sigmoid relu gelu sqrt rsqrt)");
        }
        auto level = enter();
        EwExpr e = node(it->second);
        e.args.push_back(sum(h));
        ++h;
        if (!eat(')')) fail("expected ')' after the argument of " + name);
        return e;
      }
      EwExpr e = node(EwOp::kInput);
      auto [it, fresh] = index_.emplace(name, int(names_.size()));
      if (fresh) names_.push_back(name);
      e.input = it->second;
      return e;
    }
    fail("unexpected '" + std::string(1, c) + "', expected a name, a number or '('");
  }

  const std::string& s_;
  std::vector<std::string>& names_;
  std::unordered_map<std::string, int> index_;
  SourcePos pos_;
  size_t i_ = 0;
  int nest_ = 0, nodes_ = 0;
};
}  // namespace

EwExpr parse_ew_expression(const std::string& text, std::vector<std::string>& names, const SourcePos& pos) {
  return Parser(text, names, pos).parse();
}

int EwExpr::sfu_ops() const {
  int n = 0;
  for (const auto& a : args) n += a.sfu_ops();
  switch (op) {
    case EwOp::kSin:
    case EwOp::kCos:
    case EwOp::kExp:
    case EwOp::kLog:
    case EwOp::kSqrt:
    case EwOp::kRsqrt:
      return n + 1;
    case EwOp::kTanh:
    case EwOp::kSigmoid:
    case EwOp::kGelu:
      return n + 2;  // ex2 + rcp
    case EwOp::kDiv:
      return n + 1;  // rcp
    case EwOp::kPow:
      return n + (pow_needs_sfu(*this) ? 2 : 0);  // lg2 + ex2
    default:
      return n;
  }
}

int EwExpr::alu_ops() const {
  int n = 0;
  for (const auto& a : args) n += a.alu_ops();
  switch (op) {
    case EwOp::kInput:
    case EwOp::kConst:
      return n;
    case EwOp::kPow:
      return n + std::max(pow_alu(*this), 1);
    case EwOp::kSigmoid:
      return n + 2;  // neg-scale, add 1
    case EwOp::kTanh:
      return n + 3;
    case EwOp::kGelu:
      return n + 6;  // tanh approximation: x*(1+tanh(c*(x+0.044715x^3)))/2
    case EwOp::kSin:
    case EwOp::kCos:
      return n + 1;  // range reduction multiply
    case EwOp::kExp:
      return n + 1;  // scale by log2(e)
    case EwOp::kDiv:
      return n + 1;  // multiply by the reciprocal
    default:
      return n + 1;
  }
}

std::string EwExpr::str(const std::vector<std::string>& names) const {
  std::ostringstream o;
  switch (op) {
    case EwOp::kInput:
      return input >= 0 && size_t(input) < names.size() ? names[input] : "?";
    case EwOp::kConst:
      o << value;
      return o.str();
    case EwOp::kNeg:
      return "-(" + args[0].str(names) + ")";
    case EwOp::kAdd:
      return "(" + args[0].str(names) + " + " + args[1].str(names) + ")";
    case EwOp::kSub:
      return "(" + args[0].str(names) + " - " + args[1].str(names) + ")";
    case EwOp::kMul:
      return args[0].str(names) + " * " + args[1].str(names);
    case EwOp::kDiv:
      return args[0].str(names) + " / " + args[1].str(names);
    case EwOp::kPow:
      return args[0].str(names) + "^" + args[1].str(names);
    default:
      return std::string(ew_op_name(op)) + "(" + args[0].str(names) + ")";
  }
}

}  // namespace gtsim::wl
