// base/private_dir.h: a fresh 0700 directory, removed with everything in it
// (a symbolic link itself, never what it points to) when its owner goes.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/private_dir.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;

TEST(PrivateDirTest, IsFreshPrivateAndGoesWithEverythingInIt) {
  const fs::path parent = fs::temp_directory_path() / ("airlock-private-dir-test-" + std::to_string(getpid()));
  fs::create_directories(parent);
  const fs::path outside = parent / "outside.txt";
  std::ofstream(outside) << "kept";
  std::string path;
  {
    StatusOr<std::unique_ptr<PrivateDir>> a = PrivateDir::Create("images", parent.string());
    StatusOr<std::unique_ptr<PrivateDir>> b = PrivateDir::Create("images", parent.string());
    ASSERT_TRUE(a.ok() && b.ok());
    path = (*a)->path();
    EXPECT_NE(path, (*b)->path());
    EXPECT_EQ(path.rfind((parent / "images-").string(), 0), 0u) << path;
    struct stat st{};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    fs::create_directories(fs::path(path) / "sub");
    std::ofstream(fs::path(path) / "sub" / "image") << "state";
    fs::create_symlink(outside, fs::path(path) / "link");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(outside)) << "a link's target is not removed";
  size_t left = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(parent)) left += e.path() == outside ? 0 : 1;
  EXPECT_EQ(left, 0u) << "both directories are gone";
  fs::remove_all(parent);
}

TEST(PrivateDirTest, ADirectoryWhoseProcessIsGoneIsRemovedByTheNext) {
  const fs::path parent = fs::temp_directory_path() / ("airlock-private-dir-test-gone-" + std::to_string(getpid()));
  fs::create_directories(parent);
  // A child's directory left behind (the child exits without removing it),
  // and one of a process that still runs (this one's parent).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StatusOr<std::unique_ptr<PrivateDir>> d = PrivateDir::Create("images", parent.string());
    if (d.ok()) std::ofstream(fs::path((*d)->path()) / "image") << "state";
    _exit(d.ok() ? 0 : 1);  // no destructor: the directory stays
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const fs::path alive = parent / ("images-" + std::to_string(getppid()) + "-keepme");
  fs::create_directories(alive);
  size_t before = 0;
  for (const auto& e : fs::directory_iterator(parent)) before += e.is_directory();
  ASSERT_EQ(before, 2u);
  {
    StatusOr<std::unique_ptr<PrivateDir>> mine = PrivateDir::Create("images", parent.string());
    ASSERT_TRUE(mine.ok());
    EXPECT_NE((*mine)->path().find("images-" + std::to_string(getpid()) + "-"), std::string::npos);
    size_t now = 0;
    for (const auto& e : fs::directory_iterator(parent)) now += e.is_directory();
    EXPECT_EQ(now, 2u) << "the dead child's directory is gone; the live process's and the new one remain";
  }
  EXPECT_TRUE(fs::exists(alive));
  fs::remove_all(parent);
}

TEST(PrivateDirTest, AMissingParentIsAnError) {
  EXPECT_FALSE(PrivateDir::Create("x", "/nonexistent-airlock-parent").ok());
}

}  // namespace
}  // namespace airlock
