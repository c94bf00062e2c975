#include "runtimes/local_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/file_io.h"
#include "jail/init/files.h"
#include "runtimes/bridge_relay.h"
#include "runtimes/result_mapping.h"
#include "wasm/session_image.h"

namespace airlock::runtimes {
namespace {

// Whether one of `spec`'s commands is airlock-js (the WASM tier, code mode).
bool RunsAirlockJs(const LanguageSpec& spec) {
  for (const std::vector<std::string>* argv : {&spec.run_argv, &spec.prestart_argv, &spec.session_argv}) {
    if (!argv->empty() && (*argv)[0] == kJailAirlockJsPath) return true;
  }
  return false;
}

std::vector<std::string> BaseEnv() {
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "HOME=/work", "TMPDIR=/tmp",
          "USER=sandbox"};
}

// Runs a trusted host tool (a compiler's --version) and returns its first line.
std::string HostCommandFirstLine(const std::vector<std::string>& argv) {
  if (argv.empty()) return "";
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return "";
  // Everything the child needs is built before fork: the runner is
  // multi-threaded, so the child may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 2);
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  close(p[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0 && out.size() < 4096) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  std::string line = out.substr(0, out.find('\n'));
  // "Python 3.11.2" -> "3.11.2"; "v20.20.2" -> "20.20.2"; "ruby 3.1.2p20 (...)" -> "3.1.2p20"
  for (size_t i = 0; i < line.size(); ++i) {
    if (isdigit(static_cast<unsigned char>(line[i]))) {
      size_t end = line.find(' ', i);
      return line.substr(i, end == std::string::npos ? std::string::npos : end - i);
    }
  }
  return line;
}

// The WASM tier engine's heap for a run's memory limit: 64 MiB of headroom
// for the rest of the process, at least 16 MiB.
uint64_t HeapMb(uint64_t memory_mb) { return memory_mb > 64 + 16 ? memory_mb - 64 : 16; }

// Extra wall-clock time the jail allows a code-mode program beyond its own
// deadline, so the engine's clean timeout error wins the race.
constexpr uint64_t kCodeModeGraceMs = 500;

// A cache entry: the compiler's diagnostics (returned on every hit, so
// warnings are not lost) and the artifact. "AB1" + 8-byte little-endian
// diagnostics length + diagnostics + artifact.
struct CachedBuild {
  std::string diagnostics;
  std::string artifact;
};

std::string EncodeBuild(const std::string& diagnostics, const std::string& artifact) {
  std::string out = "AB1";
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((diagnostics.size() >> (8 * i)) & 0xff));
  return out + diagnostics + artifact;
}

std::optional<CachedBuild> DecodeBuild(const std::string& blob) {
  if (blob.size() < 11 || blob.compare(0, 3, "AB1") != 0) return std::nullopt;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(blob[3 + i])) << (8 * i);
  if (n > blob.size() - 11) return std::nullopt;
  return CachedBuild{blob.substr(11, n), blob.substr(11 + n)};
}

// The jail a run of `spec` gets; pooled and cold jails come from this alone.
jail::JailConfig JailConfigFor(const LanguageSpec& spec, uint64_t memory_mb, uint64_t workdir_bytes) {
  jail::JailConfig config;
  config.binds = spec.binds;
  config.limits.memory_bytes = memory_mb << 20;
  config.limits.max_pids = spec.max_pids;
  config.limits.workdir_bytes = workdir_bytes;
  return config;
}

// Everything in the JailConfig, so that a pooled jail only ever serves a run
// whose jail would have been built identically.
std::string ShapeKey(const LanguageSpec& spec, const jail::JailConfig& c) {
  std::string key = spec.name + "/" + spec.isolation + (spec.code_mode ? "/code" : "") + "/m" +
                    std::to_string(c.limits.memory_bytes) + "/p" + std::to_string(c.limits.max_pids) + "/w" +
                    std::to_string(c.limits.workdir_bytes) + "/i" + std::to_string(c.limits.workdir_inodes) + "/c" +
                    std::to_string(c.limits.cpu_quota_percent) + "/" + c.hostname;
  for (const jail::BindMount& b : c.binds) {
    key += "|" + b.path + (b.optional ? "?" : "!") + ">" + b.target;
  }
  return key;
}

}  // namespace

std::pair<bool, bool> LocalExecutor::PolicyKey(const jail::SeccompOptions& o) {
  return {o.allow_exec_mappings, o.allow_process_creation};
}

Status ValidateRequest(const RunRequest& request, const ExecutorLimits& limits,
                       const std::vector<LanguageSpec>& languages) {
  bool known = false, tier_known = false;
  std::set<std::string> names;
  std::string tiers;  // of this language
  for (const auto& l : languages) {
    if (l.code_mode != request.code_mode) continue;
    names.insert(l.name);
    if (l.name != request.language) continue;
    known = true;
    tier_known = tier_known || l.isolation == request.isolation;
    tiers += (tiers.empty() ? "" : ", ") + l.isolation;
  }
  if (!known) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return NotFound(std::string(request.code_mode ? "code mode has no language \"" : "unknown language \"") +
                    request.language + "\"; available: " + (list.empty() ? "none" : list));
  }
  if (!tier_known) {
    return InvalidArgument("isolation \"" + request.isolation + "\" is not available for " + request.language +
                           "; available: " + tiers);
  }
  if (request.code.size() > limits.max_code_bytes)
    return InvalidArgument("code is " + std::to_string(request.code.size()) + " bytes; the limit is " +
                           std::to_string(limits.max_code_bytes));
  if (request.stdin_data.size() > limits.max_stdin_bytes)
    return InvalidArgument("stdin exceeds the limit of " + std::to_string(limits.max_stdin_bytes) + " bytes");
  if (request.timeout_ms > limits.max_timeout_ms)
    return InvalidArgument("timeout_ms " + std::to_string(request.timeout_ms) + " exceeds the maximum of " +
                           std::to_string(limits.max_timeout_ms));
  if (request.memory_mb > limits.max_memory_mb)
    return InvalidArgument("memory_mb " + std::to_string(request.memory_mb) + " exceeds the maximum of " +
                           std::to_string(limits.max_memory_mb));
  if (request.files.size() > limits.max_input_files)
    return InvalidArgument("at most " + std::to_string(limits.max_input_files) + " input files are allowed");
  uint64_t total = 0;
  for (size_t i = 0; i < request.files.size(); ++i) {
    const auto& f = request.files[i];
    if (!jail::IsSafeRelativePath(f.name))
      return InvalidArgument("files[" + std::to_string(i) + "].name \"" + f.name +
                             "\" must be a relative path without \"..\"");
    total += f.content.size();
  }
  if (total > limits.max_input_file_bytes)
    return InvalidArgument("input files total " + std::to_string(total) + " bytes; the limit is " +
                           std::to_string(limits.max_input_file_bytes));
  for (size_t i = 0; i < request.args.size(); ++i)
    if (request.args[i].find('\0') != std::string::npos)
      return InvalidArgument("args[" + std::to_string(i) + "] contains a NUL byte");
  return OkStatus();
}

StatusOr<std::unique_ptr<LocalExecutor>> LocalExecutor::Create(jail::JailHost& host, ExecutorLimits limits,
                                                               std::vector<LanguageSpec> languages) {
  std::unique_ptr<LocalExecutor> ex(new LocalExecutor());
  ex->host_ = &host;
  ex->limits_ = limits;
  for (auto& spec : languages) {
    if (!IsInstalled(spec)) continue;
    const auto key = PolicyKey(spec.seccomp);
    if (!ex->policies_.count(key)) {
      AIRLOCK_ASSIGN_OR_RETURN(jail::BpfProgram policy, jail::BuildDefaultPolicy(spec.seccomp));
      ex->policies_.emplace(key, std::move(policy));
    }
    ex->languages_.push_back(std::move(spec));
  }
  return ex;
}

