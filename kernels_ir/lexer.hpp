// Tokens of the kernel language. Identifiers may contain inner dots (tid.x, ld.global.v4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gtsim::ir {

enum class Tok : uint8_t { kIdent, kNum, kPunct, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  int64_t num = 0;
  int line = 0, col = 0;
  bool bol = false;           // first token on its line
  bool space_before = false;  // whitespace between this token and the previous one
  // kNum only: the literal does not fit in int64_t (num is then 0), or `0x` has no digits after it.
  // The lexer never throws; the parser reports these with the literal's position.
  bool out_of_range = false, no_digits = false;
};

// Never throws: unknown characters become one-character punctuation tokens that the parser rejects
// with a message naming what it expected there.
std::vector<Token> lex(std::string_view src);

}  // namespace gtsim::ir
