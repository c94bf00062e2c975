// The containment suite as tests: every case of ContainmentCases() is a real
// attempt run in a real jail (TEST_P, one per case), plus a run of
// RunContainmentSuite over the most disruptive cases that asserts the host is
// left intact.
#include "selftest/containment_suite.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "selftest/attack_files.h"
#include "containment_env.h"

namespace airlock::selftest {
namespace {

// One jail host, executor and bait for the whole binary: creating them per
// case would dominate the runtime.
class SharedEnv {
 public:
  static ContainmentEnv& Get() {
    if (instance() == nullptr) instance() = std::make_unique<ContainmentEnv>(std::nullopt, /*wasm_tier=*/true);
    return *instance();
  }
  // Removes the planted secret and destroys the jail host (end of the run).
  static void Destroy() { instance().reset(); }

 private:
  static std::unique_ptr<ContainmentEnv>& instance() {
    static std::unique_ptr<ContainmentEnv> env;
    return env;
  }
};

class ContainmentCleanup : public ::testing::Environment {
 public:
  void TearDown() override { SharedEnv::Destroy(); }
};
::testing::Environment* const kContainmentCleanup = ::testing::AddGlobalTestEnvironment(new ContainmentCleanup);

class ContainmentCaseTest : public ::testing::TestWithParam<SelftestCase> {};

TEST_P(ContainmentCaseTest, Holds) {
  ContainmentEnv& env = SharedEnv::Get();
  ASSERT_TRUE(env.error().empty()) << env.error();
  const SelftestCase& c = GetParam();
  const CaseOutcome o = RunContainmentCase(*env.executor(), c, *env.bait());
  if (o.skipped) GTEST_SKIP() << o.detail;
  EXPECT_TRUE(o.passed) << c.name << " (" << c.description << "): expected " << o.expected << ", observed "
                        << o.observed << ": " << o.detail;
}

INSTANTIATE_TEST_SUITE_P(Containment, ContainmentCaseTest, ::testing::ValuesIn(ContainmentCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });
// The same attacks in the WASM tier (the interpreter in the engine, in the jail).
INSTANTIATE_TEST_SUITE_P(WasmTier, ContainmentCaseTest, ::testing::ValuesIn(WasmTierContainmentCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });

TEST(ContainmentCasesTest, EveryCaseHasItsAttackFileAndAUniqueName) {
  std::set<std::string> names;
  std::vector<SelftestCase> all = ContainmentCases();
  for (const SelftestCase& c : WasmTierContainmentCases()) {
    EXPECT_EQ(c.isolation, "wasm") << c.name;
    all.push_back(c);
  }
  for (const SelftestCase& c : all) {
    EXPECT_TRUE(FindAttackFile(c.attack_file).has_value()) << c.attack_file;
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
  }
  // The issue's minimum: python and c attempt every escape.
  for (const char* stem : {"net_tcp4", "net_udp4", "net_ipv6_loopback", "net_ipv6_global", "net_abstract_unix",
                           "net_dns", "read_secret_file", "read_shadow", "list_root", "supervisor_environ",
                           "secret_env", "write_outside", "host_processes", "ptrace", "mount", "unshare_user",
                           "unshare_net", "keyctl", "bpf", "io_uring", "userfaultfd", "perf_event", "setuid_binary",
                           "tiocsti", "fork_bomb", "memory_bomb", "disk_fill", "infinite_loop", "sleep_forever",
                           "output_flood", "fd_exhaustion", "orphan", "symlink_output"}) {
    EXPECT_TRUE(names.count(std::string(stem) + "_python")) << stem;
    EXPECT_TRUE(names.count(std::string(stem) + "_c")) << stem;
  }
}

TEST(ContainmentCasesTest, SubstitutionFillsEveryPlaceholder) {
  auto bait = HostBait::Create();
  ASSERT_TRUE(bait.ok()) << bait.status().ToString();
  for (const AttackFile& f : AttackFiles()) {
    const std::string s = (*bait)->Substitute(f.content);
    for (const char* p : {"@SECRET_PATH@", "@HOST_PID@", "@ABSTRACT_SOCKET@", "@SECRET_ENV_NAME@", "@TCP_PORT@",
                          "@UDP_PORT@", "@MARKER@"})
      EXPECT_EQ(s.find(p), std::string::npos) << f.name << " " << p;
    EXPECT_EQ(s.find((*bait)->secret_value()), std::string::npos) << f.name << " must not get the secret value";
  }
}

// The judge must be able to fail: a fake executor that "lets attacks
// through" must turn every denied case into a failure.
class ScriptedExecutor : public runtimes::CodeExecutor {
 public:
  explicit ScriptedExecutor(std::function<runtimes::RunResult(const runtimes::RunRequest&)> fn)
      : fn_(std::move(fn)) {}
  runtimes::RunResult Run(const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken&,
                          runtimes::BridgeHandler* = nullptr) override {
    return fn_(req);
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return {}; }

