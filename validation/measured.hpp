// The committed measurements: every batch under validation/data/<gpu>/, every measured point of
// every kernel CSV, the device record, the clocks, the Nsight Compute counters and the compiler
// records (ptxas -v, SASS) the runner stored beside them.
#pragma once

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"
#include "models/gpu/launch_history.hpp"
#include "validation/csv.hpp"

namespace gtsim::validation {

struct MeasuredPoint {
  std::string file;  // "validation/data/h200/b1/stream_copy.csv" (as cited in configs)
  size_t row = 0;    // data row in that file (0-based)
  std::string batch, kernel, variant;
  std::map<std::string, std::string> cols;
  double time_us = 0;  // per-kernel GPU time: graph_median_us when recorded, else median_us
  double min_us = 0, max_us = 0;
  int repeats = 0;
  double sm_mhz = 0;  // mean NVML SM clock read before and after the point
  bool graph_timed = false;

  double num(const std::string& col) const;  // NaN when absent or not a number
  // Relative spread of the repeats, (max - min) / median.
  double spread() const { return time_us > 0 ? (max_us - min_us) / time_us : 0; }
  std::string label() const;  // "stream_copy/cold n=1048576"
  // What the L2 held when the twin's timed launch started. "hot": the same launch on the same buffers
  // before it. "cold" with `rotation_slots`: the twin rotates through that many buffer sets, so the
  // launches before it filled the L2 with other buffers' lines and left their stores dirty (one slot:
  // the same buffers every launch, as hot). The application twins that reuse their buffers (GEMMs,
  // attention, elementwise): resident. Otherwise (softmax rotates 4 sets, its plan says how; the
  // pointer chase scrubs the L2; the other microbenchmarks touch little memory) an empty L2.
  gpu::LaunchHistory launch_history() const;
};

struct Dataset {
  std::string dir;                                // as given (--data)
  std::vector<std::string> batches;               // subfolder names, sorted
  std::vector<MeasuredPoint> points;              // every kernel row of every batch
  nlohmann::json device;                          // device.json of the first batch
  std::vector<double> clock_probe_mhz;            // clocks.csv: clock64 vs globaltimer probe, under load
  std::vector<double> clock_nvml_mhz;             // clocks.csv: NVML SM clock under load
  std::vector<CsvTable> ncu;                      // ncu.csv of every batch
  std::map<std::string, std::string> ptxas_text;  // batch -> ptxas.txt
  std::map<std::string, std::string> sass_path;   // batch -> sass.txt.gz
  std::vector<std::string> problems;              // files that could not be read (skipped, said in the report)

  std::vector<const MeasuredPoint*> select(const std::string& kernel, const std::string& variant = "") const;
  // The host's launch floor: the median per-launch time of the empty kernel launched back to back
  // into a stream (its stream time even where a graph replay was also recorded); 0 when not measured.
  double host_launch_floor_us() const;
  // The file path as cited: "validation/data/h200/b1/NAME".
  std::string cite(const std::string& batch, const std::string& name) const;
};

// Loads every batch under `dir` (its subfolders holding CSVs, in natural order: b1, b2, ..., b10; or
// `dir` itself when it holds the CSVs). A file that does not parse is skipped and listed in `problems`
// (a batch being written, a new schema), so one bad file does not hide the others. Throws InputError
// when there is no point at all.
Dataset load_dataset(const std::string& dir);

// Binds a measured point to the IR kernel's parameters: every kernel parameter whose name is a
// column of the point takes that column's value (integers; "dtype" may also be a dtype name).
ir::ParamValues bind_params(const MeasuredPoint& p, const std::vector<std::string>& kernel_params);

}  // namespace gtsim::validation
