// What a caller asks to run and what comes back: the vocabulary shared by the
// CLI, the runner process and the MCP server. Plain data plus JSON mapping.
//
// JSON shape of a RunResult (the MCP tool's structuredContent, `airlock run
// --json`, and the runner protocol):
//   {"status": "ok"|"exit_nonzero"|"timeout"|"memory_limit"|"output_limit"|
//              "compile_error"|"killed_signal"|"internal_error",
//    "message": "...", "error_code": "", "language": "python", "isolation": "native",
//    "exit_code": 0, "signal": null|9,
//    "stdout": "...", "stdout_truncated": false,
//    "stderr": "...", "stderr_truncated": false,
//    "compile_output": "...", "compile_output_truncated": false,
//    "wall_ms": 12, "cpu_ms": 10, "compile_ms": 0, "peak_memory_bytes": 123,
//    "files": [{"name": "out.png", "size": 10, "encoding": "base64"|"text",
//               "content": "...", "truncated": false, "mime_type": "image/png"}],
//    "files_truncated": false,
//    "files_skipped": [{"name": "big.bin", "size": 9000000,
//                       "reason": "max_output_files_total_bytes"|"max_output_files"}],
//    "files_left": [{"name": "plot.png", "size": 20000, "reason": "not_requested"}],
//    "notes": ["output_files pattern \"*.csv\" matched nothing"]}
// files_truncated: a matched file was cut at the per-file cap or left out
// (files_skipped says which and why). files_left: up to 20 files the program
// left in /work that no output_files pattern asked for (not its source or
// input files). notes: plain-language hints about both.
// stdout/stderr/compile_output are always valid UTF-8 (ill-formed bytes are
// replaced with U+FFFD); file contents keep their bytes (base64 when binary).
//
// JSON shape of a RunRequest (the runner protocol):
//   {"language": "python", "code": "...", "code_encoding"?: "base64",
//    "stdin": "...", "stdin_encoding"?: "base64", "args": ["..."],
//    "files": [{"name": "in.csv", "content": "...", "encoding": "text"|"base64"}],
//    "output_files": ["*.png"], "timeout_ms": 0, "memory_mb": 0,
//    "isolation": "native", "code_mode": false, "max_output_bytes": 0}
// code/stdin are sent as base64 (with the *_encoding key) only when they are
// not valid UTF-8, so their exact bytes survive. FromJson functions never
// throw; they return InvalidArgument naming the bad field.
#ifndef AIRLOCK_RUNTIMES_RUN_TYPES_H_
#define AIRLOCK_RUNTIMES_RUN_TYPES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::runtimes {

enum class RunStatus {
  kOk,
  kExitNonzero,
  kTimeout,
  kMemoryLimit,
  kOutputLimit,
  kCompileError,
  kKilledSignal,
  kInternalError,
};

const char* RunStatusName(RunStatus s);
std::optional<RunStatus> RunStatusFromName(const std::string& name);

struct InputFile {
  std::string name;     // relative path under the work dir, no "..", no leading "/"
  std::string content;  // raw bytes
};

struct OutputFile {
  std::string name;
  std::string content;  // raw bytes (possibly cut at the size cap)
  uint64_t size = 0;    // size on disk inside the jail
  bool truncated = false;
  std::string mime_type;  // guessed from the extension
};

// A file in the work dir that was not returned, and why (see RunResult).
struct FileNotice {
  std::string name;
  uint64_t size = 0;  // size on disk inside the jail
  std::string reason;
};

// "image/png" for "plot.png"; application/octet-stream when unknown.
std::string GuessMimeType(const std::string& name);

struct RunRequest {
  std::string language;
  std::string code;
  std::string stdin_data;
  std::vector<std::string> args;
  std::vector<InputFile> files;
  std::vector<std::string> output_globs;  // e.g. "*.png", "out/result.json"
  uint64_t timeout_ms = 0;  // 0: the language default
  uint64_t memory_mb = 0;   // 0: the language default
  std::string isolation = "native";
  // A code-mode program (bridge.h): the language's code-mode runtime runs
  // it with the bridge on fd 3; the executor must be given a BridgeHandler.
  bool code_mode = false;
  uint64_t max_output_bytes = 0;  // per stream; 0: the executor's maximum; may only lower it
  // true: output past max_output_bytes is dropped (stdout_truncated) and the
  // run goes on; false: the run ends with output_limit.
  bool truncate_output = false;
  // Non-empty: a cell for this open session (CodeExecutor::OpenSession)
  // instead of a fresh run; args and memory_mb must then be empty/0.
  std::string session_id;
  // Operator package directories (config languages.packages) bound into
  // this run's jail, by name: the MCP layer names those of the caller's
  // endpoint that serve the language; the runner refuses one it lacks.
  // Native tier only (the WASM tier ignores them). Not for session cells:
  // a session's are fixed when it opens.
  std::vector<std::string> packages;
  // Who asked (the MCP layer's caller key, e.g. "api_key:alice"), for the
  // runner client's per-caller admission limits (runner/runner_client.h).
  // Empty: not limited per caller. Not part of the JSON: the runner and the
  // jail never see it.
  std::string caller;
};