 private:
  std::function<runtimes::RunResult(const runtimes::RunRequest&)> fn_;
};

SelftestCase FindCase(const std::string& name) {
  for (SelftestCase& c : ContainmentCases())
    if (c.name == name) return c;
  ADD_FAILURE() << "no case " << name;
  return {};
}

TEST(ContainmentJudgeTest, FailsWhenAnAttackSucceedsOrLeaks) {
  auto bait = HostBait::Create();
  ASSERT_TRUE(bait.ok()) << bait.status().ToString();
  runtimes::RunResult r;
  r.status = runtimes::RunStatus::kOk;
  ScriptedExecutor ex([&](const runtimes::RunRequest&) { return r; });
  const SelftestCase tcp = FindCase("net_tcp4_python");

  r.stdout_text = "DENIED: socket: EAFNOSUPPORT\n";
  EXPECT_TRUE(RunContainmentCase(ex, tcp, **bait).passed);

  r.stdout_text = "ALLOWED: connected\nDENIED: later line\n";
  CaseOutcome o = RunContainmentCase(ex, tcp, **bait);
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.observed, "ALLOWED");

  r.stdout_text = "env: X=" + (*bait)->secret_value() + "\nDENIED: not set\n";
  o = RunContainmentCase(ex, FindCase("secret_env_c"), **bait);
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.observed, "LEAKED");

  r.stdout_text = "";
  r.status = runtimes::RunStatus::kExitNonzero;  // crashed before a verdict: not a pass
  EXPECT_FALSE(RunContainmentCase(ex, tcp, **bait).passed);

  r.status = runtimes::RunStatus::kOk;
  r.stdout_text = "DENIED: EMFILE after 5000 open files\n";  // limit far above RLIMIT_NOFILE
  EXPECT_FALSE(RunContainmentCase(ex, FindCase("fd_exhaustion_c"), **bait).passed);

  r.stdout_text = "STARTED: symlinks in place\n";
  r.files = {{"normal.txt", "hello\n", 6, false, ""}, {"out.txt", "root:x:0:0:root:/root:/bin/bash\n", 32, false, ""}};
  EXPECT_FALSE(RunContainmentCase(ex, FindCase("symlink_output_python"), **bait).passed);
  r.files.pop_back();
  EXPECT_TRUE(RunContainmentCase(ex, FindCase("symlink_output_python"), **bait).passed);
}

TEST(ContainmentJudgeTest, NoticesHostListenerContact) {
  auto bait = HostBait::Create();
  ASSERT_TRUE(bait.ok()) << bait.status().ToString();
  // Pretend the jail let the program through: connect from the host itself.
  const std::string src = (*bait)->Substitute("@TCP_PORT@");
  const int port = std::stoi(src);
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  runtimes::RunResult r;
  r.status = runtimes::RunStatus::kOk;
  r.stdout_text = "DENIED: claims it failed\n";
  ScriptedExecutor ex([&](const runtimes::RunRequest&) { return r; });
  const CaseOutcome o = RunContainmentCase(ex, FindCase("net_tcp4_c"), **bait);
  EXPECT_FALSE(o.passed);
  EXPECT_NE(o.detail.find("TCP 127.0.0.1"), std::string::npos) << o.detail;
}

// Runs the suite runner itself (2 in flight) over the cases that stress the
// host most, and checks the host is intact afterwards and the table is sane.
TEST(ContainmentSuiteTest, LeavesHostIntact) {
  ContainmentEnv& env = SharedEnv::Get();
  ASSERT_TRUE(env.error().empty()) << env.error();
  SelftestOptions opts;
  opts.only = {"fork_bomb_c", "fork_bomb_classic", "memory_bomb_python", "disk_fill_c", "orphan_python",
               "write_outside_c", "net_abstract_unix_c", "mount_c", "arithmetic_python"};
  opts.parallelism = 2;  // CodeExecutor::Run is thread-safe: runs may overlap
  opts.bait = env.bait();
  const SelftestReport report = RunContainmentSuite(*env.executor(), opts);
  const std::string table = FormatTable(report);
  EXPECT_TRUE(report.setup_error.empty()) << report.setup_error;
  // "arithmetic_python" also selects the WASM tier's arithmetic_python_wasm.
  EXPECT_EQ(report.cases.size(), 10u) << table;
  EXPECT_TRUE(report.host_intact()) << table;
  EXPECT_TRUE(report.ok()) << table;
  EXPECT_NE(table.find("net_abstract_unix_c"), std::string::npos);
  EXPECT_NE(table.find("arithmetic_python_wasm"), std::string::npos);
  EXPECT_NE(table.find("EXPECTED"), std::string::npos);
  const nlohmann::json j = ToJson(report);
  EXPECT_EQ(j["cases"].size(), 10u);
  EXPECT_EQ(j["ok"], report.ok());
}

}  // namespace
}  // namespace airlock::selftest
