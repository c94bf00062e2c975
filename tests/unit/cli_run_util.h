// Runs a shell command line (usually build/airlock ...) for the CLI tests
// and returns its exit code and stdout.
#ifndef AIRLOCK_TESTS_UNIT_CLI_RUN_UTIL_H_
#define AIRLOCK_TESTS_UNIT_CLI_RUN_UTIL_H_

#include <stdio.h>
#include <sys/wait.h>

#include <string>

#include <nlohmann/json.hpp>

namespace airlock::testing {

struct CliOutcome {
  int rc = -1;      // the exit code, -1 if it did not exit normally
  std::string out;  // stdout (JSON with --json)
  nlohmann::json result() const { return nlohmann::json::parse(out, nullptr, false); }
};

inline CliOutcome RunCommandLine(const std::string& cmd) {
  CliOutcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int status = pclose(p);
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace airlock::testing

#endif  // AIRLOCK_TESTS_UNIT_CLI_RUN_UTIL_H_