const LanguageSpec* LocalExecutor::Find(const std::string& name, bool code_mode, const std::string& isolation) const {
  for (const auto& l : languages_)
    if (l.name == name && l.code_mode == code_mode && l.isolation == isolation) return &l;
  return nullptr;
}

const LanguageSpec* LocalExecutor::FindCodeMode(const std::string& name) const {
  for (const auto& l : languages_)
    if (l.name == name && l.code_mode) return &l;
  return nullptr;
}

std::vector<LanguageInfo> LocalExecutor::Languages() {
  std::vector<LanguageInfo> out;
  std::lock_guard<std::mutex> lock(versions_mu_);
  for (const auto& l : languages_) {
    if (l.code_mode) continue;
    // One entry per language: the first spec (native, when there is one)
    // describes it; every tier it has is listed.
    auto existing = std::find_if(out.begin(), out.end(), [&](const LanguageInfo& i) { return i.name == l.name; });
    if (existing != out.end()) {
      existing->tiers.push_back(l.isolation);
      existing->tier_defaults[l.isolation] = {l.default_timeout_ms, l.default_memory_mb};
      if (!l.session_argv.empty()) {
        existing->sessions = true;
        existing->session_tiers.push_back(l.isolation);
      }
      continue;
    }
    const std::string key = l.name + "/" + l.isolation;
    auto it = versions_.find(key);
    if (it == versions_.end()) it = versions_.emplace(key, HostCommandFirstLine(l.version_argv)).first;
    LanguageInfo info;
    info.name = l.name;
    info.display_name = l.display_name;
    info.version = it->second;
    info.compiled = l.compile.has_value();
    info.tiers = {l.isolation};
    info.default_timeout_ms = l.default_timeout_ms;
    info.default_memory_mb = l.default_memory_mb;
    info.tier_defaults[l.isolation] = {l.default_timeout_ms, l.default_memory_mb};
    info.notes = l.notes;
    info.sessions = !l.session_argv.empty();
    if (info.sessions) info.session_tiers = {l.isolation};
    out.push_back(std::move(info));
  }
  return out;
}

RunResult LocalExecutor::Run(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                             BridgeHandler* bridge) {
  if (!request.session_id.empty()) return RunInSession(request, progress, cancel, bridge);
  if (Status st = ValidateRequest(request, limits_, languages_); !st.ok()) {
    return InternalErrorResult(request.language,
                               st.code() == StatusCode::kNotFound ? "unknown_language" : "invalid_request",
                               st.message());
  }
  if (request.code_mode && bridge == nullptr) {
    return InternalErrorResult(request.language, "invalid_request", "a code-mode run needs a bridge");
  }
  StatusOr<const LanguageSpec*> spec =
      WithPackages(Find(request.language, request.code_mode, request.isolation), request.packages);
  if (!spec.ok()) return InternalErrorResult(request.language, "invalid_request", spec.status().message());
  return RunInJail(**spec, request, progress, cancel, request.code_mode ? bridge : nullptr);
}

StatusOr<const LanguageSpec*> LocalExecutor::WithPackages(const LanguageSpec* base,
                                                          const std::vector<std::string>& names) {
  if (names.empty() || base->isolation != "native" || base->code_mode) return base;
  if (package_dirs_ == nullptr) {
    return InvalidArgument("package directory \"" + names.front().substr(0, 40) +
                           "\" is not configured on this runner (it has none)");
  }
  AIRLOCK_ASSIGN_OR_RETURN(LanguageSpec variant, package_dirs_->Apply(*base, names));
  std::string key = base->name + "/" + base->isolation;
  for (const std::string& n : variant.packages) key += "+" + n;
  std::lock_guard<std::mutex> lock(variants_mu_);
  std::unique_ptr<LanguageSpec>& slot = variants_[key];
  if (!slot) slot = std::make_unique<LanguageSpec>(std::move(variant));
  return slot.get();
}

void LocalExecutor::EnablePool(const JailPoolOptions& options, const std::vector<std::string>& warm, bool prestart) {
  prestart_ = prestart;
  pooled_memory_mb_ = options.extra_memory_mb;
  pool_ = std::make_unique<JailPool>(*host_, options);
  for (const LanguageSpec& spec : languages_) {
    // "python" warms the native tier, "python:wasm" the WASM tier (a
    // pre-started CPython in the engine holds ~180 MiB; warm it on purpose).
    const std::string tiered = spec.name + ":" + spec.isolation;
    const bool wanted = std::find(warm.begin(), warm.end(), tiered) != warm.end() ||
                        (spec.isolation == "native" && std::find(warm.begin(), warm.end(), spec.name) != warm.end());
    // "code:javascript" warms code mode's pre-started JavaScript engine.
    const bool code_wanted = spec.code_mode && std::find(warm.begin(), warm.end(), "code:" + spec.name) != warm.end();
    if (spec.code_mode ? !code_wanted : !wanted) continue;
    const jail::JailConfig config = JailConfigFor(spec, spec.default_memory_mb, limits_.workdir_bytes);
    if (Prestarts(spec)) {
      pool_->Warm(ShapeKey(spec, config) + "/prestarted", PrestartMaker(spec, config));
      // A compiled language's compiler runs in a plain jail of the same shape.
      if (spec.compile) pool_->Warm(ShapeKey(spec, config), config);
    } else {
      pool_->Warm(ShapeKey(spec, config), config);
    }
  }
}

void LocalExecutor::EnablePrecompiledHeaders(std::unique_ptr<PchCache> cache, const std::vector<std::string>& warm) {
  pch_ = std::move(cache);
  for (LanguageSpec& spec : languages_) {
    if (!spec.pch || spec.isolation != "native") continue;
    spec.binds.push_back({pch_->dir(), false, kJailPchDir});
    if (std::find(warm.begin(), warm.end(), spec.name) != warm.end()) pch_->Prepare(spec);
  }
}

void LocalExecutor::EnableWasmCodeStore(std::unique_ptr<WasmCodeStore> store, const std::vector<uint64_t>& memory_mb) {
  wasm_code_ = std::move(store);
  // First in the queue: it takes ~30 ms, and every engine start uses it.
  if (std::any_of(languages_.begin(), languages_.end(), RunsAirlockJs)) wasm_code_->PrepareSelfHosted();
  for (LanguageSpec& spec : languages_) {
    if (!RunsAirlockJs(spec) && spec.wasm_module.empty()) continue;
    spec.binds.push_back({wasm_code_->dir(), false, kJailWasmCodeDir});
    if (!spec.wasm_tar.empty()) wasm_code_->PrepareTarIndex(spec.name, spec.wasm_tar);
    if (spec.wasm_module.empty()) continue;
    wasm_code_->Prepare(spec.name, spec.wasm_module, HeapMb(spec.default_memory_mb));
    for (uint64_t m : memory_mb) wasm_code_->Prepare(spec.name, spec.wasm_module, HeapMb(m));
    if (spec.wasm_session_module.empty()) continue;
    wasm_code_->Prepare(spec.name + "-session", spec.wasm_session_module, HeapMb(spec.default_memory_mb));
    for (uint64_t m : memory_mb) wasm_code_->Prepare(spec.name + "-session", spec.wasm_session_module, HeapMb(m));
  }
}

