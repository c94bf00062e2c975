// Shared checks for the WASI conformance programs (tests/wasm/conformance).
//
// Each program exercises one area of WASI preview1 as wasi-libc uses it and
// prints one "ok <check>" line per passing check. The first failing check
// prints "FAIL <check>: <detail>" to stdout and exits 1, so the driver
// (tests/unit/wasi_conformance_test.cc) sees both which check failed and why.
//
//   CHECK("write.short", write(fd, "abc", 3) == 3);
//   CHECK_ERRNO("rmdir.notempty", rmdir("d"), ENOTEMPTY);
#ifndef AIRLOCK_TESTS_WASM_CONFORMANCE_H_
#define AIRLOCK_TESTS_WASM_CONFORMANCE_H_

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void conformance_fail(const char* name, const char* expr, int err) {
  printf("FAIL %s: %s (errno %d: %s)\n", name, expr, err, strerror(err));
  fflush(stdout);
  exit(1);
}

static inline void conformance_ok(const char* name) {
  printf("ok %s\n", name);
  fflush(stdout);
}

// `cond` must hold.
#define CHECK(name, cond)                                       \
  do {                                                          \
    errno = 0;                                                  \
    if (!(cond)) conformance_fail((name), #cond, errno);        \
    conformance_ok(name);                                       \
  } while (0)

// `call` must return -1 (or NULL, for pointers: pass `(p) == NULL ? -1 : 0`)
// with errno set to `want`.
#define CHECK_ERRNO(name, call, want)                                                   \
  do {                                                                                  \
    errno = 0;                                                                          \
    long _r = (long)(call);                                                             \
    int _e = errno;                                                                     \
    if (_r != -1) {                                                                     \
      printf("FAIL %s: %s returned %ld, expected -1 with errno %d (%s)\n", (name), #call, \
             _r, (want), strerror(want));                                               \
      fflush(stdout);                                                                   \
      exit(1);                                                                          \
    }                                                                                   \
    if (_e != (want)) {                                                                 \
      printf("FAIL %s: %s failed with errno %d (%s), expected %d (%s)\n", (name), #call, \
             _e, strerror(_e), (want), strerror(want));                                 \
      fflush(stdout);                                                                   \
      exit(1);                                                                          \
    }                                                                                   \
    conformance_ok(name);                                                               \
  } while (0)

// Whether the file at `path` holds exactly `text` (at most 127 bytes).
static inline int content_is(const char* path, const char* text) {
  char buf[128];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  return n == (ssize_t)strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

#endif  // AIRLOCK_TESTS_WASM_CONFORMANCE_H_
