#include "sim/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/config_yaml.hpp"
#include "sim/utf8.hpp"

namespace gtsim {
namespace fs = std::filesystem;

namespace config_detail {
bool parse_scalar(const std::string& s, bool& out) {
  if (s == "true" || s == "True" || s == "yes" || s == "on") return out = true, true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return out = false, true;
  return false;
}

namespace {
std::string without_underscores(const std::string& s) {  // 1_000_000
  std::string t;
  t.reserve(s.size());
  for (char c : s)
    if (c != '_') t += c;
  return t;
}
bool names_inf_or_nan(const std::string& t) {
  std::string low;
  for (char c : t) low += char(std::tolower(static_cast<unsigned char>(c)));
  return low.find("inf") != std::string::npos || low.find("nan") != std::string::npos;
}
}  // namespace

NumStatus parse_number(const std::string& s, double& out) {
  const std::string t = without_underscores(s);
  if (t.empty() || std::isspace(static_cast<unsigned char>(t[0]))) return NumStatus::kNotNumber;
  std::string body = t[0] == '-' || t[0] == '+' ? t.substr(1) : t;
  if (body == ".inf" || body == ".Inf" || body == ".INF" || body == ".nan" || body == ".NaN" || body == ".NAN")
    return NumStatus::kNotFinite;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return NumStatus::kNotNumber;
  return std::isfinite(out) ? NumStatus::kOk : NumStatus::kNotFinite;
}

IntValue parse_integer(const std::string& s) {
  IntValue r;
  const std::string t = without_underscores(s);
  if (t.empty()) return r;
  size_t off = 0;
  if (t[0] == '-' || t[0] == '+') r.negative = t[0] == '-', off = 1;
  int base = 10;
  if (t.size() > off + 1 && t[off] == '0' && (t[off + 1] == 'x' || t[off + 1] == 'X')) base = 16, off += 2;
  if (off < t.size() && t[off] != '+' && t[off] != '-') {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.data() + off, t.data() + t.size(), v, base);
    if (p == t.data() + t.size()) {
      if (ec == std::errc()) {
        r.status = IntStatus::kOk;
        r.magnitude = v;
        return r;
      }
      if (ec == std::errc::result_out_of_range) {
        r.status = IntStatus::kOutOfRange;
        return r;
      }
    }
  }
  if (base == 16) return r;  // "0x", "0xg"
  // An exact integer written as a float: 1e6, 2.0; 1e30 and 1e999 are integers out of any range.
  double d;
  NumStatus st = parse_number(s, d);
  if (st == NumStatus::kNotFinite && !names_inf_or_nan(t)) {
    r.status = IntStatus::kOutOfRange;
    return r;
  }
  if (st != NumStatus::kOk || std::floor(d) != d) return r;
  r.negative = d < 0;
  if (std::fabs(d) >= 18446744073709551616.0) {  // 2^64
    r.status = IntStatus::kOutOfRange;
    return r;
  }
  r.status = IntStatus::kOk;
  r.magnitude = uint64_t(std::fabs(d));
  return r;
}

std::string format_double(double v) {
  char buf[40];
  if (std::floor(v) == v && std::fabs(v) < 1e15) {  // integers as integers: 1000000, not 1e+06
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  // Close enough to be a slip of the keyboard: 1 edit in a short name, 2 in a medium one, 3 in a long one.
  const size_t limit = word.size() <= 4 ? 1 : word.size() <= 10 ? 2 : 3;
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    if (c == word || c.size() > word.size() + limit || word.size() > c.size() + limit) continue;
    const size_t d = edit_distance(word, c);
    if (d < best_d || (d == best_d && c < best)) best = c, best_d = d;
  }
  return best_d <= limit && best_d < word.size() ? best : "";
}
}  // namespace config_detail

