// WASI snapshot_preview1 over the VFS, driven the way an engine binding
// does: WasiContext::Call with a byte vector as the guest's linear memory.
#include <chrono>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "wasm/wasi.h"

namespace airlock::wasm {
namespace {

constexpr uint32_t E(Errno e) { return static_cast<uint32_t>(e); }
constexpr uint32_t kOk = 0;
constexpr uint32_t kWork = 3, kLib = 4;  // preopen descriptors
constexpr uint64_t kReadRights = ~(wasi::kWriteRights) & wasi::kAllRights;
constexpr uint64_t kRwRights = wasi::kAllRights;

class WasiTest : public ::testing::Test {
 protected:
  WasiTest() : vfs_({.max_bytes = 1 << 20, .max_nodes = 1000}), mem_(1 << 16) {
    work_ = *vfs_.MakeDirs("work");
    lib_ = *vfs_.MakeDirs("lib");
    EXPECT_TRUE(vfs_.AddFile(lib_, "std/os.py", "import posix\n").ok());
    Vfs::SetReadOnly(lib_);
    EXPECT_TRUE(vfs_.AddFile(vfs_.root(), "secret", "s3cr3t").ok());
  }
  void Start(WasiOptions opts = {}) {
    opts.preopens = {{"/work", work_}, {"/lib", lib_}};
    if (!opts.host.monotonic_ns) opts.host.monotonic_ns = [this] { return mono_; };
    if (!opts.host.sleep_ns) opts.host.sleep_ns = [this](uint64_t ns) { slept_.push_back(ns); mono_ += ns; };
    wasi_ = std::make_unique<WasiContext>(vfs_, std::move(opts));
  }
  uint32_t Call(std::string_view name, std::vector<uint64_t> args) {
    return wasi_->Call(name, mem_, args);
  }
  // Bump allocator in guest memory, from 1024 (0 stays a valid address).
  uint32_t Alloc(uint32_t n) {
    uint32_t at = heap_;
    heap_ += (n + 7) & ~7u;
    return at;
  }
  uint32_t Put(std::string_view s) {
    uint32_t at = Alloc(static_cast<uint32_t>(s.size()));
    std::memcpy(mem_.data() + at, s.data(), s.size());
    return at;
  }
  uint32_t U32(uint32_t at) { uint32_t v; std::memcpy(&v, &mem_[at], 4); return v; }
  uint64_t U64(uint32_t at) { uint64_t v; std::memcpy(&v, &mem_[at], 8); return v; }
  void SetU32(uint32_t at, uint32_t v) { std::memcpy(&mem_[at], &v, 4); }
  void SetU64(uint32_t at, uint64_t v) { std::memcpy(&mem_[at], &v, 8); }
  std::string Str(uint32_t at, uint32_t n) { return std::string(reinterpret_cast<char*>(&mem_[at]), n); }

  uint32_t Open(uint32_t dir, std::string_view path, uint32_t oflags, uint64_t rights, uint32_t* fd,
                uint32_t fdflags = 0) {
    uint32_t p = Put(path), out = Alloc(4);
    uint32_t r = Call("path_open", {dir, 0, p, path.size(), oflags, rights, rights, fdflags, out});
    *fd = U32(out);
    return r;
  }
  uint32_t Write(uint32_t fd, std::string_view data, uint32_t* n = nullptr) {
    uint32_t buf = Put(data), iov = Alloc(8), out = Alloc(4);
    SetU32(iov, buf);
    SetU32(iov + 4, static_cast<uint32_t>(data.size()));
    uint32_t r = Call("fd_write", {fd, iov, 1, out});
    if (n) *n = U32(out);
    return r;
  }
  std::string Read(uint32_t fd, uint32_t max, uint32_t* err = nullptr) {
    uint32_t buf = Alloc(max), iov = Alloc(8), out = Alloc(4);
    SetU32(iov, buf);
    SetU32(iov + 4, max);
    uint32_t r = Call("fd_read", {fd, iov, 1, out});
    if (err) *err = r;
    return r == kOk ? Str(buf, U32(out)) : "";
  }
  uint32_t PathCall(std::string_view fn, uint32_t dir, std::string_view path) {
    uint32_t p = Put(path);
    return Call(fn, {dir, p, path.size()});
  }
  uint32_t Stat(uint32_t dir, std::string_view path, uint32_t* out) {
    uint32_t p = Put(path);
    *out = Alloc(64);
    return Call("path_filestat_get", {dir, 0, p, path.size(), *out});
  }

