#include "engine/js/wasi_runner.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <js/ContextOptions.h>
#include <jsapi.h>

#include "base/status.h"
#include "base/unique_fd.h"
#include "engine/js/js_engine.h"
#include "engine/js/wasm_code.h"
#include "engine/js/wasm_command.h"
#include "engine/js/write_all.h"
#include "wasm/code_cache_file.h"
#include "wasm/module_limits.h"
#include "wasm/session_image.h"
#include "wasm/tar_index.h"
#include "wasm/tar_reader.h"
#include "wasm/vfs.h"
#include "wasm/wasi.h"

namespace airlock::engine::js {
namespace {

namespace fs = std::filesystem;

constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 137;
constexpr int kExitDeadline = 124;
constexpr int kExitTrap = 134;
constexpr uint64_t kMaxStdinBytes = 8u << 20;
constexpr uint64_t kMaxWorkBytes = 64u << 20;

struct WasiFlags {
  std::string module;
  uint32_t heap_mb = 256;
  uint64_t deadline_ms = 0;
  uint64_t wasm_max_mb = 256;
  uint64_t max_output_bytes = 1u << 20;
  struct Tar {
    std::string archive;
    std::string guest_dir;
    std::string index;  // --tar-index after it: tar_index.h; "" none
  };
  std::vector<Tar> tars;
  std::optional<std::pair<std::string, std::string>> work;  // host dir, guest dir
  std::vector<std::string> env;  // NAME=VALUE for the guest (nothing else)
  std::vector<std::string> argv;
  // Pre-started (--resume-fd N): the engine, module, runtime trees and
  // guest start up now; the guest's first read of stdin blocks until fd N
  // delivers "DEADLINE_MS\0ARG\0ARG\0..." and EOF (airlock-init's
  // hand-over), then loads the work dir, reads stdin and starts the
  // deadline, and the guest reads a 10-digit length, the NUL-terminated
  // arguments, then the real stdin (its harness's protocol).
  int resume_fd = -1;
  // --wasm-baseline: the module is compiled by the baseline compiler only
  // (no Ion tier in the background; see docs/wasm.md "Compilation tiers").
  bool baseline_only = false;
  // A session (--control-fd N): host fd N, a socket to the supervisor, is
  // the guest's fd kGuestControlFd (wasi_runner.h); stdin is not read.
  int control_fd = -1;
  uint32_t control_guest_fd = kGuestControlFd;  // --control-guest-fd: 0 (stdin) or 100..1023
  bool restore = false;                         // --restore
  // --code-cache FILE: the module's compiled code (wasm/code_cache_file.h), used
  // if it matches the module, its cap and this engine; compiled otherwise.
  std::string code_cache;
};

void Write(int fd, std::string_view s) { (void)WriteAll(fd, s); }

std::optional<uint64_t> Number(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

StatusOr<std::pair<std::string, std::string>> Pair(std::string_view flag, std::string_view v) {
  const size_t eq = v.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 >= v.size() || v[eq + 1] != '/') {
    return InvalidArgument(std::string(flag) + " expects HOST=GUEST_DIR with an absolute guest dir");
  }
  return std::make_pair(std::string(v.substr(0, eq)), std::string(v.substr(eq + 1)));
}

StatusOr<WasiFlags> ParseWasiFlags(int argc, char** argv) {
  WasiFlags f;
  if (argc < 3) return InvalidArgument(std::string(argv[1]) + " needs a module");
  f.module = argv[2];
  int i = 3;
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--wasm-baseline") {
      f.baseline_only = true;
      continue;
    }
    if (a == "--restore") {
      f.restore = true;
      continue;
    }
    if (i + 1 >= argc) return InvalidArgument(std::string(a) + " needs a value");
    std::string_view v = argv[++i];
    if (a == "--env") {
      if (v.find('=') == std::string_view::npos || v.front() == '=') return InvalidArgument("--env expects NAME=VALUE");
      f.env.emplace_back(v);
      continue;
    }
    if (a == "--tar-index") {
      if (f.tars.empty() || v.empty() || v.front() != '/') {
        return InvalidArgument("--tar-index expects an absolute path, after its --tar");
      }
      f.tars.back().index = std::string(v);
      continue;
    }
    if (a == "--code-cache") {
      if (v.empty() || v.front() != '/') return InvalidArgument("--code-cache expects an absolute path");
      f.code_cache = std::string(v);
      continue;
    }
    if (a == "--tar" || a == "--work") {
      AIRLOCK_ASSIGN_OR_RETURN(auto p, Pair(a, v));
      if (a == "--tar") {
        f.tars.push_back({.archive = std::move(p.first), .guest_dir = std::move(p.second), .index = ""});
      } else {
        f.work = std::move(p);
      }
      continue;
    }
    std::optional<uint64_t> n = Number(v);
    if (!n) return InvalidArgument("bad value for " + std::string(a));
    if (a == "--heap-mb" && *n >= 8 && *n <= 4095) {
      f.heap_mb = static_cast<uint32_t>(*n);
    } else if (a == "--deadline-ms") {
      f.deadline_ms = *n;
    } else if (a == "--wasm-max-mb" && *n >= 1 && *n <= 4096) {
      f.wasm_max_mb = *n;
    } else if (a == "--max-output-bytes") {
      f.max_output_bytes = *n;
    } else if (a == "--resume-fd" && *n >= 3 && *n < 1024) {
      f.resume_fd = static_cast<int>(*n);
    } else if (a == "--control-fd" && *n >= 3 && *n < 1024) {
      f.control_fd = static_cast<int>(*n);
    } else if (a == "--control-guest-fd" && (*n == 0 || (*n >= 100 && *n < 1024))) {
      f.control_guest_fd = static_cast<uint32_t>(*n);
    } else {
      return InvalidArgument("unknown flag or bad value: " + std::string(a));
    }
  }
  for (; i < argc; ++i) f.argv.emplace_back(argv[i]);
  if (f.argv.empty()) f.argv.push_back(fs::path(f.module).filename().string());
  return f;
}

