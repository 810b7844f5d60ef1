// The config reader that refuses silence. A YAML file (with `base: other.yaml` inheritance and
// `--set path.to.key=value` overrides) becomes a tree of ConfigNodes that remember their file,
// line and column. Models read it through typed accessors:
//
//   uint32_t n = node.param<uint32_t>("count").range(1, 1024).get();
//   double  bw = node.param<double>("bandwidth_gbps").positive().get();
//   auto   lat = node.param<uint32_t>("latency_cycles").or_default(4);
//
// Every read marks the key used; after the model is built, unused_keys() reports every key
// nobody read (a typo) with its position, and the closest key the reader asked for ("did you mean").
// Errors are InputError: "file:line:col: path: what".
//
// Loading is bounded (sim/config_yaml.hpp): one YAML document per file, UTF-8 only, at most
// kMaxDepth levels of nesting and kMaxNodes nodes once aliases are expanded. Every number read is
// checked against its type's range (integers of every width) and against the key's physical range
// (sim/config_rules.hpp; NaN and infinities are never numbers).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/error.hpp"

namespace gtsim {

class ConfigNode;

// Typed, validated access to one key of a map node.
template <typename T>
class ConfigParam {
 public:
  ConfigParam(const ConfigNode& map, std::string key) : map_(map), key_(std::move(key)) {}
  ConfigParam& range(T lo, T hi) {
    lo_ = lo;
    hi_ = hi;
    return *this;
  }
  ConfigParam& min(T lo) {
    lo_ = lo;
    return *this;
  }
  ConfigParam& positive() {
    positive_ = true;
    return *this;
  }
  ConfigParam& one_of(std::vector<T> allowed) {
    allowed_ = std::move(allowed);
    return *this;
  }
  T get() const;               // required: missing key is an error
  T or_default(T dflt) const;  // optional
  std::optional<T> optional() const;

 private:
  T check(const ConfigNode& v) const;
  const ConfigNode& map_;
  std::string key_;
  std::optional<T> lo_, hi_;
  bool positive_ = false;
  std::vector<T> allowed_;
};

class ConfigNode {
 public:
  enum class Kind { kNull, kScalar, kMap, kSeq };
  // Limits of one loaded YAML document (and of a --set value): levels of nesting, nodes and bytes of
  // keys, values and paths once aliases are expanded. Every recursive walk of a tree (merge, emit,
  // to_json, unused_keys, ...) is bounded by kMaxDepth, because no loaded tree is deeper.
  static constexpr int kMaxDepth = 256;
  static constexpr size_t kMaxNodes = 100000;
  static constexpr size_t kMaxTextBytes = size_t(32) << 20;
  // A config file (or chain of base: files) longer than this is refused before parsing.
  static constexpr size_t kMaxFileBytes = size_t(16) << 20;
  static constexpr int kMaxBaseChain = 32;

  // Loads a YAML file, resolving `base:` (paths relative to the including file) and applying
  // overrides "a.b.c=value" in order. Throws InputError on syntax errors, missing files,
  // cycles, or an override whose path does not exist in the base config.
  static std::shared_ptr<ConfigNode> load_file(const std::string& path, const std::vector<std::string>& overrides = {});
  static std::shared_ptr<ConfigNode> load_string(const std::string& yaml, const std::string& name = "<string>");

