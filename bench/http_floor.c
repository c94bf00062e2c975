// The floor of an HTTP round trip for bench/http_front.mjs: a responder that
// parses nothing but the end of a request (its header, then Content-Length
// bytes) and answers every request on its one keep-alive connection with a
// fixed JSON-RPC result. What a client measures against it is the client's
// own HTTP cost plus loopback TCP, the part of an HTTP call no server can
// remove. Usage: http_floor PORT (127.0.0.1; one connection, then exits).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int one = 1;
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)atoi(argv[1]));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(listener, 1) != 0) return 1;
  const int c = accept(listener, NULL, NULL);
  if (c < 0) return 1;
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
  char answer[256];
  const int answer_len = snprintf(answer, sizeof answer,
                                  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                                  sizeof body - 1, body);
  static char buf[1 << 20];
  size_t have = 0;
  for (;;) {
    const ssize_t n = read(c, buf + have, sizeof buf - 1 - have);
    if (n <= 0) return 0;
    have += (size_t)n;
    buf[have] = '\0';
    char* end = strstr(buf, "\r\n\r\n");
    if (end == NULL) continue;
    size_t want = 0;
    for (char* line = buf; line < end; line = strstr(line, "\r\n") + 2) {
      if (strncasecmp(line, "content-length:", 15) == 0) want = strtoul(line + 15, NULL, 10);
    }
    const size_t whole = (size_t)(end + 4 - buf) + want;
    if (have < whole) continue;
    if (write(c, answer, (size_t)answer_len) != answer_len) return 1;
    memmove(buf, buf + whole, have - whole);
    have -= whole;
  }
}
