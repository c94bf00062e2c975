// base/file_io: whole reads and writes, and their errors.
#include "base/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace airlock {
namespace {

TEST(FileIoTest, WritesEverythingAndReadsItBackShortOnlyAtTheEnd) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  const int fd = fileno(f);
  std::string bytes(300000, 'x');
  bytes[0] = 'a';
  bytes.back() = 'z';
  ASSERT_TRUE(WriteFull(fd, bytes).ok());
  std::string back(bytes.size(), '\0');
  StatusOr<size_t> got = PreadFull(fd, back.data(), back.size(), 0);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, bytes.size());
  EXPECT_EQ(back, bytes);
  std::string tail(100, '\0');
  got = PreadFull(fd, tail.data(), tail.size(), bytes.size() - 10);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 10u) << "a read past the end returns what there is";
  EXPECT_EQ(tail.substr(0, 10), bytes.substr(bytes.size() - 10));
  std::fclose(f);
}

TEST(FileIoTest, ErrorsAreValuesNamingTheCall) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  close(p[0]);  // nobody reads: EPIPE
  signal(SIGPIPE, SIG_IGN);
  Status st = WriteFull(p[1], "data");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("write"), std::string::npos) << st.message();
  close(p[1]);
  char buf[4];
  StatusOr<size_t> got = PreadFull(p[1], buf, sizeof buf, 0);  // closed: EBADF
  EXPECT_FALSE(got.ok());
}

}  // namespace
}  // namespace airlock
