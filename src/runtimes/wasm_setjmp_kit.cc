#include "runtimes/wasm_setjmp_kit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/write_if_changed.h"

namespace airlock::runtimes {

namespace {

// Runs a host tool (the kit's own fixed source only) with an empty-ish
// environment and stdio on /dev/null; OK if it exits 0.
Status RunTool(std::vector<std::string> argv) {
  std::vector<char*> args;  // built before fork: the runner is multi-threaded
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  char* envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), const_cast<char*>("LC_ALL=C"), nullptr};
  const pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      dup2(null_fd, 2);
    }
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("waitpid");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Internal(argv[0] + " failed (status " + std::to_string(status) + ")");
  }
  return OkStatus();
}

}  // namespace

Status WriteWasmSetjmpKit(const std::string& dir) {
  const std::filesystem::path root(dir);
  std::error_code ec;
  std::filesystem::create_directories(root / "include", ec);
  if (ec) return Internal("cannot create " + (root / "include").string() + ": " + ec.message());
  if (chmod(root.c_str(), 0755) != 0 || chmod((root / "include").c_str(), 0755) != 0) {
    return ErrnoError("chmod " + dir);
  }
  AIRLOCK_RETURN_IF_ERROR(WriteIfChanged(root / "include" / "setjmp.h", WasmSetjmpHeader()));
  AIRLOCK_RETURN_IF_ERROR(WriteIfChanged(root / "setjmp.c", WasmSetjmpRuntime()));
  // The runtime as an archive, so the linker takes it only into programs
  // that call setjmp (compiled once per kit content, named by its id).
  const std::filesystem::path lib = root / "lib";
  const std::filesystem::path archive = lib / "libairlock_setjmp.a";
  const std::filesystem::path stamp = lib / "KIT";
  {
    std::ifstream in(stamp);
    std::string have;
    if (in && std::getline(in, have) && have == WasmSetjmpKitId() && std::filesystem::exists(archive)) {
      return OkStatus();
    }
  }
  std::filesystem::create_directories(lib, ec);
  if (ec) return Internal("cannot create " + lib.string() + ": " + ec.message());
  chmod(lib.c_str(), 0755);
  const std::string object = (lib / ("setjmp.o." + std::to_string(getpid()))).string();
  const std::string tmp_archive = archive.string() + ".tmp." + std::to_string(getpid());
  std::filesystem::remove(tmp_archive, ec);
  Status built = RunTool({"/usr/bin/clang-16", "--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-mexception-handling",
                          "-mllvm", "-wasm-enable-sjlj", "-c", "-o", object, (root / "setjmp.c").string()});
  if (built.ok()) built = RunTool({"/usr/bin/llvm-ar-16", "rcs", tmp_archive, object});
  std::filesystem::remove(object, ec);
  if (!built.ok()) {
    std::filesystem::remove(tmp_archive, ec);
    return built;
  }
  if (chmod(tmp_archive.c_str(), 0644) != 0 || rename(tmp_archive.c_str(), archive.c_str()) != 0) {
    return ErrnoError("install " + archive.string());
  }
  return WriteIfChanged(stamp, WasmSetjmpKitId() + "\n");
}

std::string WasmSetjmpKitId() {
  uint64_t fnv = 1469598103934665603ull;
  for (std::string_view part : {WasmSetjmpHeader(), WasmSetjmpRuntime()}) {
    for (unsigned char ch : part) fnv = (fnv ^ ch) * 1099511628211ull;
  }
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(fnv));
  return id;
}

void AddWasmSetjmp(LanguageSpec& spec, const std::string& host_dir) {
  if (spec.isolation != "wasm" || !spec.compile || (spec.name != "c" && spec.name != "cpp")) return;
  std::vector<std::string>& argv = spec.compile->argv;
  const std::string dir = kJailWasmSetjmpDir;
  auto target = std::find(argv.begin(), argv.end(), "--target=wasm32-wasi");
  if (target == argv.end()) return;
  // The define names the kit's content, so the build cache (keyed by the
  // exact argv) never serves a program linked with another kit.
  argv.insert(target + 1, {"-mexception-handling", "-mllvm", "-wasm-enable-sjlj",
                           "-DAIRLOCK_WASM_SETJMP_KIT=0x" + WasmSetjmpKitId()});
  // The include directory goes last, after libc++'s: <csetjmp> includes
  // libc++'s <setjmp.h>, which includes the next one, ours. The runtime's
  // archive comes after the program's own sources.
  auto source = std::find(argv.begin(), argv.end(), spec.source_file);
  if (source == argv.end()) return;
  argv.insert(source, {"-isystem", dir + "/include"});
  argv.insert(argv.end(), {"-L" + dir + "/lib", "-lairlock_setjmp"});
  spec.binds.push_back({host_dir, false, dir});
  spec.notes += "; setjmp/longjmp work (WebAssembly exception handling)";
}

}  // namespace airlock::runtimes
