#include "cli/executor_factory.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "base/self_exe.h"
#include "runtimes/wasm_setjmp_kit.h"

namespace airlock::cli {
namespace {

// `name` in the directory of the running executable, or "" if absent.
std::string SiblingBinary(const std::string& name) {
  const std::string path = SiblingOfSelf(name);
  return path.find('/') != std::string::npos && access(path.c_str(), X_OK) == 0 ? path : "";
}

}  // namespace

StatusOr<config::Config> LoadConfigOrDefault(const std::string& config_path) {
  if (config_path.empty()) return config::DefaultConfig();
  return config::LoadConfig(config_path);
}

StatusOr<LocalRuntime> MakeLocalRuntime(const config::Config& config, bool allow_degraded, bool pooled) {
  LocalRuntime rt;
  jail::HostOptions host_options;
  host_options.allow_degraded = allow_degraded;
  AIRLOCK_ASSIGN_OR_RETURN(rt.host, jail::JailHost::Create(host_options));

  const config::LimitsConfig& l = config.limits;
  runtimes::ExecutorLimits limits;
  // Task runs (config "tasks") may ask up to tasks.max_timeout_ms; the MCP
  // front keeps every other run within limits.max_timeout_ms.
  limits.max_timeout_ms =
      config.tasks.mode == "never" ? l.max_timeout_ms : std::max(l.max_timeout_ms, config.tasks.max_timeout_ms);
  limits.max_memory_mb = l.max_memory_mb;
  limits.max_output_bytes = l.max_output_bytes;
  limits.max_input_files = static_cast<uint32_t>(l.max_files);
  limits.max_input_file_bytes = l.max_total_file_bytes;
  limits.max_output_file_bytes = l.max_file_bytes;
  limits.max_output_files = static_cast<uint32_t>(std::min<uint64_t>(l.max_files, UINT32_MAX));
  limits.max_output_files_total_bytes = l.max_output_files_total_bytes;
  limits.pause_after_s = config.sessions.pause_after_s;
  limits.session_image_dir = config.sessions.image_dir;
  // The runner's backstop follows a gateway that allows more sessions (most
  // of them paused, which costs disk, not memory).
  limits.max_sessions = static_cast<uint32_t>(std::max<uint64_t>(limits.max_sessions, config.sessions.max_total));

  std::vector<runtimes::LanguageSpec> languages;
  for (runtimes::LanguageSpec spec : runtimes::BuiltinLanguages()) {
    const auto& enabled = config.languages.enabled;
    if (!enabled.empty() && std::find(enabled.begin(), enabled.end(), spec.name) == enabled.end()) continue;
    spec.default_timeout_ms = std::min(l.default_timeout_ms, l.max_timeout_ms);
    spec.default_memory_mb = std::min(std::max(spec.default_memory_mb, l.default_memory_mb), l.max_memory_mb);
    languages.push_back(std::move(spec));
  }
  // Code mode and the WASM tier: airlock-js is installed next to this binary.
  for (runtimes::LanguageSpec spec : runtimes::CodeModeLanguages(SiblingBinary("airlock-js"))) {
    languages.push_back(std::move(spec));
  }
  // setjmp/longjmp for the WASM tier's C and C++ (wasm_setjmp_kit.h). Without
  // the kit they still compile and run; a program that uses setjmp.h does not.
  // (A host without clang-16 has no WASM C tier to give it to.)
  const std::string setjmp_kit = config.BuildCacheDir() + "-wasm-setjmp";
  const Status kit = access("/usr/bin/clang-16", X_OK) == 0 ? runtimes::WriteWasmSetjmpKit(setjmp_kit)
                                                             : FailedPrecondition("no clang-16");
  if (!kit.ok() && kit.code() != StatusCode::kFailedPrecondition) {
    std::cerr << "airlock runner: warning: no setjmp/longjmp in the WASM tier: " << kit.message() << "\n";
  }
  for (runtimes::LanguageSpec spec : runtimes::WasmTierLanguages(SiblingBinary("airlock-js"), runtimes::DefaultWasmCacheDir())) {
    const auto& enabled = config.languages.enabled;
    if (!enabled.empty() && std::find(enabled.begin(), enabled.end(), spec.name) == enabled.end()) continue;
    if (kit.ok()) runtimes::AddWasmSetjmp(spec, setjmp_kit);
    spec.default_timeout_ms = std::min(l.default_timeout_ms, l.max_timeout_ms);
    spec.default_memory_mb = std::min(std::max(spec.default_memory_mb, l.default_memory_mb), l.max_memory_mb);
    languages.push_back(std::move(spec));
  }
  AIRLOCK_ASSIGN_OR_RETURN(rt.executor, runtimes::LocalExecutor::Create(*rt.host, limits, std::move(languages)));
  if (!config.languages.packages.empty()) {
    std::vector<runtimes::PackageDir> dirs;
    for (const auto& [name, d] : config.languages.packages) dirs.push_back({name, d.language, d.path});
    auto package_dirs = std::make_unique<runtimes::PackageDirs>(std::move(dirs), config.BuildCacheDir() + "-packages");
    // Without its hook Python would not see them: refuse to start rather
    // than run without what the operator configured.
    AIRLOCK_RETURN_IF_ERROR(package_dirs->Prepare());
    rt.executor->EnablePackageDirs(std::move(package_dirs));
  }
  if (pooled && config.build_cache.enabled && config.build_cache.precompiled_headers) {
    StatusOr<std::unique_ptr<runtimes::PchCache>> pch = runtimes::PchCache::Open(config.PchDir());
    if (pch.ok()) {
      rt.executor->EnablePrecompiledHeaders(std::move(*pch), config.pool.warm);
    } else {  // compiles still work, parsing every header
      std::cerr << "airlock runner: warning: no precompiled headers: " << pch.status().message() << "\n";
    }
  }
  // Beside the WASM interpreters it compiles, shared by the runners of this
  // machine (airlock-js keeps a file that matches, under a lock).
  if (pooled && config.build_cache.enabled && config.build_cache.wasm_code) {
    StatusOr<std::unique_ptr<runtimes::WasmCodeStore>> code =
        runtimes::WasmCodeStore::Open(runtimes::DefaultWasmCacheDir() + "-code", SiblingBinary("airlock-js"));
    if (code.ok()) {
      rt.executor->EnableWasmCodeStore(std::move(*code), config.pool.memory_mb);
    } else {  // WASM interpreters still run, compiling their module each time
      std::cerr << "airlock runner: warning: no WASM code cache: " << code.status().message() << "\n";
    }
  }
  if (pooled && config.pool.enabled) {
    const config::PoolConfig& p = config.pool;
    rt.executor->EnablePool({.max_per_shape = p.max_per_language,
                             .min_per_shape = p.min_per_language,
                             .max_total = p.max_total,
                             .idle_after = std::chrono::seconds(p.idle_seconds),
                             .refill_defer = std::chrono::milliseconds(p.refill_defer_ms),
                             .extra_memory_mb = p.memory_mb},
                            p.warm, p.prestart);
  }
  // Sessions a previous runner left paused in a persistent image directory,
  // now that their languages' argv and binds are final.
  if (const size_t n = rt.executor->AdoptPausedSessions(); n > 0) {
    std::cerr << "airlock runner: took back " << n << " paused session(s) from " << config.sessions.image_dir << "\n";
  }
  if (pooled && config.build_cache.enabled) {
    StatusOr<std::unique_ptr<runtimes::BuildCache>> cache =
        runtimes::BuildCache::Open({.dir = config.BuildCacheDir(), .max_bytes = config.build_cache.max_mb << 20});
    if (cache.ok()) {
      rt.executor->EnableBuildCache(std::move(*cache));
    } else {  // runs still work, every compile is fresh
      std::cerr << "airlock runner: warning: no build cache: " << cache.status().message() << "\n";
    }
  }
  return rt;
}

}  // namespace airlock::cli
