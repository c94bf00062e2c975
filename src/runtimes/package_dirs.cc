#include "runtimes/package_dirs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

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

// Ruby's hook, loaded before the program (RUBYOPT=-r...): each directory and
// the lib/ of each gem installed in it go on $LOAD_PATH after Ruby's own.
constexpr char kRubyHook[] = R"RB(# airlock: the operator's package directories (config languages.packages),
# bound read-only at /opt/airlock/packages/NAME into this run's jail.
if File.directory?("/opt/airlock/packages")
  Dir.children("/opt/airlock/packages").sort.each do |name|
    dir = "/opt/airlock/packages/#{name}"
    $LOAD_PATH.push(dir, *Dir.glob("#{dir}/gems/*/lib").sort)
  end
end
)RB";

constexpr char kJailRubyHookDir[] = "/opt/airlock/ruby-hook";

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
  if (dir.language != "python" && dir.language != "javascript" && dir.language != "ruby") {
    return InvalidArgument("language: expected \"python\", \"javascript\" or \"ruby\" (got \"" +
                           dir.language.substr(0, 40) + "\"); TypeScript runs use the javascript directories");
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
  const std::filesystem::path root(hook_dir_);
  for (const auto& [sub, file, content] : {std::tuple{"python3.11", "sitecustomize.py", kPythonHook},
                                           std::tuple{"ruby", "airlock_packages.rb", kRubyHook}}) {
    std::error_code ec;
    std::filesystem::create_directories(root / sub, ec);
    if (ec) return Internal("cannot create " + (root / sub).string() + ": " + ec.message());
    if (chmod(root.c_str(), 0755) != 0 || chmod((root / sub).c_str(), 0755) != 0) return ErrnoError("chmod " + hook_dir_);
    AIRLOCK_RETURN_IF_ERROR(WriteIfChanged(root / sub / file, content));
  }
  return OkStatus();
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
  std::string search_path;  // NODE_PATH, GEM_PATH
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
    if (!search_path.empty()) search_path += ":";
    search_path += target;
  }
  if (base.name == "python") {
    // Airlock's /etc/python3.11 instead of the host's (whose only file is
    // Debian's apport hook, which no jail has).
    std::erase_if(spec.binds, [](const jail::BindMount& b) { return b.path == kPythonEtc && b.target.empty(); });
    spec.binds.push_back({hook_dir_ + "/python3.11", false, kPythonEtc});
  } else if (base.name == "ruby") {
    spec.binds.push_back({hook_dir_ + "/ruby", false, kJailRubyHookDir});
    spec.extra_env.push_back(std::string("RUBYOPT=-r") + kJailRubyHookDir + "/airlock_packages.rb");
    // A trailing ':' keeps RubyGems' default directories after these.
    spec.extra_env.push_back("GEM_PATH=" + search_path + ":");
  } else {
    spec.extra_env.push_back("NODE_PATH=" + search_path);
  }
  spec.packages = std::move(sorted);
  return spec;
}

}  // namespace airlock::runtimes
