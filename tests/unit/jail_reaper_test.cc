// JailReaper: retired jails are destroyed off the caller's thread, and
// nothing of them is left once Drain (or the destructor) returns.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "jail/host.h"
#include "jail/jail.h"
#include "runtimes/jail_reaper.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

class JailReaperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
  }

  // Three live jails and their inits' pids.
  std::vector<std::unique_ptr<jail::Jail>> MakeJails(std::vector<pid_t>* pids) {
    std::vector<std::unique_ptr<jail::Jail>> jails;
    for (int i = 0; i < 3; ++i) {
      auto j = jail::Jail::Create(*host_, jail::JailConfig{});
      EXPECT_TRUE(j.ok()) << j.status().ToString();
      if (!j.ok()) continue;
      pids->push_back((*j)->init_pid());
      EXPECT_TRUE(Alive(pids->back()));
      jails.push_back(std::move(*j));
    }
    return jails;
  }

  std::unique_ptr<jail::JailHost> host_;
};

TEST_F(JailReaperTest, DrainReturnsOnceEveryRetiredJailIsGone) {
  JailReaper reaper;
  std::vector<pid_t> pids;
  for (auto& j : MakeJails(&pids)) reaper.Retire(std::move(j));
  reaper.Retire(nullptr);  // ignored
  reaper.Drain();
  ASSERT_EQ(pids.size(), 3u);
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << "jail init " << p << " outlived Drain";
}

TEST_F(JailReaperTest, TheDestructorFinishesWhatWasRetired) {
  std::vector<pid_t> pids;
  {
    JailReaper reaper;
    for (auto& j : MakeJails(&pids)) reaper.Retire(std::move(j));
  }
  ASSERT_EQ(pids.size(), 3u);
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << "jail init " << p << " outlived the reaper";
}

}  // namespace
}  // namespace airlock::runtimes