// `path` opened for reading, with its size, if that is at most `max`.
StatusOr<std::pair<UniqueFd, size_t>> OpenAtMost(const std::string& path, uint64_t max) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return NotFound("cannot open " + path);
  struct stat st{};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path);
  if (static_cast<uint64_t>(st.st_size) > max) {
    return ResourceExhausted(path + " is larger than " + std::to_string(max) + " bytes");
  }
  return std::make_pair(std::move(fd), static_cast<size_t>(st.st_size));
}

StatusOr<std::string> ReadFile(const std::string& path, uint64_t max) {
  // One read into a buffer of the file's size: a 20 MB module through an
  // ostringstream cost ~30 ms of copies.
  AIRLOCK_ASSIGN_OR_RETURN(auto opened, OpenAtMost(path, max));
  auto& [fd, size] = opened;
  std::string s(size, '\0');
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::read(fd.get(), s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read " + path);
    if (n == 0) break;
    off += static_cast<size_t>(n);
  }
  s.resize(off);
  return s;
}

// A file mapped read-only; the mapping lasts as long as `owner` is shared.
struct MappedFile {
  std::shared_ptr<const void> owner;
  std::string_view bytes;
};

StatusOr<MappedFile> MapFile(const std::string& path, uint64_t max) {
  AIRLOCK_ASSIGN_OR_RETURN(auto opened, OpenAtMost(path, max));
  auto& [fd, length] = opened;
  MappedFile out;
  if (length == 0) return out;
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap " + path);
  out.owner = std::shared_ptr<const void>(base, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
  out.bytes = std::string_view(static_cast<const char*>(base), length);
  return out;
}

// Loads a --tar archive into `dir`: from its index when one is given and
// made for this very file (tar_index.h), else by walking its headers.
Status LoadArchive(const WasiFlags::Tar& tar, const MappedFile& mapped, wasm::Vfs& vfs, const wasm::NodePtr& dir) {
  const wasm::TarOptions options{.read_only = true, .backing = mapped.owner};
  if (!tar.index.empty()) {
    StatusOr<wasm::CodeCacheKey> key = wasm::TarIndexKeyFor(tar.archive);
    StatusOr<wasm::MappedCode> index = key.ok() ? wasm::ReadCodeCache(tar.index, *key) : key.status();
    StatusOr<std::vector<wasm::TarEntry>> entries =
        index.ok() ? wasm::DecodeTarIndex(mapped.bytes, index->encoding()) : index.status();
    if (entries.ok()) return wasm::LoadTarEntries(mapped.bytes, *entries, vfs, dir, options).status();
  }
  return wasm::LoadTar(mapped.bytes, vfs, dir, options).status();
}

std::string ReadStdin() {
  std::string out;
  char buf[65536];
  while (out.size() < kMaxStdinBytes) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.size() > kMaxStdinBytes) out.resize(kMaxStdinBytes);
  return out;
}

