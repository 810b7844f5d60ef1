// Twin fidelity: is the CUDA twin the same program as the IR kernel?
//  - registers and shared memory from ptxas -v (recorded on the device, or compiled here when nvcc
//    exists) against the IR header (regs, shared);
//  - the main-loop SASS instruction histogram by class (cuobjdump --dump-sass, recorded with the
//    data) against the IR's static instruction counts of its main loop, within 10% per class.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/dyn_inst.hpp"

namespace gtsim::validation {

class SimRunner;

struct PtxasEntry {
  std::string function;  // mangled name
  std::string kernel;    // twin name: "bank_conflicts"
  int regs = 0;
  int smem = 0;
};
std::vector<PtxasEntry> parse_ptxas(const std::string& text);

// One loop of the compiled code (a backward branch): its region's static instructions by class (nested
// loops' bodies included once each, as the compiler laid them out) and how many loops nest directly in it.
struct SassLoop {
  long lo = 0, hi = 0;  // addresses of the branch target and of the branch
  int direct_nested = 0, gated = 0;
  std::map<std::string, int> hist;
};
struct SassFunction {
  std::string function, kernel;
  std::vector<SassLoop> loops;            // every loop, in address order of the branches
  std::map<std::string, int> loop_hist;   // main loop, by IR class name ("ffma" -> fp32 ...); "control" excluded
  std::map<std::string, int> whole_hist;  // the whole function, without called subroutines (CALL targets past
                                          // the body's EXIT: the IEEE division's slow path, never taken)
  bool has_loop = false;
  bool int_loop = false;     // the main loop holds only integer-pipe work (op_latency's FMNMX, F2FP chains)
  int subroutine_insts = 0;  // instructions left out of whole_hist as called subroutines
};
std::vector<SassFunction> parse_sass(const std::string& text);
// Class of a SASS opcode by the IR's OpClass names ("fp32", "ld_global", ..., "branch" for BRA); "control"
// or "int".
std::string sass_class(const std::string& opcode);
// Whether the histogram check gates a class: never "control" / "exit"; the loop overhead ("int" and
// "branch": the IR's loop-control instructions) only with `loop_overhead` (off until the IR emits its
// loop control everywhere; then it checks the IR's loop overhead against the compiled loop).
bool gated_class(const std::string& cls, bool loop_overhead);
// The twin's kernel name from a mangled name ("_ZN5twins14bank_conflictsEPfii" -> "bank_conflicts").
std::string twin_kernel_name(const std::string& mangled);
// The IR kernel (kernels_ir/lib/NAME.kir) a twin function is checked against: the twin's name, except
// where the names differ ("flash_attn_fwd" -> "flash_attention_fwd").
std::string ir_kernel_for_twin(const std::string& twin_kernel);
// Every IR kernel a twin function (mangled name) is checked against: ir_kernel_for_twin of its name, and
// attn_pv_gemm for gemm_tiled<8> (naive attention's batched P V launch is that function).
std::vector<std::string> ir_kernels_for_twin_function(const std::string& mangled);

struct TwinCheck {
  std::string batch;  // the measured batch whose compiler record this is
  std::string kernel, function;
  int ir_regs = 0, twin_regs = 0, ir_smem = 0, twin_smem = 0;
  bool regs_equal = false, smem_equal = false;
  bool occupancy_equal = false;  // the same CTAs per SM on the config despite a register difference
  int ir_ctas_per_sm = 0, twin_ctas_per_sm = 0;
  bool sass_checked = false, sass_ok = false;
  double sass_worst = 0;  // worst relative class difference (gated classes)
  nlohmann::json sass_detail = nlohmann::json::object();
  std::string note;
  int dynamic_smem = 0;  // the twin's dynamic shared memory (the runner's record), in twin_smem
  // A point measured with this twin is excluded: the SASS check fails, or the occupancy differs.
  bool fails() const { return (sass_checked && !sass_ok) || (ir_ctas_per_sm > 0 && !occupancy_equal); }
  std::string failure() const;  // why, for the excluded list ("" when it passes)
};

struct FidelityReport {
  std::string ptxas_source;  // "recorded: <file>" or "nvcc -Xptxas -v (here)"
  std::vector<TwinCheck> twins;
  std::vector<std::string> notes;
  // Kernels with a twin that fails (SASS or occupancy), in any batch.
  std::vector<std::string> failed_kernels() const;
  // The check of `batch`'s twin whose mangled name contains `function_part` (nullptr when none).
  // With `ir_kernel`, the check against that IR kernel (a twin function may be checked against several).
  const TwinCheck* find(const std::string& batch, const std::string& function_part,
                        const std::string& ir_kernel = "") const;
  nlohmann::json to_json() const;
};

// ptxas_text: recorded ptxas -v output; sass_text: cuobjdump --dump-sass output (may be empty).
// `hw` is used for the occupancy comparison (registers per SM, allocation unit, threads, CTA slots).
// dynamic_smem: (part of a mangled name, bytes) of twins launched with dynamic shared memory, which
// ptxas does not report (the runner records it: gemm_tiled.csv's smem_bytes); added to ptxas's figure.
// A function listed twice (several ptxas records concatenated) is checked once, the last record.
// gate_loop_overhead: also gate the "int" and "branch" classes (see gated_class).
FidelityReport check_fidelity(const std::string& ptxas_text, const std::string& ptxas_source,
                              const std::string& sass_text, SimRunner& sim, const std::string& hw_path,
                              const std::vector<std::pair<std::string, int>>& dynamic_smem = {},
                              const std::string& batch = "", bool gate_loop_overhead = false);

// Reads a .gz file through gzip -dc ("" when that fails).
std::string read_gz(const std::string& path);
// Compiles validation/cuda/*.cu with `nvcc -arch=sm_90 -Xptxas -v` and returns the ptxas output
// ("" when nvcc or a source is missing).
std::string run_ptxas(const std::string& nvcc, const std::string& cuda_dir);

}  // namespace gtsim::validation