std::vector<std::string> LocalExecutor::ExpandArgv(const LanguageSpec& spec, std::vector<std::string> argv,
                                                   uint64_t timeout_ms, uint64_t memory_mb) const {
  const uint64_t heap_mb = HeapMb(memory_mb);
  std::vector<std::string> out;
  out.reserve(argv.size() + 2);
  for (std::string& a : argv) {
    if (a == "{timeout_ms}") {
      a = std::to_string(timeout_ms);
    } else if (a == "{heap_mb}") {
      a = std::to_string(heap_mb);
    } else if (a == "{code_cache}" || a == "{session_code_cache}" || a == "{tar_index}") {
      const bool code = a != "{tar_index}";
      if (!wasm_code_) {
        a.clear();
      } else if (a == "{session_code_cache}") {
        a = spec.wasm_session_module.empty() ? "" : wasm_code_->JailPath(spec.name + "-session", heap_mb);
      } else if (code) {
        a = spec.wasm_module.empty() ? "" : wasm_code_->JailPath(spec.name, heap_mb);
      } else {
        a = spec.wasm_tar.empty() ? "" : wasm_code_->TarIndexJailPath(spec.name);
      }
      if (a.empty()) {  // no file (yet): the engine compiles or walks, without the flag
        if (!out.empty() && out.back() == (code ? "--code-cache" : "--tar-index")) out.pop_back();
        continue;
      }
    }
    out.push_back(std::move(a));
  }
  // airlock-js starts from the store's encoding of its self-hosted code
  // (engine/js/self_hosted_cache.h) once that is written.
  if (wasm_code_ && !out.empty() && out[0] == kJailAirlockJsPath) {
    std::string self_hosted = wasm_code_->SelfHostedJailPath();
    if (!self_hosted.empty()) out.insert(out.begin() + 1, {"--self-hosted-cache", std::move(self_hosted)});
  }
  return out;
}

bool LocalExecutor::Prestarts(const LanguageSpec& spec) const {
  // A code-mode spec's pre-started engine has its bridge already as fd 3
  // (Jail::StartBridged, PrestartMaker); any other a plain pre-started
  // interpreter.
  return pool_ != nullptr && prestart_ && !spec.prestart_argv.empty();
}

JailPool::Maker LocalExecutor::PrestartMaker(const LanguageSpec& spec, const jail::JailConfig& config) {
  // `spec` lives in languages_ and the policies in policies_, both fixed
  // after Create and destroyed after the pool.
  return [this, &spec, config]() -> StatusOr<std::unique_ptr<jail::Jail>> {
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<jail::Jail> j, jail::Jail::Create(*host_, config));
    jail::ExecRequest start;
    start.argv = ExpandArgv(spec, spec.prestart_argv, 0, config.limits.memory_bytes >> 20);
    start.env = BaseEnv();
    start.env.insert(start.env.end(), spec.extra_env.begin(), spec.extra_env.end());
    start.seccomp = &policies_.at(PolicyKey(spec.seccomp));
    start.limits.max_file_bytes = limits_.workdir_bytes;
    // RLIMIT_CPU can only be lowered at Resume: start above any run's.
    start.limits.cpu_ms = limits_.max_timeout_ms + 2000;
    AIRLOCK_RETURN_IF_ERROR(spec.code_mode ? j->StartBridged(start) : j->Start(start));
    return j;
  };
}

StatusOr<std::unique_ptr<jail::Jail>> LocalExecutor::PooledOrNew(std::unique_ptr<jail::Jail> pooled,
                                                                 const jail::JailConfig& config) {
  if (pooled) return pooled;
  return jail::Jail::Create(*host_, config);
}