  Vfs vfs_;
  NodePtr work_, lib_;
  std::vector<uint8_t> mem_;
  uint32_t heap_ = 1024;
  uint64_t mono_ = 1'000'000;
  std::vector<uint64_t> slept_;
  std::unique_ptr<WasiContext> wasi_;
};

TEST_F(WasiTest, ImportTableDescribesEverySignature) {
  const auto& imports = WasiContext::Imports();
  EXPECT_EQ(imports.size(), 46u);
  for (size_t i = 0; i < imports.size(); ++i) {
    EXPECT_EQ(WasiContext::ImportIndex(imports[i].name), static_cast<int>(i));
  }
  const auto& open = imports[WasiContext::ImportIndex("path_open")];
  ASSERT_EQ(open.params.size(), 9u);
  EXPECT_EQ(open.params[5], WasmType::kI64);
  EXPECT_EQ(open.params[6], WasmType::kI64);
  EXPECT_EQ(open.params[7], WasmType::kI32);
  EXPECT_EQ(imports[WasiContext::ImportIndex("fd_write")].params.size(), 4u);
  EXPECT_EQ(imports[WasiContext::ImportIndex("fd_seek")].params[1], WasmType::kI64);
  EXPECT_FALSE(imports[WasiContext::ImportIndex("proc_exit")].has_result);
  EXPECT_TRUE(imports[WasiContext::ImportIndex("sched_yield")].params.empty());
  EXPECT_EQ(WasiContext::ImportIndex("fd_nope"), -1);
  Start();
  EXPECT_EQ(Call("fd_nope", {}), E(Errno::kNosys));
  EXPECT_EQ(Call("fd_close", {}), E(Errno::kInval));  // wrong argument count
  EXPECT_EQ(Call("sched_yield", {}), kOk);
}

TEST_F(WasiTest, WriteSeekReadAndStatAFile) {
  Start();
  uint32_t fd = 0, n = 0;
  ASSERT_EQ(Open(kWork, "out.txt", wasi::kOflagCreat, kRwRights, &fd), kOk);
  EXPECT_EQ(fd, 5u);
  ASSERT_EQ(Write(fd, "hello world", &n), kOk);
  EXPECT_EQ(n, 11u);
  uint32_t pos = Alloc(8);
  ASSERT_EQ(Call("fd_tell", {fd, pos}), kOk);
  EXPECT_EQ(U64(pos), 11u);
  ASSERT_EQ(Call("fd_seek", {fd, static_cast<uint64_t>(-5), wasi::kWhenceEnd, pos}), kOk);
  EXPECT_EQ(U64(pos), 6u);
  EXPECT_EQ(Read(fd, 100), "world");
  EXPECT_EQ(Read(fd, 100), "");
  ASSERT_EQ(Call("fd_seek", {fd, 0, wasi::kWhenceSet, pos}), kOk);
  EXPECT_EQ(Read(fd, 5), "hello");
  EXPECT_EQ(Call("fd_seek", {fd, static_cast<uint64_t>(-100), wasi::kWhenceCur, pos}), E(Errno::kInval));
  EXPECT_EQ(Call("fd_seek", {fd, 0, 7, pos}), E(Errno::kInval));
  EXPECT_EQ(Call("fd_seek", {1, 0, wasi::kWhenceSet, pos}), E(Errno::kSpipe));

  uint32_t st = Alloc(64);
  ASSERT_EQ(Call("fd_filestat_get", {fd, st}), kOk);
  EXPECT_EQ(mem_[st + 16], static_cast<uint8_t>(FileType::kRegularFile));
  EXPECT_EQ(U64(st + 32), 11u);
  EXPECT_EQ(U64(st + 24), 1u);
  ASSERT_EQ(Stat(kWork, "out.txt", &st), kOk);
  EXPECT_EQ(U64(st + 32), 11u);
  EXPECT_EQ(U64(st + 8), work_->Child("out.txt")->ino());
  EXPECT_EQ(Call("fd_filestat_set_size", {fd, 4}), kOk);
  EXPECT_EQ(work_->Child("out.txt")->data(), "hell");
  ASSERT_EQ(Call("fd_close", {fd}), kOk);
  EXPECT_EQ(Call("fd_close", {fd}), E(Errno::kBadf));
  EXPECT_EQ(Read(fd, 1, &n), "");
  EXPECT_EQ(n, E(Errno::kBadf));
  auto files = Vfs::ExportFiles(work_);
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].data, "hell");
}

TEST_F(WasiTest, PreadPwriteAppendTruncExcl) {
  Start();
  uint32_t fd = 0, n = 0;
  ASSERT_EQ(Open(kWork, "f", wasi::kOflagCreat | wasi::kOflagExcl, kRwRights, &fd), kOk);
  ASSERT_EQ(Write(fd, "0123456789"), kOk);
  uint32_t buf = Put("AB"), iov = Alloc(8), out = Alloc(4);
  SetU32(iov, buf);
  SetU32(iov + 4, 2);
  ASSERT_EQ(Call("fd_pwrite", {fd, iov, 1, 3, out}), kOk);
  EXPECT_EQ(U32(out), 2u);
  uint32_t rbuf = Alloc(4);
  SetU32(iov, rbuf);
  SetU32(iov + 4, 4);
  ASSERT_EQ(Call("fd_pread", {fd, iov, 1, 2, out}), kOk);
  EXPECT_EQ(Str(rbuf, U32(out)), "2AB5");
  uint32_t pos = Alloc(8);
  ASSERT_EQ(Call("fd_tell", {fd, pos}), kOk);
  EXPECT_EQ(U64(pos), 10u);  // positional I/O leaves the offset alone
  EXPECT_EQ(Call("fd_pread", {0, iov, 1, 0, out}), E(Errno::kSpipe));

  uint32_t fd2 = 0;
  EXPECT_EQ(Open(kWork, "f", wasi::kOflagCreat | wasi::kOflagExcl, kRwRights, &fd2), E(Errno::kExist));
  ASSERT_EQ(Open(kWork, "f", 0, kRwRights, &fd2, wasi::kFdflagAppend), kOk);
  ASSERT_EQ(Write(fd2, "!", &n), kOk);
  EXPECT_EQ(work_->Child("f")->data(), "012AB56789!");
  uint32_t fdstat = Alloc(24);
  ASSERT_EQ(Call("fd_fdstat_get", {fd2, fdstat}), kOk);
  EXPECT_EQ(mem_[fdstat], static_cast<uint8_t>(FileType::kRegularFile));
  EXPECT_EQ(U32(fdstat + 2) & 0xffff, wasi::kFdflagAppend);
  ASSERT_EQ(Call("fd_fdstat_set_flags", {fd2, 0}), kOk);
  ASSERT_EQ(Call("fd_seek", {fd2, 0, wasi::kWhenceSet, pos}), kOk);
  ASSERT_EQ(Write(fd2, "x"), kOk);
  EXPECT_EQ(work_->Child("f")->data(), "x12AB56789!");

  uint32_t fd3 = 0;
  ASSERT_EQ(Open(kWork, "f", wasi::kOflagTrunc, kRwRights, &fd3), kOk);
  EXPECT_EQ(work_->Child("f")->data(), "");
  EXPECT_EQ(Open(kWork, "missing", 0, kRwRights, &fd3), E(Errno::kNoent));
  EXPECT_EQ(Open(kWork, "f", wasi::kOflagDirectory, kReadRights, &fd3), E(Errno::kNotdir));
  EXPECT_EQ(Open(kWork, "f/", 0, kReadRights, &fd3), E(Errno::kNotdir));

  uint32_t ro = 0;  // opened read-only: writes are refused
  ASSERT_EQ(Open(kWork, "f", 0, kReadRights, &ro), kOk);
  EXPECT_EQ(Write(ro, "no"), E(Errno::kBadf));
  ASSERT_EQ(Call("fd_fdstat_get", {ro, fdstat}), kOk);
  EXPECT_EQ(U64(fdstat + 8) & wasi::kRightFdWrite, 0u);
}

