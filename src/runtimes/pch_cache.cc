#include "runtimes/pch_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/encoding.h"
#include "runtimes/build_cache.h"

namespace airlock::runtimes {
namespace {

bool IsHeaderNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '+' || c == '-';
}

// "bits/stdc++.h" -> "bits_stdc++.h": one file name per header.
std::string FileNameOf(const std::string& header) {
  std::string out = header;
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

bool Exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string FirstSystemInclude(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  auto skip_space = [&] {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == '\f' || s[i] == '\v')) ++i;
  };
  // Blank lines and comments before the first line that counts.
  for (;;) {
    skip_space();
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\') return "";  // a line continuation in a comment: not worth the risk
        ++i;
      }
      continue;
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
      const size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos) return "";
      i = end + 2;
      continue;
    }
    break;
  }
  // That line: `#include <H>`, then only spaces (or a // comment) to its end.
  auto line_blank = [&](size_t j) {
    while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r')) ++j;
    if (j + 1 < n && s[j] == '/' && s[j + 1] == '/') {
      while (j < n && s[j] != '\n') {
        if (s[j] == '\\') return false;
        ++j;
      }
    }
    return j >= n || s[j] == '\n';
  };
  if (i >= n || s[i] != '#') return "";
  ++i;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (s.substr(i, 7) != "include") return "";
  i += 7;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i >= n || s[i] != '<') return "";
  const size_t start = ++i;
  while (i < n && IsHeaderNameChar(s[i])) ++i;
  if (i >= n || s[i] != '>' || i == start) return "";
  std::string header(s.substr(start, i - start));
  if (header.find("..") != std::string::npos || header[0] == '/') return "";
  return line_blank(i + 1) ? header : "";
}

StatusOr<std::unique_ptr<PchCache>> PchCache::Open(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return InvalidArgument("the precompiled-header directory must be absolute");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("creating " + dir + ": " + ec.message());
  if (chmod(dir.c_str(), 0755) != 0) return Internal("chmod " + dir + ": " + strerror(errno));
  return std::unique_ptr<PchCache>(new PchCache(dir));
}

PchCache::PchCache(std::string dir) : dir_(std::move(dir)) {}

PchCache::~PchCache() = default;

std::string PchCache::KeyDir(const LanguageSpec& spec) {
  std::string flags;
  for (const std::string& a : spec.pch->argv) flags += a + '\0';
  std::lock_guard<std::mutex> lock(mu_);
  auto it = key_dirs_.find(flags);
  if (it != key_dirs_.end()) return it->second;
  const std::string identity = ToolchainIdentity(spec.pch->argv.at(0));
  if (identity.empty()) return "";
  const std::string key_dir = dir_ + "/" + spec.name + "-" + Sha256Hex(identity + '\0' + flags).substr(0, 16);
  key_dirs_.emplace(flags, key_dir);
  return key_dir;
}

std::vector<std::string> PchCache::ArgsFor(const LanguageSpec& spec, std::string_view source) {
  if (!spec.pch) return {};
  const std::string header = FirstSystemInclude(source);
  if (header.empty() || std::find(spec.pch->headers.begin(), spec.pch->headers.end(), header) ==
                            spec.pch->headers.end()) {
    return {};
  }
  const std::string key_dir = KeyDir(spec);
  if (key_dir.empty()) return {};
  const std::string name = FileNameOf(header) + ".h";
  if (!Exists(key_dir + "/" + name + ".gch")) {
    Enqueue({spec.pch->argv, key_dir, header});
    return {};
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++used_;
  return {"-include", std::string(kJailPchDir) + key_dir.substr(dir_.size()) + "/" + name};
}

void PchCache::Prepare(const LanguageSpec& spec) {
  if (!spec.pch) return;
  const std::string key_dir = KeyDir(spec);
  if (key_dir.empty()) return;
  for (const std::string& header : spec.pch->headers) {
    if (!Exists(key_dir + "/" + FileNameOf(header) + ".h.gch")) Enqueue({spec.pch->argv, key_dir, header});
  }
}

void PchCache::Enqueue(Job job) {
  // Queued once: built, or failed and not retried.
  const std::string key = job.key_dir + "/" + job.header;
  builds_.Enqueue(key, [this, job = std::move(job)] { return Build(job); });
}

void PchCache::WaitIdle() { builds_.WaitIdle(); }

PchCache::Stats PchCache::stats() const {
  const HostToolQueue::Stats q = builds_.stats();
  std::lock_guard<std::mutex> lock(mu_);
  return {.built = q.succeeded, .failed = q.failed, .used = used_};
}

Status PchCache::Build(const Job& job) {
  std::error_code ec;
  std::filesystem::create_directories(job.key_dir, ec);
  if (ec) return Internal("creating " + job.key_dir + ": " + ec.message());
  chmod(job.key_dir.c_str(), 0755);
  const std::string header_file = job.key_dir + "/" + FileNameOf(job.header) + ".h";
  {
    std::ofstream out(header_file + ".tmp", std::ios::trunc);
    out << "#include <" << job.header << ">\n";
    if (!out) return Internal("writing " + header_file);
  }
  std::filesystem::rename(header_file + ".tmp", header_file, ec);
  if (ec) return Internal("renaming " + header_file + ": " + ec.message());
  chmod(header_file.c_str(), 0644);
  const std::string tmp = header_file + ".gch.tmp";

  std::vector<std::string> argv = job.argv;
  for (const char* a : {"-x", "c++-header", "-o"}) argv.emplace_back(a);
  argv.push_back(tmp);
  argv.push_back(header_file);
  if (Status st = builds_.RunTool(argv, {"PATH=/usr/bin:/bin", "LC_ALL=C"}); !st.ok()) {
    std::filesystem::remove(tmp, ec);
    return Internal("the compiler failed on <" + job.header + ">: " + st.message());
  }
  chmod(tmp.c_str(), 0644);
  std::filesystem::rename(tmp, header_file + ".gch", ec);
  if (ec) return Internal("renaming the precompiled header: " + ec.message());
  return OkStatus();
}

}  // namespace airlock::runtimes