RunResult LocalExecutor::RunInJail(const LanguageSpec& spec, const RunRequest& request, const ProgressFn& progress,
                                   CancelToken& cancel, BridgeHandler* bridge) {
  auto report = [&](RunPhase p) {
    if (progress) progress(p);
  };
  const uint64_t timeout_ms = request.timeout_ms ? request.timeout_ms : spec.default_timeout_ms;
  const uint64_t memory_mb = request.memory_mb ? request.memory_mb : spec.default_memory_mb;

  report(RunPhase::kStarting);
  // Refills wait while this run is in flight (jail_pool.h, "Quiet refills").
  const JailPool::ActiveRun active(pool_.get());
  const jail::JailConfig config = JailConfigFor(spec, memory_mb, limits_.workdir_bytes);
  // Only configured shapes (the language's default limits and the memory
  // limits of pool.memory_mb) are pooled: any other memory_mb runs cold, so
  // unusual values can neither add pool shapes (and their metric series) nor
  // take the pool's room from default runs.
  const bool poolable =
      pool_ != nullptr && (memory_mb == spec.default_memory_mb ||
                           std::find(pooled_memory_mb_.begin(), pooled_memory_mb_.end(), memory_mb) !=
                               pooled_memory_mb_.end());
  std::unique_ptr<jail::Jail> pooled;
  if (poolable && Prestarts(spec)) {
    pooled = pool_->Take(ShapeKey(spec, config) + "/prestarted", PrestartMaker(spec, config));
  } else if (poolable) {
    pooled = pool_->Take(ShapeKey(spec, config), config);
  }
  StatusOr<std::unique_ptr<jail::Jail>> jail = PooledOrNew(std::move(pooled), config);
  if (!jail.ok()) {
    return InternalErrorResult(spec.name, "jail_setup_failed", "could not create the jail: " + jail.status().message());
  }

  std::vector<std::string> env = BaseEnv();
  env.insert(env.end(), spec.extra_env.begin(), spec.extra_env.end());

  jail::ExecRequest base;
  base.env = env;
  base.seccomp = &policies_.at(PolicyKey(spec.seccomp));
  const uint64_t output_cap = request.max_output_bytes ? std::min(request.max_output_bytes, limits_.max_output_bytes)
                                                       : limits_.max_output_bytes;
  base.limits.max_stdout_bytes = output_cap;
  base.limits.max_stderr_bytes = output_cap;
  base.limits.kill_on_output_limit = !request.truncate_output;
  base.limits.max_file_bytes = limits_.workdir_bytes;
  base.files.push_back({spec.source_file, request.code});
  for (const auto& f : request.files) base.files.push_back({f.name, f.content});

  std::optional<jail::ExecResult> compiled;
  std::optional<CachedBuild> cached;
  if (spec.compile) {
    report(RunPhase::kCompiling);
    const std::string toolchain = build_cache_ != nullptr && build_cache_->enabled() && !spec.compile->artifact.empty()
                                      ? ToolchainIdentity(spec.compile->argv[0])
                                      : "";
    // Unknown toolchain, or code bundled from operator package directories
    // (which change without the program changing): never cached.
    const bool cacheable = !toolchain.empty() && spec.packages.empty();
    std::string key;
    if (cacheable) {
      BuildKeyInput in{.language = spec.name, .isolation = spec.isolation, .compile_argv = spec.compile->argv,
                       .compiler_version = toolchain, .files = {}};
      for (const jail::FileEntry& f : base.files) in.files.emplace_back(f.name, f.content);
      key = BuildKey(in);
      if (std::optional<std::string> blob = build_cache_->Get(key)) cached = DecodeBuild(*blob);
    }
    if (cached) {
      base.files.push_back({spec.compile->artifact, cached->artifact, spec.compile->artifact_executable});
    } else {
      // The run's jail holds a pre-started interpreter (TypeScript's node),
      // which a compile in the same jail would have to live beside: the
      // compiler gets a jail of its own, as fresh as any, and the run's jail
      // gets the artifact as a file.
      std::unique_ptr<jail::Jail> compile_jail;
      if ((*jail)->started()) {
        StatusOr<std::unique_ptr<jail::Jail>> made =
            PooledOrNew(poolable ? pool_->Take(ShapeKey(spec, config), config) : nullptr, config);
        if (!made.ok()) {
          return InternalErrorResult(spec.name, "jail_setup_failed",
                                     "could not create the jail: " + made.status().message());
        }
        compile_jail = std::move(*made);
      }
      jail::ExecRequest compile = base;
      compile.argv = spec.compile->argv;
      if (pch_) {
        const std::vector<std::string> extra = pch_->ArgsFor(spec, request.code);
        compile.argv.insert(compile.argv.begin() + 1, extra.begin(), extra.end());
      }
      compile.limits.wall_ms = spec.compile->timeout_ms;
      if (cacheable || compile_jail) compile.output_globs = {spec.compile->artifact};
      if (compile_jail) compile.max_output_file_bytes = limits_.workdir_bytes;
      compile.max_output_files_total_bytes = compile.max_output_file_bytes;  // the artifact alone
      compiled = (compile_jail ? compile_jail : *jail)->Exec(compile, &cancel);
      if (compile_jail) {
        reaper_.Retire(std::move(compile_jail));
      } else {
        base.files.clear();  // already in /work
      }
      if (!(compiled->outcome == jail::ExecResult::Outcome::kExited && compiled->exit_code == 0)) {
        reaper_.Retire(std::move(*jail));
        return MapCompileFailure(spec.name, *compiled, memory_mb);
      }
      bool have_artifact = false;
      for (const jail::CollectedFile& f : compiled->files) {
        if (f.name != spec.compile->artifact || f.truncated) continue;
        if (cacheable) {
          (void)build_cache_->Put(key, EncodeBuild(compiled->stdout_data + compiled->stderr_data, f.content));
        }
        if (!base.files.empty()) {
          base.files.push_back({spec.compile->artifact, f.content, spec.compile->artifact_executable});
          have_artifact = true;
        }
      }
      if (!base.files.empty() && !have_artifact) {
        reaper_.Retire(std::move(*jail));
        return InternalErrorResult(spec.name, "invalid_artifact",
                                   "the compiler produced no " + spec.compile->artifact + " (or one too large)");
      }
    }
  }

  report(RunPhase::kRunning);
  jail::ExecRequest run = base;
  run.argv = ExpandArgv(spec, spec.run_argv, timeout_ms, memory_mb);
  run.argv.insert(run.argv.end(), request.args.begin(), request.args.end());
  run.stdin_data = request.stdin_data;
  run.output_globs = request.output_globs;
  run.max_output_files = limits_.max_output_files;
  run.max_output_file_bytes = limits_.max_output_file_bytes;
  run.max_output_files_total_bytes = limits_.max_output_files_total_bytes;
  run.limits.wall_ms = timeout_ms;
  jail::ExecResult r;
  if ((*jail)->started()) {
    // A pre-started interpreter: only the program is handed over.
    jail::ResumeRequest resume;
    if (spec.prestart_takes_timeout) resume.args.push_back(std::to_string(timeout_ms));
    resume.args.insert(resume.args.end(), request.args.begin(), request.args.end());
    resume.stdin_data = std::move(run.stdin_data);
    resume.files = std::move(run.files);
    resume.output_globs = std::move(run.output_globs);
    resume.max_output_files = run.max_output_files;
    resume.max_output_file_bytes = run.max_output_file_bytes;
    resume.max_output_files_total_bytes = run.max_output_files_total_bytes;
    resume.limits = run.limits;
    // WASM tier: the engine's own deadline fires first; the jail's is the backstop.
    if (spec.isolation == "wasm") resume.limits.wall_ms = timeout_ms + kCodeModeGraceMs;
    std::unique_ptr<BridgeRelay> relay;
    if (bridge != nullptr) {
      // Code mode: the engine's bridge has been its fd 3 since it started;
      // this run's relay takes the other end. The engine's deadline (the
      // hand-over's) fires first, the jail's clock is the backstop.
      UniqueFd host_end = (*jail)->TakeBridge();
      if (!host_end) {
        reaper_.Retire(std::move(*jail));
        return InternalErrorResult(spec.name, "jail_setup_failed", "the pre-started program has no bridge");
      }
      relay = BridgeRelay::Adopt(*bridge, std::move(host_end));
      resume.limits.wall_ms = timeout_ms + kCodeModeGraceMs;
    }
    r = (*jail)->Resume(resume, &cancel);
    if (relay) relay->Finish();
    ++prestarted_runs_;
  } else if (bridge != nullptr) {
    StatusOr<std::unique_ptr<BridgeRelay>> relay = BridgeRelay::Start(*bridge);
    if (!relay.ok()) {
      return InternalErrorResult(spec.name, "jail_setup_failed", "could not open the bridge: " + relay.status().message());
    }
    run.bridge_fd = (*relay)->jail_end();
    // The engine's own deadline fires first so the program gets a clean
    // error; the jail's clock (a little later) is the backstop.
    run.limits.wall_ms = timeout_ms + kCodeModeGraceMs;
    r = (*jail)->Exec(run, &cancel);
    (*relay)->Finish();
  } else {
    // WASM tier: the engine's own deadline fires first (exit 124, mapped
    // below); the jail's clock is the backstop.
    if (spec.isolation == "wasm") run.limits.wall_ms = timeout_ms + kCodeModeGraceMs;
    r = (*jail)->Exec(run, &cancel);
  }
  reaper_.Retire(std::move(*jail));  // torn down off the request path
  report(RunPhase::kDone);
  RunResult result = MapExecResult(spec.name, r, timeout_ms, memory_mb, spec.max_pids);
  result.isolation = spec.isolation;
  if (result.status == RunStatus::kExitNonzero) {
    // airlock-js reports its engine's limits as exit codes.
    if (spec.engine_exit_deadline != 0 && result.exit_code == spec.engine_exit_deadline) {
      result.status = RunStatus::kTimeout;
      result.message = "wall-clock limit of " + std::to_string(timeout_ms) + " ms reached (stopped by the engine)";
    } else if (spec.engine_exit_out_of_memory != 0 && result.exit_code == spec.engine_exit_out_of_memory) {
      result.status = RunStatus::kMemoryLimit;
      result.message = "memory limit of " + std::to_string(memory_mb) + " MiB reached (the engine's heap)";
    }
  }
  {
    std::set<std::string> inputs = {spec.source_file};
    for (const InputFile& f : request.files) inputs.insert(f.name);
    if (spec.compile && !spec.compile->artifact.empty()) inputs.insert(spec.compile->artifact);
    AddFileNotes(request.output_globs, inputs, &result);
  }
  if (compiled) {
    result.compile_output = compiled->stdout_data + compiled->stderr_data;
    result.compile_ms = compiled->wall_ms;
  } else if (cached) {
    result.compile_output = cached->diagnostics;  // compile_ms stays 0: nothing was compiled
  }
  return result;
}

}  // namespace airlock::runtimes

namespace airlock::runtimes {

Status LocalExecutor::OpenSession(const SessionSpec& spec) {
  // A code-mode runtime is one per language (the tier is the runtime's own:
  // javascript's engine is the WASM tier's, in a native jail).
  const LanguageSpec* lang = spec.code_mode ? FindCodeMode(spec.language) : Find(spec.language, false, spec.isolation);
  if (lang != nullptr) {
    AIRLOCK_ASSIGN_OR_RETURN(lang, WithPackages(lang, spec.packages));
  }
  if (lang == nullptr || lang->session_argv.empty()) {
    std::string list;
    for (const LanguageSpec& l : languages_) {
      if (!l.session_argv.empty() && l.code_mode == spec.code_mode) {
        list += (list.empty() ? "" : ", ") + l.name + " (" + l.isolation + ")";
      }
    }
    return NotFound(std::string(spec.code_mode ? "code-mode " : "") + "sessions are not available for " +
                    spec.language + " (" + spec.isolation +
                    "); languages with sessions: " + (list.empty() ? "none" : list));
  }
  if (spec.memory_mb > limits_.max_memory_mb) {
    return InvalidArgument("memory_mb " + std::to_string(spec.memory_mb) + " exceeds the maximum of " +
                           std::to_string(limits_.max_memory_mb));
  }
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    AIRLOCK_RETURN_IF_ERROR(RoomForLocked(spec.id));
  }
  jail::JailConfig config;
  jail::ExecRequest start;
  SessionStartFor(*lang, spec, &config, &start);
  const std::string image_dir = ImageDirFor(*lang);
  StatusOr<std::unique_ptr<SandboxSession>> session =
      session_maker_.Run([&] { return SandboxSession::Open(*host_, *lang, config, start, image_dir); });
  if (!session.ok()) {
    return FailedPrecondition("could not start the session: " + session.status().message());
  }
  if (!limits_.session_image_dir.empty() && (*session)->pausable()) (*session)->set_manifest(ToJson(spec).dump());
  std::lock_guard<std::mutex> lock(sessions_mu_);
  if (sessions_.count(spec.id)) {
    reaper_.Retire((*session)->TakeJail());
    return InvalidArgument("a session with this id exists already");
  }
  AddSessionLocked(spec, std::move(session).value());
  return OkStatus();
}