namespace {

// A `base:` key that names the file being read: errors about that file are reported there.
struct Referrer {
  SourcePos pos;        // the base key's position
  std::string written;  // the file name as written
};

[[noreturn]] void file_error(const fs::path& path, const Referrer* ref, const std::string& what) {
  if (ref) throw InputError(ref->pos, "base: \"" + ref->written + "\" " + what);
  throw InputError(SourcePos{path.string()}, what);
}

// The whole file, refusing directories, missing files and anything longer than kMaxFileBytes
// (read in chunks, so /dev/zero is refused, not swallowed).
std::string read_text(const fs::path& path, const Referrer* ref) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) file_error(path, ref, "is a directory, expected a config file");
  if (!fs::exists(path, ec)) file_error(path, ref, "does not exist (looked for " + path.string() + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) file_error(path, ref, "cannot be opened, expected a readable config file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > ConfigNode::kMaxFileBytes)
      file_error(path, ref,
                 "is larger than " + std::to_string(ConfigNode::kMaxFileBytes) +
                     " bytes, expected a config of at most " + std::to_string(ConfigNode::kMaxFileBytes) + " bytes");
  }
  return text;
}

// Overlays `top` onto `base`: maps merge key by key, anything else replaces.
void merge_into(ConfigNode& base, const ConfigNode& top, int depth) {
  if (depth > ConfigNode::kMaxDepth)
    top.fail("nested deeper than " + std::to_string(ConfigNode::kMaxDepth) + " levels");
  for (const auto& key : top.keys()) {
    auto tv = top.map_get_shared(key);
    auto bv = base.map_get_shared(key);
    if (bv && bv->is_map() && tv->is_map()) {
      merge_into(*bv, *tv, depth + 1);
    } else {
      base.map_set(key, tv, *top.key_pos(key));
    }
  }
}

std::shared_ptr<ConfigNode> load_with_bases(const fs::path& path, std::vector<std::string>& chain,
                                            const Referrer* ref) {
  std::error_code ec;
  std::string key = fs::weakly_canonical(path, ec).string();
  if (ec) key = path.string();
  if (std::find(chain.begin(), chain.end(), key) != chain.end())
    file_error(path, ref, "closes a base: inheritance cycle through this file");
  if (int(chain.size()) >= ConfigNode::kMaxBaseChain)
    file_error(path, ref,
               "makes a chain of more than " + std::to_string(ConfigNode::kMaxBaseChain) +
                   " base: files, expected at most " + std::to_string(ConfigNode::kMaxBaseChain));
  auto node = config_yaml::parse_document(read_text(path, ref), path.string());
  if (!node->is_map()) throw InputError(node->pos(), "a config file must be a YAML map of keys");
  const ConfigNode* b = node->find("base");
  if (!b) return node;
  if (!b->is_scalar()) b->fail("expected a file name");
  Referrer here{*node->key_pos("base"), b->raw_scalar()};
  chain.push_back(key);
  auto base = load_with_bases(path.parent_path() / b->raw_scalar(), chain, &here);
  chain.pop_back();
  node->map_erase("base");
  merge_into(*base, *node, 1);
  return base;
}

void apply_override(ConfigNode& root, const std::string& ov) {
  SourcePos pos{"<--set " + ov + ">", 1, 1};
  if (!utf8::valid(ov)) throw InputError(pos, "invalid UTF-8, expected UTF-8 text");
  auto eq = ov.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(pos, "expected PATH=VALUE");
  std::string path = ov.substr(0, eq), value = ov.substr(eq + 1);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) throw InputError(pos, "empty key name in " + path + ", expected PATH=VALUE");
    if (int(parts.size()) >= ConfigNode::kMaxDepth)
      throw InputError(pos, "a path deeper than " + std::to_string(ConfigNode::kMaxDepth) +
                                " levels, expected a config of at most " + std::to_string(ConfigNode::kMaxDepth) +
                                " levels");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  auto nv = config_yaml::parse_document(value, pos.file, path, int(parts.size()));
  ConfigNode* cur = &root;
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += (prefix.empty() ? "" : ".") + parts[i];
    if (i + 1 == parts.size()) {
      cur->map_set(parts[i], nv, pos);
      return;
    }
    auto next = cur->map_get_shared(parts[i]);
    if (!next) {
      next = std::make_shared<ConfigNode>(ConfigNode::Kind::kMap, pos, prefix);
      cur->map_set(parts[i], next, pos);
    } else if (!next->is_map()) {
      throw InputError(pos, prefix + ": is not a map, cannot set " + path);
    }
    cur = next.get();
  }
}

