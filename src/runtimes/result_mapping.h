// Turns what the jail observed (ExecResult) into what the caller is told
// (RunResult): a status from the fixed vocabulary and a clear message for
// every limit breach.
#ifndef AIRLOCK_RUNTIMES_RESULT_MAPPING_H_
#define AIRLOCK_RUNTIMES_RESULT_MAPPING_H_

#include <string>

#include "jail/jail.h"
#include "runtimes/run_types.h"

namespace airlock::runtimes {

RunResult MapExecResult(const std::string& language, const jail::ExecResult& r, uint64_t timeout_ms,
                        uint64_t memory_mb, uint32_t max_pids);

// A compile step that did not exit 0: compile_error (or the limit it hit).
RunResult MapCompileFailure(const std::string& language, const jail::ExecResult& r, uint64_t memory_mb);

// "SIGSEGV" for 11, "signal 77" for unknown numbers.
std::string SignalName(int sig);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_RESULT_MAPPING_H_
