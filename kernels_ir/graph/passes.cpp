// Graph rewrites: recompute-or-store (P6) and elementwise fusion (P5).
#include "kernels_ir/graph/passes.hpp"

#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "kernels_ir/parser.hpp"

namespace gtsim::wl {

namespace {

// Substitutes input leaves of `e`: leaf i becomes subst[i] (a tree over the new input list).
EwExpr substitute(const EwExpr& e, const std::vector<EwExpr>& subst) {
  if (e.op == EwOp::kInput) return subst.at(size_t(e.input));
  EwExpr r = e;
  for (auto& a : r.args) a = substitute(a, subst);
  return r;
}

int index_of(std::vector<TensorDesc>& list, const TensorDesc& t) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == t.name) return int(i);
  list.push_back(t);
  return int(list.size() - 1);
}

// Nodes and height of `e` with input leaf i replaced by a tree of leaves[i] (nodes, height);
// saturates instead of overflowing.
std::pair<uint64_t, int> composed_size(const EwExpr& e, const std::vector<std::pair<uint64_t, int>>& leaves) {
  if (e.op == EwOp::kInput)
    return e.input >= 0 && size_t(e.input) < leaves.size() ? leaves[size_t(e.input)] : std::pair<uint64_t, int>{1, 1};
  uint64_t nodes = 1;
  int h = 0;
  for (const auto& a : e.args) {
    auto [an, ah] = composed_size(a, leaves);
    nodes = std::min<uint64_t>(nodes + an, uint64_t(1) << 62);
    h = std::max(h, ah);
  }
  return {nodes, std::min(h + 1, 1 << 30)};
}

EwExpr leaf(int i) {
  EwExpr e;
  e.op = EwOp::kInput;
  e.input = i;
  return e;
}

}  // namespace

PassReport recompute_activations(Workload& w) {
  PassReport rep{"recompute", w.op_count(), 0, {}};
  auto& ops = w.mutable_ops();
  std::map<std::string, Op*> producer;
  for (auto& op : ops)
    for (auto& t : op->outputs) producer[t.name] = op.get();
  auto recomputable = [&](const std::string& t) {
    auto it = producer.find(t);
    if (it == producer.end()) return false;
    const TensorDesc* d = w.tensor(t);
    return it->second->phase == Phase::kForward && it->second->kind == OpKind::kElementwise && it->second->recompute &&
           it->second->outputs.size() == 1 && !(d && d->is_output);
  };
  // Clone (once per tensor) the forward producer into the backward phase, and its recomputable
  // producers before it: depth first on an explicit stack (a long activation chain must not deepen
  // the call stack).
  std::map<std::string, std::string> clone_of;
  std::vector<std::unique_ptr<Op>> added;
  auto clone = [&](const std::string& t0) -> std::string {
    if (!recomputable(t0)) return t0;
    std::vector<std::string> stack = {t0};
    while (!stack.empty()) {
      const std::string t = stack.back();
      if (clone_of.count(t)) {
        stack.pop_back();
        continue;
      }
      const Op* src = producer[t];
      bool ready = true;  // every recomputable input is cloned already
      for (auto in = src->inputs.rbegin(); in != src->inputs.rend(); ++in)  // the first input is cloned first
        if (recomputable(in->name) && !clone_of.count(in->name)) stack.push_back(in->name), ready = false;
      if (!ready) continue;
      stack.pop_back();
      auto op = std::make_unique<Op>(*src);
      op->name = src->name + ".recompute";
      op->phase = Phase::kBackward;
      for (auto& in : op->inputs)
        if (auto c = clone_of.find(in.name); c != clone_of.end()) in = *w.tensor(c->second);
      TensorDesc out = src->outputs[0];
      out.name = t + ".rc";
      out.is_output = false;
      w.add_tensor(out);
      op->outputs = {out};
      rep.notes.push_back("recompute " + t + " in the backward (" + op->name + ")");
      clone_of[t] = out.name;
      added.push_back(std::move(op));
    }
    return clone_of.at(t0);
  };
  for (auto& op : ops) {
    if (op->phase != Phase::kBackward) continue;
    for (auto& in : op->inputs) {
      std::string r = clone(in.name);
      if (r != in.name) in = *w.tensor(r);
    }
  }
  for (auto& a : added) ops.push_back(std::move(a));
  // Forward tensors nobody reads any more are no longer stored (the fusion pass drops the write).
  w.rebuild();
  rep.ops_after = w.op_count();
  return rep;
}