void emit(YAML::Emitter& out, const ConfigNode& n, int depth) {
  if (depth > ConfigNode::kMaxDepth) n.fail("nested deeper than " + std::to_string(ConfigNode::kMaxDepth) + " levels");
  switch (n.kind()) {
    case ConfigNode::Kind::kMap:
      out << YAML::BeginMap;
      for (const auto& k : n.keys()) {
        out << YAML::Key << k << YAML::Value;
        emit(out, *n.map_get_shared(k), depth + 1);
      }
      out << YAML::EndMap;
      break;
    case ConfigNode::Kind::kSeq:
      out << YAML::Flow << YAML::BeginSeq;
      for (size_t i = 0; i < n.size(); ++i) emit(out, n[i], depth + 1);
      out << YAML::EndSeq;
      break;
    case ConfigNode::Kind::kScalar:
      out << n.scalar();
      break;
    default:
      out << YAML::Null;
  }
}

}  // namespace

std::shared_ptr<ConfigNode> ConfigNode::load_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<std::string> chain;
  auto root = load_with_bases(fs::path(path), chain, nullptr);
  for (const auto& ov : overrides) apply_override(*root, ov);
  root->rebase_paths("");
  return root;
}

std::shared_ptr<ConfigNode> ConfigNode::load_string(const std::string& yaml, const std::string& name) {
  auto root = config_yaml::parse_document(yaml, name);
  if (!root->is_map()) throw InputError(root->pos(), "expected a YAML map");
  return root;
}

void ConfigNode::note_asked(const std::string& key) const {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.push_back(key);
}

bool ConfigNode::has(const std::string& key) const {
  note_asked(key);
  for (const auto& e : map_)
    if (e.key == key) return true;
  return false;
}

const ConfigNode* ConfigNode::find(const std::string& key) const {
  used_ = true;
  note_asked(key);
  for (const auto& e : map_)
    if (e.key == key) {
      e.value->used_ = true;
      return e.value.get();
    }
  return nullptr;
}

const ConfigNode& ConfigNode::at(const std::string& key) const {
  if (kind_ != Kind::kMap) fail("expected a map with key \"" + key + "\"");
  if (const ConfigNode* n = find(key)) return *n;
  // A key nobody has read yet that is one slip away is likely the misspelt required one.
  std::vector<std::string> unread;
  for (const auto& e : map_)
    if (!e.value->used_) unread.push_back(e.key);
  std::string near = config_detail::closest(key, unread);
  if (near.empty()) fail("missing required key \"" + key + "\"");
  fail("missing required key \"" + key + "\" (did you misspell it as \"" + near + "\" at " + key_pos(near)->str() +
       "?)");
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> ks;
  for (const auto& e : map_) ks.push_back(e.key);
  return ks;
}

const SourcePos* ConfigNode::key_pos(const std::string& key) const {
  for (const auto& e : map_)
    if (e.key == key) return &e.key_pos;
  return nullptr;
}

std::shared_ptr<ConfigNode> ConfigNode::map_get_shared(const std::string& key) const {
  for (const auto& e : map_)
    if (e.key == key) return e.value;
  return nullptr;
}

void ConfigNode::map_set(const std::string& key, std::shared_ptr<ConfigNode> v, SourcePos key_pos) {
  for (auto& e : map_)
    if (e.key == key) {
      e.value = std::move(v);
      e.key_pos = std::move(key_pos);
      return;
    }
  map_.push_back(Entry{key, std::move(key_pos), std::move(v)});
}

void ConfigNode::map_erase(const std::string& key) {
  std::erase_if(map_, [&](const Entry& e) { return e.key == key; });
}

void ConfigNode::check_depth(int depth) const {
  if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
}

void ConfigNode::rebase_paths(const std::string& path) { rebase_paths(path, 1); }

void ConfigNode::rebase_paths(const std::string& path, int depth) {
  check_depth(depth);
  path_ = path;
  for (auto& e : map_) e.value->rebase_paths(path.empty() ? e.key : path + "." + e.key, depth + 1);
  for (size_t i = 0; i < seq_.size(); ++i) seq_[i]->rebase_paths(path + "[" + std::to_string(i) + "]", depth + 1);
}

std::shared_ptr<ConfigNode> ConfigNode::clone(const std::string& path) const { return clone(path, 1); }

