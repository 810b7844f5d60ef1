// Rule (issue 38, an error bar nobody tuned): a batch's first-shot record is the model's prediction
// written once, right after the data is committed; it is read back point by point, its error is shown
// beside the current model's on the same points, and the headline weighs application families equally
// and leaves the microbenchmarks out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/error.hpp"
#include "validation/first_shot.hpp"
#include "validation/validate.hpp"

namespace {
namespace fs = std::filesystem;
using namespace gtsim::validation;

struct TempData {
  fs::path root;
  explicit TempData(const std::string& tag) {
    root = fs::temp_directory_path() / ("gtsim_fs_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(root);
  }
  ~TempData() { fs::remove_all(root); }
  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
};

const std::string kHead = "batch,kernel,variant,M,N,K,n,check,repeats,median_us,min_us,max_us\n";

// A report of `data`'s points with the given simulated times (in the order of data.points).
ValidationReport report_of(const Dataset& data, const std::vector<double>& sim) {
  ValidationReport rep;
  rep.hw = "hw_configs/test.yaml";
  for (size_t i = 0; i < data.points.size(); ++i) {
    PointResult r;
    r.m = &data.points[i];
    r.family = data.points[i].kernel;
    r.role = "held-out";
    r.meas = data.points[i].time_us;
    r.sim = sim.at(i);
    rep.points.push_back(r);
  }
  return rep;
}

TEST(FirstShot, RecordIsWrittenOnceAndReadBackBesideTheCurrentError) {
  TempData t("once");
  fs::path data = t.root / "gpu";
  TempData::write(data / "b7" / "gemm_tiled.csv", kHead + "b7,gemm_tiled,fresh,2048,2048,2048,,ok,7,110,109,111\n" +
                                                      "b7,gemm_tiled,fresh,3072,3072,3072,,ok,7,220,219,221\n");
  Dataset ds = load_dataset(data.string());
  ASSERT_EQ(ds.points.size(), 2u);
  ValidationReport first = report_of(ds, {100, 200});  // measured / simulated - 1: +10% on both points
  write_first_shot(first, data.string(), "b7", {{"commit", "abc1234"}});
  EXPECT_TRUE(fs::exists(data / "b7" / "first_shot.csv"));
  EXPECT_TRUE(fs::exists(data / "b7" / "first_shot.json"));
  EXPECT_THROW(write_first_shot(first, data.string(), "b7", {{"commit", "def5678"}}), gtsim::InputError);

  Dataset again = load_dataset(data.string());  // the record is not a measured point
  EXPECT_EQ(again.points.size(), 2u);
  FirstShotRecords rec = load_first_shots(again);
  ASSERT_EQ(rec.points.size(), 2u);
  ASSERT_NE(rec.find(again.points[0]), nullptr);
  EXPECT_NEAR(rec.find(again.points[0])->simulated, 100, 1e-6);
  EXPECT_EQ(rec.meta.at("b7").value("commit", ""), "abc1234");

  ValidationReport now = report_of(again, {110, 200});  // the model since: exact on the first point
  FirstShotSummary s = first_shot_summary(now, rec);
  ASSERT_EQ(s.families.size(), 1u);
  EXPECT_EQ(s.families[0].points, 2u);
  EXPECT_NEAR(s.families[0].first_mape, 10, 1e-6);
  EXPECT_NEAR(s.families[0].current_mape, 5, 1e-6);
  EXPECT_NEAR(s.app_first_mape, 10, 1e-6);
}

TEST(FirstShot, HeadlineWeighsApplicationFamiliesEquallyAndLeavesMicrobenchmarksOut) {
  TempData t("weigh");
  fs::path data = t.root / "gpu";
  TempData::write(data / "b1" / "gemm_tiled.csv", kHead + "b1,gemm_tiled,fresh,1024,1024,1024,,ok,7,110,109,111\n" +
                                                      "b1,gemm_tiled,fresh,2048,2048,2048,,ok,7,130,129,131\n");
  TempData::write(data / "b1" / "softmax.csv", kHead + "b1,softmax,rows,,,,,ok,7,105,104,106\n");
  TempData::write(data / "b1" / "stream_copy.csv", kHead + "b1,stream_copy,hot,,,,4096,ok,7,150,149,151\n");
  Dataset ds = load_dataset(data.string());
  ASSERT_EQ(ds.points.size(), 4u);
  ValidationReport rep = report_of(ds, std::vector<double>(4, 100.0));
  write_first_shot(rep, data.string(), "b1", nlohmann::json::object());
  FirstShotSummary s = first_shot_summary(rep, load_first_shots(ds));
  // gemm_tiled: 10% and 30% (mean 20%); softmax 5%; stream_copy's 50% is a microbenchmark's
  EXPECT_NEAR(s.app_first_mape, 12.5, 1e-6);
  EXPECT_NEAR(s.app_first_worst, 30, 1e-6);
  EXPECT_NE(s.app_worst_point.find("N=2048"), std::string::npos) << s.app_worst_point;
  EXPECT_EQ(s.families.size(), 3u);
}

TEST(FirstShot, OnlyBatchKeepsThatBatchAndRefusesAMissingOne) {
  TempData t("only");
  fs::path data = t.root / "gpu";
  TempData::write(data / "b1" / "softmax.csv", kHead + "b1,softmax,rows,,,,,ok,7,105,104,106\n");
  TempData::write(data / "b2" / "softmax.csv", kHead + "b2,softmax,rows,,,,,ok,7,95,94,96\n");
  Dataset ds = load_dataset(data.string());
  Dataset b2 = only_batch(ds, "b2");
  ASSERT_EQ(b2.points.size(), 1u);
  EXPECT_EQ(b2.points[0].batch, "b2");
  EXPECT_THROW(only_batch(ds, "b9"), gtsim::InputError);
}

// docs/validation.md of one GPU's data shows the records of the other data folders too, read from their CSVs.
TEST(FirstShot, RecordsOfSiblingDataFoldersAreReadFromTheirCsv) {
  TempData t("siblings");
  TempData::write(t.root / "h200" / "b1" / "softmax.csv", kHead + "b1,softmax,rows,,,,,ok,7,105,104,106\n");
  TempData::write(t.root / "h100" / "b42" / "first_shot.csv",
                  "file,row,label,family,role,quantity,unit,measured,simulated,err_pct,blind_simulated,note\n"
                  "x,0,softmax/rows,softmax,held-out,time,us,120,100,20,,\n"
                  "x,1,stream_copy/hot,stream_copy,held-out-repeat,time,us,300,100,200,,\n");
  TempData::write(t.root / "h100" / "b42" / "first_shot.json",
                  R"({"hw": "hw_configs/h100-sxm.yaml", "commit": "0123456789"})");
  auto recs = recorded_first_shots((t.root / "h200").string(), FirstShotSummary{});
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].folder, "h100");
  EXPECT_EQ(recs[0].batch, "b42");
  EXPECT_NEAR(recs[0].summary.app_first_mape, 20, 1e-6);
  std::string rows = first_shot_headline_rows(recs);
  EXPECT_NE(rows.find("h100/b42"), std::string::npos) << rows;
  EXPECT_NE(rows.find("20%"), std::string::npos) << rows;
  EXPECT_NE(first_shot_section(recs).find("stream_copy (microbenchmark)"), std::string::npos);
}

}  // namespace
