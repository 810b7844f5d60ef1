// Per-warp instruction trace with coalescing (sectors, lines) and shared-memory bank wavefronts.
#pragma once

#include <cstdint>
#include <string>

#include "kernels_ir/exec/program.hpp"

namespace gtsim::ir {

struct TraceGeometry {
  uint32_t sector_bytes = 32, line_bytes = 128, banks = 32, bank_bytes = 4;
};

struct SectorCount {
  uint32_t sectors = 0, lines = 0;
};

// Distinct sectors and lines touched by the lanes of a global access (addr, access_bytes, addr_active).
SectorCount count_sectors_lines(const DynInst& d, const TraceGeometry& g = {});
// Wavefronts of a shared-memory access: the most distinct words any one bank must serve (lanes that
// read the same word share it). Uses addr2 for cp.async (its shared destination), addr otherwise.
uint32_t shared_wavefronts(const DynInst& d, const TraceGeometry& g = {});

// One line per dynamic instruction of one warp, at most `limit` lines.
std::string trace_warp(const Program& p, Dim3 ctaid, uint32_t warp, size_t limit, const TraceGeometry& g = {});

}  // namespace gtsim::ir
