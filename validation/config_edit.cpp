#include "validation/config_edit.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/config.hpp"
#include "sim/error.hpp"
#include "sim/output_file.hpp"

namespace gtsim::validation {

namespace {
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  lines.push_back(cur);  // the text after the last newline ("" when the file ends with one)
  return lines;
}

// Where a comment starts on a line: the first '#' outside quotes preceded by a blank (or at 0).
size_t comment_start(const std::string& line) {
  bool sq = false, dq = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\'' && !dq)
      sq = !sq;
    else if (c == '"' && !sq)
      dq = !dq;
    else if (c == '#' && !sq && !dq && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
      return i;
  }
  return std::string::npos;
}

size_t scalar_end(const std::string& line, size_t start) {
  size_t i = start;
  while (i < line.size() && line[i] != ',' && line[i] != '}' && line[i] != ']' && line[i] != ' ' && line[i] != '\t' &&
         line[i] != '#')
    ++i;
  return i;
}

// The comment of a line that several edits rewrite (a flow map's values). Comments that differ only
// in their uncertainty ("calibrated: F (gtsim calibrate, ± 1.6 U)") become one that lists it per key
// ("calibrated: F (gtsim calibrate, ± f16 1.6, bf16 5 U)"); comments with different heads form one such
// group each, in order of first appearance, joined by "; ", as are comments without an uncertainty
// (once each).
std::string join_comments(const std::vector<std::pair<std::string, std::string>>& cs) {
  const std::string pm = " ± ";
  struct Group {
    std::string head, unit, list, whole;
    int n = 0;
  };
  std::vector<Group> groups;
  for (const auto& [leaf, c] : cs) {
    size_t at = c.find(pm);
    size_t sp = at == std::string::npos ? at : c.find(' ', at + pm.size());
    if (sp == std::string::npos) {  // no uncertainty: kept whole, once
      bool dup = false;
      for (const auto& g : groups) dup = dup || (g.head.empty() && g.whole == c);
      if (!dup) groups.push_back({"", "", "", c, 1});
      continue;
    }
    std::string h = c.substr(0, at), u = c.substr(sp), v = c.substr(at + pm.size(), sp - at - pm.size());
    Group* g = nullptr;
    for (auto& x : groups)
      if (!x.head.empty() && x.head == h && x.unit == u) g = &x;
    if (!g) groups.push_back({h, u, "", c, 0}), g = &groups.back();
    g->list += (g->list.empty() ? "" : ", ") + leaf + " " + v;
    ++g->n;
  }
  std::string out;
  for (const auto& g : groups)
    out += (out.empty() ? "" : "; ") +
           (g.head.empty() || (g.n == 1 && cs.size() == 1) ? g.whole : g.head + pm + g.list + g.unit);
  return out;
}
}  // namespace

std::string edit_config_text(const std::string& path, const std::vector<ValueEdit>& edits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourcePos{path}, "cannot read config");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto root = ConfigNode::load_file(path);
  auto lines = split_lines(text);
  struct At {
    size_t col;
    std::string value;
  };
  std::map<int, std::vector<At>> per_line;
  std::map<int, std::vector<std::pair<std::string, std::string>>> comments;  // line -> (leaf key, comment)
  std::string canon = std::filesystem::weakly_canonical(path).string();
  for (const auto& e : edits) {
    const ConfigNode* n = root.get();
    std::stringstream ks(e.key);
    std::string part;
    while (std::getline(ks, part, '.')) {
      if (!n->is_map() || !n->has(part)) throw InputError(SourcePos{path}, e.key + ": no such key in the config");
      n = &n->at(part);
    }
    if (!n->is_scalar()) n->fail(e.key + ": not a plain value, cannot rewrite it");
    const SourcePos& p = n->pos();
    std::error_code ec;
    if (p.line <= 0 || std::filesystem::weakly_canonical(p.file, ec).string() != canon)
      throw InputError(p, e.key + ": the value is not written in " + path + " itself (inherited through base:?)");
    per_line[p.line].push_back({size_t(p.col - 1), e.value});
    if (!e.comment.empty()) comments[p.line].push_back({e.key.substr(e.key.rfind('.') + 1), e.comment});
  }
  for (auto& [line_no, ats] : per_line) {
    std::string& line = lines.at(size_t(line_no - 1));
    size_t cstart = comment_start(line);
    std::string body = cstart == std::string::npos ? line : line.substr(0, cstart);
    std::sort(ats.begin(), ats.end(), [](const At& a, const At& b) { return a.col > b.col; });
    for (const auto& a : ats) {
      size_t end = scalar_end(body, a.col);
      body = body.substr(0, a.col) + a.value + body.substr(end);
    }
    std::string comment = join_comments(comments[line_no]);
    if (comment.empty() && cstart != std::string::npos)
      comment = line.substr(cstart + 2 <= line.size() ? cstart + 2 : cstart + 1);
    // keep the comment column when the new value still fits before it
    size_t trimmed = body.find_last_not_of(" \t");
    std::string code = trimmed == std::string::npos ? "" : body.substr(0, trimmed + 1);
    if (comment.empty()) {
      line = code;
    } else {
      size_t col = cstart != std::string::npos && cstart > code.size() ? cstart : code.size() + 1;
      line = code + std::string(col - code.size(), ' ') + "# " + comment;
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return out;
}

void edit_config_file(const std::string& path, const std::vector<ValueEdit>& edits) {
  write_output(path, edit_config_text(path, edits));  // whole or not at all, through links
}

}  // namespace gtsim::validation
