// The Prometheus registry (metrics/metrics.h): families with labels,
// cumulative histogram buckets, escaping, collectors; and the exposition a
// scraper reads.
#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace airlock::metrics {
namespace {

TEST(MetricsTest, CountersGaugesAndHistogramsRenderInTheTextFormat) {
  Registry r;
  Family& runs = r.Counter("airlock_runs_total", "Runs", {"language", "status"});
  runs.Add({"python", "ok"});
  runs.Add({"python", "ok"});
  runs.Add({"c", "timeout"}, 3);
  runs.Add({"c", "timeout"}, -1);  // counters never go down
  Family& g = r.Gauge("airlock_things", "Things", {});
  g.Set({}, 5);
  g.Add({}, -2);
  Family& h = r.Histogram("airlock_run_seconds", "Latency", {"phase"}, {0.01, 0.1, 1});
  h.Observe({"total"}, 0.005);
  h.Observe({"total"}, 0.05);
  h.Observe({"total"}, 5);
  const std::string text = r.Render();
  EXPECT_NE(text.find("# HELP airlock_runs_total Runs\n# TYPE airlock_runs_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_runs_total{language=\"python\",status=\"ok\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_runs_total{language=\"c\",status=\"timeout\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE airlock_things gauge\nairlock_things 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_bucket{phase=\"total\",le=\"0.01\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_bucket{phase=\"total\",le=\"0.1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_bucket{phase=\"total\",le=\"1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_bucket{phase=\"total\",le=\"+Inf\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_count{phase=\"total\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_sum{phase=\"total\"} 5.055\n"), std::string::npos) << text;
  EXPECT_EQ(&r.Counter("airlock_runs_total", "again", {"language", "status"}), &runs) << "one family per name";
}

TEST(MetricsTest, LabelValuesAreEscapedAndCollectorsAddSamples) {
  Registry r;
  r.Counter("airlock_calls_total", "Calls", {"connector"}).Add({"we\"ird\\name\nx"});
  r.AddCollector([](Exposition& e) {
    e.Gauge("airlock_up", "Up", {{"part", "runner"}}, 1);
    e.Gauge("airlock_other", "Other", {}, 7);
    e.Gauge("airlock_up", "Up", {{"part", "pool"}}, 0);
  });
  const std::string text = r.Render();
  EXPECT_NE(text.find("airlock_calls_total{connector=\"we\\\"ird\\\\name\\nx\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("# HELP airlock_up"), text.rfind("# HELP airlock_up")) << "HELP once per name";
  EXPECT_NE(text.find("airlock_up{part=\"runner\"} 1\nairlock_up{part=\"pool\"} 0\n"), std::string::npos)
      << "a family's samples stay together: " << text;
  EXPECT_NE(text.find("# TYPE airlock_other gauge\nairlock_other 7\n"), std::string::npos) << text;
  EXPECT_EQ(FormatValue(1.5), "1.5");
  EXPECT_EQ(FormatValue(3), "3");
}

}  // namespace
}  // namespace airlock::metrics
