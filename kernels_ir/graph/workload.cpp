// The workload DAG: ops, tensors, Boost.Graph adjacency and the topological order.
#include "kernels_ir/graph/workload.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <map>
#include <queue>
#include <set>
#include <sstream>

namespace gtsim::wl {

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kMatmul: return "matmul";
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kReduction: return "reduction";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kAttention: return "attention";
  }
  return "?";
}

std::optional<DType> parse_wl_dtype(std::string_view s) {
  if (s == "f32" || s == "fp32" || s == "float32") return DType::kF32;
  if (s == "bf16" || s == "bfloat16") return DType::kBf16;
  if (s == "f16" || s == "fp16" || s == "float16") return DType::kF16;
  if (s == "fp8" || s == "e4m3" || s == "fp8e4m3") return DType::kE4M3;
  if (s == "e5m2" || s == "fp8e5m2") return DType::kE5M2;
  if (s == "tf32") return DType::kTf32;
  return std::nullopt;
}

uint64_t TensorDesc::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

uint64_t Op::elements() const {
  switch (kind) {
    case OpKind::kElementwise: return outputs.empty() ? 0 : outputs[0].elements();
    case OpKind::kSoftmax:
    case OpKind::kReduction: return uint64_t(rows) * uint64_t(cols);
    case OpKind::kMatmul: return uint64_t(mm.batch) * mm.M * mm.N;
    case OpKind::kAttention: return uint64_t(attn.B) * attn.H * attn.T * attn.d;
  }
  return 0;
}

uint64_t Op::flops() const {
  switch (kind) {
    case OpKind::kMatmul: return 2ull * uint64_t(mm.batch) * mm.M * mm.N * mm.K;
    case OpKind::kElementwise: {
      uint64_t per = 0;
      for (const auto& e : exprs) per += uint64_t(e.flops());
      return per * elements();
    }
    case OpKind::kSoftmax: return 5ull * elements();  // max, subtract, exp, sum, scale
    case OpKind::kReduction: return elements();
    case OpKind::kAttention: {
      // QK^T and PV (2 matmuls of 2*T*T*d), softmax 5 per score; causal halves the work;
      // backward: dV, dP, dS, dQ, dK (5 matmuls) with the recomputed QK^T.
      double tt = double(attn.T) * double(attn.T) * (attn.causal ? 0.5 : 1.0);
      double per_head = attn.backward ? (6.0 * 2.0 * tt * attn.d + 6.0 * tt) : (2.0 * 2.0 * tt * attn.d + 5.0 * tt);
      return uint64_t(per_head * double(attn.B * attn.H));
    }
  }
  return 0;
}

uint64_t Op::min_bytes() const {
  uint64_t b = 0;
  for (const auto& t : inputs) b += t.bytes();
  for (const auto& t : outputs) b += t.bytes();
  return b;
}

// ---------------------------------------------------------------- Workload

Workload::Workload() = default;
Workload::~Workload() = default;
Workload::Workload(Workload&&) noexcept = default;
Workload& Workload::operator=(Workload&&) noexcept = default;
Workload::Workload(const Workload& o) { *this = o; }
Workload& Workload::operator=(const Workload& o) {
  if (this == &o) return *this;
  name_ = o.name_;
  tensors_ = o.tensors_;
  ops_.clear();
  for (const auto& op : o.ops_) ops_.push_back(std::make_unique<Op>(*op));
  order_ = o.order_;
  return *this;
}

const TensorDesc* Workload::tensor(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

TensorDesc& Workload::add_tensor(TensorDesc t) {
  for (auto& x : tensors_)
    if (x.name == t.name) return x = std::move(t);
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

bool Workload::is_input(const std::string& t) const {
  for (const auto& op : ops_)
    for (const auto& o : op->outputs)
      if (o.name == t) return false;
  return true;
}

void Workload::remove_unused_tensors() {
  std::set<std::string> used;
  for (const auto& op : ops_) {
    for (const auto& t : op->inputs) used.insert(t.name);
    for (const auto& t : op->outputs) used.insert(t.name);
  }
  std::vector<TensorDesc> keep;
  for (auto& t : tensors_)
    if (used.count(t.name) || t.is_output) keep.push_back(std::move(t));
  tensors_ = std::move(keep);
}

void Workload::rebuild() {
  // Refresh the ops' tensor copies from the table (is_output may have changed).
  for (auto& op : ops_) {
    for (auto* list : {&op->inputs, &op->outputs})
      for (auto& t : *list)
        if (const TensorDesc* d = tensor(t.name)) t = *d;
  }
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < ops_.size(); ++i)
    for (const auto& t : ops_[i]->outputs) {
      auto [it, fresh] = producer.emplace(t.name, i);
      if (!fresh)
        throw InputError(ops_[i]->pos, "op '" + ops_[i]->name + "': tensor '" + t.name + "' is already produced by op '" +
                                           ops_[it->second]->name + "'");
    }
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph g(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i)
    for (const auto& t : ops_[i]->inputs) {
      auto it = producer.find(t.name);
      if (it != producer.end()) {
        boost::add_edge(it->second, i, g);
      } else if (!tensor(t.name)) {
        throw InputError(ops_[i]->pos, "op '" + ops_[i]->name + "': input '" + t.name +
                                           "' is neither a declared tensor nor produced by an op");
      }
    }
  // Kahn's algorithm over the Boost graph; ties by declaration order so the order is stable.
  std::vector<size_t> indeg(ops_.size());
  for (size_t v = 0; v < ops_.size(); ++v) indeg[v] = boost::in_degree(v, g);
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t v = 0; v < ops_.size(); ++v)
    if (indeg[v] == 0) ready.push(v);
  order_.clear();
  while (!ready.empty()) {
    size_t v = ready.top();
    ready.pop();
    order_.push_back(v);
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      size_t w = boost::target(*e, g);
      if (--indeg[w] == 0) ready.push(w);
    }
  }
  if (order_.size() != ops_.size()) {
    for (size_t v = 0; v < ops_.size(); ++v)
      if (indeg[v] > 0)
        throw InputError(ops_[v]->pos, "op '" + ops_[v]->name + "' is on a dependency cycle (the ops must form a DAG)");
  }
}

std::vector<const Op*> Workload::ops_in_order() const {
  std::vector<const Op*> v;
  for (size_t i : order_) v.push_back(ops_[i].get());
  return v;
}

uint64_t Workload::total_flops() const {
  uint64_t s = 0;
  for (const auto& op : ops_) s += op->flops();
  return s;
}
uint64_t Workload::total_min_bytes() const {
  uint64_t s = 0;
  for (const auto& op : ops_) s += op->min_bytes();
  return s;
}

std::string Workload::describe() const {
  std::ostringstream o;
  for (const Op* op : ops_in_order()) {
    o << op->name << "  " << op_kind_name(op->kind) << (op->phase == Phase::kBackward ? " (backward)" : "");
    if (op->kind == OpKind::kMatmul)
      o << "  " << op->mm.batch << "x[" << op->mm.M << "x" << op->mm.N << "x" << op->mm.K << "]";
    if (op->kind == OpKind::kElementwise) {
      std::vector<std::string> names;
      for (const auto& t : op->inputs) names.push_back(t.name);
      for (size_t i = 0; i < op->exprs.size(); ++i)
        o << "  " << (i < op->outputs.size() ? op->outputs[i].name : "?") << " = " << op->exprs[i].str(names);
    }
    o << "  flops=" << op->flops() << " bytes=" << op->min_bytes() << "\n";
  }
  return o.str();
}

}  // namespace gtsim::wl
