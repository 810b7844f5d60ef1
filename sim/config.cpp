#include "sim/config.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gtsim {
namespace fs = std::filesystem;

namespace config_detail {
bool parse_scalar(const std::string& s, bool& out) {
  if (s == "true" || s == "True" || s == "yes" || s == "on") return out = true, true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return out = false, true;
  return false;
}
bool parse_scalar(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  std::string t;
  for (char c : s)
    if (c != '_') t += c;  // 1_000_000
  int base = 10;
  size_t off = 0;
  bool neg = false;
  if (t[0] == '-' || t[0] == '+') neg = t[0] == '-', off = 1;
  if (t.size() > off + 2 && t[off] == '0' && (t[off + 1] == 'x' || t[off + 1] == 'X')) base = 16, off += 2;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data() + off, t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) {
    // allow exact integers written as 1e6 or 2.0
    double d;
    if (!parse_scalar(s, d) || std::floor(d) != d || std::fabs(d) > 9.2e18) return false;
    out = int64_t(d);
    return true;
  }
  out = neg ? -int64_t(v) : int64_t(v);
  return true;
}
bool parse_scalar(const std::string& s, uint64_t& out) {
  int64_t v;
  if (!parse_scalar(s, v) || v < 0) return false;
  out = uint64_t(v);
  return true;
}
bool parse_scalar(const std::string& s, double& out) {
  if (s.empty()) return false;
  std::string t;
  for (char c : s)
    if (c != '_') t += c;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}
}  // namespace config_detail

namespace {

SourcePos pos_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

std::shared_ptr<ConfigNode> convert(const YAML::Node& y, const std::string& file, const std::string& path) {
  SourcePos pos = pos_of(y.Mark(), file);
  switch (y.Type()) {
    case YAML::NodeType::Map: {
      auto n = std::make_shared<ConfigNode>(ConfigNode::Kind::kMap, pos, path);
      for (auto it = y.begin(); it != y.end(); ++it) {
        if (!it->first.IsScalar()) throw InputError(pos_of(it->first.Mark(), file), "map keys must be plain names");
        std::string key = it->first.Scalar();
        if (n->has(key))
          throw InputError(pos_of(it->first.Mark(), file), (path.empty() ? "" : path + ".") + key + ": duplicate key");
        n->map_set(key, convert(it->second, file, path.empty() ? key : path + "." + key),
                   pos_of(it->first.Mark(), file));
      }
      return n;
    }
    case YAML::NodeType::Sequence: {
      auto n = std::make_shared<ConfigNode>(ConfigNode::Kind::kSeq, pos, path);
      size_t i = 0;
      for (const auto& e : y) n->seq_push(convert(e, file, path + "[" + std::to_string(i++) + "]"));
      return n;
    }
    case YAML::NodeType::Scalar: {
      auto n = std::make_shared<ConfigNode>(ConfigNode::Kind::kScalar, pos, path);
      n->set_scalar(y.Scalar());
      return n;
    }
    default:
      return std::make_shared<ConfigNode>(ConfigNode::Kind::kNull, pos, path);
  }
}

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(pos_of(e.mark, file), "YAML syntax error: " + e.msg);
  }
}

// Overlays `top` onto `base`: maps merge key by key, anything else replaces.
void merge_into(ConfigNode& base, const ConfigNode& top) {
  for (const auto& key : top.keys()) {
    auto tv = top.map_get_shared(key);
    auto bv = base.map_get_shared(key);
    if (bv && bv->is_map() && tv->is_map()) {
      merge_into(*bv, *tv);
    } else {
      base.map_set(key, tv, tv->pos());
    }
  }
}

