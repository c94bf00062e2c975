// The containment suite: real escape attempts, enforced limits and allowed
// capabilities, run through a CodeExecutor and checked from both sides.
//
// Each case is one attacker program from src/selftest/attacks/ (embedded in
// the binary) in one language. Programs end with one verdict line:
//   "DENIED: <detail>"  the attack failed       "ALLOWED: <detail>" it worked
//   "OK: <detail>"      a capability works      "FAIL: <detail>"    it does not
//   "STARTED: <detail>" set-up done; the suite judges from the host side
// Any "ALLOWED:" line anywhere counts as allowed. The suite also judges from
// outside: the run's status, deadlines, output caps, that the planted secret
// value appears in no output, that no host listener was contacted, that no
// file appeared outside the work dir, that no process or mount or cgroup is
// left behind.
//
//   auto bait = HostBait::Create();                 // or let the suite do it
//   SelftestReport report = RunContainmentSuite(executor, {});
//   std::cout << FormatTable(report);
//   return report.ok() ? 0 : 1;
#ifndef AIRLOCK_SELFTEST_CONTAINMENT_SUITE_H_
#define AIRLOCK_SELFTEST_CONTAINMENT_SUITE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtimes/code_executor.h"
#include "runtimes/run_types.h"
#include "selftest/host_bait.h"

namespace airlock::selftest {

enum class Expected {
  kDenied,    // an escape attempt: must fail
  kEnforced,  // a resource abuse: a limit must stop it, the host stays fine
  kAllowed,   // an ordinary capability: must work
};
const char* ExpectedName(Expected e);  // "denied", "enforced", "allowed"

// Extra host-side checks after a run.
enum class HostCheck {
  kNoListenerContact,   // no connection/datagram reached a host listener
  kNoFilesOutside,      // no /usr/<marker> etc. on the host; secret intact
  kNoMarkerProcess,     // no host process has the marker in its command line
  kNoSymlinkFollowed,   // symlinked output files not collected; normal.txt is
  kFollowUpRunWorks,    // a python `print(1)` right afterwards works
};

struct Expectation {
  Expected kind = Expected::kDenied;
  // Accepted statuses. Denied cases: ok (or killed by SIGSYS, which also
  // counts as denied) unless set.
  std::vector<runtimes::RunStatus> statuses;
  std::string verdict_prefix;  // required prefix of the verdict line ("" = none)
  std::vector<std::string> verdict_contains;
  std::vector<std::string> stderr_contains;
  std::vector<std::string> compile_output_contains;
  bool stdout_truncated = false;   // must be set
  uint64_t min_wall_ms = 0;        // 0: unchecked
  uint64_t max_wall_ms = 0;        // 0: unchecked
  uint64_t max_count = 0;          // verdict "... after N ...": N <= max_count (0: unchecked)
  std::vector<HostCheck> host_checks;
};

struct SelftestCase {
  std::string name;         // "net_tcp4_python": attack file stem + language
  std::string category;     // "network", "secrets", "filesystem", "processes", "kernel", "limits", "allowed"
  std::string language;     // executor language name
  std::string isolation;    // "wasm" for the WASM tier's cases; empty: the default (native)
  std::string attack_file;  // embedded file name, e.g. "net_tcp4.py"
  std::string description;
  Expectation expect;
  uint64_t timeout_ms = 10'000;
  uint64_t memory_mb = 0;  // 0: the language default
  std::string stdin_data;
  std::vector<std::string> output_globs;
};

// Every case, in a stable order.
std::vector<SelftestCase> ContainmentCases();

// The same attack programs run in the WASM tier (isolation "wasm": the
// interpreter compiled to WASI, in the engine, in the jail), named
// "<case>_wasm", for the languages whose program runs unchanged there.
// A language without the tier on this host is skipped.
std::vector<SelftestCase> WasmTierContainmentCases();

struct CaseOutcome {
  std::string name;
  std::string category;
  std::string language;
  std::string expected;  // "denied" / "enforced" / "allowed"
  std::string observed;  // "denied", "enforced", "allowed", "ALLOWED", "broken", "skipped", ...
  bool passed = false;
  bool skipped = false;  // language not available on this host
  std::string detail;    // verdict line or what went wrong
  uint64_t wall_ms = 0;
};

// Runs one case against `executor` with `bait` planted. Never throws.
CaseOutcome RunContainmentCase(runtimes::CodeExecutor& executor, const SelftestCase& c, HostBait& bait);

struct SelftestOptions {
  std::vector<std::string> only;  // run cases whose name contains one of these (empty: all)
  int parallelism = 2;            // cases in flight at once
  std::function<void(const CaseOutcome&)> on_case;  // progress; called from worker threads, serialized
  // Bait planted by the caller, or null to plant a fresh one. Plant it before
  // creating the executor when that starts a separate runner process, so the
  // runner inherits the secret variable too.
  HostBait* bait = nullptr;
};

struct SelftestReport {
  std::vector<CaseOutcome> cases;  // in ContainmentCases() order
  std::vector<std::string> host_problems;  // left-behind processes, mounts, cgroups, secret changes
  std::string setup_error;                 // the bait could not be planted
  int passed = 0, failed = 0, skipped = 0;
  uint64_t wall_ms = 0;

  bool host_intact() const { return host_problems.empty(); }
  bool ok() const { return setup_error.empty() && failed == 0 && host_intact(); }
};

// Plants the bait, runs the cases, checks the host afterwards, cleans up.
SelftestReport RunContainmentSuite(runtimes::CodeExecutor& executor, const SelftestOptions& options = {});

// An aligned table (one row per case) plus the host checks and a summary.
std::string FormatTable(const SelftestReport& report);

// {"ok": bool, "passed": n, "failed": n, "skipped": n, "wall_ms": n,
//  "setup_error": "", "host_problems": [...],
//  "cases": [{"name", "category", "language", "expected", "observed",
//             "passed", "skipped", "detail", "wall_ms"}]}
nlohmann::json ToJson(const SelftestReport& report);

}  // namespace airlock::selftest

#endif  // AIRLOCK_SELFTEST_CONTAINMENT_SUITE_H_
