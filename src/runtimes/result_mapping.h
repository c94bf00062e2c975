// Turns what the jail observed (ExecResult) into what the caller is told
// (RunResult): a status from the fixed vocabulary and a clear message for
// every limit breach.
#ifndef AIRLOCK_RUNTIMES_RESULT_MAPPING_H_
#define AIRLOCK_RUNTIMES_RESULT_MAPPING_H_

#include <set>
#include <string>
#include <vector>

#include "jail/jail.h"
#include "runtimes/run_types.h"

namespace airlock::runtimes {

RunResult MapExecResult(const std::string& language, const jail::ExecResult& r, uint64_t timeout_ms,
                        uint64_t memory_mb, uint32_t max_pids);

// A compile step that did not exit 0: compile_error (or the limit it hit).
RunResult MapCompileFailure(const std::string& language, const jail::ExecResult& r, uint64_t memory_mb);

// Turns what the run left in /work into hints for the caller: drops the
// run's own `inputs` (source, input files, compiled artifact) from
// files_left, and adds a note for each of `output_globs` that matched
// nothing, for files a cap left out, and for files nobody asked for.
void AddFileNotes(const std::vector<std::string>& output_globs, const std::set<std::string>& inputs,
                  RunResult* result);

// "SIGSEGV" for 11, "signal 77" for unknown numbers.
std::string SignalName(int sig);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_RESULT_MAPPING_H_
