// Installs a small generated file (a kit, a hook) atomically and only when
// its content differs, so that concurrent or repeated start-ups of the same
// version leave one identical file behind.
#ifndef AIRLOCK_BASE_WRITE_IF_CHANGED_H_
#define AIRLOCK_BASE_WRITE_IF_CHANGED_H_

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace airlock {

// Replaces `path` (mode 0644) with `content` unless it holds exactly that
// already: written to a temporary file beside it, then renamed over it.
Status WriteIfChanged(const std::filesystem::path& path, std::string_view content);

}  // namespace airlock

#endif  // AIRLOCK_BASE_WRITE_IF_CHANGED_H_
