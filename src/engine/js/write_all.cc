#include "engine/js/write_all.h"

#include "base/file_io.h"

namespace airlock::engine::js {

bool WriteAll(int fd, std::string_view bytes) { return WriteFull(fd, bytes).ok(); }

}  // namespace airlock::engine::js
