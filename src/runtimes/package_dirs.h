// Operator package directories (config `languages.packages`): packages an
// operator adds without any network in the jail, bound read-only into the
// native jails of the runs whose endpoint may use them.
//
//   python      a wheelhouse: *.whl files (pure-Python wheels import straight
//               from the archive) and/or package trees (`pip install
//               --target DIR`), each directory put on sys.path after the
//               standard library and before Debian's dist-packages
//   javascript  a node_modules tree (`npm install --prefix X` makes
//               X/node_modules), put on NODE_PATH; TypeScript runs get it
//               too (esbuild bundles from it)
//   ruby        gems installed with `gem install --install-dir DIR` (each
//               gem's lib/ on $LOAD_PATH, DIR on GEM_PATH) and/or plain
//               library files in DIR
//
// Each directory appears at /opt/airlock/packages/NAME. Python learns of them
// from a sitecustomize hook (python3 runs with -I, so PYTHONPATH is ignored):
// airlock binds its own one-file /etc/python3.11 into such jails, which
// lists /opt/airlock/packages when the interpreter starts. Ruby (run with
// --disable-gems) loads a hook of the same kind through RUBYOPT.
//
//   PackageDirs dirs(config_dirs, hook_dir);   // hook written by Prepare()
//   StatusOr<LanguageSpec> spec = dirs.Apply(python_spec, {"team"});
//
// The jail knows nothing of this: a variant is a LanguageSpec with more binds
// and environment, and a pooled jail of it is a shape of its own.
#ifndef AIRLOCK_RUNTIMES_PACKAGE_DIRS_H_
#define AIRLOCK_RUNTIMES_PACKAGE_DIRS_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "runtimes/language.h"

namespace airlock::runtimes {

// Where the directories appear in a jail: kJailPackagesRoot + "/" + name.
inline constexpr char kJailPackagesRoot[] = "/opt/airlock/packages";

// The most directories one run may have bound.
inline constexpr size_t kMaxPackageDirsPerRun = 8;

struct PackageDir {
  std::string name;      // [a-z0-9_-], 1..32 characters
  std::string language;  // "python", "javascript" or "ruby"
  std::string path;      // absolute host directory
};

// Whether a directory of `dir_language` packages serves runs of `language`
// (javascript's also serves typescript).
bool PackageDirServes(const std::string& dir_language, const std::string& language);

// The checks the config loader applies: the name's characters, a known
// language, an absolute existing directory that is not /, a system tree
// (/proc, /sys, /dev, /etc, /boot, /root, /run) or inside one.
Status ValidatePackageDir(const PackageDir& dir);

class PackageDirs {
 public:
  // `hook_dir`: a directory of airlock's own (the runner's state), where
  // Prepare writes the Python and Ruby hooks.
  PackageDirs(std::vector<PackageDir> dirs, std::string hook_dir);

  // Writes the hooks (hook_dir/python3.11/sitecustomize.py and
  // hook_dir/ruby/airlock_packages.rb, 0644).
  Status Prepare() const;

  // `base` with the named directories bound (and NODE_PATH, or the Python
  // or Ruby hook); `base` itself when `names` is empty or the spec is a WASM-tier or
  // code-mode one (neither sees the host's files). An unknown name, or one
  // holding another language's packages, is an error.
  StatusOr<LanguageSpec> Apply(const LanguageSpec& base, const std::vector<std::string>& names) const;

 private:
  std::vector<PackageDir> dirs_;
  std::string hook_dir_;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_PACKAGE_DIRS_H_
