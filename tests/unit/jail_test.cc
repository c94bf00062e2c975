// Behaviour of the jail itself: real programs, real limits.
#include "jail/jail.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail/host.h"
#include "test_jail_host.h"

namespace airlock::jail {
namespace {

class JailTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto host = tests::CreateJailHost();
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

TEST_F(JailTest, BridgeFdIsFd3AndNothingElseLeaks) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]), theirs(sv[1]);
  auto jail = Jail::Create(*host_, {});
  ASSERT_TRUE(jail.ok()) << jail.status().ToString();
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", "echo ping >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '"};
  req.env = {"PATH=/usr/bin:/bin"};
  req.seccomp = policy_;
  req.bridge_fd = theirs.get();
  ExecResult r = (*jail)->Exec(req, nullptr);
  theirs.Reset();
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExited) << r.error << r.stderr_data;
  char buf[16] = {};
  EXPECT_EQ(read(ours.get(), buf, sizeof buf - 1), 5);
  EXPECT_STREQ(buf, "ping\n");
  // 0-2, the bridge, and the fd `ls` opened for /proc/self/fd: nothing else.
  EXPECT_EQ(r.stdout_data, "0 1 2 3 4 ");
}

TEST_F(JailTest, OnlyStdioWithoutBridge) {
  ExecResult r = Run({"/bin/sh", "-c", "ls /proc/self/fd | sort -n | tr '\\n' ' '"});
  EXPECT_EQ(r.stdout_data, "0 1 2 3 ");
}

TEST_F(JailTest, ExecFailureIsReported) {
  ExecResult r = Run({"/nonexistent"});
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExecFailed);
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace airlock::jail