std::shared_ptr<ConfigNode> load_with_bases(const fs::path& path, std::set<std::string>& chain) {
  std::string key = fs::weakly_canonical(path).string();
  if (chain.count(key)) throw InputError(SourcePos{path.string()}, "base: inheritance cycle through this file");
  std::ifstream in(path);
  if (!in) throw InputError(SourcePos{path.string()}, "cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  YAML::Node y = parse_yaml(ss.str(), path.string());
  if (!y.IsMap()) throw InputError(pos_of(y.Mark(), path.string()), "a config file must be a YAML map of keys");
  auto node = convert(y, path.string(), "");
  const ConfigNode* b = node->find("base");
  if (!b) return node;
  if (!b->is_scalar()) b->fail("expected a file name");
  fs::path base_path = path.parent_path() / b->scalar();
  chain.insert(key);
  std::shared_ptr<ConfigNode> base;
  try {
    base = load_with_bases(base_path, chain);
  } catch (const InputError& e) {
    if (!fs::exists(base_path)) b->fail("base file \"" + base_path.string() + "\" does not exist");
    throw;
  }
  chain.erase(key);
  node->map_erase("base");
  merge_into(*base, *node);
  return base;
}

void apply_override(ConfigNode& root, const std::string& ov) {
  SourcePos pos{"<--set " + ov + ">", 1, 1};
  auto eq = ov.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(pos, "expected PATH=VALUE");
  std::string path = ov.substr(0, eq), value = ov.substr(eq + 1);
  YAML::Node y = parse_yaml(value, pos.file);
  ConfigNode* cur = &root;
  size_t start = 0;
  std::string prefix;
  while (true) {
    auto dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    prefix += (prefix.empty() ? "" : ".") + part;
    if (dot == std::string::npos) {
      auto nv = convert(y, pos.file, prefix);
      cur->map_set(part, nv, pos);
      return;
    }
    auto next = cur->map_get_shared(part);
    if (!next) {
      next = std::make_shared<ConfigNode>(ConfigNode::Kind::kMap, pos, prefix);
      cur->map_set(part, next, pos);
    } else if (!next->is_map()) {
      throw InputError(pos, prefix + ": is not a map, cannot set " + path);
    }
    cur = next.get();
    start = dot + 1;
  }
}

void emit(YAML::Emitter& out, const ConfigNode& n) {
  switch (n.kind()) {
    case ConfigNode::Kind::kMap:
      out << YAML::BeginMap;
      for (const auto& k : n.keys()) {
        out << YAML::Key << k << YAML::Value;
        emit(out, *n.map_get_shared(k));
      }
      out << YAML::EndMap;
      break;
    case ConfigNode::Kind::kSeq:
      out << YAML::Flow << YAML::BeginSeq;
      for (size_t i = 0; i < n.size(); ++i) emit(out, n[i]);
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
  std::set<std::string> chain;
  auto root = load_with_bases(fs::path(path), chain);
  for (const auto& ov : overrides) apply_override(*root, ov);
  root->rebase_paths("");
  return root;
}

std::shared_ptr<ConfigNode> ConfigNode::load_string(const std::string& yaml, const std::string& name) {
  YAML::Node y = parse_yaml(yaml, name);
  if (!y.IsMap()) throw InputError(pos_of(y.Mark(), name), "expected a YAML map");
  return convert(y, name, "");
}

bool ConfigNode::has(const std::string& key) const {
  for (const auto& e : map_)
    if (e.key == key) return true;
  return false;
}

const ConfigNode* ConfigNode::find(const std::string& key) const {
  used_ = true;
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
  fail("missing required key \"" + key + "\"");
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> ks;
  for (const auto& e : map_) ks.push_back(e.key);
  return ks;
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

void ConfigNode::rebase_paths(const std::string& path) {
  path_ = path;
  for (auto& e : map_) e.value->rebase_paths(path.empty() ? e.key : path + "." + e.key);
  for (size_t i = 0; i < seq_.size(); ++i) seq_[i]->rebase_paths(path + "[" + std::to_string(i) + "]");
}

std::string ConfigNode::impl(const std::vector<std::string>& registered, const std::string& dflt) const {
  const ConfigNode* n = find("impl");
  std::string name = n ? n->as<std::string>() : dflt;
  for (const auto& r : registered)
    if (r == name) return name;
  std::string list;
  for (const auto& r : registered) list += (list.empty() ? "" : ", ") + r;
  (n ? *n : *this).fail("unknown impl \"" + name + "\", registered: " + list);
}

void ConfigNode::mark_used_recursively() const {
  used_ = true;
  for (const auto& e : map_) e.value->mark_used_recursively();
  for (const auto& s : seq_) s->mark_used_recursively();
}

std::vector<Diagnostic> ConfigNode::unused_keys() const {
  std::vector<Diagnostic> out;
  for (const auto& e : map_) {
    if (!e.value->used_) {
      std::string full = path_.empty() ? e.key : path_ + "." + e.key;
      out.push_back({e.key_pos, "unknown key \"" + e.key + "\" (" + full +
                                    "): not a setting of this model; check the spelling against docs/config.md"});
    } else {
      auto sub = e.value->unused_keys();
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  for (const auto& s : seq_) {
    auto sub = s->unused_keys();
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
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
  emit(out, *this);
  return std::string(out.c_str()) + "\n";
}

nlohmann::json ConfigNode::to_json() const {
  switch (kind_) {
    case Kind::kMap: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& e : map_) j[e.key] = e.value->to_json();
      return j;
    }
    case Kind::kSeq: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& s : seq_) j.push_back(s->to_json());
      return j;
    }
    case Kind::kScalar: {
      double d;
      int64_t i;
      bool b;
      if (config_detail::parse_scalar(scalar_, i) && scalar_.find_first_of(".eE") == std::string::npos) return i;
      if (config_detail::parse_scalar(scalar_, d)) return d;
      if (config_detail::parse_scalar(scalar_, b)) return b;
      return scalar_;
    }
    default:
      return nullptr;
  }
}

}  // namespace gtsim
