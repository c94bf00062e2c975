#include "jail/init/jail_fs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>

namespace airlock::jail {
namespace {

constexpr const char* kBase = "/tmp";            // scratch tmpfs we pivot into first
constexpr const char* kNewRoot = "/newroot";     // the jail's root, inside kBase
constexpr const char* kOldRoot = "/oldroot";     // the host root while we build
constexpr const char* kScratch = "/scratch";     // tmpfs behind /work and /tmp

Status Mount(const char* src, const std::string& dst, const char* type, unsigned long flags,
             const std::string& data = "") {
  if (mount(src, dst.c_str(), type, flags, data.empty() ? nullptr : data.c_str()) != 0) {
    return ErrnoError(std::string("mount ") + (src ? src : "none") + " on " + dst);
  }
  return OkStatus();
}

Status MkdirP(const std::string& path, mode_t mode = 0755) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos == path.size() || path[pos] == '/') {
      std::string part = path.substr(0, pos);
      if (mkdir(part.c_str(), mode) != 0 && errno != EEXIST) return ErrnoError("mkdir " + part);
    }
  }
  return OkStatus();
}

Status WriteFile(const std::string& path, const std::string& content, mode_t mode = 0644) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return ErrnoError("create " + path);
  bool ok = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  close(fd);
  return ok ? OkStatus() : ErrnoError("write " + path);
}

// Mount flags that the kernel locks on a bind made inside a user namespace;
// a read-only remount must keep them or it fails with EPERM.
unsigned long LockedFlags(const std::string& path) {
  struct statvfs sv;
  if (statvfs(path.c_str(), &sv) != 0) return 0;
  unsigned long f = 0;
  if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

// Binds host `path` (seen at /oldroot/path) read-only at newroot/target;
// with `fd` >= 0 (an O_PATH fd of that path), from the fd instead.
Status BindReadOnly(const std::string& path, const std::string& target, bool optional, int fd = -1) {
  if (path.empty() || path[0] != '/' || target.empty() || target[0] != '/' ||
      path.find("/..") != std::string::npos || target.find("/..") != std::string::npos) {
    return InvalidArgument("bind paths must be absolute without \"..\": " + path + " -> " + target);
  }
  // The host's /proc is still attached under /oldroot; its /proc/self/fd/N
  // reaches the file without walking `path` (no search permission needed).
  const std::string src =
      fd >= 0 ? std::string(kOldRoot) + "/proc/self/fd/" + std::to_string(fd) : std::string(kOldRoot) + path;
  const std::string dst = std::string(kNewRoot) + target;
  struct stat st;
  if ((fd >= 0 ? fstat(fd, &st) : lstat(src.c_str(), &st)) != 0) {
    if (optional) return OkStatus();
    return ErrnoError("required jail path " + path);
  }
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(src.c_str(), target, sizeof target - 1);
    if (n < 0) return ErrnoError("readlink " + path);
    target[n] = '\0';
    AIRLOCK_RETURN_IF_ERROR(MkdirP(dst.substr(0, dst.rfind('/'))));
    if (symlink(target, dst.c_str()) != 0 && errno != EEXIST) return ErrnoError("symlink " + dst);
    return OkStatus();
  }
  if (S_ISDIR(st.st_mode)) {
    AIRLOCK_RETURN_IF_ERROR(MkdirP(dst));
  } else {
    AIRLOCK_RETURN_IF_ERROR(MkdirP(dst.substr(0, dst.rfind('/'))));
    int fd = open(dst.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno != EEXIST) return ErrnoError("create mount point " + dst);
    if (fd >= 0) close(fd);
  }
  AIRLOCK_RETURN_IF_ERROR(Mount(src.c_str(), dst, nullptr, MS_BIND | MS_REC));
  const unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | LockedFlags(dst);
  return Mount(nullptr, dst, nullptr, flags);
}

