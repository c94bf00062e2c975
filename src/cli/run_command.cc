// `airlock run`: one program in one jail, from the command line.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "codemode/settings.h"
#include "gateway/gateway.h"
#include "jail/init/files.h"
#include "audit/audit_log.h"
#include "governance/policy.h"
#include "mcp/access.h"
#include "mcp/tools/execute_tool.h"
#include "runtimes/package_dirs.h"

namespace airlock::cli {
namespace {

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  if (path == "-") {  // fd 0 may be a pipe, a socket or a file
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError("read stdin");
      if (n == 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteOutputFile(const std::string& dir, const runtimes::OutputFile& f) {
  if (!jail::IsSafeRelativePath(f.name)) return InvalidArgument("unsafe output name " + f.name);
  std::string path = dir + "/" + f.name;
  for (size_t pos = path.find('/', dir.size() + 1); pos != std::string::npos; pos = path.find('/', pos + 1))
    mkdir(path.substr(0, pos).c_str(), 0755);
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("create " + path);
  if (write(fd.get(), f.content.data(), f.content.size()) != static_cast<ssize_t>(f.content.size()))
    return ErrnoError("write " + path);
  return OkStatus();
}

int ExitCodeFor(const runtimes::RunResult& r) {
  switch (r.status) {
    case runtimes::RunStatus::kOk:
    case runtimes::RunStatus::kExitNonzero: return r.exit_code;
    case runtimes::RunStatus::kTimeout: return 124;
    case runtimes::RunStatus::kKilledSignal: return 128 + r.signal;
    case runtimes::RunStatus::kMemoryLimit: return 128 + SIGKILL;
    case runtimes::RunStatus::kOutputLimit: return 128 + SIGKILL;
    case runtimes::RunStatus::kCompileError: return 1;
    case runtimes::RunStatus::kInternalError: return 125;
  }
  return 125;
}

// The context `execute` runs in from the command line: progress and log
// lines go to stderr.
class CliCallContext : public mcp::ToolCallContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string& text) override { std::cerr << "airlock: " << text << "\n"; }
  CancelToken& cancel() override { return cancel_; }
  const std::string& protocol_version() const override { return version_; }
  const governance::Caller& caller() const override { return caller_; }
  const std::string& run_id() const override { return run_id_; }

  governance::Caller caller_;
  std::string run_id_ = audit::NewRunId();

 private:
  CancelToken cancel_;
  std::string version_ = "2025-11-25";
};

// `airlock run --code-mode`: the MCP tool `execute`, run in this process.
int RunCodeMode(const RunOptions& options, const config::Config& cfg, const std::string& code) {
  StatusOr<codemode::Settings> settings = codemode::SettingsFromJson(cfg.code_mode);
  if (!settings.ok()) {
    std::cerr << "airlock: config: " << settings.status().message() << "\n";
    return 125;
  }
  StatusOr<std::unique_ptr<gateway::Gateway>> gw = gateway::Gateway::Create(cfg.mcp_servers);
  if (!gw.ok()) {
    std::cerr << "airlock: config: " << gw.status().message() << "\n";
    return 125;
  }
  for (const auto& [name, st] : (*gw)->ConnectAll(std::chrono::seconds(30))) {
    if (!st.ok()) std::cerr << "airlock: connector " << name << ": " << st.message() << "\n";
  }
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(cfg, options.allow_degraded);
  if (!rt.ok()) {
    std::cerr << "airlock: " << rt.status().message() << "\n";
    return 125;
  }
  StatusOr<governance::Policy> policy = governance::Policy::FromJson(cfg.roles, cfg.endpoints, cfg.access);
  if (!policy.ok()) {
    std::cerr << "airlock: config: " << policy.status().message() << "\n";
    return 125;
  }
  const governance::Endpoint* endpoint = policy->DefaultEndpoint();
  if (endpoint == nullptr) {
    std::cerr << "airlock: config: several endpoints (" << policy->EndpointNames()
              << ") and none named \"default\"; airlock run uses \"default\"\n";
    return 125;
  }
  StatusOr<std::unique_ptr<audit::AuditLog>> audit = audit::AuditLog::Open(cfg);
  if (!audit.ok()) {
    std::cerr << "airlock: audit log: " << audit.status().message() << "\n";
    return 125;
  }
  mcp::Access access(*policy, *endpoint, gw->get());
  mcp::ExecuteTool tool(**gw, *rt->executor, access, audit->get(), settings->limits, 1u << 20);
  nlohmann::json args = {{"language", options.language}, {"code", code}};
  if (!options.connectors.empty()) args["connectors"] = options.connectors;
  nlohmann::json limits = nlohmann::json::object();
  if (options.timeout_ms) limits["wall_ms"] = options.timeout_ms;
  if (options.memory_mb) limits["memory_mb"] = options.memory_mb;
  if (!limits.empty()) args["limits"] = limits;
  CliCallContext ctx;
  ctx.caller_ = {.user = policy->stdio().user, .role = policy->stdio().role, .auth = "cli", .endpoint = endpoint->name,
                 .client = "airlock-cli"};
  StatusOr<nlohmann::json> out = tool.Call(args, ctx);
  if (!out.ok()) {
    std::cerr << "airlock: " << out.status().message() << "\n";
    return 125;
  }
  std::cout << (*out)["structuredContent"].dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  return out->value("isError", false) ? 1 : 0;
}

}  // namespace

int RunCommand(const RunOptions& options) {
  runtimes::RunRequest req;
  req.language = options.language;
  StatusOr<std::string> code = ReadWholeFile(options.source);
  if (!code.ok()) {
    std::cerr << "airlock: " << code.status().message() << "\n";
    return 125;
  }
  req.code = std::move(code).value();
  if (!options.stdin_file.empty()) {
    StatusOr<std::string> in = ReadWholeFile(options.stdin_file);
    if (!in.ok()) {
      std::cerr << "airlock: " << in.status().message() << "\n";
      return 125;
    }
    req.stdin_data = std::move(in).value();
  }
  req.args = options.args;
  req.timeout_ms = options.timeout_ms;
  req.memory_mb = options.memory_mb;
  req.isolation = options.isolation;
  req.output_globs = options.outputs;
  for (const auto& spec : options.files) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      std::cerr << "airlock: --file expects NAME=PATH, got " << spec << "\n";
      return 125;
    }
    StatusOr<std::string> content = ReadWholeFile(spec.substr(eq + 1));
    if (!content.ok()) {
      std::cerr << "airlock: " << content.status().message() << "\n";
      return 125;
    }
    req.files.push_back({spec.substr(0, eq), std::move(content).value()});
  }

  StatusOr<config::Config> cfg = LoadConfigOrDefault(options.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock: " << cfg.status().message() << "\n";
    return 125;
  }
  if (req.isolation.empty()) req.isolation = cfg->languages.default_isolation;
  if (options.code_mode) return RunCodeMode(options, *cfg, req.code);
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(*cfg, options.allow_degraded);
  if (!rt.ok()) {
    std::cerr << "airlock: " << rt.status().message() << "\n";
    return 125;
  }
  // The operator's own tool: every configured package directory that
  // serves the language (the WASM tier ignores them).
  for (const auto& [name, dir] : cfg->languages.packages) {
    if (req.isolation == "native" && runtimes::PackageDirServes(dir.language, req.language)) req.packages.push_back(name);
  }
  CancelToken cancel;
  runtimes::RunResult result = rt->executor->Run(req, nullptr, cancel);

  if (options.json) {
    std::cout << runtimes::ToJson(result).dump(2) << std::endl;
    return result.status == runtimes::RunStatus::kInternalError ? 125 : 0;
  }
  if (!result.compile_output.empty()) std::cerr << result.compile_output;
  std::cout << result.stdout_text << std::flush;
  std::cerr << result.stderr_text << std::flush;
  for (const auto& f : result.files) {
    Status st = WriteOutputFile(options.output_dir, f);
    if (!st.ok()) std::cerr << "airlock: " << st.message() << "\n";
  }
  if (!result.ok() && result.status != runtimes::RunStatus::kExitNonzero) {
    std::cerr << "airlock: " << runtimes::RunStatusName(result.status) << ": " << result.message << "\n";
  }
  return ExitCodeFor(result);
}

}  // namespace airlock::cli
