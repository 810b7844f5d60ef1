// UTF-8 validation (RFC 3629): the config reader refuses text that is not UTF-8 at load, with the
// position of the first bad byte, so that nothing later (JSON output, reports) meets it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gtsim::utf8 {

// Offset of the first byte that does not start or continue a well-formed UTF-8 sequence (overlong
// forms, UTF-16 surrogates and code points above U+10FFFF are malformed); s.size() when all is well.
inline size_t first_invalid(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;  // a continuation byte without a lead, 0xC0, 0xC1 or 0xF5..0xFF
    }
    if (i + 1 >= n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (i + k >= n || (p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return n;
}

inline bool valid(std::string_view s) { return first_invalid(s) == s.size(); }

}  // namespace gtsim::utf8
