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
    for (uint32_t m = act; m; m &= m - 1) {
      int lane = std::countr_zero(m);
      uint64_t lo = pow2 ? addr[lane] >> word_shift : addr[lane] / bank_bytes;
      uint64_t hi = pow2 ? (addr[lane] + bytes - 1) >> word_shift : (addr[lane] + bytes - 1) / bank_bytes;
      for (uint64_t w = lo; w <= hi && n < kMaxWords; ++w) word[n++] = w;
    }
    std::sort(word, word + n);
    uint16_t count[kMaxBanks] = {};
    uint32_t distinct = 0, worst = 0;
    for (int i = 0; i < n; ++i) {
      if (i > 0 && word[i] == word[i - 1]) continue;
      const uint64_t w = word[i];
      uint32_t b = uint32_t(pow2 ? w & bank_mask : w % banks) % nb;
      ++distinct;
      worst = std::max<uint32_t>(worst, ++count[b]);
    }
    c.wavefronts += std::max<uint32_t>(worst, 1);
    c.ideal += std::max<uint32_t>((distinct + banks - 1) / banks, 1);
  }
  if (c.wavefronts == 0) c = SharedCost{};
  return c;
}

}  // namespace gtsim::ir
