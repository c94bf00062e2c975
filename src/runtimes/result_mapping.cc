#include "runtimes/result_mapping.h"

#include <signal.h>

#include <algorithm>
#include <cstring>

#include "base/encoding.h"
#include "jail/init/files.h"

namespace airlock::runtimes {
namespace {

using Outcome = jail::ExecResult::Outcome;

void CopyCommon(const jail::ExecResult& r, RunResult* out) {
  out->stdout_text = r.stdout_data;
  out->stderr_text = r.stderr_data;
  out->stdout_truncated = r.stdout_truncated;
  out->stderr_truncated = r.stderr_truncated;
  out->wall_ms = r.wall_ms;
  out->cpu_ms = r.cpu_ms;
  out->peak_memory_bytes = r.peak_memory_bytes;
  out->exit_code = r.exit_code;
  out->signal = r.signal;
  for (const auto& f : r.files) {
    OutputFile of;
    of.name = f.name;
    of.content = f.content;
    of.size = f.size;
    of.truncated = f.truncated;
    of.mime_type = GuessMimeType(f.name);
    out->files_truncated = out->files_truncated || f.truncated;
    out->files.push_back(std::move(of));
  }
  for (const jail::FileNote& n : r.files_skipped) out->files_skipped.push_back({n.name, n.size, n.reason});
  for (const jail::FileNote& n : r.files_left) out->files_left.push_back({n.name, n.size, n.reason});
  out->files_truncated = out->files_truncated || !out->files_skipped.empty();
}

std::string MiB(uint64_t mb) { return std::to_string(mb) + " MiB"; }

}  // namespace

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  if (abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

RunResult MapExecResult(const std::string& language, const jail::ExecResult& r, uint64_t timeout_ms,
                        uint64_t memory_mb, uint32_t max_pids) {
  RunResult out;
  out.language = language;
  CopyCommon(r, &out);
  switch (r.outcome) {
    case Outcome::kExited:
      if (r.exit_code == 0) {
        out.status = RunStatus::kOk;
      } else if (r.oom_killed) {
        out.status = RunStatus::kMemoryLimit;
        out.message = "a process ran out of memory (limit " + MiB(memory_mb) + ") and was killed; the program then exited with code " +
                      std::to_string(r.exit_code);
      } else {
        out.status = RunStatus::kExitNonzero;
        out.message = "the program exited with code " + std::to_string(r.exit_code);
        if (r.pids_limit_hit)
          out.message += " (it hit the process/thread limit of " + std::to_string(max_pids) + ")";
      }
      break;
    case Outcome::kSignaled:
      if (r.oom_killed) {
        out.status = RunStatus::kMemoryLimit;
        out.message = "memory limit of " + MiB(memory_mb) + " exceeded; the program was killed";
      } else if (r.signal == SIGXCPU) {
        out.status = RunStatus::kTimeout;
        out.message = "CPU time limit exceeded (" + std::to_string((timeout_ms + 999) / 1000 + 1) + " s)";
      } else if (r.signal == SIGSYS) {
        out.status = RunStatus::kKilledSignal;
        out.message = "killed by SIGSYS: the program used a system call the sandbox forbids";
      } else if (r.signal == SIGXFSZ) {
        out.status = RunStatus::kKilledSignal;
        out.message = "killed by SIGXFSZ: a file exceeded the size limit";
      } else {
        out.status = RunStatus::kKilledSignal;
        out.message = "the program was killed by " + SignalName(r.signal);
      }
      break;
    case Outcome::kTimedOut:
      out.status = RunStatus::kTimeout;
      out.message = "time limit of " + std::to_string(timeout_ms) + " ms exceeded; the program was killed";
      break;
    case Outcome::kOutputLimit:
      out.status = RunStatus::kOutputLimit;
      out.message = r.error + "; the program was killed and its output truncated";
      break;
    case Outcome::kCancelled:
      out.status = RunStatus::kInternalError;
      out.error_code = "cancelled";
      out.message = "the run was cancelled";
      break;
    case Outcome::kExecFailed:
      out.status = RunStatus::kInternalError;
      out.error_code = "exec_failed";
      out.message = "the program could not be started: " + r.error;
      break;
    case Outcome::kJailError:
      out.status = RunStatus::kInternalError;
      out.error_code = "jail_error";
      out.message = "the sandbox failed: " + r.error;
      break;
  }
  return out;
}

void AddFileNotes(const std::vector<std::string>& output_globs, const std::set<std::string>& inputs,
                  RunResult* result) {
  std::vector<FileNotice>& left = result->files_left;
  left.erase(std::remove_if(left.begin(), left.end(), [&](const FileNotice& n) { return inputs.count(n.name) > 0; }),
             left.end());
  for (const std::string& glob : output_globs) {
    bool matched = false;
    for (const OutputFile& f : result->files) matched = matched || jail::OutputGlobMatches(f.name, glob);
    for (const FileNotice& n : result->files_skipped) matched = matched || jail::OutputGlobMatches(n.name, glob);
    if (!matched) {
      result->notes.push_back("output_files pattern \"" + glob.substr(0, 200) + "\" matched no file in /work");
    }
  }
  if (!result->files_skipped.empty()) {
    result->notes.push_back(std::to_string(result->files_skipped.size()) +
                            (result->files_skipped.size() == 1 ? " file" : " files") +
                            " matched output_files but were left out by the output file limits (see files_skipped)");
  }
  if (!left.empty()) {
    result->notes.push_back("the program left files in /work that output_files did not ask for (see files_left); "
                            "name them in output_files to get them back");
  }
}

RunResult MapCompileFailure(const std::string& language, const jail::ExecResult& r, uint64_t memory_mb) {
  RunResult out = MapExecResult(language, r, 0, memory_mb, 0);
  out.compile_output = r.stdout_data + r.stderr_data;
  out.compile_ms = r.wall_ms;
  out.stdout_text.clear();
  out.stderr_text.clear();
  out.stdout_truncated = out.stderr_truncated = false;
  out.compile_output_truncated = r.stdout_truncated || r.stderr_truncated;
  out.exit_code = r.exit_code;
  out.files.clear();
  if (r.outcome == Outcome::kExited) {
    out.status = RunStatus::kCompileError;
    out.message = "compilation failed (exit code " + std::to_string(r.exit_code) + ")";
  } else if (r.outcome == Outcome::kTimedOut) {
    out.status = RunStatus::kTimeout;
    out.message = "compilation exceeded its time limit";
  } else if (out.status != RunStatus::kInternalError) {
    out.message = "compilation: " + out.message;
  }
  return out;
}

}  // namespace airlock::runtimes