// Everything `fd` delivers until EOF, at most `max` bytes.
std::string ReadAllFrom(int fd, uint64_t max) {
  std::string out;
  char buf[65536];
  while (out.size() < max) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// HOST_DIR's regular files (recursively) into `dest`, writable.
Status LoadWorkDir(wasm::Vfs& vfs, const wasm::NodePtr& dest, const std::string& host) {
  std::error_code ec;
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(host, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const std::string rel = fs::relative(it->path(), host, ec).string();
    if (ec) break;
    AIRLOCK_ASSIGN_OR_RETURN(std::string data, ReadFile(it->path().string(), kMaxWorkBytes));
    total += data.size();
    if (total > kMaxWorkBytes) return ResourceExhausted("the work directory holds more than 64 MiB");
    AIRLOCK_RETURN_IF_ERROR(vfs.AddFile(dest, rel, data));
  }
  if (ec) return Internal("reading " + host + ": " + ec.message());
  return OkStatus();
}

// The guest's files under `src` back to HOST_DIR (new and changed ones).
Status SaveWorkDir(const wasm::NodePtr& src, const std::string& host) {
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<wasm::VfsFile> files, wasm::Vfs::ExportFiles(src));
  for (const wasm::VfsFile& f : files) {
    const fs::path path = fs::path(host) / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(f.data.data(), static_cast<std::streamsize>(f.data.size()));
    if (!out) return Internal("cannot write " + path.string());
  }
  return OkStatus();
}

// A session's turn boundary: the guest's files under `src` to HOST_DIR,
// and the host's regular files the guest removed are removed there too, so
// the next turn's LoadWorkDir does not bring them back.
Status SyncWorkDirToHost(const wasm::NodePtr& src, const std::string& host) {
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<wasm::VfsFile> files, wasm::Vfs::ExportFiles(src));
  std::set<std::string> kept;
  for (const wasm::VfsFile& f : files) kept.insert(f.path);
  std::error_code ec;
  std::vector<fs::path> gone;
  for (auto it = fs::recursive_directory_iterator(host, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    if (!kept.count(fs::relative(it->path(), host, ec).string())) gone.push_back(it->path());
  }
  for (const fs::path& p : gone) fs::remove(p, ec);
  return SaveWorkDir(src, host);
}

// The key this engine's session images are made under (the runner
// computes the same when it takes an image from another host).
std::string ImageKey(const WasiFlags& f) {
  std::vector<std::pair<wasm::SessionImageKeyFile, std::string>> tars;
  for (const WasiFlags::Tar& t : f.tars) tars.push_back({{.path = t.archive, .stat_path = ""}, t.guest_dir});
  return wasm::SessionImageKey({.path = f.module, .stat_path = ""}, f.wasm_max_mb, tars);
}

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