Status BuildDev() {
  const std::string dev = std::string(kNewRoot) + "/dev";
  AIRLOCK_RETURN_IF_ERROR(MkdirP(dev));
  AIRLOCK_RETURN_IF_ERROR(Mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755"));
  for (const char* node : {"null", "zero", "full", "random", "urandom"}) {
    const std::string dst = dev + "/" + node;
    int fd = open(dst.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("create " + dst);
    close(fd);
    AIRLOCK_RETURN_IF_ERROR(Mount((std::string(kOldRoot) + "/dev/" + node).c_str(), dst, nullptr, MS_BIND));
    AIRLOCK_RETURN_IF_ERROR(
        Mount(nullptr, dst, nullptr, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC | LockedFlags(dst)));
  }
  const std::pair<const char*, const char*> links[] = {
      {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
      {"/proc/self/fd/2", "stderr"}, {"/tmp", "shm"}};
  for (auto [target, name] : links) {
    if (symlink(target, (dev + "/" + name).c_str()) != 0) return ErrnoError(std::string("symlink /dev/") + name);
  }
  return Mount(nullptr, dev, nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755");
}

Status BuildProc() {
  const std::string proc = std::string(kNewRoot) + "/proc";
  AIRLOCK_RETURN_IF_ERROR(MkdirP(proc));
  const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  Status st = Mount("proc", proc, "proc", flags, "hidepid=invisible");
  if (!st.ok()) st = Mount("proc", proc, "proc", flags, "hidepid=2");
  AIRLOCK_RETURN_IF_ERROR(st);
  const std::string sys = proc + "/sys";
  AIRLOCK_RETURN_IF_ERROR(Mount(sys.c_str(), sys, nullptr, MS_BIND | MS_REC));
  return Mount(nullptr, sys, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | flags);
}

Status BuildWork(const FsSetup& setup) {
  const std::string scratch = std::string(kScratch);
  AIRLOCK_RETURN_IF_ERROR(MkdirP(scratch));
  const std::string opts = "size=" + std::to_string(setup.work_bytes) +
                           ",nr_inodes=" + std::to_string(setup.work_inodes) + ",mode=0755";
  AIRLOCK_RETURN_IF_ERROR(Mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, opts));
  for (const char* d : {"work", "tmp"}) {
    const std::string src = scratch + "/" + d;
    const std::string dst = std::string(kNewRoot) + "/" + d;
    if (mkdir(src.c_str(), std::strcmp(d, "tmp") == 0 ? 01777 : 0755) != 0) return ErrnoError("mkdir " + src);
    if (std::strcmp(d, "tmp") == 0) chmod(src.c_str(), 01777);
    AIRLOCK_RETURN_IF_ERROR(MkdirP(dst));
    AIRLOCK_RETURN_IF_ERROR(Mount(src.c_str(), dst, nullptr, MS_BIND));
  }
  // The binds keep the tmpfs alive; its original mount point goes away.
  if (umount2(scratch.c_str(), MNT_DETACH) != 0) return ErrnoError("umount scratch");
  return OkStatus();
}

Status BuildEtc(const FsSetup& setup) {
  const std::string etc = std::string(kNewRoot) + "/etc";
  AIRLOCK_RETURN_IF_ERROR(MkdirP(etc));
  const std::string uid = std::to_string(setup.sandbox_uid);
  AIRLOCK_RETURN_IF_ERROR(WriteFile(etc + "/passwd", "root:x:0:0:root:/root:/bin/sh\nsandbox:x:" + uid + ":" +
                                                         uid + ":sandbox:/work:/bin/sh\n"));
  AIRLOCK_RETURN_IF_ERROR(WriteFile(etc + "/group", "root:x:0:\nsandbox:x:" + uid + ":\n"));
  AIRLOCK_RETURN_IF_ERROR(WriteFile(etc + "/hosts", "127.0.0.1 localhost " + setup.hostname + "\n::1 localhost\n"));
  AIRLOCK_RETURN_IF_ERROR(WriteFile(etc + "/hostname", setup.hostname + "\n"));
  return WriteFile(etc + "/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n");
}

}  // namespace

std::vector<std::string> BaseReadOnlyPaths() {
  return {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
          "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
          "/etc/localtime"};
}

Status BuildJailFilesystem(const FsSetup& setup) {
  AIRLOCK_RETURN_IF_ERROR(Mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE));
  AIRLOCK_RETURN_IF_ERROR(Mount("tmpfs", kBase, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755"));
  const std::string base_old = std::string(kBase) + kOldRoot;
  AIRLOCK_RETURN_IF_ERROR(MkdirP(base_old));
  if (syscall(SYS_pivot_root, kBase, base_old.c_str()) != 0) return ErrnoError("pivot_root to scratch");
  if (chdir("/") != 0) return ErrnoError("chdir /");

  AIRLOCK_RETURN_IF_ERROR(MkdirP(kNewRoot));
  AIRLOCK_RETURN_IF_ERROR(Mount("tmpfs", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755"));
  for (const std::string& p : setup.ro_paths) AIRLOCK_RETURN_IF_ERROR(BindReadOnly(p, p, false));
  for (const std::string& p : setup.optional_paths) AIRLOCK_RETURN_IF_ERROR(BindReadOnly(p, p, true));
  for (size_t i = 0; i < setup.mapped_paths.size(); ++i) {
    const auto& [host, jail] = setup.mapped_paths[i];
    int fd = setup.mapped_fds_from > 0 ? setup.mapped_fds_from + static_cast<int>(i) : -1;
    if (fd >= 0 && fcntl(fd, F_GETFD) < 0) fd = -1;  // the clone could not open it: by path
    AIRLOCK_RETURN_IF_ERROR(BindReadOnly(host, jail, false, fd));
  }
  AIRLOCK_RETURN_IF_ERROR(BuildEtc(setup));
  AIRLOCK_RETURN_IF_ERROR(BuildDev());
  AIRLOCK_RETURN_IF_ERROR(BuildWork(setup));
  AIRLOCK_RETURN_IF_ERROR(BuildProc());  // needs /oldroot/proc still attached
  AIRLOCK_RETURN_IF_ERROR(MkdirP(std::string(kNewRoot) + "/root", 0700));
  AIRLOCK_RETURN_IF_ERROR(
      Mount(nullptr, kNewRoot, nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755"));

  // pivot_root(".", ".") stacks the old root on top; detaching it drops the
  // host root and the scratch tmpfs from this namespace for good.
  if (chdir(kNewRoot) != 0) return ErrnoError("chdir newroot");
  if (syscall(SYS_pivot_root, ".", ".") != 0) return ErrnoError("pivot_root to jail root");
  if (umount2(".", MNT_DETACH) != 0) return ErrnoError("detach old root");
  if (chdir("/work") != 0) return ErrnoError("chdir /work");
  if (sethostname(setup.hostname.data(), setup.hostname.size()) != 0) return ErrnoError("sethostname");
  return OkStatus();
}

}  // namespace airlock::jail
