// Small readers for the measured data: CSV tables (quoted fields, as Nsight Compute writes them)
// and "k=v;k=v" parameter lists (canary.csv, manifest.csv).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gtsim::validation {

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  int column(const std::string& name) const;  // -1 when absent
  bool has(const std::string& name) const { return column(name) >= 0; }
  // The cell of `row` in column `name` ("" when the column or the cell is absent).
  std::string get(size_t row, const std::string& name) const;
  std::optional<double> number(size_t row, const std::string& name) const;
  std::map<std::string, std::string> row_map(size_t row) const;
};

// Reads a CSV file; throws InputError when it cannot be read. Header names are trimmed.
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(const std::string& text, const std::string& name = "<csv>");
// Parses a number that may carry thousands separators ("2,816") or spaces; nullopt otherwise.
std::optional<double> parse_number(const std::string& s);
// "a=1;b=x" -> {a: "1", b: "x"}
std::map<std::string, std::string> parse_kv_list(const std::string& s);

}  // namespace gtsim::validation
