#include "validation/first_shot.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/error.hpp"
#include "sim/output_file.hpp"
#include "validation/calibrate.hpp"
#include "validation/csv.hpp"
#include "validation/fitmath.hpp"
#include "validation/validate.hpp"

namespace gtsim::validation {

namespace {
namespace fs = std::filesystem;

const char* const kCsv = "first_shot.csv";
const char* const kJson = "first_shot.json";

fs::path batch_dir(const std::string& data_dir, const std::string& batch) {
  return batch.empty() ? fs::path(data_dir) : fs::path(data_dir) / batch;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "";
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

struct Err {
  double ae;  // |measured / simulated - 1|, percent
  std::string label;
};

void stats_of(const std::vector<Err>& v, double& mape, double& worst, std::string* worst_label = nullptr) {
  if (v.empty()) return;
  std::vector<double> ae;
  for (const auto& e : v) ae.push_back(e.ae);
  mape = mean(ae);
  auto it = std::max_element(v.begin(), v.end(), [](const Err& a, const Err& b) { return a.ae < b.ae; });
  worst = it->ae;
  if (worst_label) *worst_label = it->label;
}

double ape(double meas, double sim) { return std::fabs(meas / sim - 1) * 100; }
}  // namespace

std::string first_shot_key(const MeasuredPoint& p) { return p.file + "#" + std::to_string(p.row); }

const FirstShotPoint* FirstShotRecords::find(const MeasuredPoint& p) const {
  auto it = points.find(first_shot_key(p));
  return it == points.end() ? nullptr : &it->second;
}

FirstShotRecords load_first_shots(const Dataset& data) {
  FirstShotRecords rec;
  for (const auto& b : data.batches) {
    fs::path dir = batch_dir(data.dir, b);
    if (!fs::exists(dir / kCsv)) continue;
    try {
      CsvTable t = read_csv((dir / kCsv).string());
      for (size_t r = 0; r < t.rows.size(); ++r) {
        FirstShotPoint fp;
        fp.simulated = t.number(r, "simulated").value_or(std::nan(""));
        fp.blind = t.number(r, "blind_simulated").value_or(std::nan(""));
        fp.role = t.get(r, "role");
        rec.points[t.get(r, "file") + "#" + t.get(r, "row")] = fp;
      }
      std::ifstream in(dir / kJson);
      rec.meta[b] = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json::object();
    } catch (const std::exception& e) {
      rec.problems.push_back(data.cite(b, kCsv) + ": not read (" + e.what() + ")");
    }
  }
  return rec;
}

FirstShotSummary summarize_first_shots(const std::vector<FirstShotError>& errors) {
  FirstShotSummary s;
  struct Acc {
    std::vector<Err> first, current, blind;
  };
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& e : errors) {
    Acc& a = acc[{e.batch, e.family}];
    a.first.push_back({e.first, e.label});
    if (std::isfinite(e.current)) a.current.push_back({e.current, e.label});
    if (std::isfinite(e.blind)) a.blind.push_back({e.blind, e.label});
  }
  std::vector<double> app_first, app_current, app_blind;
  for (const auto& [key, a] : acc) {
    FirstShotStats f;
    f.batch = key.first, f.family = key.second;
    f.application = !is_microbenchmark(f.family);
    f.points = a.first.size();
    f.blind_points = a.blind.size();
    stats_of(a.first, f.first_mape, f.first_worst, &f.worst_point);
    stats_of(a.current, f.current_mape, f.current_worst);
    stats_of(a.blind, f.blind_mape, f.blind_worst);
    if (f.application) {
      app_first.push_back(f.first_mape);
      if (std::isfinite(f.current_mape)) app_current.push_back(f.current_mape);
      if (std::isfinite(f.blind_mape)) app_blind.push_back(f.blind_mape);
      if (!(f.first_worst <= s.app_first_worst)) s.app_first_worst = f.first_worst, s.app_worst_point = f.worst_point;
    }
    if (std::find(s.batches.begin(), s.batches.end(), f.batch) == s.batches.end()) s.batches.push_back(f.batch);
    s.families.push_back(f);
  }
  if (!app_first.empty()) s.app_first_mape = mean(app_first);
  if (!app_current.empty()) s.app_current_mape = mean(app_current);
  if (!app_blind.empty()) s.app_blind_mape = mean(app_blind);
  return s;
}

FirstShotSummary first_shot_summary(const ValidationReport& rep, const FirstShotRecords& rec) {
  std::vector<FirstShotError> errors;
  for (const auto& p : rep.points) {
    const FirstShotPoint* fp = rec.find(*p.m);
    if (!fp || !std::isfinite(fp->simulated) || fp->simulated <= 0 || !(p.meas > 0)) continue;
    if (p.role == "excluded" && !std::isfinite(p.sim)) continue;
    FirstShotError e{p.m->batch, p.family, p.m->label(), ape(p.meas, fp->simulated)};
    if (std::isfinite(p.sim) && p.sim > 0) e.current = ape(p.meas, p.sim);
    if (std::isfinite(fp->blind) && fp->blind > 0) e.blind = ape(p.meas, fp->blind);
    errors.push_back(e);
  }
  FirstShotSummary s = summarize_first_shots(errors);
  s.batches.clear();
  for (const auto& [b, m] : rec.meta) s.batches.push_back(b);  // every record, simulated here or not
  return s;
}

nlohmann::json FirstShotSummary::to_json() const {
  auto n = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"batches", batches},
                      {"application_first_shot_mape_pct", n(app_first_mape)},
                      {"application_first_shot_worst_pct", n(app_first_worst)},
                      {"application_first_shot_worst_point", app_worst_point},
                      {"application_current_mape_pct", n(app_current_mape)},
                      {"application_blind_first_shot_mape_pct", n(app_blind_mape)},
                      {"families", nlohmann::json::array()}};
  for (const auto& f : families)
    j["families"].push_back({{"batch", f.batch},
                             {"family", f.family},
                             {"application", f.application},
                             {"points", f.points},
                             {"first_shot_mape_pct", n(f.first_mape)},
                             {"first_shot_worst_pct", n(f.first_worst)},
                             {"first_shot_worst_point", f.worst_point},
                             {"current_mape_pct", n(f.current_mape)},
                             {"current_worst_pct", n(f.current_worst)},
                             {"blind_points", f.blind_points},
                             {"blind_first_shot_mape_pct", n(f.blind_mape)}});
  return j;
}

