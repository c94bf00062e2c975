#include "mcp/tools/package_catalog.h"

#include "runtimes/package_dirs.h"
#include "runtimes/package_probes.h"

namespace airlock::mcp {

using nlohmann::json;

namespace {
constexpr uint64_t kProbeTimeoutMs = 30000;
}  // namespace

json PackageCatalog::Get(const std::string& language, const std::string& tier, const std::string& caller,
                         CancelToken& cancel) {
  const std::string key = language + "\n" + tier;
  std::shared_ptr<std::mutex> probe_mu;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && std::chrono::steady_clock::now() - it->second.at < ttl_) return it->second.value;
    auto& m = probing_[key];
    if (!m) m = std::make_shared<std::mutex>();
    probe_mu = m;
  }
  std::lock_guard<std::mutex> probe_lock(*probe_mu);
  {
    std::lock_guard<std::mutex> lock(mu_);  // another caller may have probed meanwhile
    auto it = cache_.find(key);
    if (it != cache_.end() && std::chrono::steady_clock::now() - it->second.at < ttl_) return it->second.value;
  }
  bool cacheable = false;
  json value = Probe(language, tier, caller, cancel, &cacheable);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    cache_[key] = {value, std::chrono::steady_clock::now()};
  }
  return value;
}

std::vector<std::string> PackageCatalog::DirsFor(const std::string& language, const std::string& tier) const {
  std::vector<std::string> out;
  if (tier != "native") return out;
  for (const auto& [name, dir_language] : package_dirs_) {
    if (runtimes::PackageDirServes(dir_language, language)) out.push_back(name);
  }
  return out;
}

json PackageCatalog::Probe(const std::string& language, const std::string& tier, const std::string& caller,
                           CancelToken& cancel, bool* cacheable) {
  const std::optional<std::string> program = runtimes::PackageProbeProgram(language, tier);
  if (!program) {
    *cacheable = true;
    return {{"packages", nullptr}, {"note", "no package list for " + language + " in the " + tier + " tier"}};
  }
  runtimes::RunRequest req;
  req.language = language;
  req.isolation = tier;
  req.code = *program;
  req.timeout_ms = kProbeTimeoutMs;
  req.packages = DirsFor(language, tier);
  req.caller = caller;
  runtimes::RunResult r = executor_.Run(req, nullptr, cancel);
  if (!r.ok() || r.exit_code != 0) {
    std::string why = std::string(runtimes::RunStatusName(r.status));
    if (!r.message.empty()) why += ": " + r.message;
    if (r.ok()) why += ": exit code " + std::to_string(r.exit_code) + ", " + r.stderr_text.substr(0, 300);
    return {{"packages", nullptr}, {"error", "the package probe failed (" + why + ")"}};
  }
  if (r.stdout_truncated) {
    return {{"packages", nullptr}, {"error", "the package probe's output was truncated"}};
  }
  StatusOr<std::vector<runtimes::PackageEntry>> parsed = runtimes::ParsePackageProbeOutput(r.stdout_text);
  if (!parsed.ok()) return {{"packages", nullptr}, {"error", std::string(parsed.status().message())}};
  json list = json::array();
  for (const runtimes::PackageEntry& p : *parsed) list.push_back(runtimes::ToJson(p));
  *cacheable = true;
  return {{"packages", std::move(list)}};
}

}  // namespace airlock::mcp