Status LocalExecutor::RoomForLocked(const std::string& id, size_t staged) const {
  if (sessions_.count(id)) return InvalidArgument("a session with this id exists already");
  if (sessions_.size() + staged >= limits_.max_sessions) {
    return ResourceExhausted("this runner holds its maximum of " + std::to_string(limits_.max_sessions) +
                             " sessions");
  }
  return OkStatus();
}

void LocalExecutor::SessionStartFor(const LanguageSpec& lang, const SessionSpec& spec, jail::JailConfig* config,
                                    jail::ExecRequest* start) {
  const uint64_t memory_mb = spec.memory_mb ? spec.memory_mb : lang.default_memory_mb;
  *config = JailConfigFor(lang, memory_mb, limits_.workdir_bytes);
  start->argv = ExpandArgv(lang, lang.session_argv, 0, memory_mb);  // {heap_mb}: the WASM tier's engine
  start->env = BaseEnv();
  start->env.insert(start->env.end(), lang.extra_env.begin(), lang.extra_env.end());
  start->seccomp = &policies_.at(PolicyKey(lang.seccomp));
  start->limits.max_file_bytes = limits_.workdir_bytes;
  // RLIMIT_CPU counts the interpreter's whole life: the session's CPU budget.
  start->limits.cpu_ms = spec.cpu_budget_ms ? spec.cpu_budget_ms : 600'000;
}

nlohmann::json LocalExecutor::Health() {
  nlohmann::json pool = nullptr;
  if (pool_) {
    const JailPool::Stats st = pool_->stats();
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& [key, per] : st.shapes) {
      // The key up to its bind list: language/tier[/code]/limits/hostname[/prestarted].
      const size_t binds = key.find('|');
      std::string shape = key.substr(0, binds);
      if (binds != std::string::npos && key.size() > 11 && key.compare(key.size() - 11, 11, "/prestarted") == 0) {
        shape += "/prestarted";
      }
      shapes.push_back({{"shape", shape},           {"ready", per.ready},   {"target", per.target},
                        {"hits", per.hits},         {"misses", per.misses}, {"created", per.created},
                        {"create_failures", per.create_failures}, {"discarded", per.discarded}});
    }
    pool = {{"hits", st.hits},       {"misses", st.misses},   {"created", st.created},
            {"create_failures", st.create_failures}, {"discarded", st.discarded},
            {"ready", st.ready},     {"pending", st.pending}, {"shapes", std::move(shapes)}};
  }
  size_t sessions = 0, paused = 0;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    sessions = sessions_.size();
    for (const auto& [id, e] : sessions_) paused += e.session->paused() ? 1 : 0;
  }
  return {{"pool", std::move(pool)}, {"sessions", sessions}, {"paused_sessions", paused}};
}

Status LocalExecutor::CloseSession(const std::string& id) {
  bool staged = false;  // an import of it in progress ends too
  {
    std::lock_guard<std::mutex> lock(imports_mu_);
    staged = imports_.erase(id) > 0;
  }
  std::shared_ptr<SandboxSession> session;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return staged ? OkStatus() : NotFound("no such session");
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  // A cell still running holds the session's lock; killing the jail ends it.
  // A paused session has none: its image goes with the session (below).
  std::unique_ptr<jail::Jail> jail = session->TakeJail();
  if (jail) reaper_.Retire(std::move(jail));
  return OkStatus();
}

size_t LocalExecutor::session_count() {
  std::lock_guard<std::mutex> lock(sessions_mu_);
  return sessions_.size();
}

RunResult LocalExecutor::RunInSession(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                                       BridgeHandler* bridge) {
  bool moving = false;
  std::shared_ptr<SandboxSession> session = BeginSessionUse(request.session_id, &moving);
  if (!session) {
    return InternalErrorResult(request.language, "E_SESSION_NOT_FOUND", "no session with this id is open");
  }
  SessionUse use(*this, request.session_id);
  const LanguageSpec& spec = session->spec();
  if (moving) {
    return InternalErrorResult(spec.name, "E_SESSION_BUSY",
                               "the session is moving to another runner host (this one is draining); call it "
                               "again in a moment");
  }
  if (!request.args.empty() || request.memory_mb != 0) {
    return InternalErrorResult(spec.name, "invalid_request", "args and memory_mb are not allowed in a session call");
  }
  if (request.code_mode != spec.code_mode) {
    return InternalErrorResult(spec.name, "invalid_request",
                               spec.code_mode ? "this is a code-mode session: its calls are code-mode programs"
                                              : "this session is not a code-mode session");
  }
  if (request.code_mode && bridge == nullptr) {
    return InternalErrorResult(spec.name, "invalid_request", "a code-mode run needs a bridge");
  }
  if (!spec.session_stdin && !request.stdin_data.empty()) {
    return InternalErrorResult(spec.name, "invalid_request", spec.name + " sessions take no stdin");
  }
  RunRequest checked = request;
  checked.language = spec.name;
  checked.isolation = spec.isolation;
  if (Status st = ValidateRequest(checked, limits_, languages_); !st.ok()) {
    return InternalErrorResult(spec.name, "invalid_request", st.message());
  }
  CellLimits limits;
  limits.timeout_ms = request.timeout_ms ? request.timeout_ms : spec.default_timeout_ms;
  limits.max_output_bytes = request.max_output_bytes ? std::min(request.max_output_bytes, limits_.max_output_bytes)
                                                     : limits_.max_output_bytes;
  limits.kill_on_output_limit = !request.truncate_output;
  limits.max_output_files = limits_.max_output_files;
  limits.max_output_file_bytes = limits_.max_output_file_bytes;
  limits.max_output_files_total_bytes = limits_.max_output_files_total_bytes;
  // A paused session comes back here, on the maker thread (its new jail
  // must outlive this request's thread); failing that, Call says it is lost.
  if (session->paused()) (void)session_maker_.Run([&] { return session->Resume(); });
  if (progress) progress(RunPhase::kRunning);
  RunResult result = session->Call(request, limits, cancel, request.code_mode ? bridge : nullptr);
  if (result.error_code.empty()) {
    std::set<std::string> inputs;
    for (const InputFile& f : request.files) inputs.insert(f.name);
    AddFileNotes(request.output_globs, inputs, &result);
  }
  if (result.error_code == "E_SESSION_LOST") {
    // The session stays listed (its calls keep saying why) until closed;
    // its jail goes now.
    if (std::unique_ptr<jail::Jail> dead = session->TakeJail()) reaper_.Retire(std::move(dead));
  }
  if (progress) progress(RunPhase::kDone);
  return result;
}

}  // namespace airlock::runtimes

namespace airlock::runtimes {

LocalExecutor::~LocalExecutor() {
  std::shared_ptr<SandboxSession> pausing;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    pauser_stopping_ = true;
    pausing = pausing_;
  }
  pauser_cv_.notify_all();
  // A snapshot turn in progress is cancelled (the session is being
  // destroyed anyway), so the join below never waits for its clock.
  if (pausing) (void)pausing->TakeJail();
  if (pauser_.joinable()) pauser_.join();
  if (limits_.session_image_dir.empty()) return;
  // A persistent image directory: every session that can be paused is,
  // and its image stays for the next runner (AdoptPausedSessions).
  std::vector<std::shared_ptr<SandboxSession>> all;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    for (auto& [id, e] : sessions_) all.push_back(e.session);
  }
  for (const std::shared_ptr<SandboxSession>& s : all) {
    if (!s->pausable()) continue;
    Status st = s->Pause();
    if (st.ok()) {
      s->KeepImage();
    } else {
      std::fprintf(stderr, "airlock runner: a session could not be kept: %s\n", st.message().c_str());
    }
  }
}