Dataset only_batch(const Dataset& data, const std::string& batch) {
  if (std::find(data.batches.begin(), data.batches.end(), batch) == data.batches.end())
    throw InputError(SourcePos{"--first-shot"},
                     "no batch \"" + batch + "\" under " + data.dir + ", expected a folder of measured CSVs there");
  Dataset d = data;
  d.points.clear();
  for (const auto& p : data.points)
    if (p.file == data.cite(batch, fs::path(p.file).filename().string())) d.points.push_back(p);
  if (d.points.empty()) throw InputError(SourcePos{"--first-shot"}, "batch \"" + batch + "\" has no measured point");
  return d;
}

void write_first_shot(const ValidationReport& rep, const std::string& data_dir, const std::string& batch,
                      const nlohmann::json& provenance) {
  fs::path dir = batch_dir(data_dir, batch);
  if (fs::exists(dir / kCsv) || fs::exists(dir / kJson))
    throw InputError(SourcePos{(dir / kCsv).string()},
                     "batch " + batch +
                         " already has a first-shot record; it is written once, before any model change that looks "
                         "at the batch, and never rewritten");
  std::map<std::string, const PointResult*> blind;
  for (const auto& p : rep.blind_points) blind[first_shot_key(*p.m)] = &p;
  std::ostringstream csv;
  csv << "file,row,label,family,role,quantity,unit,measured,simulated,err_pct,blind_simulated,note\n";
  size_t simulated = 0;
  for (const auto& p : rep.points) {
    auto b = blind.find(first_shot_key(*p.m));
    double bs = b == blind.end() ? std::nan("") : b->second->sim;
    if (std::isfinite(p.sim)) ++simulated;
    csv << csv_cell(p.m->file) << "," << p.m->row << "," << csv_cell(p.m->label()) << "," << p.family << "," << p.role
        << "," << p.quantity << "," << p.unit << "," << num(p.meas) << "," << num(p.sim) << ","
        << num(std::isfinite(p.err()) ? p.err() * 100 : std::nan("")) << "," << num(bs) << ","
        << csv_cell(p.reason.empty() ? p.sim_note : p.reason + (p.sim_note.empty() ? "" : "; " + p.sim_note)) << "\n";
  }
  nlohmann::json meta = provenance;
  meta["batch"] = batch;
  meta["hw"] = rep.hw;
  meta["blind_hw"] = rep.blind_ran ? rep.blind_hw : "";
  meta["points"] = rep.points.size();
  meta["simulated"] = simulated;
  write_output((dir / kCsv).string(), csv.str());
  write_output((dir / kJson).string(), meta.dump(2) + "\n");
}

}  // namespace gtsim::validation
