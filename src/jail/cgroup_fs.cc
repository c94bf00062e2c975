#include "jail/cgroup_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <thread>

#include "base/unique_fd.h"

namespace airlock::jail::cgroup_fs {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  s = Trim(s);
  if (s == "max") return UINT64_MAX;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open " + path);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (64u << 20)) return Internal("read " + path + ": file too large");
  }
  return out;
}

int WriteFileErrno(const std::string& path, std::string_view data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return errno;
  ssize_t n;
  do {
    n = ::write(fd.get(), data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (static_cast<size_t>(n) != data.size()) return EIO;
  return 0;
}

Status WriteFile(const std::string& path, std::string_view data) {
  int err = WriteFileErrno(path, data);
  if (err != 0) return ErrnoError("write '" + std::string(Trim(data)) + "' to " + path, err);
  return OkStatus();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

StatusOr<uint64_t> ReadUint(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::optional<uint64_t> v = ParseUint(text);
  if (!v) return Internal("parse " + path + ": not a number: '" + std::string(Trim(text)) + "'");
  return *v;
}

std::optional<uint64_t> ReadKeyedValue(const std::string& path, std::string_view key) {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.substr(0, sp) != key) continue;
    return ParseUint(line.substr(sp + 1));
  }
  return std::nullopt;
}

StatusOr<std::vector<pid_t>> ReadPids(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<pid_t> pids;
  for (const std::string& word : SplitWords(text)) {
    std::optional<uint64_t> v = ParseUint(word);
    if (!v || *v == 0 || *v > INT32_MAX) return Internal("parse " + path + ": bad pid '" + word + "'");
    pids.push_back(static_cast<pid_t>(*v));
  }
  return pids;
}

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return OkStatus();
  int err = errno;
  if (err == EEXIST) return FailedPrecondition("mkdir " + path + ": " + std::strerror(err));
  return ErrnoError("mkdir " + path, err);
}

Status RemoveDir(const std::string& path, Deadline deadline) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return OkStatus();
    int err = errno;
    if (err != EBUSY || std::chrono::steady_clock::now() >= deadline) return ErrnoError("rmdir " + path, err);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

Status RemoveTree(const std::string& path, Deadline deadline) {
  std::vector<std::string> children;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (struct dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (e->d_type == DT_DIR && name != "." && name != "..") children.push_back(path + "/" + name);
    }
    ::closedir(dir);
  } else if (errno == ENOENT) {
    return OkStatus();
  }
  for (const std::string& child : children) AIRLOCK_RETURN_IF_ERROR(RemoveTree(child, deadline));
  return RemoveDir(path, deadline);
}

}  // namespace airlock::jail::cgroup_fs
