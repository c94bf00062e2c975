// --log-format json (base/json_log_relay.h): text lines from the server, the
// runner and connectors become JSON objects with a level and an event; and
// the relay really catches what is written to fd 2, its children's included.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/json_log_relay.h"

namespace airlock {
namespace {

using nlohmann::json;

TEST(JsonLogRelayTest, LinesAreClassified) {
  json server = JsonLogLine("airlock: connector crm: connection refused (will retry on use)\n", 1000);
  EXPECT_EQ(server["event"], "server");
  EXPECT_EQ(server["level"], "info");
  EXPECT_EQ(server["message"], "connector crm: connection refused (will retry on use)");
  EXPECT_EQ(server["time"], "1970-01-01T00:00:01.000Z");
  json runner = JsonLogLine("airlock-runner[42]: ignoring a frame of unknown type \"x\"", 0);
  EXPECT_EQ(runner["event"], "runner");
  EXPECT_EQ(runner["message"], "ignoring a frame of unknown type \"x\"");
  json client = JsonLogLine("airlock: runner client: the code runner process exited unexpectedly", 0);
  EXPECT_EQ(client["event"], "runner_client");
  json connector = JsonLogLine("[connector crm] listening on stdio", 0);
  EXPECT_EQ(connector["event"], "connector");
  EXPECT_EQ(connector["connector"], "crm");
  EXPECT_EQ(connector["message"], "listening on stdio");
  EXPECT_EQ(JsonLogLine("airlock: WARNING: audit log write failed", 0)["level"], "warning");
  EXPECT_EQ(JsonLogLine("airlock: warning: the code runner is not available", 0)["level"], "warning");
  EXPECT_EQ(JsonLogLine("airlock runner: fatal: boom", 0)["level"], "error");
  EXPECT_EQ(JsonLogLine("bad \xff bytes \x01", 0).dump(-1, ' ', false, json::error_handler_t::replace).find('\n'),
            std::string::npos);
}

TEST(JsonLogRelayTest, EveryLineOnStderrBecomesOneJsonObject) {
  // In a child process: fd 2 goes to a file, the relay on top of it.
  char path[] = "/tmp/airlock_json_log_XXXXXX";
  const int out = mkstemp(path);
  ASSERT_GE(out, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out, 2);
    {
      auto relay = JsonLogRelay::Start();
      if (!relay.ok()) _exit(3);
      fprintf(stderr, "airlock: hello\n");
      LogEvent("tool_call", {{"run_id", "r_1"}, {"status", "ok"}});
      // A grandchild writing to the inherited fd 2, without a final newline.
      if (system("printf 'airlock-runner[7]: from a child\\npartial' >&2") != 0) _exit(4);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "not one JSON object: " << line;
    lines.push_back(j);
  }
  unlink(path);
  close(out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["message"], "hello");
  EXPECT_EQ(lines[1]["event"], "tool_call");
  EXPECT_EQ(lines[1]["run_id"], "r_1");
  EXPECT_EQ(lines[2]["event"], "runner");
  EXPECT_EQ(lines[2]["message"], "from a child");
  EXPECT_EQ(lines[3]["message"], "partial");
}

}  // namespace
}  // namespace airlock