TEST_F(WasiTest, UnlinkedFileStaysOpen) {
  Start();
  uint32_t fd = 0;
  ASSERT_EQ(Open(kWork, "tmp", wasi::kOflagCreat, kRwRights, &fd), kOk);
  ASSERT_EQ(Write(fd, "data"), kOk);
  ASSERT_EQ(PathCall("path_unlink_file", kWork, "tmp"), kOk);
  uint32_t st = 0;
  EXPECT_EQ(Stat(kWork, "tmp", &st), E(Errno::kNoent));
  uint32_t pos = Alloc(8);
  ASSERT_EQ(Call("fd_seek", {fd, 0, wasi::kWhenceSet, pos}), kOk);
  EXPECT_EQ(Read(fd, 10), "data");
  st = Alloc(64);
  ASSERT_EQ(Call("fd_filestat_get", {fd, st}), kOk);
  EXPECT_EQ(U64(st + 24), 0u);  // nlink
  const uint64_t others = 13 + 6;  // lib/std/os.py and /secret
  EXPECT_EQ(vfs_.bytes_used(), others + 4);
  ASSERT_EQ(Call("fd_close", {fd}), kOk);
  EXPECT_EQ(vfs_.bytes_used(), others);
}

TEST_F(WasiTest, DirectoriesReaddirWithCookiesAndSmallBuffers) {
  Start();
  ASSERT_EQ(PathCall("path_create_directory", kWork, "d"), kOk);
  EXPECT_EQ(PathCall("path_create_directory", kWork, "d"), E(Errno::kExist));
  EXPECT_EQ(PathCall("path_create_directory", kWork, "."), E(Errno::kExist));
  for (const char* name : {"d/b", "d/a", "d/ccc"}) {
    uint32_t fd = 0;
    ASSERT_EQ(Open(kWork, name, wasi::kOflagCreat, kRwRights, &fd), kOk);
  }
  uint32_t dfd = 0;
  ASSERT_EQ(Open(kWork, "d", wasi::kOflagDirectory, kReadRights, &dfd), kOk);
  uint32_t buf = Alloc(1024), used = Alloc(4);
  ASSERT_EQ(Call("fd_readdir", {dfd, buf, 1024, 0, used}), kOk);
  std::vector<std::string> names;
  std::vector<uint64_t> cookies;
  for (uint32_t p = buf; p < buf + U32(used);) {
    uint32_t namlen = U32(p + 16);
    cookies.push_back(U64(p));
    names.push_back(Str(p + 24, namlen));
    EXPECT_EQ(mem_[p + 20], names.back().size() <= 2 && names.back()[0] == '.'
                                ? static_cast<uint8_t>(FileType::kDirectory)
                                : static_cast<uint8_t>(FileType::kRegularFile));
    p += 24 + namlen;
  }
  EXPECT_EQ(names, (std::vector<std::string>{".", "..", "a", "b", "ccc"}));
  EXPECT_EQ(cookies, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(U32(used), 5 * 24u + 1 + 2 + 1 + 1 + 3);

  // Resume after "a" (cookie 3): "b", "ccc".
  ASSERT_EQ(Call("fd_readdir", {dfd, buf, 1024, 3, used}), kOk);
  EXPECT_EQ(U32(used), 2 * 24u + 1 + 3);
  EXPECT_EQ(Str(buf + 24, 1), "b");
  // A buffer too small for everything is filled completely (the guest
  // sees bufused == buf_len and retries with the last whole entry's cookie).
  ASSERT_EQ(Call("fd_readdir", {dfd, buf, 30, 3, used}), kOk);
  EXPECT_EQ(U32(used), 30u);
  EXPECT_EQ(U64(buf), 4u);
  EXPECT_EQ(Str(buf + 24, 1), "b");
  ASSERT_EQ(Call("fd_readdir", {dfd, buf, 1024, 5, used}), kOk);
  EXPECT_EQ(U32(used), 0u);
  EXPECT_EQ(Call("fd_readdir", {1, buf, 1024, 0, used}), E(Errno::kNotdir));
  uint32_t ffd = 0;
  ASSERT_EQ(Open(kWork, "d/a", 0, kReadRights, &ffd), kOk);
  EXPECT_EQ(Call("fd_readdir", {ffd, buf, 1024, 0, used}), E(Errno::kNotdir));
  uint32_t err = 0;
  Read(dfd, 4, &err);
  EXPECT_EQ(err, E(Errno::kIsdir));
  EXPECT_EQ(Open(kWork, "d", 0, kRwRights, &ffd), E(Errno::kIsdir));
}

TEST_F(WasiTest, MkdirRmdirUnlinkRename) {
  Start();
  ASSERT_EQ(PathCall("path_create_directory", kWork, "d"), kOk);
  uint32_t fd = 0;
  ASSERT_EQ(Open(kWork, "d/f", wasi::kOflagCreat, kRwRights, &fd), kOk);
  EXPECT_EQ(PathCall("path_remove_directory", kWork, "d"), E(Errno::kNotempty));
  EXPECT_EQ(PathCall("path_remove_directory", kWork, "d/f"), E(Errno::kNotdir));
  EXPECT_EQ(PathCall("path_unlink_file", kWork, "d"), E(Errno::kIsdir));
  EXPECT_EQ(PathCall("path_unlink_file", kWork, "d/f/"), E(Errno::kNotdir));
  EXPECT_EQ(PathCall("path_unlink_file", kWork, "nope"), E(Errno::kNoent));
  EXPECT_EQ(PathCall("path_remove_directory", kWork, "."), E(Errno::kInval));

  uint32_t a = Put("d/f"), b = Put("g");
  ASSERT_EQ(Call("path_rename", {kWork, a, 3, kWork, b, 1}), kOk);
  uint32_t st = 0;
  EXPECT_EQ(Stat(kWork, "d/f", &st), E(Errno::kNoent));
  EXPECT_EQ(Stat(kWork, "g", &st), kOk);
  uint32_t d = Put("d"), inside = Put("d/x");
  EXPECT_EQ(Call("path_rename", {kWork, d, 1, kWork, inside, 3}), E(Errno::kInval));
  EXPECT_EQ(Call("path_rename", {kWork, d, 1, 1, b, 1}), E(Errno::kNotdir));
  ASSERT_EQ(PathCall("path_unlink_file", kWork, "g"), kOk);
  ASSERT_EQ(PathCall("path_remove_directory", kWork, "d"), kOk);
  EXPECT_EQ(Stat(kWork, "d", &st), E(Errno::kNoent));
  EXPECT_TRUE(work_->children().empty());
}

TEST_F(WasiTest, PathsNeverEscapeTheirPreopen) {
  Start();
  uint32_t fd = 0, st = 0;
  EXPECT_EQ(Open(kWork, "../secret", 0, kReadRights, &fd), E(Errno::kNotcapable));
  EXPECT_EQ(Open(kWork, "/secret", 0, kReadRights, &fd), E(Errno::kNotcapable));
  EXPECT_EQ(Open(kWork, "/work/x", wasi::kOflagCreat, kRwRights, &fd), E(Errno::kNotcapable));
  EXPECT_EQ(Open(kWork, "a/../../secret", 0, kReadRights, &fd), E(Errno::kNoent));
  ASSERT_EQ(PathCall("path_create_directory", kWork, "a"), kOk);
  EXPECT_EQ(Open(kWork, "a/../../secret", 0, kReadRights, &fd), E(Errno::kNotcapable));
  EXPECT_EQ(Open(kWork, "..", 0, kReadRights, &fd), E(Errno::kNotcapable));
  EXPECT_EQ(Stat(kWork, "../lib/std/os.py", &st), E(Errno::kNotcapable));
  EXPECT_EQ(PathCall("path_create_directory", kWork, "../evil"), E(Errno::kNotcapable));
  EXPECT_EQ(Open(kWork, std::string_view("a\0b", 3), wasi::kOflagCreat, kRwRights, &fd),
            E(Errno::kInval));
  // A directory opened below the preopen is itself the boundary.
  uint32_t sub = 0;
  ASSERT_EQ(Open(kWork, "a", wasi::kOflagDirectory, kReadRights, &sub), kOk);
  EXPECT_EQ(Stat(sub, "..", &st), E(Errno::kNotcapable));
  ASSERT_EQ(Open(sub, "inner", wasi::kOflagCreat, kRwRights, &fd), kOk);
  EXPECT_TRUE(work_->Child("a")->Child("inner"));
  EXPECT_EQ(Open(kWork, "a/./inner", 0, kReadRights, &fd), kOk);
  EXPECT_EQ(Open(1, "x", 0, kReadRights, &fd), E(Errno::kNotdir));
  EXPECT_EQ(Open(99, "x", 0, kReadRights, &fd), E(Errno::kBadf));
}

TEST_F(WasiTest, ReadOnlyTreeRefusesWrites) {
  Start();
  uint32_t fd = 0;
  ASSERT_EQ(Open(kLib, "std/os.py", 0, kReadRights, &fd), kOk);
  EXPECT_EQ(Read(fd, 100), "import posix\n");
  EXPECT_EQ(Open(kLib, "std/os.py", 0, kRwRights, &fd), E(Errno::kRofs));
  EXPECT_EQ(Open(kLib, "std/os.py", wasi::kOflagTrunc, kReadRights, &fd), E(Errno::kRofs));
  EXPECT_EQ(Open(kLib, "std/new.py", wasi::kOflagCreat, kRwRights, &fd), E(Errno::kRofs));
  EXPECT_EQ(PathCall("path_create_directory", kLib, "std/x"), E(Errno::kRofs));
  EXPECT_EQ(PathCall("path_unlink_file", kLib, "std/os.py"), E(Errno::kRofs));
  uint32_t a = Put("std/os.py"), b = Put("os.py");
  EXPECT_EQ(Call("path_rename", {kLib, a, 9, kWork, b, 5}), E(Errno::kRofs));
  uint32_t c = Put("mine");
  ASSERT_EQ(Open(kWork, "mine", wasi::kOflagCreat, kRwRights, &fd), kOk);
  EXPECT_EQ(Call("path_rename", {kWork, c, 4, kLib, b, 5}), E(Errno::kRofs));
  EXPECT_EQ(Call("path_filestat_set_times", {kLib, 0, a, 9, 1, 1, wasi::kFstflagAtim}), E(Errno::kRofs));
  EXPECT_EQ(lib_->Child("std")->Child("os.py")->data(), "import posix\n");
}

TEST_F(WasiTest, StdioCapturedWithCapsAndStdinReadable) {
  WasiOptions opts;
  opts.stdout_cap = 10;
  opts.stderr_cap = 100;
  opts.stdin_bytes = "abc";
  Start(std::move(opts));
  uint32_t n = 0;
  ASSERT_EQ(Write(1, "0123456789ABCDEFGHIJKLMNO", &n), kOk);
  EXPECT_EQ(n, 25u);  // the guest is told everything was written
  ASSERT_EQ(Write(1, "more", &n), kOk);
  ASSERT_EQ(Write(2, "err", &n), kOk);
  EXPECT_EQ(wasi_->stdout_output().data, "0123456789");
  EXPECT_EQ(wasi_->stdout_output().total, 29u);
  EXPECT_TRUE(wasi_->stdout_output().truncated);
  EXPECT_EQ(wasi_->stderr_output().data, "err");
  EXPECT_FALSE(wasi_->stderr_output().truncated);
  EXPECT_EQ(Read(0, 2), "ab");
  EXPECT_EQ(Read(0, 2), "c");
  EXPECT_EQ(Read(0, 2), "");
  EXPECT_EQ(Write(0, "x"), E(Errno::kBadf));
  uint32_t err = 0;
  Read(1, 1, &err);
  EXPECT_EQ(err, E(Errno::kBadf));
  uint32_t fdstat = Alloc(24);
  ASSERT_EQ(Call("fd_fdstat_get", {1, fdstat}), kOk);
  EXPECT_NE(mem_[fdstat], static_cast<uint8_t>(FileType::kCharacterDevice));  // not a tty
}

TEST_F(WasiTest, ArgsAndEnviron) {
  WasiOptions opts;
  opts.args = {"python", "-c", "print(1)"};
  opts.env = {"A=1", "HOME=/work"};
  Start(std::move(opts));
  uint32_t count = Alloc(4), size = Alloc(4);
  ASSERT_EQ(Call("args_sizes_get", {count, size}), kOk);
  EXPECT_EQ(U32(count), 3u);
  EXPECT_EQ(U32(size), 7u + 3 + 9);
  uint32_t ptrs = Alloc(12), buf = Alloc(19);
  ASSERT_EQ(Call("args_get", {ptrs, buf}), kOk);
  EXPECT_EQ(U32(ptrs), buf);
  EXPECT_EQ(Str(U32(ptrs + 4), 3), std::string("-c\0", 3));
  EXPECT_EQ(Str(U32(ptrs + 8), 9), std::string("print(1)\0", 9));
  ASSERT_EQ(Call("environ_sizes_get", {count, size}), kOk);
  EXPECT_EQ(U32(count), 2u);
  EXPECT_EQ(U32(size), 4u + 11);
  ASSERT_EQ(Call("environ_get", {ptrs, buf}), kOk);
  EXPECT_EQ(Str(U32(ptrs + 4), 11), std::string("HOME=/work\0", 11));
}

TEST_F(WasiTest, EnvironIsEmptyUnlessGiven) {
  Start();
  uint32_t count = Alloc(4), size = Alloc(4);
  SetU32(count, 99);
  ASSERT_EQ(Call("environ_sizes_get", {count, size}), kOk);
  EXPECT_EQ(U32(count), 0u);
  EXPECT_EQ(U32(size), 0u);
}

TEST_F(WasiTest, ClocksAndRandom) {
  WasiOptions opts;
  opts.host.realtime_ns = [] { return uint64_t{1700000000'000000000}; };
  opts.host.cputime_ns = [] { return uint64_t{42}; };
  opts.host.random = [](std::span<uint8_t> out) { for (auto& b : out) b = 0xAB; };
  Start(std::move(opts));
  uint32_t t = Alloc(8);
  ASSERT_EQ(Call("clock_time_get", {wasi::kClockRealtime, 0, t}), kOk);
  EXPECT_EQ(U64(t), 1700000000'000000000u);
  ASSERT_EQ(Call("clock_time_get", {wasi::kClockMonotonic, 0, t}), kOk);
  EXPECT_EQ(U64(t), mono_);
  ASSERT_EQ(Call("clock_time_get", {wasi::kClockProcessCputime, 0, t}), kOk);
  EXPECT_EQ(U64(t), 42u);
  ASSERT_EQ(Call("clock_time_get", {wasi::kClockThreadCputime, 0, t}), kOk);
  EXPECT_EQ(Call("clock_time_get", {9, 0, t}), E(Errno::kInval));
  ASSERT_EQ(Call("clock_res_get", {wasi::kClockMonotonic, t}), kOk);
  EXPECT_GT(U64(t), 0u);
  EXPECT_EQ(Call("clock_res_get", {9, t}), E(Errno::kInval));
  uint32_t r = Alloc(16);
  ASSERT_EQ(Call("random_get", {r, 16}), kOk);
  EXPECT_EQ(mem_[r], 0xAB);
  EXPECT_EQ(mem_[r + 15], 0xAB);
}

TEST_F(WasiTest, HostRandomAndClocksByDefault) {
  Vfs vfs;
  WasiContext wasi(vfs, {});
  std::vector<uint8_t> mem(256);
  std::vector<uint64_t> args = {0, 64};
  ASSERT_EQ(wasi.Call("random_get", mem, args), kOk);
  args = {64, 64};
  ASSERT_EQ(wasi.Call("random_get", mem, args), kOk);
  EXPECT_NE(std::memcmp(mem.data(), mem.data() + 64, 64), 0);
  args = {wasi::kClockRealtime, 0, 128};
  ASSERT_EQ(wasi.Call("clock_time_get", mem, args), kOk);
  uint64_t now;
  std::memcpy(&now, &mem[128], 8);
  EXPECT_GT(now, 1600000000'000000000u);
  // A real (short) sleep through poll_oneoff.
  std::vector<uint8_t> sub(48 + 32 + 4);
  sub[8] = wasi::kEventClock;
  sub[16] = wasi::kClockMonotonic;
  uint64_t timeout = 2'000'000;
  std::memcpy(&sub[24], &timeout, 8);
  std::copy(sub.begin(), sub.end(), mem.begin());
  args = {0, 48, 1, 80};
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(wasi.Call("poll_oneoff", mem, args), kOk);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2));
  EXPECT_EQ(mem[80], 1u);
}

TEST_F(WasiTest, PollOneoffSleepsUntilTheEarliestClockButNotPastTheDeadline) {
  WasiOptions opts;
  opts.stdin_bytes = "xyz";
  opts.deadline_monotonic_ns = 1'000'000 + 3'000'000;  // 3 ms after mono_'s start
  Start(std::move(opts));
  uint32_t subs = Alloc(3 * 48), events = Alloc(3 * 32), n = Alloc(4);
  auto clock_sub = [&](uint32_t i, uint64_t userdata, uint64_t timeout, uint16_t flags) {
    uint32_t s = subs + i * 48;
    std::memset(&mem_[s], 0, 48);
    SetU64(s, userdata);
    mem_[s + 8] = wasi::kEventClock;
    SetU32(s + 16, wasi::kClockMonotonic);
    SetU64(s + 24, timeout);
    mem_[s + 40] = static_cast<uint8_t>(flags);
  };
  clock_sub(0, 7, 2'000'000, 0);
  clock_sub(1, 8, 1'000'000 + 1'500'000, wasi::kSubclockAbstime);  // 1.5 ms from now
  ASSERT_EQ(Call("poll_oneoff", {subs, events, 2, n}), kOk);
  ASSERT_EQ(slept_.size(), 1u);
  EXPECT_EQ(slept_[0], 1'500'000u);
  ASSERT_EQ(U32(n), 1u);
  EXPECT_EQ(U64(events), 8u);
  EXPECT_EQ(mem_[events + 10], wasi::kEventClock);
  EXPECT_EQ(U32(events + 8) & 0xffff, 0u);

  clock_sub(0, 9, 60'000'000'000ull, 0);  // a minute, but the deadline is near
  ASSERT_EQ(Call("poll_oneoff", {subs, events, 1, n}), kOk);
  ASSERT_EQ(slept_.size(), 2u);
  EXPECT_EQ(slept_[1], 1'500'000u);

  // An fd_read subscription on stdin is ready at once: no sleep.
  clock_sub(0, 1, 5'000'000, 0);
  uint32_t s = subs + 48;
  std::memset(&mem_[s], 0, 48);
  SetU64(s, 2);
  mem_[s + 8] = wasi::kEventFdRead;
  SetU32(s + 16, 0);
  ASSERT_EQ(Call("poll_oneoff", {subs, events, 2, n}), kOk);
  EXPECT_EQ(slept_.size(), 2u);
  ASSERT_EQ(U32(n), 1u);
  EXPECT_EQ(U64(events), 2u);
  EXPECT_EQ(mem_[events + 10], wasi::kEventFdRead);
  EXPECT_EQ(U64(events + 16), 3u);
  clock_sub(0, 1, 0, 0);  // an already-expired clock fires along with it
  ASSERT_EQ(Call("poll_oneoff", {subs, events, 2, n}), kOk);
  EXPECT_EQ(slept_.size(), 2u);
  ASSERT_EQ(U32(n), 2u);
  EXPECT_EQ(U64(events + 32), 1u);
  EXPECT_EQ(mem_[events + 32 + 10], wasi::kEventClock);
  EXPECT_EQ(Call("poll_oneoff", {subs, events, 0, n}), E(Errno::kInval));
}

TEST_F(WasiTest, ProcExitStopsTheGuest) {
  Start();
  EXPECT_FALSE(wasi_->exited());
  EXPECT_EQ(Call("proc_exit", {3}), WasiContext::kStop);
  EXPECT_TRUE(wasi_->exited());
  EXPECT_EQ(wasi_->exit_code(), 3u);
  EXPECT_EQ(Call("sched_yield", {}), WasiContext::kStop);
}

TEST_F(WasiTest, SocketsSymlinksAndSignalsAreRefused) {
  Start();
  uint32_t out = Alloc(8);
  EXPECT_EQ(Call("sock_accept", {kWork, 0, out}), E(Errno::kNotcapable));
  EXPECT_EQ(Call("sock_recv", {0, out, 1, 0, out, out}), E(Errno::kNotcapable));
  EXPECT_EQ(Call("sock_send", {1, out, 1, 0, out}), E(Errno::kNotcapable));
  EXPECT_EQ(Call("sock_shutdown", {1, 0}), E(Errno::kNotcapable));
  EXPECT_EQ(Call("proc_raise", {9}), E(Errno::kNosys));
  uint32_t p = Put("x");
  EXPECT_EQ(Call("path_symlink", {p, 1, kWork, p, 1}), E(Errno::kNotsup));
  EXPECT_EQ(Call("path_link", {kWork, 0, p, 1, kWork, p, 1}), E(Errno::kNotsup));
  uint32_t fd = 0;
  ASSERT_EQ(Open(kWork, "x", wasi::kOflagCreat, kRwRights, &fd), kOk);
  EXPECT_EQ(Call("path_readlink", {kWork, p, 1, out, 8, out}), E(Errno::kInval));
  EXPECT_EQ(wasi_->exited(), false);
}

TEST_F(WasiTest, PrestatFdstatRenumber) {
  Start();
  uint32_t pre = Alloc(8), name = Alloc(16);
  ASSERT_EQ(Call("fd_prestat_get", {kWork, pre}), kOk);
  EXPECT_EQ(mem_[pre], 0u);
  EXPECT_EQ(U32(pre + 4), 5u);
  ASSERT_EQ(Call("fd_prestat_dir_name", {kLib, name, 4}), kOk);
  EXPECT_EQ(Str(name, 4), "/lib");
  EXPECT_EQ(Call("fd_prestat_dir_name", {kWork, name, 3}), E(Errno::kNametoolong));
  EXPECT_EQ(Call("fd_prestat_get", {5, pre}), E(Errno::kBadf));
  EXPECT_EQ(Call("fd_prestat_get", {1, pre}), E(Errno::kBadf));
  uint32_t fdstat = Alloc(24);
  ASSERT_EQ(Call("fd_fdstat_get", {kWork, fdstat}), kOk);
  EXPECT_EQ(mem_[fdstat], static_cast<uint8_t>(FileType::kDirectory));
  EXPECT_NE(U64(fdstat + 16) & wasi::kRightFdWrite, 0u);  // inheriting: wasi-libc may ask

  uint32_t a = 0, b = 0;
  ASSERT_EQ(Open(kWork, "a", wasi::kOflagCreat, kRwRights, &a), kOk);
  ASSERT_EQ(Open(kWork, "b", wasi::kOflagCreat, kRwRights, &b), kOk);
  ASSERT_EQ(Call("fd_renumber", {a, b}), kOk);
  ASSERT_EQ(Write(b, "to-a"), kOk);
  EXPECT_EQ(work_->Child("a")->data(), "to-a");
  EXPECT_EQ(Write(a, "x"), E(Errno::kBadf));
  EXPECT_EQ(Call("fd_renumber", {a, b}), E(Errno::kBadf));
  uint32_t c = 0;
  ASSERT_EQ(Open(kWork, "c", wasi::kOflagCreat, kRwRights, &c), kOk);
  EXPECT_EQ(c, a);  // the lowest free number is reused
}

TEST_F(WasiTest, ManyOpenFilesHitEmfile) {
  WasiOptions opts;
  opts.max_fds = 8;
  Start(std::move(opts));
  uint32_t fd = 0;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Open(kWork, ".", 0, kReadRights, &fd), kOk);
  EXPECT_EQ(Open(kWork, ".", 0, kReadRights, &fd), E(Errno::kMfile));
}

TEST_F(WasiTest, QuotaExhaustionIsEnospc) {
  Vfs small({.max_bytes = 10, .max_nodes = 10});
  NodePtr w = *small.MakeDirs("w");
  WasiOptions opts;
  opts.preopens = {{"/w", w}};
  WasiContext wasi(small, std::move(opts));
  std::vector<uint8_t> mem(4096);
  std::memcpy(&mem[0], "f", 1);
  std::vector<uint64_t> args = {3, 0, 0, 1, wasi::kOflagCreat, kRwRights, kRwRights, 0, 100};
  ASSERT_EQ(wasi.Call("path_open", mem, args), kOk);
  uint32_t fd;
  std::memcpy(&fd, &mem[100], 4);
  uint32_t iov[2] = {200, 11};
  std::memcpy(&mem[104], iov, 8);
  args = {fd, 104, 1, 112};
  EXPECT_EQ(wasi.Call("fd_write", mem, args), E(Errno::kNospc));
  iov[1] = 10;
  std::memcpy(&mem[104], iov, 8);
  EXPECT_EQ(wasi.Call("fd_write", mem, args), kOk);
  args = {fd, 0, 1000};
  EXPECT_EQ(wasi.Call("fd_allocate", mem, args), E(Errno::kNospc));
}

TEST_F(WasiTest, BadPointersAreEfaultNeverACrash) {
  Start();
  const uint64_t end = mem_.size();
  uint32_t fd = 0;
  ASSERT_EQ(Open(kWork, "f", wasi::kOflagCreat, kRwRights, &fd), kOk);
  ASSERT_EQ(Write(fd, "content"), kOk);
  uint32_t iov = Alloc(8), out = Alloc(8);
  // iovec array outside memory; iovec count overflowing.
  EXPECT_EQ(Call("fd_write", {1, end - 4, 1, out}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_write", {1, 0xFFFFFFFF, 1, out}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_write", {1, iov, 0x20000000, out}), E(Errno::kInval));
  EXPECT_EQ(Call("fd_write", {1, end - 800, 1000, out}), E(Errno::kFault));
  // buffer pointer + length overflowing 32 bits, or past the end.
  SetU32(iov, 0xFFFFFFF0);
  SetU32(iov + 4, 0x20);
  EXPECT_EQ(Call("fd_write", {1, iov, 1, out}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_read", {fd, iov, 1, out}), E(Errno::kFault));
  SetU32(iov, static_cast<uint32_t>(end - 2));
  SetU32(iov + 4, 4);
  EXPECT_EQ(Call("fd_write", {fd, iov, 1, out}), E(Errno::kFault));
  EXPECT_EQ(work_->Child("f")->data(), "content");  // nothing partially written
  EXPECT_TRUE(wasi_->stdout_output().data.empty());
  // result pointers out of range
  SetU32(iov, 1024);
  SetU32(iov + 4, 1);
  EXPECT_EQ(Call("fd_write", {1, iov, 1, end - 3}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_tell", {fd, end - 7}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_seek", {fd, 0, 0, end}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_filestat_get", {fd, end - 63}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_fdstat_get", {fd, 0xFFFFFFFF}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_prestat_get", {kWork, end - 1}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_prestat_dir_name", {kWork, end - 2, 5}), E(Errno::kFault));
  EXPECT_EQ(Call("args_sizes_get", {end - 2, out}), E(Errno::kFault));
  EXPECT_EQ(Call("environ_sizes_get", {out, end}), E(Errno::kFault));
  EXPECT_EQ(Call("clock_time_get", {0, 0, end - 4}), E(Errno::kFault));
  EXPECT_EQ(Call("clock_res_get", {0, end}), E(Errno::kFault));
  EXPECT_EQ(Call("random_get", {end - 8, 16}), E(Errno::kFault));
  EXPECT_EQ(Call("random_get", {0xFFFFFFFF, 2}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_readdir", {kWork, end - 10, 100, 0, out}), E(Errno::kFault));
  EXPECT_EQ(Call("fd_readdir", {kWork, 0xFFFFFF00, 0x1000, 0, out}), E(Errno::kFault));
  EXPECT_EQ(Call("poll_oneoff", {end - 40, 1024, 1, out}), E(Errno::kFault));
  EXPECT_EQ(Call("poll_oneoff", {1024, end - 16, 1, out}), E(Errno::kFault));
  EXPECT_EQ(Call("poll_oneoff", {1024, 2048, 0x10000000, out}), E(Errno::kFault));
  // path pointers
  EXPECT_EQ(Call("path_open", {kWork, 0, end - 1, 5, 0, 0, 0, 0, out}), E(Errno::kFault));
  EXPECT_EQ(Call("path_open", {kWork, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0, 0, out}), E(Errno::kFault));
  uint32_t p = Put("f");
  EXPECT_EQ(Call("path_open", {kWork, 0, p, 1, 0, kRwRights, 0, 0, end}), E(Errno::kFault));
  EXPECT_EQ(Call("path_filestat_get", {kWork, 0, p, 1, end - 32}), E(Errno::kFault));
  EXPECT_EQ(Call("path_create_directory", {kWork, end, 1}), E(Errno::kFault));
  EXPECT_EQ(Call("path_unlink_file", {kWork, end + 100, 1}), E(Errno::kFault));
  EXPECT_EQ(Call("path_rename", {kWork, p, 1, kWork, end - 1, 2}), E(Errno::kFault));
  uint32_t args_buf = Alloc(64);
  WasiOptions opts;
  opts.args = {"a-long-argument"};
  Start(std::move(opts));
  EXPECT_EQ(Call("args_get", {args_buf, end - 4}), E(Errno::kFault));
  EXPECT_EQ(Call("args_get", {end - 2, args_buf}), E(Errno::kFault));
  // Empty memory: everything that touches it faults.
  std::vector<uint8_t> none;
  std::vector<uint64_t> a = {0, 0};
  EXPECT_EQ(wasi_->Call("args_sizes_get", none, a), E(Errno::kFault));
}

TEST_F(WasiTest, RandomCallsNeverCrash) {
  WasiOptions opts;
  opts.args = {"a", "b"};
  opts.env = {"X=1"};
  opts.stdin_bytes = "input";
  opts.host.random = [](std::span<uint8_t> out) { std::fill(out.begin(), out.end(), 1); };
  Start(std::move(opts));
  std::mt19937_64 rng(42);
  auto value = [&]() -> uint64_t {
    switch (rng() % 6) {
      case 0: return rng() % 10;                     // small: fds, flags, lengths
      case 1: return rng() % mem_.size();            // anywhere in memory
      case 2: return mem_.size() - rng() % 64;       // near the end
      case 3: return 0xFFFFFFFFu - rng() % 64;       // near 4 GiB
      case 4: return rng();                          // anything (i64)
      default: return rng() % 64;
    }
  };
  const auto& imports = WasiContext::Imports();
  int ok = 0;
  for (int i = 0; i < 50000; ++i) {
    size_t index = rng() % imports.size();
    if (std::string_view(imports[index].name) == "proc_exit") continue;
    if (i % 1000 == 0) {  // fresh random guest memory now and then
      for (auto& b : mem_) b = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : 0);
    }
    std::vector<uint64_t> args;
    for (size_t j = 0; j < imports[index].params.size(); ++j) args.push_back(value());
    if (wasi_->Call(index, mem_, args) == kOk) ++ok;
  }
  EXPECT_GT(ok, 0);
  EXPECT_FALSE(wasi_->exited());
  EXPECT_LE(vfs_.nodes_used(), 1000u);
}

}  // namespace
}  // namespace airlock::wasm

namespace airlock::wasm {
namespace {

// A host stream (a session's control channel): reads and writes reach the
// host's callbacks, in order; it cannot seek, is no preopen, closes like
// any descriptor, and a descriptor number the preopens need is refused.
TEST_F(WasiTest, AHostStreamCarriesBytesBothWaysAndIsNothingElse) {
  std::string to_guest = "turn one";
  std::string from_guest;
  WasiOptions opts;
  opts.host_stream = WasiHostStream{
      .guest_fd = 1000,
      .read = [&](std::span<uint8_t> into, size_t* got) {
        *got = std::min(into.size(), to_guest.size());
        std::memcpy(into.data(), to_guest.data(), *got);
        to_guest.erase(0, *got);
        return Errno::kSuccess;
      },
      .write = [&](std::string_view bytes) {
        from_guest += bytes;
        return Errno::kSuccess;
      }};
  Start(std::move(opts));
  EXPECT_EQ(Read(1000, 4), "turn");
  EXPECT_EQ(Read(1000, 64), " one");
  EXPECT_EQ(Read(1000, 64), "");  // the host's end of stream
  uint32_t n = 0;
  EXPECT_EQ(Write(1000, "answer\n", &n), kOk);
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(from_guest, "answer\n");
  const uint32_t out = Alloc(16);
  EXPECT_EQ(Call("fd_seek", {1000, 0, 0, out}), E(Errno::kSpipe));
  EXPECT_EQ(Call("fd_prestat_get", {1000, out}), E(Errno::kBadf));
  EXPECT_EQ(Call("fd_prestat_get", {5, out}), E(Errno::kBadf));  // the preopens end at 4
  EXPECT_EQ(Call("fd_close", {1000}), kOk);
  EXPECT_EQ(Write(1000, "late"), E(Errno::kBadf));
  EXPECT_EQ(from_guest, "answer\n");
}

TEST_F(WasiTest, AHostStreamNeverTakesAPreopensNumber) {
  WasiOptions opts;
  opts.host_stream = WasiHostStream{.guest_fd = 3,
                                    .read = [](std::span<uint8_t>, size_t* got) {
                                      *got = 0;
                                      return Errno::kSuccess;
                                    },
                                    .write = [](std::string_view) { return Errno::kIo; }};
  Start(std::move(opts));
  const uint32_t out = Alloc(8);
  EXPECT_EQ(Call("fd_prestat_get", {kWork, out}), kOk);  // fd 3 is still /work
}

}  // namespace
}  // namespace airlock::wasm
