#include "metrics/metrics.h"

#include <cmath>
#include <cstdio>

namespace airlock::metrics {

std::vector<double> DefaultLatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

namespace {

std::string LabelText(const std::vector<std::string>& names, const Labels& values,
                      const std::string& extra_name = "", const std::string& extra_value = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) out += (out.empty() ? "" : ",") + extra_name + "=\"" + extra_value + "\"";
  return out.empty() ? "" : "{" + out + "}";
}

void Header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += "# HELP " + name + " " + EscapeLabelValue(help) + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Family::Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
               std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {}

Family::Child& Family::ChildLocked(const Labels& values) {
  Labels key = values;
  key.resize(label_names_.size());
  Child& c = children_[key];
  if (type_ == Type::kHistogram && c.bucket_counts.empty()) c.bucket_counts.assign(buckets_.size(), 0);
  return c;
}

void Family::Add(const Labels& values, double v) {
  if (type_ == Type::kHistogram || (type_ == Type::kCounter && !(v >= 0))) return;
  std::lock_guard<std::mutex> lock(mu_);
  ChildLocked(values).value += v;
}

void Family::Set(const Labels& values, double v) {
  if (type_ != Type::kGauge) return;
  std::lock_guard<std::mutex> lock(mu_);
  ChildLocked(values).value = v;
}

void Family::Observe(const Labels& values, double v) {
  if (type_ != Type::kHistogram || std::isnan(v)) return;
  std::lock_guard<std::mutex> lock(mu_);
  Child& c = ChildLocked(values);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (v <= buckets_[i]) {
      ++c.bucket_counts[i];
      break;
    }
  }
  c.sum += v;
  ++c.count;
}

void Family::Render(std::string& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  Header(out, name_, help_, type_ == Type::kCounter ? "counter" : type_ == Type::kGauge ? "gauge" : "histogram");
  for (const auto& [values, c] : children_) {
    if (type_ != Type::kHistogram) {
      out += name_ + LabelText(label_names_, values) + " " + FormatValue(c.value) + "\n";
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      cumulative += c.bucket_counts[i];
      out += name_ + "_bucket" + LabelText(label_names_, values, "le", FormatValue(buckets_[i])) + " " +
             std::to_string(cumulative) + "\n";
    }
    out += name_ + "_bucket" + LabelText(label_names_, values, "le", "+Inf") + " " + std::to_string(c.count) + "\n";
    out += name_ + "_sum" + LabelText(label_names_, values) + " " + FormatValue(c.sum) + "\n";
    out += name_ + "_count" + LabelText(label_names_, values) + " " + std::to_string(c.count) + "\n";
  }
}

void Exposition::Sample(const std::string& name, const std::string& help, const char* type,
                        const std::vector<std::pair<std::string, std::string>>& labels, double value) {
  auto [it, inserted] = groups_.try_emplace(name);
  if (inserted) {
    order_.push_back(name);
    Header(it->second.header, name, help, type);
  }
  std::string l;
  for (const auto& [k, v] : labels) l += (l.empty() ? "" : ",") + k + "=\"" + EscapeLabelValue(v) + "\"";
  it->second.samples += name + (l.empty() ? "" : "{" + l + "}") + " " + FormatValue(value) + "\n";
}

void Exposition::Gauge(const std::string& name, const std::string& help,
                       const std::vector<std::pair<std::string, std::string>>& labels, double value) {
  Sample(name, help, "gauge", labels, value);
}

void Exposition::Counter(const std::string& name, const std::string& help,
                         const std::vector<std::pair<std::string, std::string>>& labels, double value) {
  Sample(name, help, "counter", labels, value);
}

std::string Exposition::Take() {
  std::string out;
  for (const std::string& name : order_) out += groups_[name].header + groups_[name].samples;
  order_.clear();
  groups_.clear();
  return out;
}

Family& Registry::Add(std::unique_ptr<Family> f) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& existing : families_) {
    if (existing->name() == f->name()) return *existing;
  }
  families_.push_back(std::move(f));
  return *families_.back();
}

Family& Registry::Counter(const std::string& name, const std::string& help, std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kCounter, std::move(label_names), std::vector<double>{}));
}

Family& Registry::Gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kGauge, std::move(label_names), std::vector<double>{}));
}

Family& Registry::Histogram(const std::string& name, const std::string& help, std::vector<std::string> label_names,
                            std::vector<double> buckets) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kHistogram, std::move(label_names), std::move(buckets)));
}

void Registry::AddCollector(std::function<void(Exposition&)> collect) {
  std::lock_guard<std::mutex> lock(mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Render() const {
  std::vector<Family*> families;
  std::vector<std::function<void(Exposition&)>> collectors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& f : families_) families.push_back(f.get());
    collectors = collectors_;
  }
  std::string out;
  for (const Family* f : families) f->Render(out);
  Exposition e;
  for (const auto& collect : collectors) collect(e);
  return out + e.Take();
}

}  // namespace airlock::metrics
