// A paused WASM session's image (wasm/session_image.h) and the WASI state
// in it (WasiContext::SaveState/LoadState): what is written comes back
// exactly, what was not made here is refused, and damage is caught.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wasm/session_image.h"
#include "wasm/wasi.h"

namespace airlock::wasm {
namespace {

// Writes an image to a temporary file and reads its bytes back.
std::string Written(const SessionImageParts& parts) {
  char path[] = "/tmp/airlock-image-test.XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  unlink(path);
  EXPECT_TRUE(WriteSessionImage(fd, parts).ok());
  std::string bytes;
  char buf[65536];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) bytes.append(buf, static_cast<size_t>(n));
  close(fd);
  return bytes;
}

TEST(SessionImageTest, MemoryComesBackAndZeroPagesTakeNoRoom) {
  std::vector<uint8_t> memory(16 * kSessionPage, 0);
  memory[3] = 7;                                  // page 0
  memory[5 * kSessionPage + 100] = 42;            // page 5
  memory[16 * kSessionPage - 1] = 9;              // page 15
  const std::string bytes = Written({.key = "k1", .stack_pointer = 65536, .memory = memory, .wasi_state = "wasi"});
  EXPECT_LT(bytes.size(), 4 * kSessionPage);  // three pages, not sixteen
  StatusOr<SessionImage> image = ParseSessionImage(bytes, "k1");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->stack_pointer, 65536);
  EXPECT_EQ(image->memory_bytes, memory.size());
  EXPECT_EQ(image->wasi_state, "wasi");
  ASSERT_EQ(image->pages.size(), 3u);
  std::vector<uint8_t> back(memory.size(), 0);
  for (const auto& [index, page] : image->pages) std::memcpy(back.data() + index * kSessionPage, page.data(), page.size());
  EXPECT_EQ(back, memory);
}

TEST(SessionImageTest, AnotherBuildsImageIsRefused) {
  std::vector<uint8_t> memory(kSessionPage, 1);
  const std::string bytes = Written({.key = "module=a:1", .memory = memory});
  StatusOr<SessionImage> image = ParseSessionImage(bytes, "module=b:2");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(image.status().message().find("another build"), std::string::npos);
}

TEST(SessionImageTest, DamageAndTruncationAreCaught) {
  std::vector<uint8_t> memory(2 * kSessionPage, 3);
  const std::string bytes = Written({.key = "k", .memory = memory, .wasi_state = "state"});
  ASSERT_TRUE(ParseSessionImage(bytes, "k").ok());
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_EQ(ParseSessionImage(flipped, "k").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSessionImage(bytes.substr(0, bytes.size() - 1), "k").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSessionImage("", "k").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSessionImage(std::string(100, 'x'), "k").status().code(), StatusCode::kInvalidArgument);
}

TEST(SessionImageTest, MemoryThatIsNotWholePagesIsRefused) {
  std::vector<uint8_t> memory(kSessionPage + 1, 0);
  char path[] = "/tmp/airlock-image-test.XXXXXX";
  const int fd = mkstemp(path);
  unlink(path);
  EXPECT_FALSE(WriteSessionImage(fd, {.key = "k", .memory = memory}).ok());
  close(fd);
}

// Two filesystems built the same way (a read-only library, a work dir), as
// two airlock-js processes with the same flags build theirs.
struct Guest {
  Vfs vfs{{.max_bytes = 1 << 20, .max_nodes = 1000}};
  NodePtr work, lib;
  std::vector<uint8_t> mem = std::vector<uint8_t>(1 << 16);
  std::unique_ptr<WasiContext> wasi;
  Guest() {
    work = *vfs.MakeDirs("work");
    lib = *vfs.MakeDirs("lib");
    EXPECT_TRUE(vfs.AddFile(lib, "std/os.py", "import posix\n").ok());
    Vfs::SetReadOnly(lib);
    WasiOptions opts;
    opts.preopens = {{"/work", work}, {"/lib", lib}};
    wasi = std::make_unique<WasiContext>(vfs, std::move(opts));
  }
  uint32_t Call(std::string_view name, std::vector<uint64_t> args) { return wasi->Call(name, mem, args); }
  uint32_t U32(uint32_t at) {
    uint32_t v;
    std::memcpy(&v, &mem[at], 4);
    return v;
  }
  // path_open relative to `dir`; the new descriptor.
  uint32_t Open(uint32_t dir, std::string_view path, uint32_t oflags) {
    std::memcpy(mem.data() + 1024, path.data(), path.size());
    EXPECT_EQ(Call("path_open", {dir, 0, 1024, path.size(), oflags, wasi::kAllRights, wasi::kAllRights, 0, 2048}), 0u);
    return U32(2048);
  }
  void Write(uint32_t fd, std::string_view bytes) {
    std::memcpy(mem.data() + 4096, bytes.data(), bytes.size());
    const uint32_t iov[2] = {4096, static_cast<uint32_t>(bytes.size())};
    std::memcpy(mem.data() + 3072, iov, sizeof iov);
    EXPECT_EQ(Call("fd_write", {fd, 3072, 1, 3080}), 0u);
  }
  std::string Read(uint32_t fd, uint32_t n) {
    const uint32_t iov[2] = {4096, n};
    std::memcpy(mem.data() + 3072, iov, sizeof iov);
    EXPECT_EQ(Call("fd_read", {fd, 3072, 1, 3080}), 0u);
    return std::string(reinterpret_cast<char*>(mem.data() + 4096), U32(3080));
  }
};

