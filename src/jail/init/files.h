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

// Whether the relative path `rel` matches the output glob `glob` (fnmatch
// with FNM_PATHNAME; a leading "**/" matches at any depth).
bool OutputGlobMatches(const std::string& rel, const std::string& glob);

// What CollectOutputFiles found: the files returned, the matched files a cap
// left out, and files no glob matched (a hint for the caller).
struct CollectedOutputs {
  std::vector<CollectedFile> files;
  std::vector<FileNote> skipped;  // at most kMaxFileNotes
  std::vector<FileNote> left;     // at most kMaxFileNotes
};

inline constexpr size_t kMaxFileNotes = 20;

// Collects regular files under `dir_fd` whose relative path matches one of
// `globs` (fnmatch with FNM_PATHNAME; a leading "**/" matches any depth), in
// directory order, within `limits`: each file is read up to max_file_bytes
// (then truncated); a file whose (capped) size does not fit in what is left
// of max_total_bytes is not read at all and is listed in `skipped` (reason
// "max_output_files_total_bytes"), as are matches past max_files (reason
// "max_output_files"). Never reads more than max_total_bytes in all, whatever
// st_size says (sparse files). Regular files no glob matched are listed in
// `left` (reason "not_requested"), with or without globs. The walk is
// bounded (depth 16, 20000 entries).
CollectedOutputs CollectOutputFiles(int dir_fd, const std::vector<std::string>& globs,
                                    const OutputFileLimits& limits);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_INIT_FILES_H_
