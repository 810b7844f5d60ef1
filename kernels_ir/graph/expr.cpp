// Elementwise expression trees: parsing (`sin(x)^2 + cos(x)^2`), operation counts, printing.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "kernels_ir/graph/workload.hpp"

namespace gtsim::wl {

std::string_view ew_op_name(EwOp op) {
  switch (op) {
    case EwOp::kInput: return "input";
    case EwOp::kConst: return "const";
    case EwOp::kNeg: return "neg";
    case EwOp::kAdd: return "add";
    case EwOp::kSub: return "sub";
    case EwOp::kMul: return "mul";
    case EwOp::kDiv: return "div";
    case EwOp::kPow: return "pow";
    case EwOp::kSin: return "sin";
    case EwOp::kCos: return "cos";
    case EwOp::kExp: return "exp";
    case EwOp::kLog: return "log";
    case EwOp::kTanh: return "tanh";
    case EwOp::kSigmoid: return "sigmoid";
    case EwOp::kRelu: return "relu";
    case EwOp::kGelu: return "gelu";
    case EwOp::kSqrt: return "sqrt";
    case EwOp::kRsqrt: return "rsqrt";
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

class Parser {
 public:
  Parser(const std::string& s, std::vector<std::string>& names, const SourcePos& pos) : s_(s), names_(names), pos_(pos) {}

  EwExpr parse() {
    EwExpr e = sum();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    SourcePos p = pos_;
    if (p.col > 0) p.col += int(i_) + 1;  // inside the quoted scalar
    throw InputError(p, "expression \"" + s_ + "\": " + what);
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  static EwExpr bin(EwOp op, EwExpr a, EwExpr b) {
    EwExpr e;
    e.op = op;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }
  EwExpr sum() {
    EwExpr e = product();
    for (;;) {
      if (eat('+')) e = bin(EwOp::kAdd, std::move(e), product());
      else if (eat('-')) e = bin(EwOp::kSub, std::move(e), product());
      else return e;
    }
  }
  EwExpr product() {
    EwExpr e = unary();
    for (;;) {
      if (eat('*')) e = bin(EwOp::kMul, std::move(e), unary());
      else if (eat('/')) e = bin(EwOp::kDiv, std::move(e), unary());
      else return e;
    }
  }
  EwExpr unary() {
    if (eat('-')) {
      EwExpr e;
      e.op = EwOp::kNeg;
      e.args.push_back(unary());
      if (e.args[0].op == EwOp::kConst) return EwExpr{EwOp::kConst, -1, -e.args[0].value, {}};
      return e;
    }
    return power();
  }
  EwExpr power() {
    EwExpr base = primary();
    if (eat('^')) return bin(EwOp::kPow, std::move(base), unary());
    return base;
  }
  EwExpr primary() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end, expected a name, a number or '('");
    char c = s_[i_];
    if (eat('(')) {
      EwExpr e = sum();
      if (!eat(')')) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == 'e'))
        ++i_;
      EwExpr e;
      e.op = EwOp::kConst;
      e.value = std::stod(s_.substr(start, i_ - start));
      return e;
    }
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
        EwExpr e;
        e.op = it->second;
        e.args.push_back(sum());
        if (!eat(')')) fail("expected ')' after the argument of " + name);
        return e;
      }
      EwExpr e;
      e.op = EwOp::kInput;
      for (size_t k = 0; k < names_.size(); ++k)
        if (names_[k] == name) e.input = int(k);
      if (e.input < 0) {
        names_.push_back(name);
        e.input = int(names_.size() - 1);
      }
      return e;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  std::vector<std::string>& names_;
  SourcePos pos_;
  size_t i_ = 0;
};
}  // namespace

EwExpr parse_ew_expression(const std::string& text, std::vector<std::string>& names, const SourcePos& pos) {
  return Parser(text, names, pos).parse();
}

int EwExpr::sfu_ops() const {
  int n = 0;
  for (const auto& a : args) n += a.sfu_ops();
  switch (op) {
    case EwOp::kSin: case EwOp::kCos: case EwOp::kExp: case EwOp::kLog:
    case EwOp::kSqrt: case EwOp::kRsqrt: return n + 1;
    case EwOp::kTanh: case EwOp::kSigmoid: case EwOp::kGelu: return n + 2;  // ex2 + rcp
    case EwOp::kDiv: return n + 1;                                          // rcp
    case EwOp::kPow: return n + (pow_needs_sfu(*this) ? 2 : 0);             // lg2 + ex2
    default: return n;
  }
}

int EwExpr::alu_ops() const {
  int n = 0;
  for (const auto& a : args) n += a.alu_ops();
  switch (op) {
    case EwOp::kInput: case EwOp::kConst: return n;
    case EwOp::kPow: return n + std::max(pow_alu(*this), 1);
    case EwOp::kSigmoid: return n + 2;  // neg-scale, add 1
    case EwOp::kTanh: return n + 3;
    case EwOp::kGelu: return n + 6;     // tanh approximation: x*(1+tanh(c*(x+0.044715x^3)))/2
    case EwOp::kSin: case EwOp::kCos: return n + 1;  // range reduction multiply
    case EwOp::kExp: return n + 1;                   // scale by log2(e)
    case EwOp::kDiv: return n + 1;                   // multiply by the reciprocal
    default: return n + 1;
  }
}

std::string EwExpr::str(const std::vector<std::string>& names) const {
  std::ostringstream o;
  switch (op) {
    case EwOp::kInput: return input >= 0 && size_t(input) < names.size() ? names[input] : "?";
    case EwOp::kConst: o << value; return o.str();
    case EwOp::kNeg: return "-(" + args[0].str(names) + ")";
    case EwOp::kAdd: return "(" + args[0].str(names) + " + " + args[1].str(names) + ")";
    case EwOp::kSub: return "(" + args[0].str(names) + " - " + args[1].str(names) + ")";
    case EwOp::kMul: return args[0].str(names) + " * " + args[1].str(names);
    case EwOp::kDiv: return args[0].str(names) + " / " + args[1].str(names);
    case EwOp::kPow: return args[0].str(names) + "^" + args[1].str(names);
    default: return std::string(ew_op_name(op)) + "(" + args[0].str(names) + ")";
  }
}

}  // namespace gtsim::wl
