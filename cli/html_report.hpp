// --html PATH on run, workload, compare and sweep: one self-contained HTML file (no network, no
// external CSS or JS: a Content-Security-Policy forbids both) with the summary, the tables, the
// figures as inline SVG drawn by gnuplot's svg terminal, and the resolved machine config(s) used.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gtsim::cli {

struct HtmlTable {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct HtmlFigure {
  std::string caption;
  std::string svg;  // an <svg> element (inline_svg)
};

struct HtmlReport {
  std::string title;
  std::string command;  // the gtsim command line that wrote it (empty: left out)
  std::string summary;  // the text report, shown preformatted
  std::vector<HtmlFigure> figures;
  std::vector<HtmlTable> tables;
  std::vector<std::pair<std::string, std::string>> configs;  // (heading, resolved YAML)
};

// Adds --html PATH to a subcommand; `what` says what the page holds (for --help).
std::shared_ptr<std::string> add_html_option(CLI::App& app, const std::string& what);
// Before any simulation (InputError, exit 2): the path ends in .html or .htm, it can be written
// (check_output_path), and gnuplot, which draws the figures, is on the PATH. "" passes.
void check_html_path(const std::string& path);

// The page, and writing it whole (sim/output_file.hpp); says where on stderr.
std::string render_html(const HtmlReport& r);
void write_html(const std::string& path, const HtmlReport& r);

// An SVG file's text made ready to inline in a page holding other figures: the XML prolog and
// DOCTYPE dropped, every id and every reference to one prefixed with `prefix`.
std::string inline_svg(const std::string& svg_text, const std::string& prefix);
// Runs `draw(image)` with image a fresh PATH.svg in a private temporary folder (a --plot writer:
// whatever it writes beside the image goes too) and returns the SVG's text; the folder is removed.
std::string svg_from(const std::function<void(const std::string& image)>& draw);
// Runs gnuplot on `script` (which must not set the terminal or output) with `data` as the datablock
// $d, and returns the SVG text (std::runtime_error with gnuplot's message on failure).
std::string gnuplot_svg(const std::string& data, const std::string& script, int width, int height);

// The gtsim command line of this process (/proc/self/cmdline), shell-quoted where needed.
std::string this_command_line();

// A table from a CSV text (first line the header; '#' lines skipped).
HtmlTable table_from_csv(const std::string& caption, const std::string& csv);

// The reports of each command, from their results (figures drawn here through gnuplot).
HtmlReport run_html(const nlohmann::json& run, const std::string& text, const std::string& config_yaml);
HtmlReport workload_html(const nlohmann::json& workload, const std::string& text, const std::string& config_yaml);
// `figure_svg`: the compare bars (cli/plot.hpp, through svg_from); `configs`: (file, resolved YAML).
HtmlReport compare_html(const nlohmann::json& compare, const std::string& text, const std::string& figure_svg,
                        const std::vector<std::pair<std::string, std::string>>& configs);
// `csv`: the sweep's CSV; `figure_svg`: its curve (empty: none).
HtmlReport sweep_html(const std::string& title, const std::string& csv, const std::string& figure_svg,
                      const std::string& config_yaml);

}  // namespace gtsim::cli
