/* Force-included (-include) into every C file of airlock's PHP wasm32-wasi
 * build. Debian's wasi-libc leaves out the POSIX calls WASI preview1 has no
 * way to do (users, permissions, processes, sockets beyond an inherited fd,
 * syslog). PHP's sources call some of them unconditionally, so they are
 * declared here and defined in ../wasi_compat.c, where each fails the way
 * PHP already handles (-1 with errno, NULL, or user 0). */
#ifndef AIRLOCK_WASI_COMPAT_H
#define AIRLOCK_WASI_COMPAT_H

#include <sys/types.h>
#include <stdio.h>
#include <sys/socket.h>
#include <poll.h>

#ifdef __cplusplus
extern "C" {
#endif

uid_t getuid(void);
uid_t geteuid(void);
gid_t getgid(void);
gid_t getegid(void);
int getgroups(int, gid_t[]);
int chmod(const char*, mode_t);
int fchmod(int, mode_t);
int chown(const char*, uid_t, gid_t);
int fchown(int, uid_t, gid_t);
int lchown(const char*, uid_t, gid_t);
mode_t umask(mode_t);
int dup(int);
int dup2(int, int);
int getdtablesize(void);
FILE* popen(const char*, const char*);
int pclose(FILE*);
int flock(int, int);  /* configure is told HAVE_FLOCK: one process, a no-op */
int mkstemp(char*);   /* configure is told HAVE_MKSTEMP */
int socket(int, int, int);
int bind(int, const struct sockaddr*, socklen_t);
int connect(int, const struct sockaddr*, socklen_t);
int listen(int, int);
int getsockname(int, struct sockaddr*, socklen_t*);
int getpeername(int, struct sockaddr*, socklen_t*);
ssize_t sendto(int, const void*, size_t, int, const struct sockaddr*, socklen_t);
ssize_t recvfrom(int, void*, size_t, int, struct sockaddr*, socklen_t*);
int setsockopt(int, int, int, const void*, socklen_t);

#ifdef __cplusplus
}
#endif

/* wasi-libc's sockaddr_un has no sun_path: no Unix-domain sockets. */
#undef AF_UNIX
#undef PF_UNIX
#undef AF_LOCAL
#undef PF_LOCAL
#ifndef MSG_OOB
#define MSG_OOB 0x0001
#endif
#ifndef SOMAXCONN
#define SOMAXCONN 128
#endif
#ifndef POLLPRI
#define POLLPRI 0x0002
#endif
#ifndef SO_ERROR
#define SO_ERROR 4
#endif
#ifndef SOL_IP
#define SOL_IP 0
#endif
/* For php_flock()'s fcntl() path, which wasi-libc refuses (EINVAL). */
#ifndef F_RDLCK
#define F_RDLCK 0
#define F_WRLCK 1
#define F_UNLCK 2
#endif
#ifndef F_SETLK
#define F_SETLK 6
#define F_SETLKW 7
#endif
#ifndef LOCK_SH
#define LOCK_SH 1
#define LOCK_EX 2
#define LOCK_NB 4
#define LOCK_UN 8
#endif

#endif
