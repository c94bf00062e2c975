// The console's sign-in state (console/console_sessions.h): unguessable
// cookie and CSRF values, idle and absolute expiry, sign-out, revocation of
// a key ending its sessions, the cookie's attributes, and the parsing of
// Cookie headers.
#include <gtest/gtest.h>

#include <set>

#include "console/console_sessions.h"

namespace airlock::console {
namespace {

governance::Caller Admin(const std::string& key_id = "k1") {
  return {.user = "alice", .role = "admin", .auth = "api_key", .key_id = key_id};
}

class ConsoleSessionsTest : public ::testing::Test {
 protected:
  ConsoleSessionOptions Options() {
    ConsoleSessionOptions o;
    o.lifetime = std::chrono::seconds(60);
    o.max_lifetime = std::chrono::seconds(300);
    o.max_sessions = 4;
    o.now_ms = [this] { return now_; };
    return o;
  }
  int64_t now_ = 1'000'000;
};

TEST_F(ConsoleSessionsTest, SignInGivesUnguessableDistinctValues) {
  ConsoleSessions sessions(Options());
  std::set<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    auto s = sessions.SignIn(Admin());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->id.size(), 32u);
    EXPECT_EQ(s->csrf.size(), 32u);
    EXPECT_NE(s->id, s->csrf);
    EXPECT_TRUE(seen.insert(s->id).second);
    EXPECT_TRUE(seen.insert(s->csrf).second);
  }
}

TEST_F(ConsoleSessionsTest, IdleAndAbsoluteExpiry) {
  ConsoleSessions sessions(Options());
  auto s = sessions.SignIn(Admin());
  ASSERT_TRUE(s.ok());
  now_ += 50'000;
  ASSERT_TRUE(sessions.Find(s->id).ok()) << "within the idle lifetime";
  now_ += 50'000;  // 100 s after sign-in, 50 s after the last use
  ASSERT_TRUE(sessions.Find(s->id).ok()) << "each use moves the idle deadline";
  now_ += 61'000;
  EXPECT_EQ(sessions.Find(s->id).status().code(), StatusCode::kNotFound) << "idle too long";

  auto busy = sessions.SignIn(Admin());
  for (int i = 0; i < 10; ++i) {
    now_ += 40'000;
    if (!sessions.Find(busy->id).ok()) break;
  }
  EXPECT_FALSE(sessions.Find(busy->id).ok()) << "never past max_lifetime, however busy";
}

TEST_F(ConsoleSessionsTest, UnknownEndedAndExpiredLookAlike) {
  ConsoleSessions sessions(Options());
  auto s = sessions.SignIn(Admin());
  auto ended = sessions.SignIn(Admin());
  sessions.SignOut(ended->id);
  const std::string unknown = sessions.Find("0123456789abcdef0123456789abcdef").status().message();
  EXPECT_EQ(sessions.Find(ended->id).status().message(), unknown);
  now_ += 120'000;
  EXPECT_EQ(sessions.Find(s->id).status().message(), unknown);
  EXPECT_FALSE(sessions.Find("").ok());
}

TEST_F(ConsoleSessionsTest, CsrfMustMatchExactly) {
  ConsoleSessions sessions(Options());
  auto s = sessions.SignIn(Admin());
  EXPECT_TRUE(ConsoleSessions::CheckCsrf(*s, s->csrf).ok());
  EXPECT_EQ(ConsoleSessions::CheckCsrf(*s, "").code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(ConsoleSessions::CheckCsrf(*s, s->csrf.substr(1)).ok());
  std::string flipped = s->csrf;
  flipped.back() = flipped.back() == 'a' ? 'b' : 'a';
  EXPECT_FALSE(ConsoleSessions::CheckCsrf(*s, flipped).ok());
  auto other = sessions.SignIn(Admin());
  EXPECT_FALSE(ConsoleSessions::CheckCsrf(*s, other->csrf).ok()) << "another session's token";
}

TEST_F(ConsoleSessionsTest, RevokingAKeyEndsItsSessionsOnly) {
  ConsoleSessions sessions(Options());
  auto a = sessions.SignIn(Admin("k1"));
  auto b = sessions.SignIn(Admin("k2"));
  EXPECT_EQ(sessions.EndSessionsOfKey("k1"), 1u);
  EXPECT_FALSE(sessions.Find(a->id).ok());
  EXPECT_TRUE(sessions.Find(b->id).ok());
  EXPECT_EQ(sessions.EndSessionsOfKey(""), 0u);
}

TEST_F(ConsoleSessionsTest, TheOldestGoPastTheCap) {
  ConsoleSessions sessions(Options());
  auto first = sessions.SignIn(Admin());
  for (int i = 0; i < 4; ++i) {
    now_ += 1;
    ASSERT_TRUE(sessions.SignIn(Admin()).ok());
  }
  EXPECT_EQ(sessions.size(), 4u);
  EXPECT_FALSE(sessions.Find(first->id).ok());
}

TEST_F(ConsoleSessionsTest, CookieAttributes) {
  ConsoleSessions sessions(Options());
  auto s = sessions.SignIn(Admin());
  const std::string plain = sessions.CookieFor(*s, false);
  EXPECT_EQ(plain, "airlock_console=" + s->id + "; Path=/console; Max-Age=60; HttpOnly; SameSite=Strict");
  EXPECT_NE(sessions.CookieFor(*s, true).find("; Secure"), std::string::npos);
  EXPECT_EQ(sessions.CookieFor(*s, false).find(s->csrf), std::string::npos) << "the CSRF token never goes in a cookie";
  EXPECT_NE(sessions.ClearingCookie(false).find("Max-Age=0"), std::string::npos);
}

TEST(CookieValueTest, FindsTheNamedCookieOnly) {
  EXPECT_EQ(CookieValue("airlock_console=abc"), "abc");
  EXPECT_EQ(CookieValue("a=1; airlock_console=abc; b=2"), "abc");
  EXPECT_EQ(CookieValue("a=1;airlock_console= abc ;b=2"), "abc");
  EXPECT_EQ(CookieValue("xairlock_console=abc"), "");
  EXPECT_EQ(CookieValue("airlock_consolex=abc"), "");
  EXPECT_EQ(CookieValue(""), "");
  EXPECT_EQ(CookieValue("airlock_console"), "");
}

TEST(ConstantTimeEqualsTest, ComparesContentsAndLengths) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

}  // namespace
}  // namespace airlock::console