std::shared_ptr<SandboxSession> LocalExecutor::BeginSessionUse(const std::string& id, bool* moving) {
  std::unique_lock<std::mutex> lock(sessions_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  std::shared_ptr<SandboxSession> session = it->second.session;
  // An idle pause of it in progress ends first: this use then resumes it,
  // rather than finding it busy.
  pauser_cv_.wait(lock, [&] { return pausing_ != session || pauser_stopping_; });
  it = sessions_.find(id);  // closed meanwhile?
  if (it == sessions_.end() || it->second.session != session) return nullptr;
  ++it->second.calls_in_flight;
  it->second.last_used = Clock::now();
  it->second.orphan_until.reset();  // a gateway knows it: its book keeps its lifetime
  if (moving != nullptr) *moving = it->second.moving;
  return session;
}

void LocalExecutor::EndSessionUse(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    if (it->second.calls_in_flight > 0) --it->second.calls_in_flight;
    it->second.last_used = Clock::now();
  }
  pauser_cv_.notify_all();  // idle again: the pauser's next deadline may be this one
}

namespace {

// A persistent image directory: made 0700 if missing; refused unless it is
// a directory (not a link) of this user's that no one else may enter.
Status CheckPersistentImageDir(const std::string& dir) {
  if (dir.empty() || dir.front() != '/') return InvalidArgument("sessions.image_dir must be an absolute path");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("mkdir " + dir);
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoError("stat " + dir);
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(dir + " is not a directory");
  if (st.st_uid != ::geteuid()) return FailedPrecondition(dir + " does not belong to the runner's user");
  if ((st.st_mode & 077) != 0) return FailedPrecondition(dir + " is open to other users (it must be mode 0700)");
  return OkStatus();
}

}  // namespace

std::string LocalExecutor::ImageDirFor(const LanguageSpec& spec) {
  if (!spec.session_checkpoints) return "";
  if (!limits_.session_image_dir.empty()) {
    std::lock_guard<std::mutex> lock(image_dir_mu_);
    if (image_dir_failed_) return "";
    if (Status st = CheckPersistentImageDir(limits_.session_image_dir); !st.ok()) {
      image_dir_failed_ = true;
      std::fprintf(stderr, "airlock runner: warning: sessions cannot be paused or forked: %s\n",
                   st.message().c_str());
      return "";
    }
    return limits_.session_image_dir;
  }
  std::lock_guard<std::mutex> lock(image_dir_mu_);
  if (!image_dir_ && !image_dir_failed_) {
    StatusOr<std::unique_ptr<PrivateDir>> dir = PrivateDir::Create("airlock-session-images");
    if (dir.ok()) {
      image_dir_ = std::move(dir).value();
    } else {
      image_dir_failed_ = true;
      std::fprintf(stderr, "airlock runner: warning: sessions cannot be paused or forked: %s\n",
                   dir.status().message().c_str());
    }
  }
  return image_dir_ ? image_dir_->path() : "";
}

std::string LocalExecutor::session_image_dir() {
  std::lock_guard<std::mutex> lock(image_dir_mu_);
  if (!limits_.session_image_dir.empty()) return image_dir_failed_ ? "" : limits_.session_image_dir;
  return image_dir_ ? image_dir_->path() : "";
}

size_t LocalExecutor::AdoptPausedSessions() {
  if (limits_.session_image_dir.empty()) return 0;
  const LanguageSpec* any = nullptr;
  for (const LanguageSpec& l : languages_) {
    if (l.session_checkpoints) any = &l;
  }
  if (any == nullptr || ImageDirFor(*any).empty()) return 0;
  const std::string dir = limits_.session_image_dir;
  std::error_code ec;
  std::vector<std::string> manifests;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json" && e.is_regular_file(ec) && !e.is_symlink(ec)) {
      manifests.push_back(e.path().string());
    }
  }
  size_t adopted = 0;
  const uint64_t now = static_cast<uint64_t>(::time(nullptr));
  for (const std::string& mpath : manifests) {
    const std::string image = mpath.substr(0, mpath.size() - 5) + ".image";
    auto drop = [&](const std::string& why) {
      std::fprintf(stderr, "airlock runner: dropping the paused session in %s: %s\n", mpath.c_str(), why.c_str());
      ::unlink(image.c_str());
      ::unlink(mpath.c_str());
    };
    std::ifstream in(mpath);
    const nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
    StatusOr<SessionSpec> spec = m.is_object() && m.contains("session") ? SessionSpecFromJson(m["session"])
                                                                        : StatusOr<SessionSpec>(InvalidArgument("no session"));
    if (!spec.ok()) {
      drop("a damaged manifest");
      continue;
    }
    const uint64_t paused_at = m.value("paused_at", 0ull);
    const uint64_t ttl = spec->max_lifetime_s ? spec->max_lifetime_s : limits_.adopted_image_ttl_s;
    if (paused_at == 0 || paused_at + ttl < now) {
      drop("older than its lifetime");
      continue;
    }
    struct stat st{};
    if (::lstat(image.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      drop("its image is gone");
      continue;
    }
    StatusOr<const LanguageSpec*> lang = RestorableLanguage(*spec);
    if (!lang.ok()) {
      drop(lang.status().message());
      continue;
    }
    jail::JailConfig config;
    jail::ExecRequest start;
    SessionStartFor(**lang, *spec, &config, &start);
    std::unique_ptr<SandboxSession> session = SandboxSession::Adopt(*host_, **lang, config, start, dir, image);
    session->set_manifest(ToJson(*spec).dump());
    std::lock_guard<std::mutex> lock(sessions_mu_);
    if (sessions_.count(spec->id) || sessions_.size() >= limits_.max_sessions) {
      session->KeepImage();  // not ours to delete: the id is taken, or no room now
      continue;
    }
    AddSessionLocked(*spec, std::move(session));
    sessions_[spec->id].orphan_until = Clock::now() + std::chrono::seconds(paused_at + ttl - now);
    StartPauserLocked();
    ++adopted;
  }
  return adopted;
}

StatusOr<const LanguageSpec*> LocalExecutor::RestorableLanguage(const SessionSpec& spec) {
  const LanguageSpec* lang = spec.code_mode ? nullptr : Find(spec.language, false, spec.isolation);
  if (lang != nullptr && !spec.packages.empty()) {
    StatusOr<const LanguageSpec*> with = WithPackages(lang, spec.packages);
    lang = with.ok() ? *with : nullptr;
  }
  if (lang == nullptr || !lang->session_checkpoints) {
    return FailedPrecondition("E_SESSION_NOT_PAUSABLE: " + spec.language + " (" + spec.isolation +
                              ") sessions cannot be restored here");
  }
  return lang;
}

void LocalExecutor::AddSessionLocked(const SessionSpec& spec, std::unique_ptr<SandboxSession> session) {
  const bool pausable = session->pausable();
  sessions_.emplace(spec.id, SessionEntry{.session = std::move(session),
                                          .last_used = Clock::now(),
                                          .orphan_until = std::nullopt,
                                          .spec = spec});
  if (pausable && limits_.pause_after_s > 0) StartPauserLocked();
}

void LocalExecutor::StartPauserLocked() {
  if (pauser_stopping_) return;
  if (!pauser_.joinable()) pauser_ = std::thread([this] { PauseIdleSessions(); });
  pauser_cv_.notify_all();
}

