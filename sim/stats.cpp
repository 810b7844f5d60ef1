#include "sim/stats.hpp"

#include <algorithm>
#include <stdexcept>

namespace gtsim {

void Histogram::sample(double v, uint64_t weight) {
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  count_ += weight;
  sum_ += v * double(weight);
  size_t b = v <= 0 ? 0 : size_t(v / width_);
  if (b >= buckets_.size()) b = buckets_.size() - 1;
  buckets_[b] += weight;
}

nlohmann::json Histogram::value_json() const {
  return {{"count", count_}, {"mean", mean()}, {"min", min()}, {"max", max()}, {"bucket_width", width_},
          {"buckets", buckets_}};
}

void Histogram::reset() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
  sum_ = min_ = max_ = 0;
}

StatGroup& StatGroup::child(const std::string& name) {
  auto& p = children_[name];
  if (!p) p = std::make_unique<StatGroup>(name);
  return *p;
}

Counter& StatGroup::counter(const std::string& name, const std::string& desc, const std::string& unit) {
  auto c = std::make_unique<Counter>(name, desc, unit);
  Counter& r = *c;
  stats_.push_back(std::move(c));
  return r;
}

Histogram& StatGroup::histogram(const std::string& name, const std::string& desc, const std::string& unit,
                                double width, size_t buckets) {
  auto h = std::make_unique<Histogram>(name, desc, unit, width, buckets);
  Histogram& r = *h;
  stats_.push_back(std::move(h));
  return r;
}

Formula& StatGroup::formula(const std::string& name, const std::string& desc, const std::string& unit,
                            std::function<double()> f) {
  auto h = std::make_unique<Formula>(name, desc, unit, std::move(f));
  Formula& r = *h;
  stats_.push_back(std::move(h));
  return r;
}

const Stat* StatGroup::find(const std::string& path) const {
  auto slash = path.find('/');
  if (slash == std::string::npos) {
    for (const auto& s : stats_)
      if (s->name() == path) return s.get();
    return nullptr;
  }
  auto it = children_.find(path.substr(0, slash));
  return it == children_.end() ? nullptr : it->second->find(path.substr(slash + 1));
}

uint64_t StatGroup::sum_counters(const std::string& name) const {
  uint64_t total = 0;
  for (const auto& s : stats_)
    if (s->name() == name)
      if (auto* c = dynamic_cast<const Counter*>(s.get())) total += c->value();
  for (const auto& [_, g] : children_) total += g->sum_counters(name);
  return total;
}

void StatGroup::collect_counters(std::vector<Counter*>& out) {
  for (auto& st : stats_)
    if (auto* c = dynamic_cast<Counter*>(st.get())) out.push_back(c);
  for (auto& [_, g] : children_) g->collect_counters(out);
}

nlohmann::json StatGroup::to_json(bool with_meta) const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : stats_) {
    if (with_meta)
      j[s->name()] = {{"value", s->value_json()}, {"desc", s->desc()}, {"unit", s->unit()}};
    else
      j[s->name()] = s->value_json();
  }
  for (const auto& [n, g] : children_) j[n] = g->to_json(with_meta);
  return j;
}

void StatGroup::reset() {
  for (auto& s : stats_) s->reset();
  for (auto& [_, g] : children_) g->reset();
}

}  // namespace gtsim