  Kind kind() const { return kind_; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_seq() const { return kind_ == Kind::kSeq; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  const SourcePos& pos() const { return pos_; }
  const std::string& path() const { return path_; }  // "sm.l1.assoc"
  const std::string& scalar() const {
    used_ = true;
    return scalar_;
  }
  const std::string& raw_scalar() const { return scalar_; }  // does not mark the node used

  // Map access. has() does not mark the key used; at()/param() do.
  bool has(const std::string& key) const;
  const ConfigNode& at(const std::string& key) const;      // throws "missing key"
  const ConfigNode* find(const std::string& key) const;    // marks used when found
  std::vector<std::string> keys() const;                   // in file order
  const SourcePos* key_pos(const std::string& key) const;  // where the key is written; nullptr if absent
  // Sequence access.
  size_t size() const { return seq_.size(); }
  const ConfigNode& operator[](size_t i) const {
    used_ = true;
    return *seq_.at(i);
  }

  template <typename T>
  ConfigParam<T> param(const std::string& key) const {
    return ConfigParam<T>(*this, key);
  }
  // Converts this scalar to T or throws with the position and the expected type.
  template <typename T>
  T as() const;
  // Reads an `impl:` name and checks it against the registered ones (listed in the error).
  std::string impl(const std::vector<std::string>& registered, const std::string& dflt = "") const;

  void mark_used_recursively() const;
  // Every key under this node that was never read, as diagnostics ("unknown key ...").
  std::vector<Diagnostic> unused_keys() const;
  // Throws InputError listing unused_keys() when there are any.
  void require_all_used() const;

  [[noreturn]] void fail(const std::string& message) const;  // throws InputError at this node

  // The resolved tree as YAML text (for --resolved-config) and as JSON.
  std::string to_yaml() const;
  nlohmann::json to_json() const;

  // Construction (used by the loader).
  ConfigNode(Kind k, SourcePos pos, std::string path) : kind_(k), pos_(std::move(pos)), path_(std::move(path)) {}
  void set_scalar(std::string s) { scalar_ = std::move(s); }
  void map_set(const std::string& key, std::shared_ptr<ConfigNode> v, SourcePos key_pos);
  void seq_push(std::shared_ptr<ConfigNode> v) { seq_.push_back(std::move(v)); }
  std::shared_ptr<ConfigNode> map_get_shared(const std::string& key) const;
  void map_erase(const std::string& key);
  void rebase_paths(const std::string& path);
  // A deep copy (nothing marked used) whose paths start at `path` (an expanded YAML alias).
  std::shared_ptr<ConfigNode> clone(const std::string& path) const;

 private:
  struct Entry {
    std::string key;
    SourcePos key_pos;
    std::shared_ptr<ConfigNode> value;
  };
  Kind kind_;
  SourcePos pos_;
  std::string path_;
  std::string scalar_;
  std::vector<Entry> map_;
  std::vector<std::shared_ptr<ConfigNode>> seq_;
  mutable bool used_ = false;
  mutable std::vector<std::string> asked_;  // keys a reader looked up here: the did-you-mean candidates
  void note_asked(const std::string& key) const;
  void rebase_paths(const std::string& path, int depth);
  void mark_used_recursively(int depth) const;
  void unused_keys(std::vector<Diagnostic>& out, int depth) const;
  nlohmann::json to_json(int depth) const;
  std::shared_ptr<ConfigNode> clone(const std::string& path, int depth) const;
  void check_depth(int depth) const;
};

// ---- template implementations ----
namespace config_detail {
template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "a boolean (true/false)";
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
    return "a non-negative integer";
  else if constexpr (std::is_integral_v<T>)
    return "an integer";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else
    return "a string";
}
bool parse_scalar(const std::string& s, bool& out);
// An integer as written: decimal, 0x hex, `_` separators, or an exact float form (1e6, 2.0).
// kOutOfRange: an integer beyond 64 bits (2^64, 1e30, 0x1_0000_0000_0000_0000).
enum class IntStatus { kOk, kNotInteger, kOutOfRange };
struct IntValue {
  IntStatus status = IntStatus::kNotInteger;
  bool negative = false;
  uint64_t magnitude = 0;
};
IntValue parse_integer(const std::string& s);
// kNotFinite: NaN, infinities (.inf, .nan, inf, nan) and numbers beyond a double (1e999).
enum class NumStatus { kOk, kNotNumber, kNotFinite };
NumStatus parse_number(const std::string& s, double& out);
// Refuses v (written as `text`) when it is outside the physical range of n's key
// (sim/config_rules.hpp); no rule, no check.
void check_physical(const ConfigNode& n, double v, const std::string& text);
std::string format_double(double v);  // shortest round-trip-ish form: "0.5", "1e-300"
// Edit distance with adjacent transpositions (cuont -> count is 1).
size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word` when it is close enough to be a misspelling of it, else "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates);
template <typename T>
std::string to_str(const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return "\"" + v + "\"";
  else if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else {
    if constexpr (std::is_floating_point_v<T>)
      return format_double(double(v));
    else
      return std::to_string(v);
  }
}
}  // namespace config_detail

template <typename T>
T ConfigNode::as() const {
  if (kind_ != Kind::kScalar)
    fail(std::string("expected ") + config_detail::type_name<T>() + ", got a " +
         (kind_ == Kind::kMap   ? "map"
          : kind_ == Kind::kSeq ? "list"
                                : "null value"));
  used_ = true;
  if constexpr (std::is_same_v<T, std::string>) {
    return scalar_;
  } else if constexpr (std::is_same_v<T, bool>) {
    bool b;
    if (!config_detail::parse_scalar(scalar_, b)) fail("expected a boolean (true/false), got \"" + scalar_ + "\"");
    return b;
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    const config_detail::IntValue p = config_detail::parse_integer(scalar_);
    if (p.status == config_detail::IntStatus::kNotInteger)
      fail(std::string("expected ") + config_detail::type_name<T>() + ", got \"" + scalar_ + "\"");
    const bool fits = p.status == config_detail::IntStatus::kOk &&
                      (!p.negative || p.magnitude == 0 ? p.magnitude <= uint64_t(L::max())
                                                       : std::is_signed_v<T> && p.magnitude - 1 <= uint64_t(L::max()));
    if (!fits)
      fail(scalar_ + " is out of range, expected an integer in [" + std::to_string(L::min()) + ", " +
           std::to_string(L::max()) + "]");
    T v;
    if (p.negative && p.magnitude != 0)
      v = T(-int64_t(p.magnitude - 1) - 1);  // no overflow for INT64_MIN
    else
      v = T(p.magnitude);
    config_detail::check_physical(*this, double(v), scalar_);
    return v;
  } else {
    double v;
    switch (config_detail::parse_number(scalar_, v)) {
      case config_detail::NumStatus::kNotNumber:
        fail("expected a number, got \"" + scalar_ + "\"");
      case config_detail::NumStatus::kNotFinite:
        fail("expected a finite number, got \"" + scalar_ + "\"");
      default:
        break;
    }
    if (v > double(std::numeric_limits<T>::max()) || v < -double(std::numeric_limits<T>::max()))
      fail(scalar_ + " is out of range, expected a number of magnitude at most " +
           config_detail::format_double(double(std::numeric_limits<T>::max())));
    config_detail::check_physical(*this, v, scalar_);
    return T(v);
  }
}

template <typename T>
T ConfigParam<T>::check(const ConfigNode& n) const {
  T v = n.as<T>();
  if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
    if (positive_ && !(v > T(0))) n.fail("expected a value > 0, got " + config_detail::to_str(v));
    if (lo_ && v < *lo_)
      n.fail("expected a value >= " + config_detail::to_str(*lo_) + ", got " + config_detail::to_str(v));
    if (hi_ && v > *hi_)
      n.fail("expected a value <= " + config_detail::to_str(*hi_) + ", got " + config_detail::to_str(v));
  }
  if (!allowed_.empty()) {
    bool ok = false;
    std::string list;
    for (const auto& a : allowed_) {
      ok = ok || a == v;
      list += (list.empty() ? "" : ", ") + config_detail::to_str(a);
    }
    if (!ok) {
      std::string hint;
      if constexpr (std::is_same_v<T, std::string>) {
        std::string near = config_detail::closest(v, allowed_);
        if (!near.empty()) hint = "; did you mean \"" + near + "\"?";
      }
      n.fail("expected one of " + list + ", got " + config_detail::to_str(v) + hint);
    }
  }
  return v;
}

template <typename T>
T ConfigParam<T>::get() const {
  return check(map_.at(key_));
}

template <typename T>
std::optional<T> ConfigParam<T>::optional() const {
  const ConfigNode* n = map_.find(key_);
  if (!n) return std::nullopt;
  return check(*n);
}

template <typename T>
T ConfigParam<T>::or_default(T dflt) const {
  auto v = optional();
  return v ? *v : dflt;
}

}  // namespace gtsim
