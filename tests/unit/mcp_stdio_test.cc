// ServeStdio over socketpairs: framing, bad input, oversized lines, EOF.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "mcp/stdio_transport.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::Request;
using testing::RunCode;

class McpStdioTest : public ::testing::Test {
 protected:
  void Start(config::Config c = config::DefaultConfig()) {
    server_ = std::make_unique<McpServer>(c, executor_);
    int in[2], out[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in), 0);
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out), 0);
    client_in_ = UniqueFd(in[0]);
    server_in_ = UniqueFd(in[1]);
    client_out_ = UniqueFd(out[0]);
    server_out_ = UniqueFd(out[1]);
    done_ = std::async(std::launch::async, [this] { return ServeStdio(*server_, server_in_.get(), server_out_.get()); });
  }
  ~McpStdioTest() override {
    client_in_.Reset();
    if (done_.valid()) done_.wait();
  }

  void Write(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(client_in_.get(), s.data() + off, s.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
  }
  void Send(const json& j) { Write(j.dump() + "\n"); }
  // Next line from the server, parsed (null on EOF / timeout).
  json ReadMessage() {
    for (;;) {
      size_t nl = pending_.find('\n');
      if (nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        return json::parse(line);
      }
      pollfd p{client_out_.get(), POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return nullptr;
      char buf[4096];
      ssize_t n = ::read(client_out_.get(), buf, sizeof buf);
      if (n <= 0) return nullptr;
      pending_.append(buf, n);
    }
  }

  FakeExecutor executor_;
  std::unique_ptr<McpServer> server_;
  UniqueFd client_in_, server_in_, client_out_, server_out_;
  std::future<int> done_;
  std::string pending_;
};

TEST_F(McpStdioTest, ParseErrorKeepsTheConnectionWorking) {
  Start();
  Write("this is not json\n");
  json r = ReadMessage();
  EXPECT_EQ(r["error"]["code"], -32700);
  EXPECT_TRUE(r["id"].is_null());
  Write("\n   \n");  // blank lines are ignored
  Send(InitializeRequest(1));
  r = ReadMessage();
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
  Write(Request(2, "tools/list").dump() + "\r\n");  // CRLF tolerated
  r = ReadMessage();
  EXPECT_EQ(r["id"], 2);
  EXPECT_TRUE(r["result"].contains("tools"));
}

TEST_F(McpStdioTest, OversizedMessageIsRejectedWithoutStoppingTheServer) {
  config::Config c = config::DefaultConfig();
  c.server.max_message_bytes = 4096;
  Start(c);
  // 3 MiB in one line, written from another thread (the server must keep
  // draining it, and answers before the line ends).
  std::string big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"" + std::string(3 << 20, 'a') + "\"}\n";
  std::thread writer([&] { Write(big); });
  json r = ReadMessage();
  writer.join();
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_EQ(r["error"]["message"], "message too large (limit 4096 bytes)");
  Send(Request(2, "ping"));
  r = ReadMessage();
  EXPECT_EQ(r["id"], 2);
  EXPECT_EQ(r["result"], json::object());
}

TEST_F(McpStdioTest, ToolCallsDoNotBlockReadingAndEofCancelsRuns) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Start();
  Send(InitializeRequest(1));
  ReadMessage();
  Send(RunCode(2, {{"language", "python"}, {"code", "x"}}));
  ASSERT_TRUE(executor_.WaitRunning(1));
  Send(Request(3, "ping"));
  json r = ReadMessage();
  EXPECT_EQ(r["id"], 3) << "ping answered while the run is in progress";
  client_in_.Reset();  // EOF
  ASSERT_EQ(done_.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(done_.get(), 0);
  EXPECT_EQ(executor_.cancelled_runs, 1);
}

TEST_F(McpStdioTest, CancelledRunSendsNothing) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Start();
  Send(InitializeRequest(1));
  ReadMessage();
  Send(RunCode(2, {{"language", "python"}, {"code", "x"}}, {{"progressToken", 7}}));
  json r = ReadMessage();
  EXPECT_EQ(r["method"], "notifications/progress");
  EXPECT_EQ(r["params"]["progressToken"], 7);
  ASSERT_TRUE(executor_.WaitRunning(1));
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 2}}}});
  ASSERT_TRUE(executor_.WaitCancelled(1));
  Send(Request(3, "ping"));
  // Skip the remaining progress notification(s); the next response must be
  // the ping's, never one for id 2.
  for (;;) {
    r = ReadMessage();
    ASSERT_FALSE(r.is_null());
    if (r.contains("id")) break;
  }
  EXPECT_EQ(r["id"], 3);
}

}  // namespace
}  // namespace airlock::mcp
