// The syscall lists behind the default seccomp policy (x86_64 only).
//
// Three kinds of entries:
//   - allowed:  plain allow, no argument checks;
//   - denied:   fail with EPERM (dangerous kernel surfaces, see
//               docs/research sandboxes.md §10);
//   - filtered: allowed or denied depending on register arguments; the rules
//               themselves live in seccomp_policy.cc.
// Every syscall in none of the lists fails with ENOSYS (including clone3, so
// that libc falls back to clone, and syscalls added by future kernels).
#ifndef AIRLOCK_JAIL_SECCOMP_SYSCALL_TABLES_H_
#define AIRLOCK_JAIL_SECCOMP_SYSCALL_TABLES_H_

#include <span>

namespace airlock::jail {

struct SyscallEntry {
  const char* name;
  int nr;
};

// Allowed unconditionally by the default policy.
std::span<const SyscallEntry> DefaultAllowedSyscalls();

// Denied with EPERM by the default policy.
std::span<const SyscallEntry> DefaultDeniedSyscalls();

// Allowed only for some argument values (clone, socket, mmap, ...).
std::span<const SyscallEntry> DefaultFilteredSyscalls();

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_SECCOMP_SYSCALL_TABLES_H_
