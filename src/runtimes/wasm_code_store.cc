#include "runtimes/wasm_code_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/unique_fd.h"
#include "wasm/code_cache_file.h"
#include "wasm/tar_index.h"

namespace airlock::runtimes {
namespace {

std::string FileFor(const std::string& language, uint64_t heap_mb) {
  return language + "." + std::to_string(heap_mb) + "mb.code";
}

constexpr char kSelfHostedFile[] = "self-hosted.code";

std::string TarIndexFile(const std::string& language) { return language + ".tar-index"; }

// The archive's bytes (read once, at start-up, on the store's thread).
StatusOr<std::string> ReadArchive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Internal("reading " + path + " failed");
  return bytes;
}

// Owned by the runner's user and writable by no one else.
bool OwnedAndClosed(const std::string& path, bool want_dir) {
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) return false;
  if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

StatusOr<std::unique_ptr<WasmCodeStore>> WasmCodeStore::Open(const std::string& dir, const std::string& airlock_js) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("creating " + dir + ": " + ec.message());
  // The directory itself (never through a symbolic link), this user's.
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st{};
  if (!fd || fstat(fd.get(), &st) != 0 || st.st_uid != geteuid()) {
    return FailedPrecondition(dir + " must be a directory of this user");
  }
  if (fchmod(fd.get(), 0755) != 0) return ErrnoError("chmod " + dir);
  if (access(airlock_js.c_str(), X_OK) != 0) return ErrnoError("airlock-js at " + airlock_js);
  return std::unique_ptr<WasmCodeStore>(new WasmCodeStore(dir, airlock_js));
}

WasmCodeStore::WasmCodeStore(std::string dir, std::string airlock_js)
    : dir_(std::move(dir)), airlock_js_(std::move(airlock_js)) {}

WasmCodeStore::~WasmCodeStore() = default;

void WasmCodeStore::Prepare(const std::string& language, const std::string& module, uint64_t heap_mb) {
  const std::string file = FileFor(language, heap_mb);
  writes_.Enqueue(file, [this, module, file, heap_mb] {
    return Write(file, [&] {
      return writes_.RunTool(
          {airlock_js_, "--wasm-code-cache", module, dir_ + "/" + file, "--wasm-max-mb", std::to_string(heap_mb)}, {});
    });
  });
}

void WasmCodeStore::PrepareSelfHosted() {
  writes_.Enqueue(kSelfHostedFile, [this] {
    return Write(kSelfHostedFile, [this] {
      return writes_.RunTool({airlock_js_, "--self-hosted-cache-write", dir_ + "/" + kSelfHostedFile}, {});
    });
  });
}

bool WasmCodeStore::Safe(const std::string& file) const {
  return OwnedAndClosed(dir_, true) && OwnedAndClosed(dir_ + "/" + file, false);
}

std::string WasmCodeStore::JailPath(const std::string& language, uint64_t heap_mb) const {
  return Named(FileFor(language, heap_mb));
}

std::string WasmCodeStore::SelfHostedJailPath() const { return Named(kSelfHostedFile); }

void WasmCodeStore::PrepareTarIndex(const std::string& language, const std::string& archive) {
  const std::string file = TarIndexFile(language);
  writes_.Enqueue(file, [this, file, archive] {
    // In the runner itself: it only reads the archive. Keyed by the
    // archive's size, mtime and inode as of now; an archive replaced later
    // no longer matches, and starts walk it.
    return Write(file, [&]() -> Status {
      AIRLOCK_ASSIGN_OR_RETURN(wasm::CodeCacheKey key, wasm::TarIndexKeyFor(archive));
      return wasm::UpdateCodeCache(dir_ + "/" + file, key, [&]() -> StatusOr<std::string> {
               AIRLOCK_ASSIGN_OR_RETURN(std::string bytes, ReadArchive(archive));
               return wasm::EncodeTarIndex(bytes);
             })
          .status();
    });
  });
}

std::string WasmCodeStore::TarIndexJailPath(const std::string& language) const {
  return Named(TarIndexFile(language));
}

std::string WasmCodeStore::Named(const std::string& file) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ready_.count(file) == 0) return "";
  }
  return Safe(file) ? std::string(kJailWasmCodeDir) + "/" + file : "";
}

void WasmCodeStore::WaitIdle() { writes_.WaitIdle(); }

WasmCodeStore::Stats WasmCodeStore::stats() const {
  const HostToolQueue::Stats q = writes_.stats();
  return {.written = q.succeeded, .failed = q.failed};
}

Status WasmCodeStore::Write(const std::string& file, const std::function<Status()>& make) {
  AIRLOCK_RETURN_IF_ERROR(make());
  if (!Safe(file)) return FailedPrecondition(dir_ + "/" + file + " is not the runner's own");
  std::lock_guard<std::mutex> lock(mu_);
  ready_.insert(file);
  return OkStatus();
}

}  // namespace airlock::runtimes
