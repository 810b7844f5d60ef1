#include "kernels_ir/exec/shared_banks.hpp"

#include <algorithm>
#include <bit>

namespace gtsim::ir {

namespace {

// Whether every active lane reads the same address as its partner lane ^ `x` (an inactive partner
// does not break the pattern).
bool pairs_uniform(uint32_t active, const uint64_t* addr, int x) {
  for (uint32_t m = active; m; m &= m - 1) {
    int l = std::countr_zero(m);
    int p = l ^ x;
    if ((active >> p & 1u) && addr[l] != addr[p]) return false;
  }
  return true;
}

}  // namespace

uint32_t shared_phase_lanes(const DynInst& inst, uint32_t banks, uint32_t bank_bytes, const uint64_t* addr) {
  const bool ldst = inst.op == OpClass::kLdShared || inst.op == OpClass::kStShared;
  const uint32_t bytes = std::max<uint32_t>(inst.access_bytes, 1);
  const uint32_t wave_bytes = banks * bank_bytes;
  if (!ldst || bytes * kWarpSize <= wave_bytes) return kWarpSize;
  uint32_t lanes = std::bit_floor(std::max<uint32_t>(wave_bytes / bytes, 1));
  if (inst.op == OpClass::kLdShared &&
      (pairs_uniform(inst.addr_active, addr, 1) || pairs_uniform(inst.addr_active, addr, 2)))
    lanes *= 2;
  return std::min<uint32_t>(lanes, kWarpSize);
}

SharedCost shared_cost(const DynInst& inst, uint32_t banks, uint32_t bank_bytes, const uint64_t* addr) {
  if (!addr) addr = inst.addr;
  // The words the phase's lanes touch (at most 32 lanes x 16 bytes / 4 = 128 per phase, so fixed
  // arrays, no allocation), sorted so that each distinct word counts once on its bank.
  constexpr int kMaxWords = 32 * 64;
  constexpr int kMaxBanks = 64;
  constexpr uint64_t kSpanBits = 4096;  // words a phase's bitmap covers (32 KiB of 8-byte words, 16 KiB of 4-byte)
  static thread_local uint64_t word[kMaxWords];
  const uint32_t bytes = std::max<uint32_t>(inst.access_bytes, 1);
  // Shifts and masks for the usual power-of-two geometry (32 banks of 4 bytes): two 64-bit
  // divisions per lane otherwise (this runs for every shared-memory and ldmatrix instruction).
  const bool pow2 = std::has_single_bit(bank_bytes) && std::has_single_bit(banks);
  const uint32_t word_shift = uint32_t(std::countr_zero(bank_bytes));
  const uint64_t bank_mask = banks - 1;
  const uint32_t nb = std::min<uint32_t>(banks, kMaxBanks);
  const uint32_t lanes = shared_phase_lanes(inst, banks, bank_bytes, addr);
  const uint32_t lanes_mask = shared_lanes(inst);
  const uint32_t phase_mask = lanes >= 32 ? ~0u : (1u << lanes) - 1u;
  SharedCost c{0, 0};
  for (uint32_t first_lane = 0; first_lane < kWarpSize; first_lane += lanes) {
    const uint32_t act = lanes_mask & (phase_mask << first_lane);
    if (!act) continue;
    int n = 0;
    uint64_t wmin = ~0ull, wmax = 0;
    for (uint32_t m = act; m; m &= m - 1) {
      int lane = std::countr_zero(m);
      uint64_t lo = pow2 ? addr[lane] >> word_shift : addr[lane] / bank_bytes;
      uint64_t hi = pow2 ? (addr[lane] + bytes - 1) >> word_shift : (addr[lane] + bytes - 1) / bank_bytes;
      for (uint64_t w = lo; w <= hi && n < kMaxWords; ++w) {
        word[n++] = w;
        wmin = std::min(wmin, w);
        wmax = std::max(wmax, w);
      }
    }
    uint32_t distinct = 0, worst = 0;
    const uint64_t base = wmin & ~63ull;  // bit j of a bitmap word is word base + 64 i + j, on bank j % banks
    if (n > 0 && pow2 && banks <= 64 && wmax - base < kSpanBits) {
      // The usual case, the words within a few KiB: a bitmap of the span holds each distinct word
      // once, and bit-sliced counters add its `banks`-bit chunks bank by bank (the same distinct
      // words and per-bank counts as sorting, without the sort or a counter per word).
      uint64_t bits[kSpanBits / 64];
      const size_t used = size_t((wmax - base) >> 6) + 1;
      std::fill_n(bits, used, 0);
      for (int i = 0; i < n; ++i) bits[(word[i] - base) >> 6] |= 1ull << ((word[i] - base) & 63);
      constexpr int kPlanes = 16;  // counts up to kMaxWords (2048) fit in 12
      uint64_t plane[kPlanes] = {};
      const uint64_t chunk_mask = banks == 64 ? ~0ull : (1ull << banks) - 1;
      for (size_t j = 0; j < used; ++j) {
        distinct += uint32_t(std::popcount(bits[j]));
        for (uint32_t sh = 0; sh < 64; sh += banks) {
          uint64_t carry = (bits[j] >> sh) & chunk_mask;
          for (int p = 0; carry && p < kPlanes; ++p) {
            const uint64_t t = plane[p] & carry;
            plane[p] ^= carry;
            carry = t;
          }
        }
      }
      uint64_t cand = chunk_mask;  // the banks that may hold the largest count
      for (int p = kPlanes - 1; p >= 0; --p)
        if (cand & plane[p]) cand &= plane[p], worst |= 1u << p;
    } else {
      uint16_t count[kMaxBanks] = {};
      std::sort(word, word + n);
      for (int i = 0; i < n; ++i) {
        if (i > 0 && word[i] == word[i - 1]) continue;
        const uint64_t w = word[i];
        uint32_t b = uint32_t(pow2 ? w & bank_mask : w % banks) % nb;
        ++distinct;
        worst = std::max<uint32_t>(worst, ++count[b]);
      }
    }
    c.wavefronts += std::max<uint32_t>(worst, 1);
    c.ideal += std::max<uint32_t>((distinct + banks - 1) / banks, 1);
  }
  if (c.wavefronts == 0) c = SharedCost{};
  return c;
}

}  // namespace gtsim::ir
