// Writing a whole buffer to a descriptor, for airlock-js's own output.
#ifndef AIRLOCK_ENGINE_JS_WRITE_ALL_H_
#define AIRLOCK_ENGINE_JS_WRITE_ALL_H_

#include <string_view>

namespace airlock::engine::js {

// Writes all of `bytes` to `fd` with write(2), retrying short writes and
// EINTR. Returns false when the descriptor takes no more (closed pipe, full
// disk, bad fd); the caller decides whether that matters. Output to the
// run's stdout/stderr ignores it: the supervisor reading those pipes is the
// only one who could be told, and it is gone.
bool WriteAll(int fd, std::string_view bytes);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_WRITE_ALL_H_
