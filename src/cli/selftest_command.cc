// `airlock selftest`: the containment suite against this installation.
// Real escape attempts in every language; exits non-zero if anything that
// must be denied was allowed, or if the host was touched.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "selftest/containment_suite.h"
#include "selftest/host_bait.h"

namespace airlock::cli {

int SelftestCommand(bool json) {
  // The bait (a secret file, a secret env var, an abstract socket) is planted
  // before the jail host exists, so the secret is in the supervisor's own
  // environment exactly as it would be in production.
  StatusOr<std::unique_ptr<selftest::HostBait>> bait = selftest::HostBait::Create();
  if (!bait.ok()) {
    std::cerr << "airlock: cannot plant the self-test bait: " << bait.status().message() << "\n";
    return 2;
  }
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(config::DefaultConfig(), false);
  if (!rt.ok()) {
    std::cerr << "airlock: " << rt.status().message() << "\n";
    return 2;
  }
  selftest::SelftestOptions options;
  options.bait = bait->get();
  if (!json) {
    options.on_case = [](const selftest::CaseOutcome& c) {
      std::fprintf(stderr, "  %-6s %s\n", c.passed ? "pass" : (c.skipped ? "skip" : "FAIL"), c.name.c_str());
    };
  }
  selftest::SelftestReport report = selftest::RunContainmentSuite(*rt->executor, options);
  if (json) {
    std::cout << selftest::ToJson(report).dump(2) << std::endl;
  } else {
    std::cout << selftest::FormatTable(report) << std::flush;
  }
  return report.ok() ? 0 : 1;
}

}  // namespace airlock::cli