constexpr uint32_t kWorkFd = 3;
constexpr uint32_t kCreate = wasi::kOflagCreat;

TEST(WasiStateTest, FilesDescriptorsAndOffsetsComeBackInAFreshContext) {
  Guest a;
  const uint32_t data = a.Open(kWorkFd, "data.txt", kCreate);
  a.Write(data, "hello world");
  std::memcpy(a.mem.data() + 1024, "sub", 3);
  ASSERT_EQ(a.Call("path_create_directory", {kWorkFd, 1024, 3}), 0u);
  const uint32_t nested = a.Open(kWorkFd, "sub/n.bin", kCreate);
  a.Write(nested, std::string("\0\1\2", 3));
  // A temporary file: open, unlinked, still holding its bytes.
  const uint32_t tmp = a.Open(kWorkFd, "tmp", kCreate);
  a.Write(tmp, "scratch");
  std::memcpy(a.mem.data() + 1024, "tmp", 3);
  ASSERT_EQ(a.Call("path_unlink_file", {kWorkFd, 1024, 3}), 0u);
  // The read position of a file opened for reading.
  const uint32_t reader = a.Open(kWorkFd, "data.txt", 0);
  EXPECT_EQ(a.Read(reader, 6), "hello ");
  const std::string state = a.wasi->SaveState();
  EXPECT_EQ(state.find("import posix"), std::string::npos) << "the read-only library is not saved";

  Guest b;
  ASSERT_TRUE(b.wasi->LoadState(state).ok());
  EXPECT_EQ(b.Read(reader, 100), "world");
  NodePtr node;
  ASSERT_EQ(b.vfs.Lookup(b.vfs.root(), "work/sub/n.bin", &node), Errno::kSuccess);
  EXPECT_EQ(node->data(), std::string("\0\1\2", 3));
  ASSERT_EQ(b.vfs.Lookup(b.vfs.root(), "work/data.txt", &node), Errno::kSuccess);
  EXPECT_EQ(node->data(), "hello world");
  EXPECT_NE(b.vfs.Lookup(b.vfs.root(), "work/tmp", &node), Errno::kSuccess) << "unlinked stays unlinked";
  ASSERT_EQ(b.Call("fd_seek", {tmp, 0, 0, 3088}), 0u);
  EXPECT_EQ(b.Read(tmp, 100), "scratch");
  b.Write(data, "!");  // the writer's offset came back too: appended after "hello world"
  ASSERT_EQ(b.vfs.Lookup(b.vfs.root(), "work/data.txt", &node), Errno::kSuccess);
  EXPECT_EQ(node->data(), "hello world!");
}

TEST(WasiStateTest, DamagedOrForeignStateIsRefused) {
  Guest a;
  const std::string state = a.wasi->SaveState();
  Guest b;
  EXPECT_FALSE(b.wasi->LoadState(state.substr(0, state.size() - 3)).ok());
  EXPECT_FALSE(b.wasi->LoadState("").ok());
  std::string bad_version = state;
  bad_version[0] = 9;
  EXPECT_FALSE(Guest().wasi->LoadState(bad_version).ok());
  // A descriptor for a control channel this context was not given.
  Guest with_stream;
  WasiOptions opts;
  opts.preopens = {{"/work", with_stream.work}, {"/lib", with_stream.lib}};
  opts.host_stream = WasiHostStream{.guest_fd = 1000, .read = nullptr, .write = nullptr};
  WasiContext streamed(with_stream.vfs, std::move(opts));
  EXPECT_FALSE(Guest().wasi->LoadState(streamed.SaveState()).ok());
}

TEST(WasiStateTest, AStateCannotWriteIntoTheReadOnlyTree) {
  // A forged state naming a file under the read-only library: refused.
  Guest a;
  const uint32_t fd = a.Open(kWorkFd, "x.txt", kCreate);
  a.Write(fd, "x");
  std::string state = a.wasi->SaveState();
  const size_t at = state.find("work/x.txt");
  ASSERT_NE(at, std::string::npos);
  state.replace(at, 10, "lib/std/xx");
  Guest b;
  Status st = b.wasi->LoadState(state);
  EXPECT_FALSE(st.ok());
  NodePtr node;
  EXPECT_NE(b.vfs.Lookup(b.vfs.root(), "lib/std/xx", &node), Errno::kSuccess);
}

}  // namespace
}  // namespace airlock::wasm
