// Reading a file range whole: pread(2) retried over short reads and EINTR.
//
//   std::string head(4096, '\0');
//   AIRLOCK_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, head.data(), head.size(), 0));
//   head.resize(got);  // shorter only at the end of the file
#ifndef AIRLOCK_BASE_FILE_IO_H_
#define AIRLOCK_BASE_FILE_IO_H_

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace airlock {

// Reads up to `len` bytes at `offset` of `fd` into `buf`: all of them unless
// the file ends first. The count read; the errno as an error.
StatusOr<size_t> PreadFull(int fd, char* buf, size_t len, uint64_t offset);

}  // namespace airlock

#endif  // AIRLOCK_BASE_FILE_IO_H_
