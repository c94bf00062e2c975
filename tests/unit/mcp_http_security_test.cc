#include <gtest/gtest.h>

#include <set>

#include "mcp/http_security.h"

namespace airlock::mcp {
namespace {

TEST(McpHttpSecurity, Origins) {
  std::vector<std::string> none;
  EXPECT_TRUE(OriginAllowed("http://localhost:3000", none));
  EXPECT_TRUE(OriginAllowed("http://127.0.0.1", none));
  EXPECT_TRUE(OriginAllowed("https://[::1]:8443", none));
  EXPECT_FALSE(OriginAllowed("http://evil.example", none));
  EXPECT_FALSE(OriginAllowed("http://localhost.evil.example", none));
  EXPECT_FALSE(OriginAllowed("http://127.0.0.1@evil.example", none));
  EXPECT_FALSE(OriginAllowed("null", none));
  EXPECT_FALSE(OriginAllowed("file://localhost", none));
  EXPECT_TRUE(OriginAllowed("https://App.Example.com", {"https://app.example.com/"}));
  EXPECT_FALSE(OriginAllowed("https://app.example.com:444", {"https://app.example.com"}));
}

TEST(McpHttpSecurity, Hosts) {
  EXPECT_TRUE(HostAllowed("localhost:8787", true, {}));
  EXPECT_TRUE(HostAllowed("127.0.0.1:8787", true, {}));
  EXPECT_TRUE(HostAllowed("[::1]:8787", true, {}));
  EXPECT_FALSE(HostAllowed("evil.example:8787", true, {}));
  EXPECT_TRUE(HostAllowed("evil.example:8787", false, {}));
  EXPECT_FALSE(HostAllowed("evil.example", false, {"mcp.example"}));
  EXPECT_TRUE(HostAllowed("MCP.example:443", false, {"mcp.example"}));
}

TEST(McpHttpSecurity, Accept) {
  EXPECT_TRUE(AcceptsType("application/json, text/event-stream", "text/event-stream"));
  EXPECT_TRUE(AcceptsType("text/event-stream;q=0.9,application/json", "application/json"));
  EXPECT_TRUE(AcceptsType("*/*", "application/json"));
  EXPECT_TRUE(AcceptsType("text/*", "text/event-stream"));
  EXPECT_FALSE(AcceptsType("application/json", "text/event-stream"));
  EXPECT_FALSE(AcceptsType("", "application/json"));
}

TEST(McpHttpSecurity, Bearer) {
  EXPECT_TRUE(BearerMatches("Bearer s3cret", "s3cret"));
  EXPECT_TRUE(BearerMatches("bearer  s3cret ", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer s3cretX", "s3cret"));
  EXPECT_FALSE(BearerMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer ", ""));
}

TEST(McpHttpSecurity, SessionIdsAreRandomHex) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    std::string id = RandomSessionId();
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 100u);
}

}  // namespace
}  // namespace airlock::mcp