HandOver ReadHandOver(int fd) {
  const std::string frame = ReadAllFrom(fd, 16u << 20);
  ::close(fd);
  HandOver h;
  const size_t nul = frame.find('\0');
  h.deadline_ms = Number(std::string_view(frame).substr(0, nul)).value_or(0);
  if (nul == std::string::npos) return h;
  h.raw_args = frame.substr(nul + 1);
  for (size_t at = 0, end; (end = h.raw_args.find('\0', at)) != std::string::npos; at = end + 1) {
    h.args.push_back(h.raw_args.substr(at, end - at));
  }
  return h;
}

int WasiMain(int argc, char** argv, const EngineOptions& base) {
  return WasiMainWith(argc, argv, base, [](WasiGuest& guest) {
    return RunWasmCommand(guest.engine, guest.module, guest.imports, "_start", guest.compiled);
  });
}

int WasiMainWith(int argc, char** argv, const EngineOptions& base, const WasiDriver& driver) {
  const Clock::time_point start = Clock::now();
  const uint64_t start_ns = MonotonicNs();
  StatusOr<WasiFlags> flags = ParseWasiFlags(argc, argv);
  if (!flags.ok()) {
    Write(2, "airlock-js: " + flags.status().message() + "\n");
    return kExitUsage;
  }
  // The module's bytes, memory capped; read once the engine exists, and
  // not at all when its compiled code loads (--code-cache).
  std::string capped;

  // The virtual filesystem: runtime trees read-only, the work dir writable.
  wasm::Vfs vfs(wasm::VfsLimits{.max_bytes = 1ull << 30, .max_nodes = 200000});
  wasm::WasiOptions wo;
  for (const WasiFlags::Tar& tar : flags->tars) {
    // Mapped, not read: the files borrow their bytes from the mapping, so
    // every process of the machine shares one copy of a standard library
    // in the page cache.
    StatusOr<MappedFile> mapped = MapFile(tar.archive, 1ull << 30);
    StatusOr<wasm::NodePtr> dir = mapped.ok() ? vfs.MakeDirs(tar.guest_dir) : StatusOr<wasm::NodePtr>(mapped.status());
    Status st = dir.ok() ? LoadArchive(tar, *mapped, vfs, *dir) : dir.status();
    if (!st.ok()) {
      Write(2, "airlock-js: " + tar.archive + ": " + st.message() + "\n");
      return kExitUsage;
    }
    wo.preopens.push_back({tar.guest_dir, *dir});
  }
  wasm::NodePtr work;
  if (flags->work) {
    StatusOr<wasm::NodePtr> dir = vfs.MakeDirs(flags->work->second);
    Status st = dir.ok() ? LoadWorkDir(vfs, *dir, flags->work->first) : dir.status();
    if (!st.ok()) {
      Write(2, "airlock-js: " + st.message() + "\n");
      return kExitUsage;
    }
    work = *dir;
    wo.preopens.push_back({flags->work->second, work});
    // wasi-libc resolves relative paths against its cwd, "/", matching the
    // longest preopen: the work dir at "/" too makes it the working
    // directory ("data.txt" and "/work/data.txt" are the same file).
    wo.preopens.push_back({"/", work});
  }
  wo.args = flags->argv;
  wo.env = flags->env;
  // Set once they exist; the pre-started hand-over (below) needs them.
  wasm::WasiContext* wasi_ptr = nullptr;
  JsEngine* engine_ptr = nullptr;
  // The hand-over, once: the deadline and the NUL-terminated arguments
  // from the resume fd, then the work dir as airlock-init has written it.
  std::optional<HandOver> handed;  // once handed over
  bool driver_took_it = false;
  auto hand_over = [&]() -> const HandOver& {
    if (handed) return *handed;
    // Waiting in a pool: the module is instantiated, so its bytes (30 MB
    // for Ruby) are not needed again; give them and the start-up's freed
    // heap back before the wait (it counts against every pooled jail).
    // The engine's copies go with a full GC: the ArrayBuffer the bytes
    // were compiled from and the WebAssembly.Module, which keeps the
    // bytecode; the instance needs only the compiled code.
    capped.clear();
    capped.shrink_to_fit();
    JS_GC(engine_ptr->cx(), JS::GCReason::API);
    malloc_trim(0);
    handed = ReadHandOver(flags->resume_fd);
    if (const uint64_t ms = handed->deadline_ms; ms > 0) {
      flags->deadline_ms = ms;
      wasi_ptr->SetDeadline(MonotonicNs() + ms * 1'000'000ull);
      (void)engine_ptr->SetDeadline(Clock::now() + std::chrono::milliseconds(ms));
    }
    if (work) {
      if (Status st = LoadWorkDir(vfs, work, flags->work->first); !st.ok()) {
        Write(2, "airlock-js: " + st.message() + "\n");
      }
    }
    return *handed;
  };
  std::function<std::vector<std::string>()> driver_hand_over;
  if (flags->resume_fd >= 0) {
    wo.stdin_source = [&]() -> std::string {
      if (driver_took_it) return ReadStdin();
      const std::string& args = hand_over().raw_args;
      char len[16];
      snprintf(len, sizeof len, "%010zu", args.size());
      return std::string(len) + args + ReadStdin();
    };
    driver_hand_over = [&]() {
      driver_took_it = true;
      return hand_over().args;
    };
  } else if (flags->control_fd >= 0) {
    // A session: each cell's stdin comes over the control channel.
  } else {
    wo.stdin_bytes = ReadStdin();
  }
  // A session's control channel: the supervisor writes a turn, the guest's
  // harness runs it and answers. The work dir crosses the turn boundary:
  // the host's /work (the turn's input files, written by airlock-init
  // before the turn) is loaded when a turn's first bytes arrive, and the
  // guest's /work is written back before its answer leaves (the output
  // files are collected after it).
  bool awaiting_turn = true;
  if (flags->control_fd >= 0) {
    if (!work) {
      Write(2, "airlock-js: --control-fd needs --work\n");
      return kExitUsage;
    }
    const int ctl = flags->control_fd;
    const std::string host_work = flags->work->first;
    wo.host_stream = wasm::WasiHostStream{
        .guest_fd = flags->control_guest_fd,
        .read = [&, ctl, host_work](std::span<uint8_t> into, size_t* got) {
          ssize_t n;
          do {
            n = ::read(ctl, into.data(), into.size());
          } while (n < 0 && errno == EINTR);
          if (n < 0) return wasm::Errno::kIo;
          *got = static_cast<size_t>(n);
          if (n > 0 && awaiting_turn) {
            awaiting_turn = false;
            if (Status st = LoadWorkDir(vfs, work, host_work); !st.ok()) {
              Write(2, "airlock-js: " + st.message() + "\n");
            }
          }
          return wasm::Errno::kSuccess;
        },
        .write = [&, ctl, host_work](std::string_view bytes) {
          if (!awaiting_turn) {
            awaiting_turn = true;
            if (Status st = SyncWorkDirToHost(work, host_work); !st.ok()) {
              Write(2, "airlock-js: " + st.message() + "\n");
            }
          }
          return WriteAll(ctl, bytes) ? wasm::Errno::kSuccess : wasm::Errno::kIo;
        }};
  }
  wo.stdout_cap = flags->max_output_bytes;
  wo.stderr_cap = flags->max_output_bytes;
  // Output streams out as the guest writes it: the jail's supervisor reads
  // these pipes and applies the run's output limit (ending the run, or
  // dropping the rest with stdout_truncated), as for a native program. A
  // buffer here would hide an endless flood until the deadline.
  wo.output_sink = [](int fd, std::string_view bytes) { Write(fd, bytes); };
  if (flags->deadline_ms > 0) wo.deadline_monotonic_ns = start_ns + flags->deadline_ms * 1'000'000ull;
  wasm::WasiContext wasi(vfs, std::move(wo));
  wasi_ptr = &wasi;

  EngineOptions options = base;
  options.heap_bytes = flags->heap_mb << 20;
  options.enable_wasm = true;
  if (flags->deadline_ms > 0) options.deadline = start + std::chrono::milliseconds(flags->deadline_ms);
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    Write(2, "airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return 1;
  }
  std::vector<HostImport> imports;
  const std::vector<wasm::WasiImport>& table = wasm::WasiContext::Imports();
  for (size_t i = 0; i < table.size(); ++i) {
    imports.push_back({"wasi_snapshot_preview1", table[i].name, static_cast<unsigned>(table[i].params.size()),
                       [&wasi, i](std::span<uint8_t> memory, std::span<const uint64_t> args) {
                         const uint32_t r = wasi.Call(i, memory, args);
                         if (r == wasm::WasiContext::kStop) {
                           return HostResult::Exit(static_cast<int32_t>(wasi.exit_code().value_or(0)));
                         }
                         return HostResult::Value(static_cast<int32_t>(r));
                       }});
  }
  engine_ptr = engine->get();
  if (flags->baseline_only) JS::ContextOptionsRef((*engine)->cx()).setWasmIon(false);
  // The compiled code, if there is a cache for exactly this module and the
  // engine takes it (its mapping goes once the engine has its own copy); a
  // missing, stale or rejected one only means compiling the bytes, as
  // without --code-cache.
  JS::PersistentRootedObject compiled((*engine)->cx());
  if (!flags->code_cache.empty()) {
    StatusOr<wasm::CodeCacheKey> key =
        wasm::CodeCacheKeyFor(flags->module, flags->wasm_max_mb << 20, WasmCodeBuildId());
    StatusOr<wasm::MappedCode> mapped =
        key.ok() ? wasm::ReadCodeCache(flags->code_cache, *key) : StatusOr<wasm::MappedCode>(key.status());
    JS::RootedObject loaded((*engine)->cx());
    if (mapped.ok() && LoadWasmModule(**engine, mapped->encoding(), &loaded)) compiled = loaded;
  }
  if (!compiled) {
    StatusOr<std::string> module = ReadFile(flags->module, 512u << 20);
    StatusOr<std::string> capped_module =
        module.ok() ? wasm::CapMemory(*module, flags->wasm_max_mb << 20) : module.status();
    if (!capped_module.ok()) {
      Write(2, "airlock-js: " + capped_module.status().message() + "\n");
      return kExitUsage;
    }
    capped = std::move(*capped_module);
  }
  WasiGuest guest{**engine, capped, imports, wasi, flags->argv, driver_hand_over, compiled};
  WasiSessionHost session;
  if (flags->control_fd >= 0) {
    session.control_fd = flags->control_fd;
    session.restore = flags->restore;
    session.image_key = ImageKey(*flags);
    session.sync_work = [&]() { return SyncWorkDirToHost(work, flags->work->first); };
    guest.session = &session;
  } else if (flags->restore) {
    Write(2, "airlock-js: --restore needs --control-fd\n");
    return kExitUsage;
  }
  WasmOutcome outcome = driver(guest);
  capped.clear();
  compiled.reset();

  if (work) {
    if (Status st = SaveWorkDir(work, flags->work->first); !st.ok()) Write(2, "airlock-js: " + st.message() + "\n");
  }
  int code = 0;
  switch (outcome.kind) {
    case WasmOutcome::Kind::kReturned: code = 0; break;
    case WasmOutcome::Kind::kExited: code = outcome.exit_code & 0xff; break;
    case WasmOutcome::Kind::kDeadline:
      Write(2, "airlock-js: the program ran past its deadline of " + std::to_string(flags->deadline_ms) + " ms\n");
      code = kExitDeadline;
      break;
    case WasmOutcome::Kind::kOutOfMemory:
      Write(2, "airlock-js: out of memory\n");
      code = kExitOutOfMemory;
      break;
    case WasmOutcome::Kind::kTrap:
      Write(2, "airlock-js: wasm trap: " + outcome.message + "\n");
      code = kExitTrap;
      break;
    case WasmOutcome::Kind::kInvalid:
      Write(2, "airlock-js: invalid module: " + outcome.message + "\n");
      code = kExitUsage;
      break;
    case WasmOutcome::Kind::kError:
      Write(2, "airlock-js: " + outcome.message + "\n");
      code = 1;
      break;
  }
  // memory.grow fails at the cap and the guest's allocator reports it its
  // own way (MemoryError, abort(), PHP's fatal error), then the program
  // fails: a failure with the memory within an eighth (at least 16 MiB) of
  // its cap is the run's memory limit, as the cgroup's OOM kill is natively.
  const uint64_t cap = flags->wasm_max_mb << 20;
  const bool failed = (outcome.kind == WasmOutcome::Kind::kExited && code != 0) ||
                      outcome.kind == WasmOutcome::Kind::kTrap;
  if (failed && outcome.memory_bytes + std::max<uint64_t>(cap / 8, 16u << 20) >= cap) {
    Write(2, "airlock-js: out of memory: the program's memory reached its limit of " +
                 std::to_string(flags->wasm_max_mb) + " MiB\n");
    code = kExitOutOfMemory;
  }
  // Everything the run produced is written (raw writes, the work dir saved).
  // Tearing down an engine that holds a compiled interpreter and its heap
  // (CPython: ~180 MiB) only costs time; the process ends here.
  _exit(code);
}

