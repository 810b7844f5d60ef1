// First-shot records: the model's prediction of a measurement batch, written once by
// `gtsim validate --first-shot BATCH` right after the batch's data is committed and before any model
// change that looks at it, and kept beside the data (BATCH/first_shot.csv and first_shot.json). The
// report shows, per batch and family, that first-shot error beside the current model's error on the
// same points; the headline is the first-shot error on application kernels (issue 38: an error bar
// nobody tuned). A record is never rewritten: a second --first-shot of the same batch is an error.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validation/measured.hpp"

namespace gtsim::validation {

struct ValidationReport;

// One point's first-shot prediction: the compared quantity (time in us, or ns per hop for the chase)
// as the model and the blind config gave it at the recorded commit (NaN where not simulated).
struct FirstShotPoint {
  double simulated = std::nan(""), blind = std::nan("");
  std::string role;  // the point's role at that commit
};

// BATCH/first_shot.csv and first_shot.json of every batch that has them, keyed by "file#row".
struct FirstShotRecords {
  std::map<std::string, FirstShotPoint> points;
  std::map<std::string, nlohmann::json> meta;  // batch -> first_shot.json
  std::vector<std::string> problems;
  const FirstShotPoint* find(const MeasuredPoint& p) const;
};
FirstShotRecords load_first_shots(const Dataset& data);

// The key of a point in first_shot.csv.
std::string first_shot_key(const MeasuredPoint& p);

// Per batch and family: the first-shot error and the current one on the same points (those the
// first-shot record simulated and the current run simulated too), and the blind config's first shot.
struct FirstShotStats {
  std::string batch, family;
  bool application = false;  // an application kernel (not a microbenchmark)
  size_t points = 0;
  double first_mape = std::nan(""), first_worst = std::nan("");
  double current_mape = std::nan(""), current_worst = std::nan("");
  size_t blind_points = 0;
  double blind_mape = std::nan(""), blind_worst = std::nan("");
  std::string worst_point;  // label of the first-shot worst point
};
struct FirstShotSummary {
  std::vector<FirstShotStats> families;
  std::vector<std::string> batches;  // batches with a record
  // application kernels, families weighted equally, over every batch with a record
  double app_first_mape = std::nan(""), app_first_worst = std::nan("");
  double app_current_mape = std::nan(""), app_blind_mape = std::nan("");
  std::string app_worst_point;
  nlohmann::json to_json() const;
};
FirstShotSummary first_shot_summary(const ValidationReport& rep, const FirstShotRecords& rec);

// One point's absolute errors on throughput, percent: first shot, current and blind first shot (NaN
// where there is none). summarize_first_shots groups them per batch and family, and weighs the
// application families equally for the headline; both the report and a record's CSV go through it.
struct FirstShotError {
  std::string batch, family, label;
  double first = std::nan(""), current = std::nan(""), blind = std::nan("");
};
FirstShotSummary summarize_first_shots(const std::vector<FirstShotError>& errors);

// Writes BATCH/first_shot.csv and first_shot.json under `data_dir` from a report of that batch's
// points (validate() on the batch alone). Throws InputError when the batch already has a record.
// `provenance`: commit, dirty flag, date, command (cli/cmd_validate.cpp fills it).
void write_first_shot(const ValidationReport& rep, const std::string& data_dir, const std::string& batch,
                      const nlohmann::json& provenance);

// The data of one batch only (for --first-shot); throws InputError when the batch is not there.
Dataset only_batch(const Dataset& data, const std::string& batch);

}  // namespace gtsim::validation

namespace gtsim::validation {

// Every first-shot record under the data folders beside `data_dir` (validation/data/*/BATCH/), its
// error per family as recorded (a first-shot error is fixed once written). The records of `data_dir`
// itself also get the current error from `current` (the report of this run).
struct RecordedFirstShot {
  std::string folder, batch, hw, commit, date;
  FirstShotSummary summary;
};
std::vector<RecordedFirstShot> recorded_first_shots(const std::string& data_dir, const FirstShotSummary& current);

// docs/validation.md's headline rows and its "First shot" section.
std::string first_shot_headline_rows(const std::vector<RecordedFirstShot>& records);
std::string first_shot_section(const std::vector<RecordedFirstShot>& records);

}  // namespace gtsim::validation
