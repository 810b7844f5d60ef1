// The first-shot records across data folders, and their part of docs/validation.md.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "validation/calibrate.hpp"
#include "validation/csv.hpp"
#include "validation/first_shot.hpp"
#include "validation/fitmath.hpp"
#include "validation/validate.hpp"

namespace gtsim::validation {

namespace {
namespace fs = std::filesystem;

std::string pct(double v) { return std::isfinite(v) ? fmt(v, 3) + "%" : "n/a"; }

// Per family, from a record's CSV alone: measured against the recorded simulation.
FirstShotSummary summary_of_csv(const CsvTable& t, const std::string& batch) {
  std::vector<FirstShotError> errors;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    auto meas = t.number(r, "measured"), sim = t.number(r, "simulated");
    if (!meas || !sim || *meas <= 0 || *sim <= 0) continue;
    errors.push_back({batch, t.get(r, "family"), t.get(r, "label"), std::fabs(*meas / *sim - 1) * 100});
  }
  FirstShotSummary s = summarize_first_shots(errors);
  s.batches = {batch};
  return s;
}
}  // namespace

std::vector<RecordedFirstShot> recorded_first_shots(const std::string& data_dir, const FirstShotSummary& current) {
  std::vector<RecordedFirstShot> out;
  fs::path here = fs::path(data_dir).lexically_normal();
  if (here.filename().empty()) here = here.parent_path();
  fs::path root = here.parent_path();
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return out;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().filename() == "first_shot.csv" && it.depth() <= 2) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    RecordedFirstShot r;
    r.folder = f.parent_path().parent_path().filename().string();
    r.batch = f.parent_path().filename().string();
    std::ifstream in(f.parent_path() / "first_shot.json");
    nlohmann::json meta = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (meta.is_object()) {
      r.hw = meta.value("hw", ""), r.commit = meta.value("commit", ""), r.date = meta.value("date_utc", "");
    }
    bool ours = fs::equivalent(f.parent_path().parent_path(), here, ec);
    if (ours && std::find(current.batches.begin(), current.batches.end(), r.batch) != current.batches.end()) {
      r.summary = current;  // this run's report: the same records with the current error beside them
      r.summary.families.erase(std::remove_if(r.summary.families.begin(), r.summary.families.end(),
                                              [&](const FirstShotStats& s) { return s.batch != r.batch; }),
                               r.summary.families.end());
    } else {
      try {
        r.summary = summary_of_csv(read_csv(f.string()), r.batch);
      } catch (const std::exception&) {
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

std::string first_shot_headline_rows(const std::vector<RecordedFirstShot>& records) {
  std::ostringstream o;
  std::vector<double> mape;
  double worst = std::nan("");
  std::string worst_point, which;
  for (const auto& r : records) {
    if (!std::isfinite(r.summary.app_first_mape)) continue;
    mape.push_back(r.summary.app_first_mape);
    which += (which.empty() ? "" : ", ") + r.folder + "/" + r.batch;
    if (!(r.summary.app_first_worst <= worst))
      worst = r.summary.app_first_worst, worst_point = r.folder + "/" + r.batch + " " + r.summary.app_worst_point;
  }
  if (mape.empty()) {
    o << "| **first-shot** MAPE on application kernels | no first-shot record yet | <= 10% |\n";
    return o.str();
  }
  o << "| **first-shot** MAPE on application kernels (the model's prediction committed before any change that "
       "looked at the data; records: "
    << which << ") | " << pct(mean(mape)) << " | <= 10% |\n";
  o << "| first-shot worst point | " << pct(worst) << " (" << worst_point << ") | |\n";
  return o.str();
}

std::string first_shot_section(const std::vector<RecordedFirstShot>& records) {
  std::ostringstream o;
  o << "## First shot: the model's prediction before it saw the data\n\n"
    << "A new measurement batch is committed first; then `gtsim validate --hw CONFIG --data FOLDER --first-shot BATCH` "
       "records what the model predicts for every point it can run (no sampling, no run budget) in "
       "`BATCH/first_shot.csv`, with the commit, the date and the config in `first_shot.json`. The record is "
       "written once and never rewritten; model changes come after it. Below, per batch and family, the "
       "first-shot error (on throughput, as everywhere here) beside the current model's error on the same points "
       "(n/a where this report does not rerun that data folder, or where the current run does not simulate the "
       "point). The first-shot error is the error bar to expect on kernels the model has not seen.\n\n";
  if (records.empty()) {
    o << "No first-shot record yet.\n\n";
    return o.str();
  }
  o << "| data | batch | config (commit) | family | points | first-shot MAPE | first-shot worst | current MAPE | "
       "current worst |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : records)
    for (const auto& f : r.summary.families)
      o << "| " << r.folder << " | " << r.batch << " | `" << r.hw << "` (" << r.commit.substr(0, 7) << ") | "
        << f.family << (f.application ? "" : " (microbenchmark)") << " | " << f.points << " | " << pct(f.first_mape)
        << " | " << pct(f.first_worst) << (f.worst_point.empty() ? "" : " (" + f.worst_point + ")") << " | "
        << pct(f.current_mape) << " | " << pct(f.current_worst) << " |\n";
  o << "\n";
  return o.str();
}

}  // namespace gtsim::validation
