#include "jail/seccomp_syscall_tables.h"

#include <sys/syscall.h>

#include <array>

namespace airlock::jail {
namespace {

#define AIRLOCK_SYS(name) SyscallEntry{#name, __NR_##name}

// Generous on purpose: a missing common syscall breaks a language runtime
// (python, node, ruby, php, bash + coreutils, gcc/as/ld, Go's esbuild).
// Namespaces, the unprivileged uid and cgroups bound what these can reach.
constexpr std::array kAllowed = {
    // File descriptors and file I/O.
    AIRLOCK_SYS(read), AIRLOCK_SYS(write), AIRLOCK_SYS(open), AIRLOCK_SYS(openat),
    AIRLOCK_SYS(openat2), AIRLOCK_SYS(creat), AIRLOCK_SYS(close), AIRLOCK_SYS(close_range),
    AIRLOCK_SYS(lseek), AIRLOCK_SYS(pread64), AIRLOCK_SYS(pwrite64), AIRLOCK_SYS(readv),
    AIRLOCK_SYS(writev), AIRLOCK_SYS(preadv), AIRLOCK_SYS(pwritev), AIRLOCK_SYS(preadv2),
    AIRLOCK_SYS(pwritev2), AIRLOCK_SYS(sendfile), AIRLOCK_SYS(copy_file_range),
    AIRLOCK_SYS(splice), AIRLOCK_SYS(tee), AIRLOCK_SYS(vmsplice), AIRLOCK_SYS(dup),
    AIRLOCK_SYS(dup2), AIRLOCK_SYS(dup3), AIRLOCK_SYS(fcntl), AIRLOCK_SYS(flock),
    AIRLOCK_SYS(ioctl),  // TIOCSTI/TIOCLINUX are caught by the argument prefix
    AIRLOCK_SYS(pipe), AIRLOCK_SYS(pipe2), AIRLOCK_SYS(fsync), AIRLOCK_SYS(fdatasync),
    AIRLOCK_SYS(sync_file_range), AIRLOCK_SYS(fallocate), AIRLOCK_SYS(fadvise64),
    AIRLOCK_SYS(readahead), AIRLOCK_SYS(truncate), AIRLOCK_SYS(ftruncate),
    AIRLOCK_SYS(memfd_create),
    // Metadata and directories.
    AIRLOCK_SYS(stat), AIRLOCK_SYS(fstat), AIRLOCK_SYS(lstat), AIRLOCK_SYS(newfstatat),
    AIRLOCK_SYS(statx), AIRLOCK_SYS(statfs), AIRLOCK_SYS(fstatfs), AIRLOCK_SYS(access),
    AIRLOCK_SYS(faccessat), AIRLOCK_SYS(faccessat2), AIRLOCK_SYS(getdents),
    AIRLOCK_SYS(getdents64), AIRLOCK_SYS(getcwd), AIRLOCK_SYS(chdir), AIRLOCK_SYS(fchdir),
    AIRLOCK_SYS(mkdir), AIRLOCK_SYS(mkdirat), AIRLOCK_SYS(rmdir), AIRLOCK_SYS(unlink),
    AIRLOCK_SYS(unlinkat), AIRLOCK_SYS(rename), AIRLOCK_SYS(renameat), AIRLOCK_SYS(renameat2),
    AIRLOCK_SYS(link), AIRLOCK_SYS(linkat), AIRLOCK_SYS(symlink), AIRLOCK_SYS(symlinkat),
    AIRLOCK_SYS(readlink), AIRLOCK_SYS(readlinkat), AIRLOCK_SYS(chmod), AIRLOCK_SYS(fchmod),
    AIRLOCK_SYS(fchmodat), AIRLOCK_SYS(chown), AIRLOCK_SYS(fchown), AIRLOCK_SYS(lchown),
    AIRLOCK_SYS(fchownat), AIRLOCK_SYS(umask), AIRLOCK_SYS(utime), AIRLOCK_SYS(utimes),
    AIRLOCK_SYS(futimesat), AIRLOCK_SYS(utimensat), AIRLOCK_SYS(setxattr),
    AIRLOCK_SYS(lsetxattr), AIRLOCK_SYS(fsetxattr), AIRLOCK_SYS(getxattr),
    AIRLOCK_SYS(lgetxattr), AIRLOCK_SYS(fgetxattr), AIRLOCK_SYS(listxattr),
    AIRLOCK_SYS(llistxattr), AIRLOCK_SYS(flistxattr), AIRLOCK_SYS(removexattr),
    AIRLOCK_SYS(lremovexattr), AIRLOCK_SYS(fremovexattr), AIRLOCK_SYS(inotify_init),
    AIRLOCK_SYS(inotify_init1), AIRLOCK_SYS(inotify_add_watch), AIRLOCK_SYS(inotify_rm_watch),
    // Memory (mmap, mprotect, pkey_mprotect and shmat are filtered).
    AIRLOCK_SYS(munmap), AIRLOCK_SYS(mremap), AIRLOCK_SYS(madvise), AIRLOCK_SYS(brk),
    AIRLOCK_SYS(msync), AIRLOCK_SYS(mincore), AIRLOCK_SYS(mlock), AIRLOCK_SYS(mlock2),
    AIRLOCK_SYS(munlock), AIRLOCK_SYS(mlockall), AIRLOCK_SYS(munlockall),
    AIRLOCK_SYS(membarrier), AIRLOCK_SYS(pkey_alloc), AIRLOCK_SYS(pkey_free),
    AIRLOCK_SYS(get_mempolicy),
    // Threads, synchronisation, scheduling.
    AIRLOCK_SYS(futex), AIRLOCK_SYS(futex_waitv), AIRLOCK_SYS(set_robust_list),
    AIRLOCK_SYS(get_robust_list), AIRLOCK_SYS(set_tid_address), AIRLOCK_SYS(rseq),
    AIRLOCK_SYS(arch_prctl), AIRLOCK_SYS(set_thread_area), AIRLOCK_SYS(get_thread_area),
    AIRLOCK_SYS(prctl),        // PR_SET_MM is caught by the argument prefix
    AIRLOCK_SYS(personality),  // only PER_LINUX / query pass the argument prefix
    AIRLOCK_SYS(sched_yield), AIRLOCK_SYS(sched_getaffinity), AIRLOCK_SYS(sched_setaffinity),
    AIRLOCK_SYS(sched_getparam), AIRLOCK_SYS(sched_setparam), AIRLOCK_SYS(sched_getscheduler),
    AIRLOCK_SYS(sched_setscheduler), AIRLOCK_SYS(sched_getattr), AIRLOCK_SYS(sched_setattr),
    AIRLOCK_SYS(sched_get_priority_max), AIRLOCK_SYS(sched_get_priority_min),
    AIRLOCK_SYS(sched_rr_get_interval), AIRLOCK_SYS(getcpu), AIRLOCK_SYS(getpriority),
    AIRLOCK_SYS(setpriority), AIRLOCK_SYS(ioprio_get), AIRLOCK_SYS(ioprio_set),
    // Signals.
    AIRLOCK_SYS(rt_sigaction), AIRLOCK_SYS(rt_sigprocmask), AIRLOCK_SYS(rt_sigreturn),
    AIRLOCK_SYS(rt_sigpending), AIRLOCK_SYS(rt_sigtimedwait), AIRLOCK_SYS(rt_sigqueueinfo),
    AIRLOCK_SYS(rt_tgsigqueueinfo), AIRLOCK_SYS(rt_sigsuspend), AIRLOCK_SYS(sigaltstack),
    AIRLOCK_SYS(pause), AIRLOCK_SYS(kill), AIRLOCK_SYS(tkill), AIRLOCK_SYS(tgkill),
    AIRLOCK_SYS(signalfd), AIRLOCK_SYS(signalfd4), AIRLOCK_SYS(pidfd_open),
    AIRLOCK_SYS(pidfd_send_signal), AIRLOCK_SYS(restart_syscall),
    // Time and timers.
    AIRLOCK_SYS(clock_gettime), AIRLOCK_SYS(clock_getres), AIRLOCK_SYS(clock_nanosleep),
    AIRLOCK_SYS(nanosleep), AIRLOCK_SYS(gettimeofday), AIRLOCK_SYS(time), AIRLOCK_SYS(times),
    AIRLOCK_SYS(alarm), AIRLOCK_SYS(getitimer), AIRLOCK_SYS(setitimer),
    AIRLOCK_SYS(timer_create), AIRLOCK_SYS(timer_settime), AIRLOCK_SYS(timer_gettime),
    AIRLOCK_SYS(timer_getoverrun), AIRLOCK_SYS(timer_delete), AIRLOCK_SYS(timerfd_create),
    AIRLOCK_SYS(timerfd_settime), AIRLOCK_SYS(timerfd_gettime),
    // Polling and event fds.
    AIRLOCK_SYS(poll), AIRLOCK_SYS(ppoll), AIRLOCK_SYS(select), AIRLOCK_SYS(pselect6),
    AIRLOCK_SYS(epoll_create), AIRLOCK_SYS(epoll_create1), AIRLOCK_SYS(epoll_ctl),
    AIRLOCK_SYS(epoll_wait), AIRLOCK_SYS(epoll_pwait), AIRLOCK_SYS(epoll_pwait2),
    AIRLOCK_SYS(eventfd), AIRLOCK_SYS(eventfd2),
    // Sockets (socket and socketpair are filtered to AF_UNIX).
    AIRLOCK_SYS(connect), AIRLOCK_SYS(bind), AIRLOCK_SYS(listen), AIRLOCK_SYS(accept),
    AIRLOCK_SYS(accept4), AIRLOCK_SYS(sendto), AIRLOCK_SYS(recvfrom), AIRLOCK_SYS(sendmsg),
    AIRLOCK_SYS(recvmsg), AIRLOCK_SYS(sendmmsg), AIRLOCK_SYS(recvmmsg), AIRLOCK_SYS(shutdown),
    AIRLOCK_SYS(getsockname), AIRLOCK_SYS(getpeername), AIRLOCK_SYS(setsockopt),
    AIRLOCK_SYS(getsockopt),
    // Processes (clone, fork and vfork are filtered).
    AIRLOCK_SYS(execve), AIRLOCK_SYS(execveat), AIRLOCK_SYS(exit), AIRLOCK_SYS(exit_group),
    AIRLOCK_SYS(wait4), AIRLOCK_SYS(waitid), AIRLOCK_SYS(getpid), AIRLOCK_SYS(getppid),
    AIRLOCK_SYS(gettid), AIRLOCK_SYS(getpgid), AIRLOCK_SYS(setpgid), AIRLOCK_SYS(getpgrp),
    AIRLOCK_SYS(getsid), AIRLOCK_SYS(setsid),
    // Credentials: changing them needs capabilities the jail does not have.
    AIRLOCK_SYS(getuid), AIRLOCK_SYS(geteuid), AIRLOCK_SYS(getgid), AIRLOCK_SYS(getegid),
    AIRLOCK_SYS(getresuid), AIRLOCK_SYS(getresgid), AIRLOCK_SYS(getgroups),
    AIRLOCK_SYS(setuid), AIRLOCK_SYS(setgid), AIRLOCK_SYS(setreuid), AIRLOCK_SYS(setregid),
    AIRLOCK_SYS(setresuid), AIRLOCK_SYS(setresgid), AIRLOCK_SYS(setfsuid),
    AIRLOCK_SYS(setfsgid), AIRLOCK_SYS(setgroups), AIRLOCK_SYS(capget), AIRLOCK_SYS(capset),
    // Resources and system information.
    AIRLOCK_SYS(getrlimit), AIRLOCK_SYS(setrlimit), AIRLOCK_SYS(prlimit64),
    AIRLOCK_SYS(getrusage), AIRLOCK_SYS(sysinfo), AIRLOCK_SYS(uname), AIRLOCK_SYS(getrandom),
    // SysV and POSIX IPC: private to the jail's ipc namespace.
    AIRLOCK_SYS(shmget), AIRLOCK_SYS(shmctl), AIRLOCK_SYS(shmdt), AIRLOCK_SYS(semget),
    AIRLOCK_SYS(semop), AIRLOCK_SYS(semtimedop), AIRLOCK_SYS(semctl), AIRLOCK_SYS(msgget),
    AIRLOCK_SYS(msgsnd), AIRLOCK_SYS(msgrcv), AIRLOCK_SYS(msgctl), AIRLOCK_SYS(mq_open),
    AIRLOCK_SYS(mq_unlink), AIRLOCK_SYS(mq_timedsend), AIRLOCK_SYS(mq_timedreceive),
    AIRLOCK_SYS(mq_notify), AIRLOCK_SYS(mq_getsetattr),
    // Landlock can only restrict the caller further (programs that sandbox
    // themselves, e.g. with a library, keep working).
    AIRLOCK_SYS(landlock_create_ruleset), AIRLOCK_SYS(landlock_add_rule),
    AIRLOCK_SYS(landlock_restrict_self),
};

constexpr std::array kDenied = {
    // Inspecting or changing other processes.
    AIRLOCK_SYS(ptrace), AIRLOCK_SYS(process_vm_readv), AIRLOCK_SYS(process_vm_writev),
    AIRLOCK_SYS(pidfd_getfd), AIRLOCK_SYS(kcmp), AIRLOCK_SYS(process_madvise),
    // Mounts and namespaces.
    AIRLOCK_SYS(mount), AIRLOCK_SYS(umount2), AIRLOCK_SYS(pivot_root), AIRLOCK_SYS(chroot),
    AIRLOCK_SYS(fsopen), AIRLOCK_SYS(fsmount), AIRLOCK_SYS(fspick), AIRLOCK_SYS(fsconfig),
    AIRLOCK_SYS(open_tree), AIRLOCK_SYS(move_mount), AIRLOCK_SYS(mount_setattr),
    AIRLOCK_SYS(unshare), AIRLOCK_SYS(setns), AIRLOCK_SYS(name_to_handle_at),
    AIRLOCK_SYS(open_by_handle_at),
    // Kernel attack surfaces that are not namespaced or not filterable.
    AIRLOCK_SYS(keyctl), AIRLOCK_SYS(add_key), AIRLOCK_SYS(request_key), AIRLOCK_SYS(bpf),
    AIRLOCK_SYS(io_uring_setup), AIRLOCK_SYS(io_uring_enter), AIRLOCK_SYS(io_uring_register),
    AIRLOCK_SYS(userfaultfd), AIRLOCK_SYS(perf_event_open), AIRLOCK_SYS(fanotify_init),
    AIRLOCK_SYS(fanotify_mark), AIRLOCK_SYS(lookup_dcookie), AIRLOCK_SYS(uselib),
    AIRLOCK_SYS(nfsservctl), AIRLOCK_SYS(memfd_secret),
    // NUMA placement of other processes' and the host's memory.
    AIRLOCK_SYS(mbind), AIRLOCK_SYS(set_mempolicy), AIRLOCK_SYS(set_mempolicy_home_node),
    AIRLOCK_SYS(migrate_pages), AIRLOCK_SYS(move_pages),
    // Host administration.
    AIRLOCK_SYS(kexec_load), AIRLOCK_SYS(kexec_file_load), AIRLOCK_SYS(init_module),
    AIRLOCK_SYS(finit_module), AIRLOCK_SYS(delete_module), AIRLOCK_SYS(reboot),
    AIRLOCK_SYS(swapon), AIRLOCK_SYS(swapoff), AIRLOCK_SYS(syslog), AIRLOCK_SYS(acct),
    AIRLOCK_SYS(settimeofday), AIRLOCK_SYS(clock_settime), AIRLOCK_SYS(clock_adjtime),
    AIRLOCK_SYS(adjtimex), AIRLOCK_SYS(quotactl), AIRLOCK_SYS(quotactl_fd),
    AIRLOCK_SYS(iopl), AIRLOCK_SYS(ioperm), AIRLOCK_SYS(vhangup), AIRLOCK_SYS(sethostname),
    AIRLOCK_SYS(setdomainname),
};

constexpr std::array kFiltered = {
    AIRLOCK_SYS(clone),  AIRLOCK_SYS(fork),      AIRLOCK_SYS(vfork),
    AIRLOCK_SYS(socket), AIRLOCK_SYS(socketpair), AIRLOCK_SYS(mmap),
    AIRLOCK_SYS(mprotect), AIRLOCK_SYS(pkey_mprotect), AIRLOCK_SYS(shmat),
    AIRLOCK_SYS(mknod),  AIRLOCK_SYS(mknodat),   AIRLOCK_SYS(seccomp),
};

#undef AIRLOCK_SYS

}  // namespace

std::span<const SyscallEntry> DefaultAllowedSyscalls() { return kAllowed; }
std::span<const SyscallEntry> DefaultDeniedSyscalls() { return kDenied; }
std::span<const SyscallEntry> DefaultFilteredSyscalls() { return kFiltered; }

}  // namespace airlock::jail
