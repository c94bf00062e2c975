// Whole reads and writes: pread(2) and write(2) retried over short counts
// and EINTR.
//
//   std::string head(4096, '\0');
//   AIRLOCK_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, head.data(), head.size(), 0));
//   head.resize(got);  // shorter only at the end of the file
//   AIRLOCK_RETURN_IF_ERROR(WriteFull(fd, bytes));
#ifndef AIRLOCK_BASE_FILE_IO_H_
#define AIRLOCK_BASE_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace airlock {

// Reads up to `len` bytes at `offset` of `fd` into `buf`: all of them unless
// the file ends first. The count read; the errno as an error.
StatusOr<size_t> PreadFull(int fd, char* buf, size_t len, uint64_t offset);

// Writes all of `bytes` to `fd` at its offset. The errno as an error (a
// write that takes nothing is one too: EIO); what was written before stays.
Status WriteFull(int fd, std::string_view bytes);

}  // namespace airlock

#endif  // AIRLOCK_BASE_FILE_IO_H_