int WasmCodeCacheMain(int argc, char** argv) {
  if (argc != 4 && !(argc == 6 && std::string_view(argv[4]) == "--wasm-max-mb")) {
    Write(2, "usage: airlock-js --wasm-code-cache MODULE OUT [--wasm-max-mb N]\n");
    return kExitUsage;
  }
  const std::string module_path = argv[2];
  const std::string out_path = argv[3];
  uint64_t cap_mb = 256;  // --wasi's default
  if (argc == 6) {
    std::optional<uint64_t> n = Number(argv[5]);
    if (!n || *n < 1 || *n > 4096) {
      Write(2, "airlock-js: bad value for --wasm-max-mb\n");
      return kExitUsage;
    }
    cap_mb = *n;
  }
  EngineOptions options;
  options.heap_bytes = 1024u << 20;
  options.enable_wasm = true;
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    Write(2, "airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return 1;
  }
  StatusOr<wasm::CodeCacheKey> key = wasm::CodeCacheKeyFor(module_path, cap_mb << 20, WasmCodeBuildId());
  if (!key.ok()) {
    Write(2, "airlock-js: " + module_path + ": " + key.status().ToString() + "\n");
    return 1;
  }
  // One writer at a time per file (runners may share the directory); a
  // file that already matches is kept, and the module is read only then
  // (every runner start asks, and is usually up to date).
  size_t code_bytes = 0;
  StatusOr<wasm::CacheUpdate> update = wasm::UpdateCodeCache(out_path, *key, [&]() -> StatusOr<std::string> {
    AIRLOCK_ASSIGN_OR_RETURN(std::string module, ReadFile(module_path, 512u << 20));
    AIRLOCK_ASSIGN_OR_RETURN(std::string capped, wasm::CapMemory(module, cap_mb << 20));
    AIRLOCK_ASSIGN_OR_RETURN(std::string encoding, EncodeWasmModule(**engine, capped));
    code_bytes = encoding.size();
    return encoding;
  });
  if (!update.ok()) {
    Write(2, "airlock-js: " + module_path + ": " + update.status().ToString() + "\n");
    return 1;
  }
  Write(1, out_path + (*update == wasm::CacheUpdate::kUpToDate
                           ? std::string(": up to date\n")
                           : ": " + std::to_string(code_bytes) + " bytes of code\n"));
  return 0;
}

}  // namespace airlock::engine::js
