#include "jail/seccomp_policy.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <map>
#include <memory>
#include <utility>

#include "base/unique_fd.h"
#include "jail/seccomp_arg_prefix.h"
#include "jail/seccomp_syscall_tables.h"

namespace airlock::jail {
namespace {

#ifndef CLONE_NEWTIME
constexpr uint64_t CLONE_NEWTIME = 0x80;
#endif

// Every namespace-creating clone()/unshare() flag.
constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,     CLONE_NEWUTS, CLONE_NEWIPC,
                                        CLONE_NEWUSER,   CLONE_NEWPID, CLONE_NEWNET,
                                        CLONE_NEWCGROUP, CLONE_NEWTIME};

constexpr uint32_t kDefaultAction = SCMP_ACT_ERRNO(ENOSYS);

struct ScmpFilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using ScmpFilter = std::unique_ptr<void, ScmpFilterDeleter>;

// One libseccomp rule: `action` when every comparison holds.
struct Rule {
  uint32_t action;
  std::vector<scmp_arg_cmp> conditions;
};
using RuleSet = std::map<int, std::vector<Rule>>;

Rule Unconditional(uint32_t action) { return Rule{action, {}}; }
// (arg & mask) == value
scmp_arg_cmp Masked(unsigned arg, uint64_t mask, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
}
scmp_arg_cmp Equal(unsigned arg, uint64_t value) { return scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0}; }
scmp_arg_cmp NotEqual(unsigned arg, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_NE, value, 0};
}

uint64_t AllNamespaceFlags() {
  uint64_t all = 0;
  for (uint64_t f : kNamespaceFlags) all |= f;
  return all;
}

// clone(flags, ...): no namespace flags; without process creation, threads only.
std::vector<Rule> CloneRules(const SeccompOptions& options) {
  std::vector<Rule> rules;
  if (options.allow_process_creation) {
    rules.push_back({SCMP_ACT_ALLOW, {Masked(0, AllNamespaceFlags(), 0)}});
  } else {
    rules.push_back(
        {SCMP_ACT_ALLOW, {Masked(0, AllNamespaceFlags() | CLONE_THREAD, CLONE_THREAD)}});
    rules.push_back({SCMP_ACT_ERRNO(EPERM), {Masked(0, CLONE_THREAD, 0)}});
  }
  for (uint64_t flag : kNamespaceFlags) {
    rules.push_back({SCMP_ACT_ERRNO(EPERM), {Masked(0, flag, flag)}});
  }
  return rules;
}

// socket(domain, ...) and socketpair(domain, ...): AF_UNIX only. The 64-bit
// comparison errs on the safe side: garbage in the upper bits is refused.
std::vector<Rule> UnixOnlyRules() {
  return {{SCMP_ACT_ALLOW, {Equal(0, AF_UNIX)}},
          {SCMP_ACT_ERRNO(EAFNOSUPPORT), {NotEqual(0, AF_UNIX)}}};
}

// A flags argument that must not contain `exec_bit` unless JITs are allowed.
std::vector<Rule> NoExecRules(const SeccompOptions& options, unsigned arg, uint64_t exec_bit) {
  if (options.allow_exec_mappings) return {Unconditional(SCMP_ACT_ALLOW)};
  return {{SCMP_ACT_ALLOW, {Masked(arg, exec_bit, 0)}},
          {SCMP_ACT_ERRNO(EPERM), {Masked(arg, exec_bit, exec_bit)}}};
}

// mknod/mknodat: regular files, FIFOs and sockets only; no device nodes.
std::vector<Rule> MknodRules(unsigned mode_arg) {
  std::vector<Rule> rules;
  for (uint64_t i = 0; i < 16; ++i) {  // every value of the 4-bit S_IFMT field
    const uint64_t type = i << 12;
    const bool ok = type == 0 || type == S_IFREG || type == S_IFIFO || type == S_IFSOCK;
    rules.push_back({ok ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM), {Masked(mode_arg, S_IFMT, type)}});
  }
  return rules;
}

