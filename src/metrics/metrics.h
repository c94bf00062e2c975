// Prometheus metrics (text exposition format 0.0.4) for `/metrics`.
//
// A Registry holds metric families: counters, gauges and histograms, each
// with fixed label names; a family's children are created on first use of
// a label-value tuple. Values that live elsewhere (the runner's pool, RSS)
// are read at scrape time by collectors. Names follow Prometheus
// conventions: `airlock_runs_total`, `airlock_run_seconds` (base units,
// `_total` for counters).
//
//   Registry r;
//   Family& runs = r.Counter("airlock_runs_total", "Runs by language, tier and status",
//                            {"language", "tier", "status"});
//   runs.Add({"python", "native", "ok"});
//   Family& total = r.Histogram("airlock_run_seconds", "...", {"phase"}, DefaultLatencyBuckets());
//   total.Observe({"total"}, 0.0123);
//   r.AddCollector([](Exposition& out) { out.Gauge("airlock_pool_ready", "...", {}, 3); });
//   std::string text = r.Render();
//
// Thread-safe; Add/Observe take one short lock per family.
#ifndef AIRLOCK_METRICS_METRICS_H_
#define AIRLOCK_METRICS_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace airlock::metrics {

using Labels = std::vector<std::string>;  // values, in the family's label order

// Seconds: 1 ms .. 60 s.
std::vector<double> DefaultLatencyBuckets();

class Family {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
         std::vector<double> buckets);

  // Counters: adds `v` (>= 0). Gauges: adds `v` (may be negative).
  void Add(const Labels& values, double v = 1);
  // Gauges only.
  void Set(const Labels& values, double v);
  // Histograms only.
  void Observe(const Labels& values, double v);

  // The family in exposition format (HELP, TYPE, one line per sample).
  void Render(std::string& out) const;
  const std::string& name() const { return name_; }

 private:
  struct Child {
    double value = 0;                 // counter / gauge
    std::vector<uint64_t> bucket_counts;  // histogram: per bucket (not cumulative)
    double sum = 0;
    uint64_t count = 0;
  };
  Child& ChildLocked(const Labels& values);

  const std::string name_, help_;
  const Type type_;
  const std::vector<std::string> label_names_;
  const std::vector<double> buckets_;  // upper bounds, increasing
  mutable std::mutex mu_;
  std::map<Labels, Child> children_;
};

// What collectors write into at scrape time. Samples of one name may come
// in any order; Take() groups them under one HELP/TYPE, as the format needs.
class Exposition {
 public:
  void Gauge(const std::string& name, const std::string& help, const std::vector<std::pair<std::string, std::string>>& labels,
             double value);
  void Counter(const std::string& name, const std::string& help,
               const std::vector<std::pair<std::string, std::string>>& labels, double value);
  std::string Take();

 private:
  void Sample(const std::string& name, const std::string& help, const char* type,
              const std::vector<std::pair<std::string, std::string>>& labels, double value);
  struct Group {
    std::string header;   // HELP and TYPE lines
    std::string samples;
  };
  std::vector<std::string> order_;     // names, first seen first
  std::map<std::string, Group> groups_;
};

class Registry {
 public:
  Family& Counter(const std::string& name, const std::string& help, std::vector<std::string> label_names);
  Family& Gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names);
  Family& Histogram(const std::string& name, const std::string& help, std::vector<std::string> label_names,
                    std::vector<double> buckets = DefaultLatencyBuckets());
  void AddCollector(std::function<void(Exposition&)> collect);

  // Every family, then every collector's samples.
  std::string Render() const;

 private:
  Family& Add(std::unique_ptr<Family> f);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;
  std::vector<std::function<void(Exposition&)>> collectors_;
};

// A label value or HELP text escaped for the exposition format.
std::string EscapeLabelValue(const std::string& v);
// A sample value: integers without a fraction, "+Inf", "NaN".
std::string FormatValue(double v);

}  // namespace airlock::metrics

#endif  // AIRLOCK_METRICS_METRICS_H_
