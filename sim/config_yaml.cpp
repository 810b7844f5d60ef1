#include "sim/config_yaml.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "sim/utf8.hpp"

namespace gtsim::config_yaml {
namespace {

SourcePos pos_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

// 1-based line and byte column of byte `off` of `text`.
SourcePos pos_at_offset(const std::string& text, size_t off, const std::string& file) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < off; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return {file, line, int(off - line_start) + 1};
}

// What one node and everything under it cost: nodes, bytes of keys, values and paths, and levels.
struct Cost {
  size_t nodes = 0;
  size_t bytes = 0;
  int height = 0;
};

class Builder : public YAML::EventHandler {
 public:
  Builder(std::string file, std::string prefix, int depth0)
      : file_(std::move(file)), prefix_(std::move(prefix)), depth0_(depth0) {}

  std::shared_ptr<ConfigNode> root() {
    // An empty text (or comments only): a null at its start.
    if (!root_) root_ = std::make_shared<ConfigNode>(ConfigNode::Kind::kNull, SourcePos{file_, 1, 1}, prefix_);
    return root_;
  }

  void OnDocumentStart(const YAML::Mark& m) override {
    if (++documents_ > 1)
      throw InputError(pos(m), "a second YAML document starts here (after `---`); expected one document per file");
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_anchor_name_ = name; }

  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
    if (expecting_key()) throw InputError(pos(m), "map keys must be plain names");
    auto n = std::make_shared<ConfigNode>(ConfigNode::Kind::kNull, pos(m), child_path());
    Cost c = count_new(*n, m);
    finish(n, c, anchor);
  }

  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (!utf8::valid(value)) throw InputError(pos(m), "invalid UTF-8 in this value, expected UTF-8 text");
    if (expecting_key()) {
      if (anchor) {  // an anchored key: remember it as a scalar for a later *alias
        auto k = std::make_shared<ConfigNode>(ConfigNode::Kind::kScalar, pos(m), "");
        k->set_scalar(value);
        define(anchor, k, Cost{1, value.size(), 1});
      }
      set_key(value, m);
      return;
    }
    auto n = std::make_shared<ConfigNode>(ConfigNode::Kind::kScalar, pos(m), child_path());
    n->set_scalar(value);
    Cost c = count_new(*n, m);
    finish(n, c, anchor);
  }

  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end() || open_.count(anchor))
      throw InputError(pos(m), "alias " + alias_name(anchor) +
                                   " refers to a node that contains it, expected an alias of a complete node");
    const Anchor& a = it->second;
    if (expecting_key()) {
      if (!a.node->is_scalar()) throw InputError(pos(m), "map keys must be plain names");
      set_key(a.node->raw_scalar(), m);
      return;
    }
    // The copy's cost, known before copying: its paths differ from the anchor's by the prefix.
    const std::string path = child_path();
    const long long delta = (long long)path.size() - (long long)a.node->path().size();
    const size_t bytes = size_t(std::max(0LL, (long long)a.cost.bytes + (long long)a.cost.nodes * delta));
    if (nodes_ + a.cost.nodes > ConfigNode::kMaxNodes)
      throw InputError(pos(m), "YAML aliases expand to more than " + std::to_string(ConfigNode::kMaxNodes) +
                                   " nodes, expected a config of at most " + std::to_string(ConfigNode::kMaxNodes));
    if (bytes_ + bytes > ConfigNode::kMaxTextBytes)
      throw InputError(pos(m), "YAML aliases expand to more than " + std::to_string(ConfigNode::kMaxTextBytes) +
                                   " bytes of keys and values, expected a config of at most " +
                                   std::to_string(ConfigNode::kMaxTextBytes));
    if (depth() + a.cost.height > ConfigNode::kMaxDepth) too_deep(m);
    nodes_ += a.cost.nodes;
    bytes_ += bytes;
    finish(a.node->clone(path), Cost{a.cost.nodes, bytes, a.cost.height}, 0);
  }

  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_container(ConfigNode::Kind::kSeq, m, anchor);
  }
  void OnSequenceEnd() override { close_container(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open_container(ConfigNode::Kind::kMap, m, anchor);
  }
  void OnMapEnd() override { close_container(); }

 private:
  struct Frame {
    std::shared_ptr<ConfigNode> node;
    YAML::anchor_t anchor = 0;
    size_t nodes_before = 0, bytes_before = 0;
    int child_height = 0;
    bool has_key = false;
    std::string key;
    SourcePos key_pos;
    size_t index = 0;
  };
  struct Anchor {
    std::shared_ptr<ConfigNode> node;
    Cost cost;
  };

  SourcePos pos(const YAML::Mark& m) const { return pos_of(m, file_); }
  int depth() const { return depth0_ + int(stack_.size()); }  // levels above a new node
  bool expecting_key() const { return !stack_.empty() && stack_.back().node->is_map() && !stack_.back().has_key; }

  [[noreturn]] void too_deep(const YAML::Mark& m) const {
    throw InputError(pos(m), "YAML nesting deeper than " + std::to_string(ConfigNode::kMaxDepth) +
                                 " levels, expected a config of at most " + std::to_string(ConfigNode::kMaxDepth) +
                                 " levels");
  }

  std::string child_path() const {
    if (stack_.empty()) return prefix_;
    const Frame& f = stack_.back();
    if (f.node->is_map()) return f.node->path().empty() ? f.key : f.node->path() + "." + f.key;
    return f.node->path() + "[" + std::to_string(f.index) + "]";
  }

  std::string alias_name(YAML::anchor_t a) const {
    auto it = names_.find(a);
    return it == names_.end() ? "*" : "*" + it->second;
  }

  // Counts a node just made (not a copy) against the budgets.
  Cost count_new(const ConfigNode& n, const YAML::Mark& m) {
    if (depth() + 1 > ConfigNode::kMaxDepth) too_deep(m);
    Cost c{1, n.path().size() + n.raw_scalar().size(), 1};
    nodes_ += c.nodes;
    bytes_ += c.bytes;
    if (nodes_ > ConfigNode::kMaxNodes)
      throw InputError(pos(m), "more than " + std::to_string(ConfigNode::kMaxNodes) +
                                   " YAML nodes, expected a config of at most " +
                                   std::to_string(ConfigNode::kMaxNodes));
    if (bytes_ > ConfigNode::kMaxTextBytes)
      throw InputError(pos(m), "more than " + std::to_string(ConfigNode::kMaxTextBytes) +
                                   " bytes of keys and values, expected a config of at most " +
                                   std::to_string(ConfigNode::kMaxTextBytes));
    return c;
  }

  void set_key(const std::string& key, const YAML::Mark& m) {
    Frame& f = stack_.back();
    f.has_key = true;
    f.key = key;
    f.key_pos = pos(m);
    bytes_ += key.size();
  }

  void define(YAML::anchor_t anchor, std::shared_ptr<ConfigNode> n, Cost c) {
    anchors_[anchor] = Anchor{std::move(n), c};
    open_.erase(anchor);
    if (!pending_anchor_name_.empty()) names_[anchor] = std::move(pending_anchor_name_), pending_anchor_name_.clear();
  }

  void open_container(ConfigNode::Kind kind, const YAML::Mark& m, YAML::anchor_t anchor) {
    if (expecting_key()) throw InputError(pos(m), "map keys must be plain names");
    auto n = std::make_shared<ConfigNode>(kind, pos(m), child_path());
    Frame f;
    f.nodes_before = nodes_;
    f.bytes_before = bytes_;
    count_new(*n, m);
    f.node = std::move(n);
    f.anchor = anchor;
    if (anchor) {
      open_.insert(anchor);
      if (!pending_anchor_name_.empty()) names_[anchor] = pending_anchor_name_, pending_anchor_name_.clear();
    }
    stack_.push_back(std::move(f));
  }

  void close_container() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    finish(f.node, Cost{nodes_ - f.nodes_before, bytes_ - f.bytes_before, f.child_height + 1}, f.anchor);
  }

  // Hangs a complete node under the open container (or makes it the root).
  void finish(std::shared_ptr<ConfigNode> n, Cost c, YAML::anchor_t anchor) {
    if (anchor) define(anchor, n, c);
    if (stack_.empty()) {
      root_ = std::move(n);
      return;
    }
    Frame& f = stack_.back();
    f.child_height = std::max(f.child_height, c.height);
    if (f.node->is_map()) {
      if (f.node->map_get_shared(f.key))
        throw InputError(f.key_pos, (f.node->path().empty() ? "" : f.node->path() + ".") + f.key + ": duplicate key");
      f.node->map_set(f.key, std::move(n), f.key_pos);
      f.has_key = false;
    } else {
      f.node->seq_push(std::move(n));
      ++f.index;
    }
  }

  std::string file_, prefix_;
  int depth0_;
  int documents_ = 0;
  size_t nodes_ = 0, bytes_ = 0;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchor> anchors_;
  std::set<YAML::anchor_t> open_;
  std::unordered_map<YAML::anchor_t, std::string> names_;
  std::string pending_anchor_name_;
  std::shared_ptr<ConfigNode> root_;
};

}  // namespace

std::shared_ptr<ConfigNode> parse_document(const std::string& text, const std::string& file, const std::string& prefix,
                                           int depth0) {
  size_t bad = utf8::first_invalid(text);
  if (bad != text.size()) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", unsigned(static_cast<unsigned char>(text[bad])));
    throw InputError(pos_at_offset(text, bad, file),
                     std::string("invalid UTF-8 (byte ") + byte + "), expected UTF-8 text");
  }
  std::istringstream in(text);
  Builder builder(file, prefix, depth0);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    throw InputError(pos_of(e.mark, file), "YAML syntax error: " + e.msg);
  }
  return builder.root();
}

}  // namespace gtsim::config_yaml
