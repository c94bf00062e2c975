// Hand-assembled BPF run before the libseccomp-generated filter.
//
// libseccomp 2.5 cannot express "deny these values of the low 32 bits of an
// argument, allow the rest": an unconditional rule overrides conditional ones
// for the same syscall, and one rule cannot compare the same argument twice.
// The kernel only looks at the low 32 bits of these `int` arguments, so
// comparing all 64 bits would let `TIOCSTI | 1ull << 32` through
// (CVE-2019-10063). This prefix does exactly those checks:
//   - ioctl():       cmd TIOCSTI or TIOCLINUX            -> EPERM
//   - prctl():       option PR_SET_MM                    -> EPERM
//   - personality(): anything but PER_LINUX (0) or 0xffffffff (query) -> EPERM
// A foreign architecture is killed before any argument is read. Every other
// syscall (and the values allowed above) continues with the next instruction,
// i.e. the first instruction of the libseccomp program appended after it.
#ifndef AIRLOCK_JAIL_SECCOMP_ARG_PREFIX_H_
#define AIRLOCK_JAIL_SECCOMP_ARG_PREFIX_H_

#include <linux/filter.h>

#include <vector>

namespace airlock::jail {

std::vector<sock_filter> SeccompArgumentPrefix();

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_SECCOMP_ARG_PREFIX_H_
