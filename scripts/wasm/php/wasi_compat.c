/* Definitions for include/airlock_wasi_compat.h, netdb.h, pwd.h, grp.h and
 * syslog.h: what airlock's PHP wasm32-wasi build calls but WASI preview1
 * cannot do. Each fails the way a locked-down POSIX system would. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <stddef.h>
#include <syslog.h>

#include "airlock_wasi_compat.h"

#define FAIL(err) do { errno = (err); return -1; } while (0)

uid_t getuid(void) { return 0; }
uid_t geteuid(void) { return 0; }
gid_t getgid(void) { return 0; }
gid_t getegid(void) { return 0; }
int getgroups(int size, gid_t list[]) { (void)size; (void)list; return 0; }

int chmod(const char* path, mode_t mode) { (void)path; (void)mode; FAIL(ENOSYS); }
int fchmod(int fd, mode_t mode) { (void)fd; (void)mode; FAIL(ENOSYS); }
int chown(const char* path, uid_t u, gid_t g) { (void)path; (void)u; (void)g; FAIL(ENOSYS); }
int fchown(int fd, uid_t u, gid_t g) { (void)fd; (void)u; (void)g; FAIL(ENOSYS); }
int lchown(const char* path, uid_t u, gid_t g) { (void)path; (void)u; (void)g; FAIL(ENOSYS); }
mode_t umask(mode_t mask) { (void)mask; return 022; }

int dup(int fd) { (void)fd; FAIL(ENOSYS); }
int dup2(int fd, int to) { (void)fd; (void)to; FAIL(ENOSYS); }
int getdtablesize(void) { return 1024; }
FILE* popen(const char* cmd, const char* mode) { (void)cmd; (void)mode; errno = ENOSYS; return NULL; }
int pclose(FILE* f) { (void)f; FAIL(ECHILD); }
int flock(int fd, int op) { (void)fd; (void)op; return 0; }

/* mkstemp: the trailing XXXXXX become random letters and digits; the file
 * is created exclusively (O_EXCL), mode 0600. */
int mkstemp(char* tmpl) {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  size_t len = strlen(tmpl);
  if (len < 6 || memcmp(tmpl + len - 6, "XXXXXX", 6) != 0) FAIL(EINVAL);
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned char rnd[6];
    if (getentropy(rnd, sizeof rnd) != 0) return -1;
    for (int i = 0; i < 6; ++i) tmpl[len - 6 + i] = chars[rnd[i] % (sizeof chars - 1)];
    int fd = open(tmpl, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  memcpy(tmpl + len - 6, "XXXXXX", 6);
  FAIL(EEXIST);
}

int socket(int d, int t, int p) { (void)d; (void)t; (void)p; FAIL(EAFNOSUPPORT); }
int bind(int s, const struct sockaddr* a, socklen_t l) { (void)s; (void)a; (void)l; FAIL(ENOSYS); }
int connect(int s, const struct sockaddr* a, socklen_t l) { (void)s; (void)a; (void)l; FAIL(ENOSYS); }
int listen(int s, int b) { (void)s; (void)b; FAIL(ENOSYS); }
int getsockname(int s, struct sockaddr* a, socklen_t* l) { (void)s; (void)a; (void)l; FAIL(ENOTSOCK); }
int getpeername(int s, struct sockaddr* a, socklen_t* l) { (void)s; (void)a; (void)l; FAIL(ENOTSOCK); }
ssize_t sendto(int s, const void* b, size_t n, int f, const struct sockaddr* a, socklen_t l) {
  (void)s; (void)b; (void)n; (void)f; (void)a; (void)l; FAIL(ENOSYS);
}
ssize_t recvfrom(int s, void* b, size_t n, int f, struct sockaddr* a, socklen_t* l) {
  (void)s; (void)b; (void)n; (void)f; (void)a; (void)l; FAIL(ENOSYS);
}
int setsockopt(int s, int lv, int o, const void* v, socklen_t l) {
  (void)s; (void)lv; (void)o; (void)v; (void)l; FAIL(ENOSYS);
}

struct passwd* getpwnam(const char* name) { (void)name; errno = ENOENT; return NULL; }
struct passwd* getpwuid(uid_t uid) { (void)uid; errno = ENOENT; return NULL; }
struct group* getgrnam(const char* name) { (void)name; errno = ENOENT; return NULL; }
struct group* getgrgid(gid_t gid) { (void)gid; errno = ENOENT; return NULL; }

int h_errno;
struct hostent* gethostbyname(const char* n) { (void)n; h_errno = HOST_NOT_FOUND; return NULL; }
struct hostent* gethostbyaddr(const void* a, socklen_t l, int t) {
  (void)a; (void)l; (void)t; h_errno = HOST_NOT_FOUND; return NULL;
}
struct servent* getservbyname(const char* n, const char* p) { (void)n; (void)p; return NULL; }
struct servent* getservbyport(int port, const char* p) { (void)port; (void)p; return NULL; }
struct protoent* getprotobyname(const char* n) { (void)n; return NULL; }
struct protoent* getprotobynumber(int n) { (void)n; return NULL; }
int getaddrinfo(const char* h, const char* s, const struct addrinfo* hint, struct addrinfo** res) {
  (void)h; (void)s; (void)hint;
  *res = NULL;
  return EAI_FAIL;
}
void freeaddrinfo(struct addrinfo* ai) { (void)ai; }
const char* gai_strerror(int e) { (void)e; return "name resolution is not available in the sandbox"; }
int getnameinfo(const struct sockaddr* a, socklen_t l, char* h, socklen_t hl, char* s, socklen_t sl, int f) {
  (void)a; (void)l; (void)h; (void)hl; (void)s; (void)sl; (void)f;
  return EAI_FAIL;
}

void openlog(const char* ident, int opt, int fac) { (void)ident; (void)opt; (void)fac; }
void syslog(int pri, const char* fmt, ...) { (void)pri; (void)fmt; }
void closelog(void) {}

/* zend_alloc's huge-page hint: nothing to advise in linear memory. */
int madvise(void* addr, size_t len, int advice) { (void)addr; (void)len; (void)advice; return 0; }
