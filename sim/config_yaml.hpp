// YAML text -> ConfigNode tree, with the limits that keep a hostile file from taking the machine:
// one document per text, UTF-8 only, nesting at most ConfigNode::kMaxDepth levels, and at most
// ConfigNode::kMaxNodes nodes / kMaxTextBytes bytes of keys, values and paths once aliases are
// expanded (a "billion laughs" file is refused at the alias that would pass the budget, before it
// is copied). Built from yaml-cpp's event parser, so no yaml-cpp node graph (which can hold alias
// cycles) is ever walked.
#pragma once

#include <memory>
#include <string>

#include "sim/config.hpp"

namespace gtsim::config_yaml {

// Parses `text` (named `file` in positions) into a tree whose paths start at `prefix`; the tree's
// root sits `depth0` levels deep (a --set value under a.b.c sits 3 deep), and the limit counts
// from there. An empty text (or one of comments only) gives a kNull root at {file, 1, 1}.
// Throws InputError at the offending position.
std::shared_ptr<ConfigNode> parse_document(const std::string& text, const std::string& file,
                                           const std::string& prefix = "", int depth0 = 0);

}  // namespace gtsim::config_yaml
