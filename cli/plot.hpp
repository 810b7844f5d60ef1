// --plot PATH.svg|.png on sweep, waves, roofline and compare: a small gnuplot writer. The figure's
// numbers go to PATH.dat and the script that draws them to PATH.gp, beside the picture (the script
// names the data file relative to its own folder, so `cd FOLDER && gnuplot NAME.gp` redraws it);
// the terminal (svg or pngcairo) follows the extension; gnuplot is run on the script.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gtsim::analytic {
struct RooflineReport;
}

namespace gtsim::cli {

// Before any simulation: refuses (InputError naming --plot, exit 2) an extension other than .svg or
// .png, a path that cannot be written (a directory, a missing or read-only folder, as
// check_output_path), and a machine without gnuplot on PATH. "" passes (no plot asked for).
void check_plot_path(const std::string& path);

// A string column of the data file: double-quoted (gnuplot's data syntax), inner quotes dropped.
std::string data_word(const std::string& s);

// PATH.svg -> PATH.dat and PATH.gp.
std::string plot_data_path(const std::string& image);
std::string plot_script_path(const std::string& image);
// The name the script uses for the data file (its file name, relative to the script's folder).
std::string plot_data_ref(const std::string& image);

// A gnuplot string literal: single-quoted, quotes doubled.
std::string gp_str(const std::string& s);

// Writes `data` to PATH.dat and the script (terminal and output for the extension, `width` x `height`
// pixels, then `body`, which reads the data file as gp_str(plot_data_ref(image))) to PATH.gp, runs
// gnuplot in that folder and says "wrote PATH" on stderr. Throws std::runtime_error when gnuplot
// fails (with its message).
void render_plot(const std::string& image, const std::string& data, const std::string& body, int width = 900,
                 int height = 600);

// gtsim roofline --plot: the attained roofline of each dtype (solid) beside the datasheet one
// (dashed), in TFLOP/s against FLOPs per DRAM byte, and each workload kernel at its simulated
// intensity and throughput, labelled with its op.
void write_roofline_plot(const std::string& image, const analytic::RooflineReport& r, const std::string& title);

// gtsim sweep --plot: cli/sweep.hpp's write_sweep_plot.

// gtsim waves --range --plot: `points` holds one waves report (models/analytic/waves.hpp's JSON) per
// size of the range, in order, with "x" (the swept size) added; `shape` is the --gemm shape's report
// with its padded alternatives under "suggestions" ("x" added to it and to each of them, and
// "shape", its MxNxK). Draws
// the simulated time against x, the wave count as a staircase (one labelled step per wave count),
// the --gemm shape and its padded alternatives marked.
void write_waves_plot(const std::string& image, const std::vector<nlohmann::json>& points, const nlohmann::json& shape,
                      const std::string& xname, const std::string& title);

// gtsim compare --plot: one bar group per op, one bar per machine, each split into device time and
// its launch (`launch_us[i]` per op on machine i: a GPU's launch overhead + stream gap; 0 on a TPU),
// and a last group for the dispatch charged once per workload (TPU).
void write_compare_plot(const std::string& image, const nlohmann::json& compare, const std::vector<double>& launch_us,
                        const std::string& title);

}  // namespace gtsim::cli
