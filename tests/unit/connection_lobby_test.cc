// ConnectionLobby: a request reaches the ready callback only once its whole
// body has arrived; slow bodies are cut (408), oversized or chunked ones
// refused, without the callback ever running.
#include "mcp/connection_lobby.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace airlock::mcp {
namespace {

using namespace std::chrono_literals;

class LobbyTest : public ::testing::Test {
 protected:
  void Start(ConnectionLobby::Options o) {
    lobby_ = std::make_unique<ConnectionLobby>(std::move(o), [this](int fd, std::string request,
                                                                 std::unique_ptr<TlsConnection>) {
      std::lock_guard<std::mutex> lock(mu_);
      ready_.push_back(request);
      close(fd);
      cv_.notify_all();
    });
  }
  // A connected pair: the lobby gets one end, the test writes the other.
  int Connect() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    lobby_->Add(sv[0], /*kept_alive=*/false);
    return sv[1];
  }
  // A TCP loopback connection (the lobby gets the accepted end): closing a
  // TCP socket with unread input resets it, which a socketpair does not.
  int ConnectTcp() {
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listener, 1), 0);
    EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    lobby_->Add(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC), /*kept_alive=*/false);
    close(listener);
    return client;
  }
  void Send(int fd, const std::string& s) { ASSERT_EQ(write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  // What the lobby wrote before closing (waits for EOF, up to 10 s).
  std::string Answer(int fd) {
    std::string out;
    char buf[512];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) return out + "<no EOF>";
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  std::vector<std::string> WaitReady(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, 10s, [&] { return ready_.size() >= n; });
    return ready_;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> ready_;
  std::unique_ptr<ConnectionLobby> lobby_;
};

TEST_F(LobbyTest, HandsOverTheWholeRequestAndLeavesAPipelinedOneInTheKernel) {
  Start({});
  const int fd = Connect();
  const std::string head = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n";
  Send(fd, head + "01234");
  usleep(100 * 1000);
  EXPECT_TRUE(WaitReady(0).empty());
  Send(fd, "56789GET /next HTTP/1.1\r\n\r\n");
  const std::vector<std::string> got = WaitReady(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], head + "0123456789");
  close(fd);
}

TEST_F(LobbyTest, ABodyThatDoesNotArriveInTimeIsCutWith408) {
  ConnectionLobby::Options o;
  o.body_deadline = 500ms;
  Start(std::move(o));
  const int absent = Connect();
  Send(absent, "POST /mcp HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
  const int trickle = Connect();
  Send(trickle, "POST /console/api/signin HTTP/1.1\r\nContent-Length: 100\r\n\r\nab");
  EXPECT_EQ(Answer(absent).rfind("HTTP/1.1 408", 0), 0u);
  EXPECT_EQ(Answer(trickle).rfind("HTTP/1.1 408", 0), 0u);
  EXPECT_TRUE(WaitReady(0).empty());
  EXPECT_EQ(lobby_->slow_bodies(), 2u);
  EXPECT_EQ(lobby_->waiting(), 0u);
  close(absent);
  close(trickle);
}

TEST_F(LobbyTest, ABodyBelowTheMinimumRateIsCutAtTheFirstCheck) {
  ConnectionLobby::Options o;
  o.body_deadline = 60s;
  o.rate_window = 300ms;
  o.body_min_rate = 1000;  // 300 bytes per window
  Start(std::move(o));
  const int fd = Connect();
  Send(fd, "POST /mcp HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + std::string(10, 'x'));
  EXPECT_EQ(Answer(fd).rfind("HTTP/1.1 408", 0), 0u);
  EXPECT_TRUE(WaitReady(0).empty());
  close(fd);
}

TEST_F(LobbyTest, OversizedChunkedAndMalformedBodiesAreRefused) {
  ConnectionLobby::Options o;
  o.body_limit = [](const RequestHead& head) -> uint64_t { return head.path == "/small" ? 4 : 1 << 20; };
  Start(std::move(o));
  const int big = Connect();
  Send(big, "POST /small HTTP/1.1\r\nContent-Length: 5\r\n\r\n12345");
  const int huge = Connect();
  Send(huge, "POST /small HTTP/1.1\r\nContent-Length: 100000000000\r\n\r\n");
  const int chunked = Connect();
  Send(chunked, "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  const int bad = Connect();
  Send(bad, "POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n");
  EXPECT_EQ(Answer(big).rfind("HTTP/1.1 413", 0), 0u);
  EXPECT_EQ(Answer(huge).rfind("HTTP/1.1 413", 0), 0u);
  EXPECT_EQ(Answer(chunked).rfind("HTTP/1.1 411", 0), 0u);
  EXPECT_EQ(Answer(bad).rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_TRUE(WaitReady(0).empty());
  EXPECT_EQ(lobby_->refused(), 4u);
  for (int fd : {big, huge, chunked, bad}) close(fd);
}

TEST_F(LobbyTest, AnOversizedHeaderGets431BeforeTheConnectionCloses) {
  Start({});
  std::string fields;
  while (fields.size() < (100 << 10)) fields += "X-Filler-" + std::to_string(fields.size()) + ": " + std::string(100, 'a') + "\r\n";
  const int whole = ConnectTcp();    // 100 KiB of header fields, each short
  const int one_line = ConnectTcp();  // one 20 KiB field
  // Sent from threads: the lobby may answer and close before all is sent.
  std::thread send_whole([&] {
    const std::string r = "GET /mcp HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n";
    [[maybe_unused]] ssize_t n = send(whole, r.data(), r.size(), MSG_NOSIGNAL);
  });
  std::thread send_line([&] {
    const std::string r = "GET /mcp HTTP/1.1\r\nX-Big: " + std::string(20 << 10, 'b') + "\r\n\r\n";
    [[maybe_unused]] ssize_t n = send(one_line, r.data(), r.size(), MSG_NOSIGNAL);
  });
  EXPECT_EQ(Answer(whole).rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u);
  EXPECT_EQ(Answer(one_line).rfind("HTTP/1.1 431", 0), 0u);
  send_whole.join();
  send_line.join();
  EXPECT_TRUE(WaitReady(0).empty());
  EXPECT_EQ(lobby_->refused(), 2u);
  // Many fields under the limits together still reach the server.
  const int fine = ConnectTcp();
  Send(fine, "GET /mcp HTTP/1.1\r\nHost: x\r\n" + fields.substr(0, fields.rfind("\r\n", 40 << 10) + 2) + "\r\n");
  EXPECT_EQ(WaitReady(1).size(), 1u);
  for (int fd : {whole, one_line, fine}) close(fd);
}

TEST_F(LobbyTest, Expect100ContinueIsAnsweredBeforeTheBody) {
  Start({});
  const int fd = Connect();
  Send(fd, "POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
  char buf[64] = {};
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "HTTP/1.1 100 Continue\r\n\r\n");
  Send(fd, "abc");
  ASSERT_EQ(WaitReady(1).size(), 1u);
  close(fd);
}

}  // namespace
}  // namespace airlock::mcp
