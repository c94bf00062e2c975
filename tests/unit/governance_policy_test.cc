// Roles, endpoints and access (governance/policy.h): parsing, defaults,
// errors that name the key, and the visibility / write decisions.
#include "governance/policy.h"

#include <gtest/gtest.h>

namespace airlock::governance {
namespace {

using nlohmann::json;

Policy Parse(const json& roles, const json& endpoints = nullptr, const json& access = nullptr) {
  StatusOr<Policy> p = Policy::FromJson(roles, endpoints, access);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : Policy::FromJson(nullptr, nullptr, nullptr).value();
}

std::string Error(const json& roles, const json& endpoints = nullptr, const json& access = nullptr) {
  StatusOr<Policy> p = Policy::FromJson(roles, endpoints, access);
  return p.ok() ? "" : p.status().message();
}

TEST(GlobMatch, StarMatchesAnyRunAndEverythingElseIsLiteral) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "crm.get"));
  EXPECT_TRUE(GlobMatch("crm.*", "crm.get_contact"));
  EXPECT_TRUE(GlobMatch("crm.get_*", "crm.get_"));
  EXPECT_TRUE(GlobMatch("*.search*", "docs.search_pages"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYY"));
  EXPECT_FALSE(GlobMatch("crm.*", "crmx.get"));
  EXPECT_FALSE(GlobMatch("crm.get", "crm.get "));
  EXPECT_FALSE(GlobMatch("crm.get", "CRM.get"));       // no case folding
  EXPECT_FALSE(GlobMatch("crm.?et", "crm.get"));       // ? is literal
  EXPECT_FALSE(GlobMatch("test.echo", "test.\xEF\xBD\x85" "cho"));  // fullwidth e
  // Many stars against a long non-match stays fast (no exponential backtracking).
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST(Policy, DefaultsAreOneEndpointAndTheBuiltInRoles) {
  Policy p = Parse(nullptr);
  ASSERT_EQ(p.endpoints().size(), 1u);
  const Endpoint* e = p.DefaultEndpoint();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "default");
  EXPECT_EQ(e->path, "/mcp");
  EXPECT_EQ(e->code_mode, CodeMode::kInline);
  EXPECT_FALSE(e->gateway);
  const Role* reader = p.FindRole("reader");
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->inline_code);
  EXPECT_FALSE(reader->MayWrite("crm"));
  EXPECT_FALSE(reader->admin);
  const Role* admin = p.FindRole("admin");
  ASSERT_NE(admin, nullptr);
  EXPECT_TRUE(admin->admin);
  EXPECT_TRUE(admin->MayWrite("anything"));
  EXPECT_EQ(p.stdio().role, "reader");
  EXPECT_FALSE(p.stdio().user.empty());  // the OS user
  EXPECT_EQ(p.token_role(), "reader");
}

TEST(Policy, RolesNarrowConnectorsToolsAndWrites) {
  Policy p = Parse({{"analyst", {{"connectors", {"crm", "docs"}}, {"tools", {"crm.get_*", "docs.*"}}}},
                    {"writer", {{"connectors", {"crm"}}, {"write", {"crm"}}, {"inline", false}}}});
  const Endpoint& e = *p.DefaultEndpoint();
  Caller analyst{.user = "bob", .role = "analyst"};
  EXPECT_TRUE(p.SeesConnector(analyst, e, "crm"));
  EXPECT_FALSE(p.SeesConnector(analyst, e, "mail"));
  EXPECT_TRUE(p.SeesTool(analyst, e, "crm", "crm.get_contact"));
  EXPECT_FALSE(p.SeesTool(analyst, e, "crm", "crm.delete_contact"));
  EXPECT_TRUE(p.SeesTool(analyst, e, "docs", "docs.search"));
  EXPECT_FALSE(p.SeesTool(analyst, e, "mail", "mail.read"));  // pattern "*" would not help: connector unseen
  EXPECT_FALSE(p.MayWrite(analyst, "crm"));
  Caller writer{.user = "carol", .role = "writer"};
  EXPECT_TRUE(p.MayWrite(writer, "crm"));
  EXPECT_FALSE(p.MayWrite(writer, "docs"));
  EXPECT_FALSE(p.FindRole("writer")->inline_code);
  EXPECT_FALSE(p.FindRole("writer")->propose);  // defaults to inline
  // An undefined role sees nothing and may do nothing.
  Caller ghost{.user = "x", .role = "ghost"};
  EXPECT_FALSE(p.SeesConnector(ghost, e, "crm"));
  EXPECT_FALSE(p.SeesTool(ghost, e, "crm", "crm.get_contact"));
  EXPECT_FALSE(p.MayWrite(ghost, "crm"));
  EXPECT_FALSE(p.IsAdmin(ghost));
}

