// Fuzz body for the kernel IR (.kir): parser, verifier, printer round trip, and binding
// (ir::Program::build with the kernel's default parameters), as `gtsim check`/`gtsim run` do.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_targets.hpp"
#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "kernels_ir/verifier.hpp"
#include "sim/error.hpp"

namespace {

// The printer promises parse_kernel_string(print_kernel(k)) == k (kernels_ir/printer.hpp); a
// kernel the parser accepted but whose printed form does not read back the same is a silent wrong
// answer, reported as a crash.
void check_round_trip(const gtsim::ir::Kernel& k) {
  std::string printed = gtsim::ir::print_kernel(k);
  try {
    auto again = gtsim::ir::parse_kernel_string(printed, k.file);
    if (*again == k) return;
    std::fprintf(stderr, "fuzz_kernel: the printed kernel parses to a different kernel:\n%s\n", printed.c_str());
  } catch (const gtsim::InputError& e) {
    std::fprintf(stderr, "fuzz_kernel: the printed kernel does not parse: %s\n%s\n", e.what(), printed.c_str());
  }
  std::abort();
}

}  // namespace

int gtsim_fuzz_kernel(const uint8_t* data, size_t size) {
  if (size > gtsim::fuzz::kMaxInputBytes) return 0;
  try {
    auto kernel = gtsim::ir::parse_kernel_string(gtsim::fuzz::as_text(data, size), "fuzz.kir");
    check_round_trip(*kernel);
    auto diags = gtsim::ir::verify(*kernel);
    if (!diags.empty()) throw gtsim::InputError(std::move(diags));
    auto program = gtsim::ir::Program::build(*kernel, {});
    for (size_t i = 0; i < program->instruction_count(); ++i) (void)program->instruction(uint32_t(i)).text;
    (void)program->sampling_loop();
  } catch (const gtsim::InputError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  }
  return 0;
}
