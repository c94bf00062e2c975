// Behaviour of the jail itself: real programs, real limits.
#include "jail/jail.h"

#include <cstdio>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

namespace airlock::jail {
namespace {

// A mapped bind (how airlock-js reaches /opt/airlock) whose source sits in a
// directory only its owner may enter: the jail's clone opens it for init, so
// the unprivileged mapped uid needs no search permission on the way (the
// checkout need not be o+x), and the fd it used is gone before the program
// runs.
TEST_F(JailTest, MappedBindNeedsNoSearchPermissionAndLeavesNoFd) {
  char tmpl[] = "/tmp/airlock-bind-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  const std::string file = dir + "/engine";
  {
    FILE* f = fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("engine bytes\n", f);
    fclose(f);
  }
  JailConfig config;
  config.binds = {{file, false, "/opt/airlock/engine"}};
  ExecResult r = Run({"/bin/sh", "-c", "cat /opt/airlock/engine; ls /proc/self/fd | tr '\\n' ' '"}, {}, "", config);
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExited) << r.error << r.stderr_data;
  EXPECT_EQ(r.exit_code, 0) << r.stderr_data;
  // cat's output, then the fds of ls: 0 1 2 and the one it reads the
  // directory with; no O_PATH fd of a host file.
  EXPECT_EQ(r.stdout_data, "engine bytes\n0 1 2 3 ");
  // Read-only inside.
  ExecResult w = Run({"/bin/sh", "-c", "echo x > /opt/airlock/engine"}, {}, "", config);
  EXPECT_NE(w.exit_code, 0);
  unlink(file.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace airlock::jail
