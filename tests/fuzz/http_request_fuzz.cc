// The MCP Streamable HTTP transport over a real loopback socket: each input
// picks a method, which headers to send (a live session id or a fuzzed one,
// Accept, Content-Type, MCP-Protocol-Version, Origin, Host, Authorization)
// and a body, or (first byte 0xFF) is sent as raw bytes. The server runs on
// its own threads with a fake executor; after every input it must still
// answer /healthz, and a request must never hang it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "config/config.h"
#include "fuzz_support.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"

namespace {

using namespace airlock;

struct Fixture {
  Fixture()
      : config(*config::ParseConfig(R"({"server": {"max_message_bytes": 65536}})")), server(config, executor) {
    mcp::HttpOptions options;
    options.port = 0;
    options.threads = 4;
    options.max_body_bytes = 65536;
    options.heartbeat_ms = 50;
    options.ready = [] { return true; };
    http = std::make_unique<mcp::HttpTransport>(server, options);
    if (!http->Start().ok()) abort();
  }
  config::Config config;
  fuzz::InstantExecutor executor;
  mcp::McpServer server;
  std::unique_ptr<mcp::HttpTransport> http;
};

// Sends `request` on a new connection; returns everything the server wrote
// before closing (or before `timeout_ms` of silence: a GET stream never ends).
std::string Exchange(int port, const std::string& request, bool half_close = false, int timeout_ms = 100) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) abort();
  // Long enough for any answer on loopback; a GET stream (which never ends
  // by itself) is cut off after it.
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // libFuzzer's SIGALRM (its -timeout watchdog) interrupts blocking calls:
  // an interrupted connect goes on in the background, so wait for it.
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    if (err == EINTR) {
      pollfd p{fd, POLLOUT, 0};
      while (poll(&p, 1, 10000) < 0 && errno == EINTR) {
      }
      socklen_t len = sizeof err;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err != 0) {
      fprintf(stderr, "connect to 127.0.0.1:%d: %s\n", port, strerror(err));
      abort();
    }
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (half_close) shutdown(fd, SHUT_WR);  // raw bytes: the server sees where they end
  std::string response;
  char buf[4096];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return response;
}

std::string Request(const std::string& method, const std::string& path, const std::string& headers,
                    const std::string& body) {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string SessionId(const std::string& response) {
  size_t at = response.find("Mcp-Session-Id: ");
  if (at == std::string::npos) return "";
  size_t end = response.find("\r\n", at);
  return response.substr(at + 16, end - at - 16);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();
  const int port = fixture->http->port();
  fuzz::FuzzInput in(data, size);
  uint8_t mode = in.Byte();
  if (mode == 0xFF) {
    Exchange(port, in.Rest(), /*half_close=*/true);
  } else {
    uint8_t flags = in.Byte();
    static const char* kMethods[] = {"POST", "POST", "POST", "GET", "DELETE", "OPTIONS", "PUT", "HEAD"};
    std::string method = kMethods[mode % 8];
    std::string path = (mode & 0x80) ? "/" + in.Bytes(16) : std::string("/mcp");
    std::string session;
    if (flags & 1) {
      std::string init = Request(
          "POST", "/mcp", "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n",
          R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}})");
      session = SessionId(Exchange(port, init));
    }
    std::string headers;
    if (flags & 1) headers += "Mcp-Session-Id: " + session + "\r\n";
    if (flags & 2) headers += "Mcp-Session-Id: " + in.Bytes(40) + "\r\n";
    if (flags & 4) headers += "Accept: application/json, text/event-stream\r\n";
    if (flags & 8) headers += "Content-Type: application/json\r\n";
    if (flags & 16) headers += "MCP-Protocol-Version: " + in.Bytes(16) + "\r\n";
    if (flags & 32) headers += "Origin: " + in.Bytes(32) + "\r\n";
    if (flags & 64) headers += "Authorization: Bearer " + in.Bytes(48) + "\r\n";
    if (flags & 128) headers += "Last-Event-ID: " + in.Bytes(32) + "\r\n";
    // Header values may not hold line breaks: keep the request well framed.
    for (char& c : headers) {
      if (c == '\0') c = ' ';
    }
    Exchange(port, Request(method, path, headers, in.Rest()));
    if (!session.empty()) {
      Exchange(port, Request("DELETE", "/mcp", "Mcp-Session-Id: " + session + "\r\n", ""));
    }
  }
  // Always answered and closed: a generous timeout, so a loaded machine
  // cannot pass for a wedged server.
  std::string health = Exchange(port, Request("GET", "/healthz", "", ""), false, 10000);
  if (health.rfind("HTTP/1.1 200", 0) != 0) {
    fprintf(stderr, "/healthz answered: %s\n", health.substr(0, 300).c_str());
    abort();
  }
  return 0;
}
