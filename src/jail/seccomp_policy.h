// Seccomp-bpf policies for jailed programs.
//
// A policy is compiled once (with libseccomp) into a classic BPF program and
// installed in the jailed process right before execve(). Installation is
// async-signal-safe: it only calls prctl() on memory prepared beforehand.
//
// The default policy is an allowlist for x86_64: syscalls ordinary programs
// need are allowed, a fixed set of dangerous ones fail with EPERM, and every
// other syscall (including ones added to future kernels) fails with ENOSYS.
// A foreign architecture (i386 via int 0x80, x32) kills the process.
//
// Argument filters (register values only, never pointers):
//   - socket(): only AF_UNIX; every other family fails with EAFNOSUPPORT.
//   - clone(): any CLONE_NEW* flag fails with EPERM; clone3() fails with ENOSYS
//     so that libc falls back to clone().
//   - ioctl(): TIOCSTI and TIOCLINUX fail with EPERM (low 32 bits compared).
//   - personality(): only PER_LINUX / 0xffffffff (query) allowed.
//   - prctl(): PR_SET_SECCOMP allowed only to add filters (cannot loosen).
//
//   SeccompPolicyBuilder b;
//   b.DenyWithErrno(SCMP_SYS(ptrace), EPERM).AllowExecMappings(true);
//   StatusOr<BpfProgram> prog = b.Build();
//   ... after fork, before exec:  InstallBpf(*prog);
#ifndef AIRLOCK_JAIL_SECCOMP_POLICY_H_
#define AIRLOCK_JAIL_SECCOMP_POLICY_H_

#include <linux/filter.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace airlock::jail {

// A compiled classic-BPF seccomp program.
struct BpfProgram {
  std::vector<sock_filter> instructions;
};

// Per-language knobs on top of the default policy.
struct SeccompOptions {
  bool allow_exec_mappings = true;  // JITs (node, ruby yjit) need PROT_EXEC
  bool allow_process_creation = true;  // fork/vfork/clone without CLONE_NEW*
};

// Collects rules and the first error; Build() compiles them.
class SeccompPolicyBuilder {
 public:
  SeccompPolicyBuilder();
  explicit SeccompPolicyBuilder(const SeccompOptions& options);

  // Extra allowed syscall, by number (x86_64).
  SeccompPolicyBuilder& Allow(int syscall_nr);
  // Syscall that must fail with `err` (overrides an allow).
  SeccompPolicyBuilder& DenyWithErrno(int syscall_nr, int err);
  // Name-based variants; an unknown name is recorded as an error.
  SeccompPolicyBuilder& Allow(const std::string& syscall_name);
  SeccompPolicyBuilder& DenyWithErrno(const std::string& syscall_name, int err);

  // Compiles the policy. Returns the first error collected, if any.
  StatusOr<BpfProgram> Build() const;

 private:
  SeccompOptions options_;
  std::vector<int> extra_allow_;
  std::vector<std::pair<int, int>> extra_deny_;
  std::string first_error_;
};

// The default jail policy for `options`.
StatusOr<BpfProgram> BuildDefaultPolicy(const SeccompOptions& options = {});

// Installs `program` in the calling thread with SECCOMP_FILTER_FLAG_TSYNC-free
// prctl(PR_SET_SECCOMP). Requires PR_SET_NO_NEW_PRIVS already set.
// Async-signal-safe; returns -errno on failure, 0 on success.
int InstallBpf(const BpfProgram& program);

// The names of syscalls the default policy denies explicitly (for doctor/docs).
std::vector<std::string> ExplicitlyDeniedSyscalls();

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_SECCOMP_POLICY_H_
