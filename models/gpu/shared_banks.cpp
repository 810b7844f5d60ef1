#include "models/gpu/shared_banks.hpp"

#include <algorithm>
#include <bit>

namespace gtsim::gpu {

SharedCost shared_wavefronts(const ir::DynInst& inst, uint32_t banks, uint32_t bank_bytes) {
  // Per bank, a short list of the distinct words it must serve (a linked list in fixed arrays:
  // at most 32 lanes x 16 bytes / 4 = 128 words, so no allocation).
  constexpr int kMaxWords = 32 * 64;
  constexpr int kMaxBanks = 64;
  int16_t head[kMaxBanks];
  std::fill(head, head + kMaxBanks, int16_t(-1));
  uint16_t count[kMaxBanks] = {};
  static thread_local uint64_t word[kMaxWords];
  static thread_local int16_t next[kMaxWords];
  int n = 0;
  uint32_t distinct = 0, worst = 0;
  uint32_t bytes = std::max<uint32_t>(inst.access_bytes, 1);
  // Shifts and masks for the usual power-of-two geometry (32 banks of 4 bytes): two 64-bit
  // divisions per lane otherwise (this runs for every shared-memory and ldmatrix instruction).
  const bool pow2 = std::has_single_bit(bank_bytes) && std::has_single_bit(banks);
  const uint32_t word_shift = uint32_t(std::countr_zero(bank_bytes));
  const uint64_t bank_mask = banks - 1;
  for (uint32_t m = inst.addr_active; m; m &= m - 1) {
    int lane = std::countr_zero(m);
    uint64_t first = pow2 ? inst.addr[lane] >> word_shift : inst.addr[lane] / bank_bytes;
    uint64_t last = pow2 ? (inst.addr[lane] + bytes - 1) >> word_shift : (inst.addr[lane] + bytes - 1) / bank_bytes;
    for (uint64_t w = first; w <= last && n < kMaxWords; ++w) {
      uint32_t b = uint32_t(pow2 ? w & bank_mask : w % banks);
      bool seen = false;
      for (int16_t i = head[b]; i >= 0; i = next[i])
        if (word[i] == w) {
          seen = true;
          break;
        }
      if (seen) continue;
      word[n] = w;
      next[n] = head[b];
      head[b] = int16_t(n++);
      ++distinct;
      worst = std::max<uint32_t>(worst, ++count[b]);
    }
  }
  SharedCost c;
  c.wavefronts = std::max<uint32_t>(worst, 1);
  c.ideal = std::max<uint32_t>((distinct + banks - 1) / banks, 1);
  return c;
}

}  // namespace gtsim::gpu
