// Internal: the AST -> Program::Impl compiler (name resolution, constant folding, uniformity).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "kernels_ir/exec/program_impl.hpp"
#include "sim/error.hpp"

namespace gtsim::ir {

struct Binding {
  enum Kind : uint8_t { kConst, kSlot, kReg, kRegArr } k = kConst;
  int64_t value = 0;
  uint32_t slot = 0, count = 1;
  bool uniform = true;
};

class Compiler {
 public:
  Compiler(const Kernel& k, const ParamValues& params, std::vector<Diagnostic>& diags, Program::Impl& p,
           const BufferPlacement* placement = nullptr)
      : k_(k), given_(params), diags_(diags), P(p), placement_(placement) {}
  void run();

 private:
  const Kernel& k_;
  const ParamValues& given_;
  std::vector<Diagnostic>& diags_;
  Program::Impl& P;
  const BufferPlacement* placement_ = nullptr;
  std::vector<std::pair<std::string, Binding>> scope_;
  std::unordered_map<std::string, Binding> regs_;
  std::unordered_map<std::string, int> bufs_, shared_;
  std::vector<uint64_t> shared_off_;
  std::vector<uint64_t> shared_count_;  // elements per shared array (an mbarrier array: its pipeline's stages)
  std::vector<std::string> divergent_;  // enclosing lane-varying ifs / loops, described
  std::vector<uint32_t> loops_;         // enclosing loops (code index of kLoopInit)
  // loop -> its hidden counter register (the predicate register is the next id)
  std::unordered_map<const Stmt*, uint16_t> loop_regs_;
  int nest_ = 0;
  int dead_ = 0;  // > 0 inside an if whose constant condition (parameters only) rules the branch out
  bool quiet_ = false;

  void error(const Loc& l, const std::string& msg);
  std::string where(const Loc& l) const;
  const Binding* lookup(const std::string& name) const;

  // expressions
  uint32_t expr(const Expr& e, std::vector<uint16_t>* regs_read = nullptr);
  Uniformity gen(const Expr& e, std::vector<Node>& out, uint32_t pos, uint32_t& depth, std::vector<uint16_t>* rr);
  Uniformity gen_name(const Expr& e, std::vector<Node>& out, std::vector<uint16_t>* rr);
  bool builtin(const std::string& n, Node& node, Uniformity& u) const;
  int64_t const_eval(const Expr& e, const std::string& what);
  const CExpr& cx(uint32_t id) const { return P.exprs[id]; }

  // header
  void bind_params();
  void header();
  void buffers();
  void shared_arrays();
  void collect_regs(const std::vector<Stmt>& body);
  uint16_t new_reg(const std::string& name, uint32_t count);

  // statements and instructions
  void block(const std::vector<Stmt>& b);
  void stmt(const Stmt& s);
  void loop(const Stmt& s);
  void choose_sample_loop();
  void mark_values_read();
  uint32_t loop_control(const Stmt& s, uint32_t lo, uint32_t hi, uint32_t step);
  void if_stmt(const Stmt& s);
  void instr(const Instr& in, const Loc& loc);
  void operands(const Instr& in, const OpDesc& d, CInst& ci, std::vector<uint16_t>& rr, const Loc& loc);
  void int_value(const Instr& in, const OpDesc& d, CInst& ci);
  RegRef reg_operand(const Expr& e, bool dst, std::vector<uint16_t>* rr);
  MemRef mem_operand(const Expr& e, MemSpace space, const std::string& mnem, std::vector<uint16_t>& rr, DType* dt);
  uint32_t emit(Op op);
};

}  // namespace gtsim::ir
