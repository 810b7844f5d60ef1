#include "validation/csv.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "sim/error.hpp"

namespace gtsim::validation {

namespace {
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}
}  // namespace

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return int(i);
  return -1;
}

std::string CsvTable::get(size_t row, const std::string& name) const {
  int c = column(name);
  if (c < 0 || row >= rows.size() || size_t(c) >= rows[row].size()) return "";
  return rows[row][size_t(c)];
}

std::optional<double> CsvTable::number(size_t row, const std::string& name) const {
  return parse_number(get(row, name));
}

std::map<std::string, std::string> CsvTable::row_map(size_t row) const {
  std::map<std::string, std::string> m;
  for (size_t c = 0; c < header.size() && c < rows[row].size(); ++c) m[header[c]] = rows[row][c];
  return m;
}

std::optional<double> parse_number(const std::string& s) {
  std::string t;
  for (char c : s)
    if (c != ',' && c != ' ' && c != '"') t += c;
  if (t.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

std::map<std::string, std::string> parse_kv_list(const std::string& s) {
  std::map<std::string, std::string> m;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ';')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    m[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
  }
  return m;
}

CsvTable parse_csv(const std::string& text, const std::string& name) {
  CsvTable t;
  t.path = name;
  std::stringstream ss(text);
  std::string line;
  bool first = true;
  while (std::getline(ss, line)) {
    if (trim(line).empty()) continue;
    auto cells = split_line(line);
    if (first) {
      for (auto& c : cells) t.header.push_back(trim(c));
      first = false;
    } else {
      t.rows.push_back(std::move(cells));
    }
  }
  return t;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourcePos{path}, "cannot read CSV file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_csv(buf.str(), path);
}

}  // namespace gtsim::validation
