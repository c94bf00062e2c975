// The packages each language can import, per isolation tier, as
// `list_languages {"packages": true}` reports them: probed once by running
// the language's probe program (runtimes/package_probes.h) in a jail like
// any other run, then cached. A probe that fails is reported and not cached.
//
//   PackageCatalog catalog(executor);
//   json p = catalog.Get("python", "native", caller, cancel);
//   // {"packages": [{"name": "numpy", "version": "1.24.2", "kind": "package"}, ...]}
//   // {"packages": null, "note": "..."} where the language has no probe
//   // {"packages": null, "error": "..."} where the probe failed
//
// Thread-safe; concurrent requests for one language and tier share a probe.
#ifndef AIRLOCK_MCP_TOOLS_PACKAGE_CATALOG_H_
#define AIRLOCK_MCP_TOOLS_PACKAGE_CATALOG_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp {

class PackageCatalog {
 public:
  // `executor` must outlive the catalog. A cached list is probed again after `ttl`.
  // `package_dirs`: the endpoint's operator package directories, name ->
  // language (config languages.packages); native probes run with those that
  // serve the language bound, so the list shows what a run there imports.
  explicit PackageCatalog(runtimes::CodeExecutor& executor, std::map<std::string, std::string> package_dirs = {},
                          std::chrono::seconds ttl = std::chrono::hours(1))
      : executor_(executor), package_dirs_(std::move(package_dirs)), ttl_(ttl) {}

  // The endpoint's package directories that serve `language` in `tier`
  // (RunRequest::packages): none outside the native tier.
  std::vector<std::string> DirsFor(const std::string& language, const std::string& tier) const;

  // The run of a probe counts against `caller`'s run limits.
  nlohmann::json Get(const std::string& language, const std::string& tier, const std::string& caller,
                     CancelToken& cancel);

 private:
  struct Entry {
    nlohmann::json value;
    std::chrono::steady_clock::time_point at;
  };

  nlohmann::json Probe(const std::string& language, const std::string& tier, const std::string& caller,
                       CancelToken& cancel, bool* cacheable);

  runtimes::CodeExecutor& executor_;
  const std::map<std::string, std::string> package_dirs_;
  const std::chrono::seconds ttl_;
  std::mutex mu_;
  std::map<std::string, Entry> cache_;
  std::map<std::string, std::shared_ptr<std::mutex>> probing_;  // one probe per key at a time
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_PACKAGE_CATALOG_H_