// seccomp(op, flags, ...): stacking filters only tightens, so it is allowed,
// but a user-notification listener (a supervisor of its own) is not.
std::vector<Rule> SeccompRules() {
  constexpr uint64_t kListener = SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return {
      {SCMP_ACT_ALLOW, {Equal(0, SECCOMP_SET_MODE_STRICT)}},
      {SCMP_ACT_ALLOW, {Equal(0, SECCOMP_GET_ACTION_AVAIL)}},
      {SCMP_ACT_ALLOW, {Equal(0, SECCOMP_SET_MODE_FILTER), Masked(1, kListener, 0)}},
      {SCMP_ACT_ERRNO(EPERM), {Equal(0, SECCOMP_SET_MODE_FILTER), Masked(1, kListener, kListener)}},
      {SCMP_ACT_ERRNO(EPERM), {Equal(0, SECCOMP_GET_NOTIF_SIZES)}},
  };
}

RuleSet DefaultRules(const SeccompOptions& options) {
  RuleSet rules;
  for (const SyscallEntry& e : DefaultAllowedSyscalls()) {
    rules[e.nr] = {Unconditional(SCMP_ACT_ALLOW)};
  }
  for (const SyscallEntry& e : DefaultDeniedSyscalls()) {
    rules[e.nr] = {Unconditional(SCMP_ACT_ERRNO(EPERM))};
  }
  const uint32_t fork_action = options.allow_process_creation ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM);
  rules[__NR_clone] = CloneRules(options);
  rules[__NR_fork] = {Unconditional(fork_action)};
  rules[__NR_vfork] = {Unconditional(fork_action)};
  rules[__NR_socket] = UnixOnlyRules();
  rules[__NR_socketpair] = UnixOnlyRules();
  rules[__NR_mmap] = NoExecRules(options, 2, PROT_EXEC);
  rules[__NR_mprotect] = NoExecRules(options, 2, PROT_EXEC);
  rules[__NR_pkey_mprotect] = NoExecRules(options, 2, PROT_EXEC);
  rules[__NR_shmat] = NoExecRules(options, 2, SHM_EXEC);
  rules[__NR_mknod] = MknodRules(1);
  rules[__NR_mknodat] = MknodRules(2);
  rules[__NR_seccomp] = SeccompRules();
  return rules;
}

std::string SyscallName(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
  if (name == nullptr) return "syscall " + std::to_string(nr);
  std::string result(name);
  free(name);
  return result;
}

Status AddRules(void* ctx, const RuleSet& rules) {
  for (const auto& [nr, list] : rules) {
    for (const Rule& rule : list) {
      if (rule.action == kDefaultAction) continue;  // libseccomp refuses these
      int rc = seccomp_rule_add_array(ctx, rule.action, nr,
                                      static_cast<unsigned>(rule.conditions.size()),
                                      rule.conditions.empty() ? nullptr : rule.conditions.data());
      if (rc < 0) return ErrnoError("seccomp_rule_add(" + SyscallName(nr) + ")", -rc);
    }
  }
  return OkStatus();
}