void LocalExecutor::PauseIdleSessions() {
  const Clock::duration after = std::chrono::seconds(limits_.pause_after_s);
  std::unique_lock<std::mutex> lock(sessions_mu_);
  while (!pauser_stopping_) {
    const Clock::time_point now = Clock::now();
    std::shared_ptr<SandboxSession> due;
    std::optional<Clock::time_point> next;
    std::vector<std::string> orphans;
    for (const auto& [id, e] : sessions_) {
      if (e.moving) continue;  // paused, and on its way to another host
      if (e.orphan_until && e.calls_in_flight == 0) {
        if (*e.orphan_until <= now) {
          orphans.push_back(id);
          continue;
        }
        if (!next || *e.orphan_until < *next) next = *e.orphan_until;
      }
      if (limits_.pause_after_s == 0) continue;
      if (!e.session->pausable() || e.session->paused() || e.calls_in_flight > 0) continue;
      const Clock::time_point at = e.last_used + after;
      if (at <= now) {
        due = e.session;
        break;
      }
      if (!next || at < *next) next = at;
    }
    for (const std::string& id : orphans) {
      // No gateway asked for it: its image goes with it.
      std::shared_ptr<SandboxSession> gone = std::move(sessions_[id].session);
      sessions_.erase(id);
      if (std::unique_ptr<jail::Jail> j = gone->TakeJail()) reaper_.Retire(std::move(j));
      std::fprintf(stderr, "airlock runner: closed adopted session %s: no gateway used it in its lifetime\n",
                   id.c_str());
    }
    if (!due) {
      if (next) {
        pauser_cv_.wait_until(lock, *next);
      } else {
        pauser_cv_.wait(lock);
      }
      continue;
    }
    pausing_ = due;
    lock.unlock();
    // Refused (lost, or the image could not be made): it stays as it is.
    const Status st = due->Pause();
    lock.lock();
    pausing_.reset();
    pauser_cv_.notify_all();  // uses waiting for this pause (BeginSessionUse)
    if (!st.ok()) {
      // Tried again after another pause_after_s idle, not at once.
      for (auto& [id, e] : sessions_) {
        if (e.session == due) e.last_used = Clock::now();
      }
    }
  }
}

Status LocalExecutor::PauseSession(const std::string& id) {
  std::shared_ptr<SandboxSession> session = BeginSessionUse(id);
  if (!session) return NotFound("no such session");
  SessionUse use(*this, id);
  return session->Pause();
}

Status LocalExecutor::ResumeSession(const std::string& id) {
  std::shared_ptr<SandboxSession> session = BeginSessionUse(id);
  if (!session) return NotFound("no such session");
  SessionUse use(*this, id);  // the idle clock starts again when it ends
  {
    // A move that failed: the session goes on here.
    std::lock_guard<std::mutex> lock(sessions_mu_);
    if (auto it = sessions_.find(id); it != sessions_.end() && it->second.session == session) {
      it->second.moving = false;
    }
  }
  return session_maker_.Run([&] { return session->Resume(); });
}

Status LocalExecutor::ForkSession(const std::string& id, const SessionSpec& copy) {
  const Status moving_refusal = FailedPrecondition("E_SESSION_BUSY: the session is moving to another runner host");
  // The copy's spec: its source's (language, limits, packages) under the
  // copy's id and lifetime.
  SessionSpec spec;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return NotFound("no such session");
    if (it->second.moving) return moving_refusal;
    AIRLOCK_RETURN_IF_ERROR(RoomForLocked(copy.id));
    spec = it->second.spec;
  }
  spec.id = copy.id;
  spec.max_lifetime_s = copy.max_lifetime_s;
  bool moving = false;
  std::shared_ptr<SandboxSession> source = BeginSessionUse(id, &moving);
  if (!source) return NotFound("no such session");
  SessionUse use(*this, id);
  if (moving) return moving_refusal;
  StatusOr<std::unique_ptr<SandboxSession>> fork = session_maker_.Run([&] { return source->Fork(); });
  if (!fork.ok()) return fork.status();
  std::lock_guard<std::mutex> lock(sessions_mu_);
  if (sessions_.count(copy.id)) {
    reaper_.Retire((*fork)->TakeJail());
    return InvalidArgument("a session with this id exists already");
  }
  if (!limits_.session_image_dir.empty() && (*fork)->pausable()) (*fork)->set_manifest(ToJson(spec).dump());
  AddSessionLocked(spec, std::move(fork).value());
  return OkStatus();
}

// Moving sessions between runner hosts: ExportSession, ImportSession.

namespace {

// Where `jail_path` (a path airlock-js is given in the jail) is on this
// host: under the bind that shows it there (the longest match); nullopt
// outside every bind.
std::optional<std::string> HostPathOf(const std::string& jail_path, const jail::JailConfig& config) {
  const jail::BindMount* best = nullptr;
  size_t best_len = 0;
  for (const jail::BindMount& b : config.binds) {
    const std::string& at = b.target.empty() ? b.path : b.target;
    const bool under = jail_path == at || (jail_path.size() > at.size() && jail_path.compare(0, at.size(), at) == 0 &&
                                           jail_path[at.size()] == '/');
    if (under && at.size() >= best_len) {
      best = &b;
      best_len = at.size();
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->path + jail_path.substr(best_len);
}

// The key the session engine started by `start` (airlock-js
// --wasi-session, its argv expanded) makes its images under
// (wasm::SessionImageKey), computed outside its jail: the module, the
// --wasm-max-mb cap and the --tar archives, each found through `config`'s
// binds. nullopt when it cannot tell (another argv, a file outside every
// bind): the image is then taken unchecked, and its restore checks it.
std::optional<std::string> ExpectedImageKey(const jail::ExecRequest& start, const jail::JailConfig& config) {
  const std::vector<std::string>& argv = start.argv;
  if (argv.size() < 3 || argv[0] != kJailAirlockJsPath || argv[1] != "--wasi-session") return std::nullopt;
  auto file = [&](const std::string& jail_path) -> std::optional<wasm::SessionImageKeyFile> {
    std::optional<std::string> host = HostPathOf(jail_path, config);
    if (!host) return std::nullopt;
    return wasm::SessionImageKeyFile{.path = jail_path, .stat_path = *host};
  };
  std::optional<wasm::SessionImageKeyFile> module = file(argv[2]);
  std::optional<uint64_t> cap_mb;
  std::vector<std::pair<wasm::SessionImageKeyFile, std::string>> tars;
  // The engine's flags (engine/js/wasi_runner.cc): two take no value.
  for (size_t i = 3; i < argv.size() && argv[i] != "--"; ++i) {
    if (argv[i] == "--wasm-baseline" || argv[i] == "--restore") continue;
    if (i + 1 >= argv.size()) return std::nullopt;
    const std::string& flag = argv[i];
    const std::string& value = argv[++i];
    if (flag == "--wasm-max-mb") {
      char* end = nullptr;
      cap_mb = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0') return std::nullopt;
    } else if (flag == "--tar") {
      const size_t eq = value.find('=');
      std::optional<wasm::SessionImageKeyFile> tar = eq == std::string::npos ? std::nullopt : file(value.substr(0, eq));
      if (!tar) return std::nullopt;
      tars.emplace_back(std::move(*tar), value.substr(eq + 1));
    }
  }
  if (!module || !cap_mb) return std::nullopt;
  return wasm::SessionImageKey(*module, *cap_mb, tars);
}

// Refuses an image (the staged file `fd`, `size` bytes) not made under `key`.
Status CheckImageKey(int fd, uint64_t size, const std::string& key) {
  std::string head(std::min<uint64_t>(size, 64u << 10), '\0');
  StatusOr<size_t> got = PreadFull(fd, head.data(), head.size(), 0);
  if (!got.ok()) return Status(got.status().code(), "reading the staged session image: " + got.status().message());
  head.resize(*got);
  StatusOr<std::string> made_under = wasm::SessionImageKeyOf(head);
  if (!made_under.ok()) return InvalidArgument("the session's image is damaged: " + made_under.status().message());
  if (*made_under != key) {
    return FailedPrecondition("E_SESSION_LOST: the image was made by another build of the interpreter");
  }
  return OkStatus();
}

// Up to SessionImageChunk::kMaxBytes of the image at `path` from `offset`
// (a fresh open: the session's own descriptor, if any, is not shared), and
// its size.
Status ReadImageChunk(const std::string& path, uint64_t offset, SessionImageChunk* chunk) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    return FailedPrecondition("E_SESSION_BUSY: the session's image is gone (it was resumed or closed here): " +
                              std::string(std::strerror(errno)));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path);
  chunk->size = static_cast<uint64_t>(st.st_size);
  if (offset > chunk->size) {
    return InvalidArgument("offset " + std::to_string(offset) + " is past the end of the session's image (" +
                           std::to_string(chunk->size) + " bytes)");
  }
  chunk->data.resize(std::min<uint64_t>(SessionImageChunk::kMaxBytes, chunk->size - offset));
  StatusOr<size_t> got = PreadFull(fd.get(), chunk->data.data(), chunk->data.size(), offset);
  if (!got.ok()) return Status(got.status().code(), "reading " + path + ": " + got.status().message());
  chunk->data.resize(*got);
  return OkStatus();
}

}  // namespace