TEST(Policy, EndpointsIntersectWithRoles) {
  Policy p = Parse(nullptr, {{"team", {{"path", "/mcp"}, {"connectors", {"crm"}}}},
                             {"gw", {{"gateway", true}, {"code_mode", "off"}, {"run_code", false}}}});
  const Endpoint* team = p.FindEndpoint("team");
  const Endpoint* gw = p.FindEndpoint("gw");
  ASSERT_TRUE(team && gw);
  EXPECT_EQ(gw->path, "/gw");  // default path: /NAME
  EXPECT_EQ(gw->code_mode, CodeMode::kOff);
  EXPECT_TRUE(gw->gateway);
  EXPECT_EQ(p.DefaultEndpoint(), nullptr);  // two endpoints, none named "default"
  EXPECT_EQ(p.EndpointNames(), "gw, team");  // what `serve` then tells the user to pick from
  Caller admin{.user = "alice", .role = "admin"};
  EXPECT_TRUE(p.SeesConnector(admin, *team, "crm"));
  EXPECT_FALSE(p.SeesConnector(admin, *team, "docs"));  // even admins: the endpoint does not have it
  EXPECT_TRUE(p.SeesConnector(admin, *gw, "docs"));
}

TEST(Policy, AccessSetsWhoCallersAreWithoutAKey) {
  Policy p = Parse({{"ops", json::object()}}, nullptr,
                   {{"stdio", {{"user", "operator1"}, {"role", "ops"}}}, {"token_role", "admin"}});
  EXPECT_EQ(p.stdio().user, "operator1");
  EXPECT_EQ(p.stdio().role, "ops");
  EXPECT_EQ(p.token_role(), "admin");
  EXPECT_EQ(p.anonymous_role(), "reader");
}

TEST(Policy, ErrorsNameTheKey) {
  EXPECT_EQ(Error({{"dev", {{"write", {"crm", 3}}}}}), "roles.dev.write[1]: expected a string");
  EXPECT_EQ(Error({{"dev", {{"wirte", {"crm"}}}}}), "roles.dev: unknown key \"wirte\"");
  EXPECT_EQ(Error({{"dev", {{"admin", "yes"}}}}), "roles.dev.admin: expected true or false");
  EXPECT_NE(Error({{"dev", {{"connectors", {"bad name"}}}}}).find("roles.dev.connectors[0]"), std::string::npos);
  EXPECT_NE(Error({{"bad role!", json::object()}}).find("not a role name"), std::string::npos);
  EXPECT_EQ(Error(nullptr, {{"a", {{"code_mode", "sometimes"}}}}),
            "endpoints.a.code_mode: expected \"off\", \"tools\" or \"inline\"");
  EXPECT_NE(Error(nullptr, {{"a", {{"path", "/x"}}}, {"b", {{"path", "/x"}}}}).find("used by another endpoint"),
            std::string::npos);
  EXPECT_NE(Error(nullptr, {{"a", {{"path", "no-slash"}}}}).find("endpoints.a.path"), std::string::npos);
  EXPECT_NE(Error(nullptr, {{"a", {{"path", "/a/../b"}}}}).find("endpoints.a.path"), std::string::npos);
  EXPECT_NE(Error(nullptr, json::object()).find("at least one endpoint"), std::string::npos);
  EXPECT_EQ(Error(nullptr, nullptr, {{"stdio", {{"role", "nobody"}}}}), "access.stdio.role: no role named \"nobody\"");
  EXPECT_EQ(Error(nullptr, nullptr, {{"token_role", "ghost"}}), "access.token_role: no role named \"ghost\"");
  EXPECT_EQ(Error(nullptr, nullptr, {{"extra", 1}}), "access: unknown key \"extra\"");
}

}  // namespace
}  // namespace airlock::governance
