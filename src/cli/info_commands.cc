// `airlock doctor` and `airlock languages`.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <iostream>

#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "jail/cgroup_probe.h"
#include "jail/host.h"
#include "jail/seccomp_policy.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"

namespace airlock::cli {

namespace {

// The final word: build a real jail and run a program in it.
jail::LayerStatus LiveJailRun(const std::string& name, bool allow_degraded, bool required) {
  jail::LayerStatus live{name, false, required, ""};
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(config::DefaultConfig(), allow_degraded);
  if (!rt.ok()) {
    live.detail = rt.status().message();
    return live;
  }
  runtimes::RunRequest req;
  req.language = "bash";
  req.code = "echo jail-ok";
  CancelToken cancel;
  runtimes::RunResult r = rt->executor->Run(req, nullptr, cancel);
  live.available = r.ok() && r.stdout_text == "jail-ok\n";
  live.detail = live.available ? "bash ran in a jail in " + std::to_string(r.wall_ms) + " ms"
                               : "status " + std::string(runtimes::RunStatusName(r.status)) + ": " + r.message;
  return live;
}

}  // namespace

int DoctorCommand(bool json) {
  std::vector<jail::LayerStatus> layers = jail::JailHost::Probe();
  const bool cgroups_missing = std::any_of(layers.begin(), layers.end(), [](const jail::LayerStatus& l) {
    return l.name.rfind("cgroups", 0) == 0 && !l.available;
  });
  layers.push_back(LiveJailRun("end-to-end jail run", /*allow_degraded=*/false, /*required=*/true));
  // Without cgroups (e.g. a desktop client running `airlock serve` as the
  // user), say whether --allow-degraded would run code here.
  std::optional<jail::LayerStatus> degraded;
  if (cgroups_missing) {
    degraded = LiveJailRun("end-to-end jail run with --allow-degraded", true, false);
    layers.push_back(*degraded);
  }
  // The WASM tier's interpreters are built by scripts/setup.sh, not shipped
  // in the package: say where they are looked for when missing (optional).
  for (const char* interpreter : {"python", "ruby", "php"}) {
    const std::string dir = runtimes::DefaultWasmCacheDir() + "/" + interpreter;
    jail::LayerStatus l{std::string("WASM tier: ") + interpreter + " interpreter", access(dir.c_str(), R_OK) == 0,
                        false, dir};
    if (!l.available) {
      l.detail += " is missing: run_code {\"isolation\": \"wasm\"} has no " + std::string(interpreter) +
                  " until scripts/setup.sh builds it there (or set AIRLOCK_WASM_CACHE)";
    }
    layers.push_back(l);
  }
  bool ok = true;
  for (const auto& l : layers) ok = ok && (l.available || !l.required);

  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& l : layers)
      j.push_back({{"layer", l.name}, {"available", l.available}, {"required", l.required}, {"detail", l.detail}});
    std::cout << nlohmann::json{{"ok", ok}, {"layers", j}}.dump(2) << std::endl;
    return ok ? 0 : 1;
  }
  for (const auto& l : layers) {
    std::printf("%-42s %-12s %s\n", l.name.c_str(),
                l.available ? "active" : (l.required ? "MISSING" : "unavailable"), l.detail.c_str());
  }
  std::printf("seccomp policy denies explicitly:");
  for (const auto& s : jail::ExplicitlyDeniedSyscalls()) std::printf(" %s", s.c_str());
  std::printf("\n\n%s\n", ok ? "airlock can run code on this host with every isolation layer active."
                             : "airlock will refuse to run code until the MISSING layers are fixed.");
  if (degraded && degraded->available) {
    std::printf("Only the cgroup limits are missing: `airlock serve --allow-degraded` runs code here with "
                "namespaces, seccomp and rlimits (no cgroup memory/pids limits). %s.\n",
                jail::cgroup_probe::CgroupRemedy().c_str());
  }
  return ok ? 0 : 1;
}

int LanguagesCommand(bool json) {
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(config::DefaultConfig(), true);
  if (!rt.ok()) {
    std::cerr << "airlock: " << rt.status().message() << "\n";
    return 125;
  }
  std::vector<runtimes::LanguageInfo> langs = rt->executor->Languages();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& l : langs) j.push_back(runtimes::ToJson(l));
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("%-12s %-32s %-17s %-12s %-10s %-9s %s\n", "LANGUAGE", "NAME", "VERSION", "TIERS", "TIMEOUT", "MEMORY",
              "NOTES");
  for (const auto& l : langs) {
    std::string tiers;
    for (const auto& t : l.tiers) tiers += (tiers.empty() ? "" : ",") + t;
    std::printf("%-12s %-32s %-17s %-12s %-10s %-9s %s\n", l.name.c_str(), l.display_name.c_str(), l.version.c_str(),
                tiers.c_str(), (std::to_string(l.default_timeout_ms) + " ms").c_str(),
                (std::to_string(l.default_memory_mb) + " MiB").c_str(), l.notes.c_str());
  }
  return 0;
}

}  // namespace airlock::cli
