// Moving files in and out of the jail's /work, done by airlock-init after
// the program's processes are all dead (no races with user code).
//
// Every path is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS) relative to /work, so a symlink planted by the
// program (say, out.txt -> /etc/passwd) is never followed; only regular files
// are read; sizes are capped while reading (sparse files cannot inflate it).
#ifndef AIRLOCK_JAIL_INIT_FILES_H_
#define AIRLOCK_JAIL_INIT_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "jail/jail.h"

namespace airlock::jail {

// True if `name` is a safe relative path: no leading '/', no "..", no empty
// or "." components, no NUL, at most 255 bytes per component and 4096 total.
bool IsSafeRelativePath(const std::string& name);

// Writes `files` under `dir_fd`, creating parent directories.
Status WriteInputFiles(int dir_fd, const std::vector<FileEntry>& files);

// Collects regular files under `dir_fd` whose relative path matches one of
// `globs` (fnmatch with FNM_PATHNAME; a leading "**/" matches any depth).
std::vector<CollectedFile> CollectOutputFiles(int dir_fd, const std::vector<std::string>& globs,
                                              uint32_t max_files, uint64_t max_file_bytes);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_INIT_FILES_H_
