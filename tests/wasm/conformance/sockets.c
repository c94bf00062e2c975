// Sockets: WASI preview1 as airlock implements it has none. wasi-libc has
// no socket()/connect()/bind()/listen() at all (see sockets_import.c for a
// module that imports them anyway); every sock_* call it does have fails,
// on stdio and on preopened descriptors alike, and nothing is a socket.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>

#include "conformance.h"

int main(void) {
  char buf[16];
  int fd = open(".", O_RDONLY | O_DIRECTORY);
  CHECK("open.dir", fd >= 0);

  __wasi_fd_t accepted = 12345;
  CHECK("sock_accept.preopen", __wasi_sock_accept(3, 0, &accepted) != 0 && accepted == 12345);
  CHECK("sock_accept.dir", __wasi_sock_accept((__wasi_fd_t)fd, 0, &accepted) != 0 && accepted == 12345);
  CHECK("sock_accept.stdin", __wasi_sock_accept(0, 0, &accepted) != 0);

  CHECK("send.stdout", send(1, "x", 1, 0) == -1 && errno != 0);
  CHECK("recv.stdin", recv(0, buf, sizeof buf, 0) == -1 && errno != 0);
  CHECK("shutdown.stdout", shutdown(1, SHUT_RDWR) == -1 && errno != 0);
  CHECK("shutdown.dir", shutdown(fd, SHUT_RDWR) == -1 && errno != 0);

  __wasi_size_t sent = 7;
  __wasi_ciovec_t out = {(const uint8_t*)"x", 1};
  CHECK("sock_send.raw", __wasi_sock_send(1, &out, 1, 0, &sent) != 0 && sent == 7);
  __wasi_size_t got = 7;
  __wasi_roflags_t flags = 0;
  __wasi_iovec_t in = {(uint8_t*)buf, sizeof buf};
  CHECK("sock_recv.raw", __wasi_sock_recv(0, &in, 1, 0, &got, &flags) != 0 && got == 7);
  CHECK("sock_shutdown.raw", __wasi_sock_shutdown(3, __WASI_SDFLAGS_RD | __WASI_SDFLAGS_WR) != 0);

  struct stat st;
  int sockets = 0;
  for (int i = 0; i < 8; ++i) {
    if (fstat(i, &st) == 0 && S_ISSOCK(st.st_mode)) ++sockets;
  }
  CHECK("nothing.is.a.socket", sockets == 0);
  close(fd);
  return 0;
}
