// The downstream MCP servers of tests/fixtures/mcp-servers (node scripts and
// npm reference servers) for the gateway and code-mode tests: where they
// are, whether `npm install` ran there, and a server started with
// `--http 0` that prints "listening PORT".
#ifndef AIRLOCK_TESTS_UNIT_MCP_FIXTURE_SERVERS_H_
#define AIRLOCK_TESTS_UNIT_MCP_FIXTURE_SERVERS_H_

#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gateway/child_process.h"

namespace airlock::tests {

inline const std::string kMcpFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";

// True if node is on PATH and `npm install` put `package` (e.g.
// "@modelcontextprotocol/sdk") in the fixtures' node_modules.
inline bool McpFixturesInstalled(const std::string& package = "@modelcontextprotocol/sdk") {
  return std::filesystem::exists(kMcpFixtures + "/node_modules/" + package) &&
         !gateway::FindExecutable("node", getenv("PATH") ? getenv("PATH") : "").empty();
}

// `node SCRIPT --http 0 EXTRA...` from the fixtures, alive while this object
// is; port() is 0 if it did not print "listening PORT" within 15 s.
class FixtureHttpServer {
 public:
  FixtureHttpServer(const std::string& script, std::vector<std::string> extra = {},
                    std::vector<std::string> env = {}) {
    gateway::SpawnOptions opts;
    opts.command = "node";
    opts.args = {kMcpFixtures + "/" + script, "--http", "0"};
    opts.args.insert(opts.args.end(), extra.begin(), extra.end());
    opts.env = {std::string("PATH=") + getenv("PATH"), "HOME=/tmp"};
    opts.env.insert(opts.env.end(), env.begin(), env.end());
    opts.search_path = getenv("PATH");
    opts.capture_stderr = false;
    auto child = gateway::ChildProcess::Spawn(opts);
    if (!child.ok()) return;
    child_ = std::move(child).value();
    std::string line;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < until && line.find('\n') == std::string::npos) {
      pollfd p{child_->stdout_fd(), POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = read(child_->stdout_fd(), buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    if (line.rfind("listening ", 0) == 0) port_ = std::stoi(line.substr(10));
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

 private:
  std::unique_ptr<gateway::ChildProcess> child_;
  int port_ = 0;
};

}  // namespace airlock::tests

#endif  // AIRLOCK_TESTS_UNIT_MCP_FIXTURE_SERVERS_H_