StatusOr<std::shared_ptr<SandboxSession>> LocalExecutor::StartMove(const std::string& id, std::string* spec_json) {
  std::shared_ptr<SandboxSession> session = BeginSessionUse(id);
  if (!session) return NotFound("no such session");
  SessionUse use(*this, id);
  if (!session->pausable()) {
    Status refusal = session->Pause();  // E_SESSION_NOT_PAUSABLE, as PauseSession says it
    return refusal.ok() ? FailedPrecondition("E_SESSION_NOT_PAUSABLE: the session cannot be paused") : refusal;
  }
  auto set_moving = [&](bool moving) {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.session != session) return NotFound("no such session");
    // A call, pause, resume or fork of it in flight besides this use.
    if (moving && it->second.calls_in_flight > 1) {
      return FailedPrecondition("E_SESSION_BUSY: a call of this session is running");
    }
    it->second.moving = moving;
    if (moving) *spec_json = ToJson(it->second.spec).dump();
    return OkStatus();
  };
  // Marked first: from now on cells are refused, so the pause holds.
  AIRLOCK_RETURN_IF_ERROR(set_moving(true));
  if (Status st = session->Pause(); !st.ok()) {
    (void)set_moving(false);
    return st;
  }
  return session;
}

StatusOr<SessionImageChunk> LocalExecutor::ExportSession(const std::string& id, uint64_t offset) {
  SessionImageChunk chunk;
  std::shared_ptr<SandboxSession> session;
  if (offset == 0) {
    AIRLOCK_ASSIGN_OR_RETURN(session, StartMove(id, &chunk.spec_json));
  } else {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return NotFound("no such session");
    if (!it->second.moving) {
      return FailedPrecondition("the session is not moving (resumed here, or never exported from offset 0)");
    }
    session = it->second.session;
  }
  const std::string path = session->image_path();
  if (path.empty()) return FailedPrecondition("E_SESSION_BUSY: the session is no longer paused here");
  AIRLOCK_RETURN_IF_ERROR(ReadImageChunk(path, offset, &chunk));
  return chunk;
}

LocalExecutor::ImportStaging::ImportStaging(ImportStaging&& other) noexcept
    : spec(std::move(other.spec)),
      lang(other.lang),
      dir(std::move(other.dir)),
      path(std::exchange(other.path, std::string())),
      fd(std::move(other.fd)),
      written(other.written),
      last_chunk(other.last_chunk) {}

LocalExecutor::ImportStaging::~ImportStaging() {
  if (!path.empty()) ::unlink(path.c_str());
}

StatusOr<LocalExecutor::ImportStaging> LocalExecutor::StartImport(const SessionSpec& spec) {
  AIRLOCK_ASSIGN_OR_RETURN(const LanguageSpec* lang, RestorableLanguage(spec));
  if (spec.memory_mb > limits_.max_memory_mb) {
    return InvalidArgument("memory_mb " + std::to_string(spec.memory_mb) + " exceeds the maximum of " +
                           std::to_string(limits_.max_memory_mb));
  }
  ImportStaging staging;
  staging.dir = ImageDirFor(*lang);
  if (staging.dir.empty()) {
    return FailedPrecondition("E_SESSION_NOT_PAUSABLE: sessions cannot be paused here (this runner has no usable "
                              "image directory)");
  }
  {
    std::lock_guard<std::mutex> lock(imports_mu_);
    const Clock::time_point now = Clock::now();
    std::erase_if(imports_, [&](const auto& kv) {
      return kv.first == spec.id || now - kv.second.last_chunk > kImportStaleAfter;
    });
    std::lock_guard<std::mutex> sessions_lock(sessions_mu_);
    AIRLOCK_RETURN_IF_ERROR(RoomForLocked(spec.id, imports_.size()));
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string image, SandboxSession::NewImagePath(staging.dir));
  // Not "*.json": AdoptPausedSessions never takes it for a session.
  const std::string path = image + ".part";
  staging.fd.Reset(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!staging.fd) return FailedPrecondition("cannot stage the session's image: " + std::string(std::strerror(errno)));
  staging.path = path;
  staging.spec = spec;
  staging.lang = lang;
  staging.last_chunk = Clock::now();
  return staging;
}

StatusOr<LocalExecutor::ImportStaging> LocalExecutor::TakeImport(const std::string& id) {
  std::lock_guard<std::mutex> lock(imports_mu_);
  auto it = imports_.find(id);
  if (it == imports_.end()) {
    return InvalidArgument("no import of this session is in progress here (its first chunk is at offset 0)");
  }
  ImportStaging staging(std::move(it->second));
  imports_.erase(it);
  return staging;
}

Status LocalExecutor::ImportSession(const SessionSpec& spec, uint64_t offset, const std::string& data, bool last) {
  AIRLOCK_ASSIGN_OR_RETURN(ImportStaging staging, offset == 0 ? StartImport(spec) : TakeImport(spec.id));
  // Every refusal from here on drops the staging (its destructor).
  if (offset != staging.written) {
    return InvalidArgument("chunk at offset " + std::to_string(offset) + " out of order: " +
                           std::to_string(staging.written) + " bytes were staged; the import is dropped");
  }
  if (data.size() > limits_.workdir_bytes - staging.written) {
    return InvalidArgument("the session's image is larger than a session's may be (" +
                           std::to_string(limits_.workdir_bytes) + " bytes); the import is dropped");
  }
  if (Status st = WriteFull(staging.fd.get(), data); !st.ok()) {
    return Status(st.code(), "writing the staged session image: " + st.message());
  }
  staging.written += data.size();
  if (last) return FinishImport(std::move(staging));
  staging.last_chunk = Clock::now();
  std::lock_guard<std::mutex> lock(imports_mu_);
  if (imports_.count(spec.id)) return InvalidArgument("the import was started again; this one is dropped");
  imports_.emplace(spec.id, std::move(staging));
  return OkStatus();
}

Status LocalExecutor::FinishImport(ImportStaging staging) {
  if (staging.written == 0) return InvalidArgument("the session's image is empty");
  jail::JailConfig config;
  jail::ExecRequest start;
  SessionStartFor(*staging.lang, staging.spec, &config, &start);
  if (std::optional<std::string> key = ExpectedImageKey(start, config)) {
    AIRLOCK_RETURN_IF_ERROR(CheckImageKey(staging.fd.get(), staging.written, *key));
  }
  // Named as Pause names images ("<random>.image").
  const std::string image = staging.path.substr(0, staging.path.size() - std::string_view(".part").size());
  if (::rename(staging.path.c_str(), image.c_str()) != 0) return ErrnoError("renaming the staged session image");
  staging.path.clear();  // the session owns the image now: its destructor removes it
  std::unique_ptr<SandboxSession> session =
      SandboxSession::Adopt(*host_, *staging.lang, config, start, staging.dir, image);
  if (!limits_.session_image_dir.empty()) {
    // A runner restarted before the session's next call adopts it.
    session->set_manifest(ToJson(staging.spec).dump());
    if (Status st = session->WriteManifest(); !st.ok()) {
      std::fprintf(stderr, "airlock runner: warning: an imported session will not outlive this runner: %s\n",
                   st.message().c_str());
    }
  }
  std::lock_guard<std::mutex> lock(sessions_mu_);
  AIRLOCK_RETURN_IF_ERROR(RoomForLocked(staging.spec.id));
  AddSessionLocked(staging.spec, std::move(session));
  return OkStatus();
}

}  // namespace airlock::runtimes