PassReport fuse_elementwise(Workload& w) {
  PassReport rep{"fusion", w.op_count(), 0, {}};
  auto& ops = w.mutable_ops();
  const size_t n = ops.size();
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (auto& t : ops[i]->outputs) producer[t.name] = i;
  // Union-find over fusable producer -> consumer edges.
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t x) {  // iterative: a long chain of ops must not deepen the stack
    size_t r = x;
    while (parent[r] != r) r = parent[r];
    while (parent[x] != r) x = std::exchange(parent[x], r);
    return r;
  };
  std::map<const Op*, size_t> index;  // op -> position in ops
  for (size_t i = 0; i < n; ++i) index[ops[i].get()] = i;
  std::vector<std::vector<size_t>> succ(n);  // producer -> consumers
  for (size_t i = 0; i < n; ++i)
    for (auto& t : ops[i]->inputs) {
      auto it = producer.find(t.name);
      if (it != producer.end()) succ[it->second].push_back(i);
    }
  auto fusable = [&](const Op& a, const Op& b) {
    return a.kind == OpKind::kElementwise && b.kind == OpKind::kElementwise && a.phase == b.phase &&
           a.elements() == b.elements();
  };
  // Merging two groups must not create a cycle through an op outside them; with the small
  // graphs here, a reachability check on the contracted graph is enough.
  auto creates_cycle = [&](size_t ga, size_t gb) {
    // Is there a path from group ga (or gb) leaving the union and re-entering it?
    auto in_union = [&](size_t v) {
      size_t r = root(v);
      return r == ga || r == gb;
    };
    std::vector<char> seen(n, 0);
    std::vector<size_t> stack;
    for (size_t v = 0; v < n; ++v)
      if (in_union(v))
        for (size_t s : succ[v])
          if (!in_union(s) && !seen[s]) seen[s] = 1, stack.push_back(s);
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      for (size_t s : succ[v]) {
        if (in_union(s)) return true;
        if (!seen[s]) seen[s] = 1, stack.push_back(s);
      }
    }
    return false;
  };
  for (const Op* op : w.ops_in_order()) {
    size_t i = index.at(op);
    for (auto& t : op->inputs) {
      auto it = producer.find(t.name);
      if (it == producer.end() || !fusable(*ops[it->second], *op)) continue;
      size_t a = root(it->second), b = root(i);
      if (a == b || creates_cycle(a, b)) continue;
      parent[b] = a;
    }
  }
  // Consumers of each tensor, to decide which group-internal tensors must still be written.
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < n; ++i)
    for (auto& t : ops[i]->inputs) consumers[t.name].push_back(i);
  std::map<size_t, std::vector<size_t>> groups;
  for (const Op* op : w.ops_in_order()) {
    size_t i = index.at(op);
    groups[root(i)].push_back(i);  // members in topological order
  }
  // A fused expression stays within the parser's limits (kMaxExprNodes nodes, ir::kMaxNesting deep),
  // so its later walks stay bounded: a group whose composed trees would grow beyond them (a long
  // chain, or a tree that doubles at every op) is cut into consecutive runs in topological order.
  // Cutting such a run is safe: edges between runs go forward, and no path leaves the group and
  // re-enters it (creates_cycle refused those unions).
  std::map<size_t, std::vector<std::vector<size_t>>> runs;
  for (auto& [r, members] : groups) {
    auto& out = runs[r];
    std::map<std::string, std::pair<uint64_t, int>> shape;  // tensor made in the run -> (nodes, height)
    for (size_t m : members) {
      const Op& op = *ops[m];
      std::vector<std::pair<uint64_t, int>> leaves;
      auto fits = [&] {
        for (const auto& x : op.exprs) {
          auto [nodes, height] = composed_size(x, leaves);
          if (nodes > uint64_t(kMaxExprNodes) || height > ir::kMaxNesting) return false;
        }
        return true;
      };
      auto leaves_of = [&](bool in_run) {
        leaves.clear();
        for (auto& t : op.inputs) {
          auto v = in_run ? shape.find(t.name) : shape.end();
          leaves.push_back(v != shape.end() ? v->second : std::pair<uint64_t, int>{1, 1});
        }
      };
      leaves_of(true);
      if (out.empty() || !fits()) {
        out.emplace_back();
        shape.clear();
        leaves_of(false);
      }
      out.back().push_back(m);
      for (size_t o = 0; o < op.outputs.size() && o < op.exprs.size(); ++o)
        shape[op.outputs[o].name] = composed_size(op.exprs[o], leaves);
    }
  }
  std::vector<std::unique_ptr<Op>> result;
  std::vector<char> done(n, 0);
  int fused_id = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t r = root(i);
    if (done[r]) continue;
    done[r] = 1;
    for (const auto& members : runs[r]) {
      if (members.size() == 1) {
        result.push_back(std::move(ops[members[0]]));
        continue;
      }
      std::set<size_t> mset(members.begin(), members.end());
      auto f = std::make_unique<Op>();
      const Op& first = *ops[members[0]];
      f->kind = OpKind::kElementwise;
      f->phase = first.phase;
      f->pos = first.pos;
      f->dtype = first.dtype;
      f->name = "fused" + std::to_string(fused_id++) + "(" + first.name + (members.size() > 1 ? ",..." : "") + ")";
      std::map<std::string, EwExpr> value;  // tensor produced in the group -> tree over f->inputs
      std::string list;
      for (size_t m : members) {
        const Op& op = *ops[m];
        f->fused_from.push_back(op.name);
        list += (list.empty() ? "" : ",") + op.name;
        std::vector<EwExpr> subst;
        for (auto& t : op.inputs) {
          auto v = value.find(t.name);
          subst.push_back(v != value.end() ? v->second : leaf(index_of(f->inputs, t)));
        }
        for (size_t o = 0; o < op.outputs.size(); ++o) {
          const TensorDesc& t = op.outputs[o];
          EwExpr tree = substitute(op.exprs[o], subst);
          value[t.name] = tree;
          bool external = t.is_output;
          for (size_t c : consumers[t.name]) external = external || !mset.count(c);
          if (external) {
            f->outputs.push_back(t);
            f->exprs.push_back(tree);
          }
        }
      }
      rep.notes.push_back("fused " + list + " -> " + f->name);
      for (size_t m : members) ops[m].reset();
      result.push_back(std::move(f));
    }
  }
  ops = std::move(result);
  w.remove_unused_tensors();
  w.rebuild();
  rep.ops_after = w.op_count();
  return rep;
}

std::vector<PassReport> run_passes(Workload& w, const PassOptions& opt) {
  std::vector<PassReport> r;
  if (opt.recompute) r.push_back(recompute_activations(w));
  if (opt.fusion) r.push_back(fuse_elementwise(w));
  return r;
}

}  // namespace gtsim::wl
