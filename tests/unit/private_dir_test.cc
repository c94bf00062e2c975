// base/private_dir.h: a fresh 0700 directory, removed with everything in it
// (a symbolic link itself, never what it points to) when its owner goes.
#include <sys/stat.h>
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

TEST(PrivateDirTest, AMissingParentIsAnError) {
  EXPECT_FALSE(PrivateDir::Create("x", "/nonexistent-airlock-parent").ok());
}

}  // namespace
}  // namespace airlock
