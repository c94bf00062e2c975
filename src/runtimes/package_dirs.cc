#include "runtimes/package_dirs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/write_if_changed.h"

namespace airlock::runtimes {
namespace {

// Python's hook: every directory bound under /opt/airlock/packages (only the
// run's own are), and the wheels in each, go on sys.path after the standard
// library and before the first site directory. Read when the interpreter
// starts, so a wheel added to a directory is seen by the next jail.
constexpr char kPythonHook[] = R"PY(# airlock: the operator's package directories (config languages.packages),
# bound read-only at /opt/airlock/packages/NAME into this run's jail.
def _airlock_packages(root="/opt/airlock/packages"):
    import os, sys
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return
    add = []
    for name in names:
        d = root + "/" + name
        add.append(d)
        try:
            add.extend(sorted(d + "/" + f for f in os.listdir(d) if f.endswith(".whl")))
        except OSError:
            pass
    at = next((i for i, p in enumerate(sys.path) if p.endswith("-packages")), len(sys.path))
    sys.path[at:at] = add


_airlock_packages()
del _airlock_packages
)PY";

constexpr char kPythonEtc[] = "/etc/python3.11";

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 32) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool Within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

}  // namespace

bool PackageDirServes(const std::string& dir_language, const std::string& language) {
  return dir_language == language || (dir_language == "javascript" && language == "typescript");
}

Status ValidatePackageDir(const PackageDir& dir) {
  if (!ValidName(dir.name)) {
    return InvalidArgument("a package directory's name is 1 to 32 of a-z, 0-9, '_' and '-' (got \"" +
                           dir.name.substr(0, 40) + "\")");
  }
  if (dir.language != "python" && dir.language != "javascript") {
    return InvalidArgument("language: expected \"python\" or \"javascript\" (got \"" + dir.language.substr(0, 40) +
                           "\"); TypeScript runs use the javascript directories");
  }
  if (dir.path.empty() || dir.path[0] != '/') return InvalidArgument("path: expected an absolute path");
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(dir.path, ec);
  if (ec) return InvalidArgument("path: " + dir.path + ": " + ec.message());
  if (!std::filesystem::is_directory(real, ec)) return InvalidArgument("path: " + dir.path + " is not a directory");
  const std::string r = real.string();
  for (const char* system : {"/proc", "/sys", "/dev", "/etc", "/boot", "/root", "/run"}) {
    if (Within(r, system)) {
      return InvalidArgument("path: " + dir.path + " lies in " + system +
                             ", which is not bound into jails: name a directory that holds only packages");
    }
  }
  if (r == "/") return InvalidArgument("path: / would bind the whole host: name a directory that holds only packages");
  return OkStatus();
}

PackageDirs::PackageDirs(std::vector<PackageDir> dirs, std::string hook_dir)
    : dirs_(std::move(dirs)), hook_dir_(std::move(hook_dir)) {}

Status PackageDirs::Prepare() const {
  const std::filesystem::path etc = std::filesystem::path(hook_dir_) / "python3.11";
  std::error_code ec;
  std::filesystem::create_directories(etc, ec);
  if (ec) return Internal("cannot create " + etc.string() + ": " + ec.message());
  if (chmod(hook_dir_.c_str(), 0755) != 0 || chmod(etc.c_str(), 0755) != 0) return ErrnoError("chmod " + hook_dir_);
  return WriteIfChanged(etc / "sitecustomize.py", kPythonHook);
}

StatusOr<LanguageSpec> PackageDirs::Apply(const LanguageSpec& base, const std::vector<std::string>& names) const {
  if (names.empty() || base.isolation != "native" || base.code_mode) return base;
  LanguageSpec spec = base;
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.size() > kMaxPackageDirsPerRun) {
    return InvalidArgument("at most " + std::to_string(kMaxPackageDirsPerRun) + " package directories per run");
  }
  std::string node_path;
  for (const std::string& name : sorted) {
    auto it = std::find_if(dirs_.begin(), dirs_.end(), [&](const PackageDir& d) { return d.name == name; });
    if (it == dirs_.end()) {
      return InvalidArgument("package directory \"" + name.substr(0, 40) + "\" is not configured on this runner");
    }
    if (!PackageDirServes(it->language, base.name)) {
      return InvalidArgument("package directory \"" + name + "\" holds " + it->language + " packages, not " +
                             base.name + " ones");
    }
    const std::string target = std::string(kJailPackagesRoot) + "/" + name;
    spec.binds.push_back({it->path, false, target});
    if (!node_path.empty()) node_path += ":";
    node_path += target;
  }
  if (base.name == "python") {
    // Airlock's /etc/python3.11 instead of the host's (whose only file is
    // Debian's apport hook, which no jail has).
    std::erase_if(spec.binds, [](const jail::BindMount& b) { return b.path == kPythonEtc && b.target.empty(); });
    spec.binds.push_back({hook_dir_ + "/python3.11", false, kPythonEtc});
  } else {
    spec.extra_env.push_back("NODE_PATH=" + node_path);
  }
  spec.packages = std::move(sorted);
  return spec;
}

}  // namespace airlock::runtimes
