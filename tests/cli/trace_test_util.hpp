// Shared by the trace tests (test_trace.cpp, test_tpu_trace.cpp): Chrome trace-event JSON checks.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gtsim::test {

// a scratch file of this test process (ctest runs each test in its own process)
inline std::filesystem::path trace_temp(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("gtsim_trace_" + std::to_string(::getpid()) + "_" + name);
}

inline nlohmann::json events_of(const nlohmann::json& t, const char* ph) {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& e : t["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

// Per track, slices in time order and either disjoint or nested (what Perfetto draws as a stack).
inline void expect_tracks_ordered_and_nested(const nlohmann::json& t) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const nlohmann::json& e : events_of(t, "X"))
    tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  for (const auto& [key, s] : tracks)
    for (size_t i = 1; i < s.size(); ++i) {
      EXPECT_LE(s[i - 1].first, s[i].first) << "track " << key.first << "/" << key.second << " goes back in time";
      double prev_end = s[i - 1].first + s[i - 1].second;
      bool disjoint = s[i].first >= prev_end - 1e-3;
      bool nested = s[i].first + s[i].second <= prev_end + 1e-3;
      EXPECT_TRUE(disjoint || nested) << "track " << key.first << "/" << key.second << " slice " << i
                                      << " overlaps the one before without nesting";
    }
  std::map<std::string, double> last;
  for (const nlohmann::json& c : events_of(t, "C")) {
    std::string name = c["name"];
    double ts = c["ts"];
    if (last.count(name)) {
      EXPECT_LT(last[name], ts) << "counter " << name << " goes back in time";
    }
    last[name] = ts;
  }
}

}  // namespace gtsim::test