// libseccomp 2.5 can only export to an fd; a memfd keeps it off the disk.
StatusOr<std::vector<sock_filter>> ExportBpf(void* ctx) {
  UniqueFd fd(memfd_create("airlock-seccomp", MFD_CLOEXEC));
  if (!fd) return ErrnoError("memfd_create");
  if (int rc = seccomp_export_bpf(ctx, fd.get()); rc < 0) {
    return ErrnoError("seccomp_export_bpf", -rc);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError("fstat(memfd)");
  if (st.st_size <= 0 || st.st_size % sizeof(sock_filter) != 0) {
    return Internal("seccomp_export_bpf produced " + std::to_string(st.st_size) + " bytes");
  }
  std::vector<sock_filter> code(st.st_size / sizeof(sock_filter));
  auto* out = reinterpret_cast<char*>(code.data());
  size_t done = 0;
  while (done < static_cast<size_t>(st.st_size)) {
    ssize_t n = pread(fd.get(), out + done, st.st_size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError("pread(memfd)", n == 0 ? EIO : errno);
    done += static_cast<size_t>(n);
  }
  return code;
}

}  // namespace

SeccompPolicyBuilder::SeccompPolicyBuilder() = default;

SeccompPolicyBuilder::SeccompPolicyBuilder(const SeccompOptions& options) : options_(options) {}

SeccompPolicyBuilder& SeccompPolicyBuilder::Allow(int syscall_nr) {
  if (syscall_nr < 0 || syscall_nr >= 0x40000000) {
    if (first_error_.empty()) first_error_ = "invalid syscall number " + std::to_string(syscall_nr);
    return *this;
  }
  extra_allow_.push_back(syscall_nr);
  return *this;
}

SeccompPolicyBuilder& SeccompPolicyBuilder::DenyWithErrno(int syscall_nr, int err) {
  if (syscall_nr < 0 || syscall_nr >= 0x40000000) {
    if (first_error_.empty()) first_error_ = "invalid syscall number " + std::to_string(syscall_nr);
    return *this;
  }
  if (err <= 0 || err > 4095) {
    if (first_error_.empty()) first_error_ = "invalid errno " + std::to_string(err);
    return *this;
  }
  extra_deny_.emplace_back(syscall_nr, err);
  return *this;
}

SeccompPolicyBuilder& SeccompPolicyBuilder::Allow(const std::string& syscall_name) {
  int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, syscall_name.c_str());
  if (nr < 0) {
    if (first_error_.empty()) first_error_ = "unknown x86_64 syscall '" + syscall_name + "'";
    return *this;
  }
  return Allow(nr);
}

SeccompPolicyBuilder& SeccompPolicyBuilder::DenyWithErrno(const std::string& syscall_name,
                                                          int err) {
  int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, syscall_name.c_str());
  if (nr < 0) {
    if (first_error_.empty()) first_error_ = "unknown x86_64 syscall '" + syscall_name + "'";
    return *this;
  }
  return DenyWithErrno(nr, err);
}

StatusOr<BpfProgram> SeccompPolicyBuilder::Build() const {
  if (!first_error_.empty()) return InvalidArgument("seccomp policy: " + first_error_);

  RuleSet rules = DefaultRules(options_);
  // An extra Allow drops the default's argument checks; an extra deny wins
  // over everything (the last one given for a syscall counts).
  for (int nr : extra_allow_) rules[nr] = {Unconditional(SCMP_ACT_ALLOW)};
  for (const auto& [nr, err] : extra_deny_) rules[nr] = {Unconditional(SCMP_ACT_ERRNO(err))};

  ScmpFilter ctx(seccomp_init(kDefaultAction));
  if (!ctx) return Internal("seccomp_init failed");
  // Foreign architectures (i386 via int 0x80) and x32 syscall numbers.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc < 0) {
    return ErrnoError("seccomp_attr_set(ACT_BADARCH)", -rc);
  }
  // A binary search over syscall numbers instead of a linear chain.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
    return ErrnoError("seccomp_attr_set(CTL_OPTIMIZE)", -rc);
  }
  AIRLOCK_RETURN_IF_ERROR(AddRules(ctx.get(), rules));

  AIRLOCK_ASSIGN_OR_RETURN(std::vector<sock_filter> body, ExportBpf(ctx.get()));
  BpfProgram program;
  program.instructions = SeccompArgumentPrefix();
  program.instructions.insert(program.instructions.end(), body.begin(), body.end());
  if (program.instructions.size() > BPF_MAXINSNS) {
    return Internal("seccomp program too long: " + std::to_string(program.instructions.size()));
  }
  return program;
}

StatusOr<BpfProgram> BuildDefaultPolicy(const SeccompOptions& options) {
  return SeccompPolicyBuilder(options).Build();
}

int InstallBpf(const BpfProgram& program) {
  const size_t n = program.instructions.size();
  if (n == 0 || n > BPF_MAXINSNS) return -EINVAL;
  sock_fprog prog;
  prog.len = static_cast<unsigned short>(n);
  prog.filter = const_cast<sock_filter*>(program.instructions.data());
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return -errno;
  return 0;
}

std::vector<std::string> ExplicitlyDeniedSyscalls() {
  std::vector<std::string> names;
  for (const SyscallEntry& e : DefaultDeniedSyscalls()) names.emplace_back(e.name);
  return names;
}

}  // namespace airlock::jail
