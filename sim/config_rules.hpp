// The physical range of every numeric config key, in ONE table keyed by the key's path pattern
// (its unit suffix, mostly: `*_gbps`, `*_mhz`, `*_cycles`, ...). ConfigNode::as<T>() checks every
// number it reads against the first rule whose pattern matches the key's path, so a reader cannot
// forget: a rate of 1e-300 or a latency of 1e300 is refused at load with its file:line:col, however
// the model reads it, and `--set` values meet the same rules. A reader's own range() may be
// narrower. Each bound and its reason is listed in docs/config.md ("Physical ranges").
#pragma once

#include <string>
#include <vector>

namespace gtsim::config_rules {

struct Rule {
  // Glob over the dotted key path with list indices dropped ("sm.shared.carveouts_kb[3]" is matched
  // as "sm.shared.carveouts_kb"); `*` matches any run of characters (dots included), `|` separates
  // alternatives.
  const char* pattern;
  double lo, hi;
  bool lo_open, hi_open;  // (lo, ...] / [..., hi): the bound itself is refused
  bool zero_ok;           // 0 is also accepted: the key's "none / off" value
  const char* what;       // "a bandwidth"
  const char* unit;       // "GB/s"
  const char* why;        // the reason for the bounds
};

// The table, in matching order (first match wins).
const std::vector<Rule>& rules();
// The rule for a key path, or nullptr when none applies (strings, counts with no unit, workloads).
const Rule* rule_for(const std::string& path);
// "[0, 1e+06] ns", "(1, 100000] MHz", "0 or [0.001, 1024] requests/cycle".
std::string range_text(const Rule& r);
// Whether v satisfies r.
bool accepts(const Rule& r, double v);
// Glob match of `path` (indices already dropped) against one pattern with `|` alternatives.
bool matches(const char* pattern, const std::string& path);
// "a.b[2].c[0]" -> "a.b.c".
std::string strip_indices(const std::string& path);

}  // namespace gtsim::config_rules