// A session to open (CodeExecutor::OpenSession): one jail and interpreter
// that stay alive between runs with its session_id.
//   {"id": "s_...", "language": "python", "isolation": "native",
//    "memory_mb": 0, "cpu_budget_ms": 600000, "code_mode"?: true}
struct SessionSpec {
  std::string id;            // chosen by the caller: unguessable, unique
  std::string language;
  std::string isolation = "native";
  uint64_t memory_mb = 0;      // 0: the language default; for the whole session
  uint64_t cpu_budget_ms = 0;  // CPU time for the whole session (RLIMIT_CPU); 0: none beyond the executor's
  // Opened by a gateway whose session book is shared with other gateways
  // (PostgreSQL): a runner host keeps the session when the opening
  // gateway's stream ends (another gateway may use or close it) and closes
  // it itself once max_lifetime_s has passed. Not shared: closed with the
  // stream, as before.
  bool shared = false;
  uint64_t max_lifetime_s = 0;  // 0: the host enforces none (not shared)
  std::vector<std::string> packages;  // as RunRequest::packages, for the session's life
  // A code-mode session: the language's code-mode runtime with its session
  // harness; every cell is a code-mode request (RunRequest::code_mode, with
  // a BridgeHandler) whose bridge lives for that cell only.
  bool code_mode = false;
};
nlohmann::json ToJson(const SessionSpec& s);
StatusOr<SessionSpec> SessionSpecFromJson(const nlohmann::json& j);

// One piece of a paused session's image on its way to another runner host
// (CodeExecutor::ExportSession/ImportSession).
struct SessionImageChunk {
  static constexpr size_t kMaxBytes = size_t{4} << 20;  // per chunk: well under a frame
  std::string spec_json;  // the session's SessionSpec (ToJson); in the first chunk only
  std::string data;       // the image's bytes from the asked offset on
  uint64_t size = 0;      // the whole image's size
};

struct RunResult {
  RunStatus status = RunStatus::kInternalError;
  std::string message;  // human explanation of a non-ok status
  // Stable machine-readable reason when status is internal_error or the run
  // was refused: "busy", "runner_unavailable", "cancelled", "invalid_request",
  // "unknown_language", "jail_setup_failed". Empty otherwise.
  std::string error_code;
  std::string language;
  std::string isolation = "native";
  int exit_code = -1;
  int signal = 0;  // 0: not killed by a signal
  std::string stdout_text;
  bool stdout_truncated = false;
  std::string stderr_text;
  bool stderr_truncated = false;
  std::string compile_output;
  bool compile_output_truncated = false;
  uint64_t wall_ms = 0;
  uint64_t cpu_ms = 0;
  uint64_t compile_ms = 0;
  uint64_t peak_memory_bytes = 0;
  std::vector<OutputFile> files;
  bool files_truncated = false;  // a matched file was cut or left out
  std::vector<FileNotice> files_skipped;  // matched, left out by a cap (bounded)
  std::vector<FileNotice> files_left;     // not matched by output_files (bounded)
  std::vector<std::string> notes;         // hints for the caller (bounded)
  // The runner host ("HOST:PORT") that ran it, when the gateway has remote
  // runner hosts (remote/runner_fleet.h); empty for the local runner.
  std::string runner_host;

  bool ok() const { return status == RunStatus::kOk; }
};

// A result that says an error happened before or around the run.
RunResult InternalErrorResult(const std::string& language, const std::string& error_code,
                              const std::string& message);

nlohmann::json ToJson(const RunResult& r);
StatusOr<RunResult> RunResultFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const RunRequest& r);
StatusOr<RunRequest> RunRequestFromJson(const nlohmann::json& j);

// Stages a run passes through, reported to progress listeners.
enum class RunPhase { kQueued, kStarting, kCompiling, kRunning, kDone };
const char* RunPhaseName(RunPhase p);
using ProgressFn = std::function<void(RunPhase)>;

// A language as shown to clients (`airlock languages`, MCP discovery).
struct LanguageInfo {
  std::string name;          // "python"
  std::string display_name;  // "Python"
  std::string version;       // "3.11.2"
  bool compiled = false;
  std::vector<std::string> tiers;  // "native", later "wasm"
  uint64_t default_timeout_ms = 0;
  uint64_t default_memory_mb = 0;
  std::string notes;         // e.g. "numpy, pandas, matplotlib importable"
  bool sessions = false;     // has a session interpreter (open_session) in some tier
  std::vector<std::string> session_tiers;  // the tiers with one ("native", "wasm")
  // Each tier's own defaults, where a tier has them (WASM Ruby needs 512 MiB
  // where native Ruby has 256). default_timeout_ms/default_memory_mb above
  // are the first tier's. JSON: "tier_defaults": {"wasm": {"default_timeout_ms":
  // N, "default_memory_mb": N}}; absent from an older runner host.
  struct TierDefaults {
    uint64_t timeout_ms = 0;
    uint64_t memory_mb = 0;
  };
  std::map<std::string, TierDefaults> tier_defaults;

  // The defaults of a run in `tier`: its own, else the language's.
  uint64_t DefaultTimeoutMs(const std::string& tier) const;
  uint64_t DefaultMemoryMb(const std::string& tier) const;
};
nlohmann::json ToJson(const LanguageInfo& l);
StatusOr<LanguageInfo> LanguageInfoFromJson(const nlohmann::json& j);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_RUN_TYPES_H_
