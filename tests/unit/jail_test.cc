// Behaviour of the jail itself: real programs, real limits.
#include "jail/jail.h"

#include <gtest/gtest.h>

#include "jail/host.h"

namespace airlock::jail {
namespace {

class JailTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    HostOptions opts;
    opts.init_path = std::string(AIRLOCK_BINARY_DIR) + "/airlock-init";
    auto host = JailHost::Create(opts);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value().release();
    auto policy = BuildDefaultPolicy();
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    policy_ = new BpfProgram(std::move(policy).value());
  }
  static void TearDownTestSuite() {
    delete policy_;
    delete host_;
  }

  ExecResult Run(std::vector<std::string> argv, Limits limits = {}, const std::string& stdin_data = "",
                 JailConfig config = {}) {
    auto jail = Jail::Create(*host_, config);
    EXPECT_TRUE(jail.ok()) << jail.status().ToString();
    if (!jail.ok()) return {};
    ExecRequest req;
    req.argv = std::move(argv);
    req.env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/work"};
    req.stdin_data = stdin_data;
    req.limits = limits;
    req.seccomp = policy_;
    return (*jail)->Exec(req, nullptr);
  }

  static JailHost* host_;
  static BpfProgram* policy_;
};
JailHost* JailTest::host_ = nullptr;
BpfProgram* JailTest::policy_ = nullptr;

TEST_F(JailTest, EchoRuns) {
  ExecResult r = Run({"/bin/echo", "hello"});
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "hello\n");
}

TEST_F(JailTest, SeesItselfAsSandboxUser) {
  ExecResult r = Run({"/bin/sh", "-c", "id -u; id -g; hostname; pwd; echo $HOME; ls /"});
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExited) << r.error << r.stderr_data;
  EXPECT_EQ(r.stdout_data.substr(0, r.stdout_data.find("/work")), "65534\n65534\nairlock\n");
}

TEST_F(JailTest, StdinIsDelivered) {
  ExecResult r = Run({"/bin/cat"}, {}, "from stdin");
  EXPECT_EQ(r.stdout_data, "from stdin");
}

TEST_F(JailTest, WallClockDeadline) {
  Limits l;
  l.wall_ms = 300;
  ExecResult r = Run({"/bin/sleep", "10"}, l);
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kTimedOut);
  EXPECT_LT(r.wall_ms, 1500u);
  EXPECT_GE(r.wall_ms, 290u);
}

TEST_F(JailTest, OutputFloodIsCapped) {
  Limits l;
  l.max_stdout_bytes = 10000;
  ExecResult r = Run({"/usr/bin/yes"}, l);
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kOutputLimit);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stdout_data.size(), 10000u);
}

TEST_F(JailTest, ExecFailureIsReported) {
  ExecResult r = Run({"/nonexistent"});
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExecFailed);
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace airlock::jail