std::shared_ptr<ConfigNode> ConfigNode::clone(const std::string& path, int depth) const {
  check_depth(depth);
  auto c = std::make_shared<ConfigNode>(kind_, pos_, path);
  c->scalar_ = scalar_;
  c->map_.reserve(map_.size());
  for (const auto& e : map_)
    c->map_.push_back(Entry{e.key, e.key_pos, e.value->clone(path.empty() ? e.key : path + "." + e.key, depth + 1)});
  c->seq_.reserve(seq_.size());
  for (size_t i = 0; i < seq_.size(); ++i)
    c->seq_.push_back(seq_[i]->clone(path + "[" + std::to_string(i) + "]", depth + 1));
  return c;
}

std::string ConfigNode::impl(const std::vector<std::string>& registered, const std::string& dflt) const {
  const ConfigNode* n = find("impl");
  std::string name = n ? n->as<std::string>() : dflt;
  for (const auto& r : registered)
    if (r == name) return name;
  std::string list;
  for (const auto& r : registered) list += (list.empty() ? "" : ", ") + r;
  std::string near = config_detail::closest(name, registered);
  (n ? *n : *this)
      .fail("unknown impl \"" + name + "\", registered: " + list +
            (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

void ConfigNode::mark_used_recursively() const { mark_used_recursively(1); }

void ConfigNode::mark_used_recursively(int depth) const {
  check_depth(depth);
  used_ = true;
  for (const auto& e : map_) e.value->mark_used_recursively(depth + 1);
  for (const auto& s : seq_) s->mark_used_recursively(depth + 1);
}

std::vector<Diagnostic> ConfigNode::unused_keys() const {
  std::vector<Diagnostic> out;
  unused_keys(out, 1);
  return out;
}

void ConfigNode::unused_keys(std::vector<Diagnostic>& out, int depth) const {
  check_depth(depth);
  for (const auto& e : map_) {
    if (!e.value->used_) {
      std::string full = path_.empty() ? e.key : path_ + "." + e.key;
      std::string near = config_detail::closest(e.key, asked_);  // the keys the reader looked for here
      out.push_back({e.key_pos, "unknown key \"" + e.key + "\" (" + full + "): not a setting of this model; " +
                                    (near.empty() ? "check the spelling against docs/config.md"
                                                  : "did you mean \"" + near + "\"?")});
    } else {
      e.value->unused_keys(out, depth + 1);
    }
  }
  for (const auto& s : seq_) s->unused_keys(out, depth + 1);
}

void ConfigNode::require_all_used() const {
  auto u = unused_keys();
  if (!u.empty()) throw InputError(std::move(u));
}

void ConfigNode::fail(const std::string& message) const {
  throw InputError(pos_, (path_.empty() ? std::string() : path_ + ": ") + message);
}

std::string ConfigNode::to_yaml() const {
  YAML::Emitter out;
  emit(out, *this, 1);
  return std::string(out.c_str()) + "\n";
}

nlohmann::json ConfigNode::to_json() const { return to_json(1); }

nlohmann::json ConfigNode::to_json(int depth) const {
  check_depth(depth);
  switch (kind_) {
    case Kind::kMap: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& e : map_) j[e.key] = e.value->to_json(depth + 1);
      return j;
    }
    case Kind::kSeq: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& s : seq_) j.push_back(s->to_json(depth + 1));
      return j;
    }
    case Kind::kScalar: {
      const bool hex = scalar_.find("0x") != std::string::npos || scalar_.find("0X") != std::string::npos;
      const auto i = config_detail::parse_integer(scalar_);
      if (i.status == config_detail::IntStatus::kOk && (hex || scalar_.find_first_of(".eE") == std::string::npos)) {
        constexpr uint64_t kMax = uint64_t(std::numeric_limits<int64_t>::max());
        if (!i.negative || i.magnitude == 0) {
          if (i.magnitude <= kMax) return int64_t(i.magnitude);
          return i.magnitude;
        }
        if (i.magnitude - 1 <= kMax) return -int64_t(i.magnitude - 1) - 1;
      }
      double d;
      bool b;
      if (config_detail::parse_number(scalar_, d) == config_detail::NumStatus::kOk) return d;
      if (config_detail::parse_scalar(scalar_, b)) return b;
      return scalar_;
    }
    default:
      return nullptr;
  }
}

}  // namespace gtsim
