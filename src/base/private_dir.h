// A fresh directory only this process's user may enter (mode 0700), removed
// with everything in it when its owner goes: a runner's scratch space for
// files that must never be reachable by anyone else (session images,
// docs/sessions.md "Pause, resume and fork").
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PrivateDir> dir, PrivateDir::Create("airlock-images"));
//   WriteFile(dir->path() + "/x", ...);
//   dir.reset();   // the directory and its files are gone
#ifndef AIRLOCK_BASE_PRIVATE_DIR_H_
#define AIRLOCK_BASE_PRIVATE_DIR_H_

#include <memory>
#include <string>

#include "base/status.h"

namespace airlock {

class PrivateDir {
 public:
  // mkdtemp(`parent`/`prefix`-<pid>-XXXXXX), mode 0700. `parent` empty:
  // $TMPDIR when it is an absolute path, else /tmp. First removes the
  // directories of `prefix` there that this user owns and whose process is
  // gone (one killed before it could remove its own).
  static StatusOr<std::unique_ptr<PrivateDir>> Create(const std::string& prefix, const std::string& parent = "");
  // Removes the directory and everything in it (symbolic links themselves,
  // never what they point to); errors are ignored.
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}

  const std::string path_;
};

}  // namespace airlock

#endif  // AIRLOCK_BASE_PRIVATE_DIR_H_
