#include "kernels_ir/lexer.hpp"

#include <cctype>
#include <cstdint>

namespace gtsim::ir {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

constexpr std::string_view kTwoChar[] = {"..", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};

}  // namespace

std::vector<Token> lex(std::string_view s) {
  std::vector<Token> out;
  int line = 1, col = 1;
  bool bol = true, space = false;
  size_t i = 0;
  auto adv = [&](size_t n) {
    for (size_t k = 0; k < n; ++k, ++i) {
      if (s[i] == '\n')
        line++, col = 1;
      else
        col++;
    }
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      adv(1);
      bol = true;
      space = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      adv(1);
      space = true;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') adv(1);
      continue;
    }
    Token t;
    t.line = line, t.col = col, t.bol = bol, t.space_before = space;
    bol = false, space = false;
    size_t start = i;
    if (ident_start(c)) {
      t.kind = Tok::kIdent;
      while (i < s.size() && (ident_char(s[i]) || (s[i] == '.' && i + 1 < s.size() && ident_char(s[i + 1])))) adv(1);
      // keep a trailing ".v(" style dot out: `ld.global.v(` lexes as ident "ld.global.v" then "("
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Tok::kNum;
      int base = 10;
      if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) base = 16, adv(2);
      uint64_t v = 0;
      size_t first_digit = i;
      constexpr uint64_t kMax = uint64_t(INT64_MAX);
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])) &&
             (base == 16 || std::isdigit(static_cast<unsigned char>(s[i])))) {
        int d = std::isdigit(static_cast<unsigned char>(s[i])) ? s[i] - '0' : (std::tolower(s[i]) - 'a' + 10);
        if (v > (kMax - uint64_t(d)) / uint64_t(base))
          t.out_of_range = true;  // v * base + d > INT64_MAX
        else
          v = v * uint64_t(base) + uint64_t(d);
        adv(1);
      }
      t.no_digits = i == first_digit;
      t.num = t.out_of_range ? 0 : int64_t(v);
    } else {
      t.kind = Tok::kPunct;
      size_t n = 1;
      for (auto tc : kTwoChar)
        if (s.substr(i, 2) == tc) n = 2;
      adv(n);
    }
    t.text = std::string(s.substr(start, i - start));
    out.push_back(std::move(t));
  }
  Token end;
  end.line = line, end.col = col, end.bol = true, end.space_before = true;
  out.push_back(end);
  return out;
}

}  // namespace gtsim::ir
