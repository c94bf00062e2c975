// airlock(1)'s renderer (cli/man_page.h) on a small command tree: every
// visible subcommand gets a section with its options, hidden ones none, and
// roff's special characters are escaped. tests/docs/man_page_test.py checks
// the real page against the real binary's --help.
#include "cli/man_page.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace airlock::cli {
namespace {

// The text of the .SS section whose heading starts with `title`.
std::string Section(const std::string& page, const std::string& title) {
  const size_t start = page.find(".SS \"" + title);
  if (start == std::string::npos) return "";
  const size_t end = page.find("\n.S", start + 1);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(ManPage, EverySubcommandWithItsOptions) {
  CLI::App app{"tool: does things"};
  std::string config, listen, user, id;
  bool json = false;
  int n = 0;
  CLI::App* serve = app.add_subcommand("serve", "Serve it");
  serve->add_option("--config", config, "Configuration file")->required();
  serve->add_option("--http", listen, "HOST:PORT");
  CLI::App* keys = app.add_subcommand("keys", "Manage keys");
  keys->add_flag("--json", json, "JSON output");
  CLI::App* create = keys->add_subcommand("create", "Create one");
  create->add_option("--user", user, "Owner");
  create->add_option("--count", n, "How many");
  create->add_option("id", id, "The id")->required();
  CLI::App* hidden = app.add_subcommand("internal", "Not for users");
  hidden->group("");
  hidden->add_option("--secret-fd", n, "fd");

  const std::string page = RenderManPage(app, {.name = "tool", .summary = "does things", .version = "tool 1.0"});
  EXPECT_EQ(page.find(".TH TOOL 1 \"\" \"tool 1.0\" \"User Commands\"\n"), page.find(".TH"));
  const std::string s = Section(page, "tool serve");
  EXPECT_NE(s.find("\\fB\\-\\-config\\fR \\fITEXT\\fR (required)"), std::string::npos) << s;
  EXPECT_NE(s.find("\\fB\\-\\-http\\fR"), std::string::npos) << s;
  EXPECT_NE(s.find("HOST:PORT"), std::string::npos);
  const std::string k = Section(page, "tool keys [OPTIONS] [SUBCOMMAND]");
  EXPECT_NE(k.find("\\-\\-json"), std::string::npos) << page;
  EXPECT_NE(k.find("Subcommands: \\fBcreate\\fR."), std::string::npos) << k;
  const std::string c = Section(page, "tool keys create [OPTIONS] ID");
  EXPECT_NE(c.find("\\-\\-user"), std::string::npos) << page;
  EXPECT_NE(c.find("\\-\\-count\\fR \\fIINT\\fR"), std::string::npos) << c;
  EXPECT_NE(c.find("\\fIID\\fR (required)"), std::string::npos) << c;
  EXPECT_EQ(page.find("internal"), std::string::npos);
  EXPECT_EQ(page.find("secret"), std::string::npos);
}

TEST(ManPage, RoffEscape) {
  EXPECT_EQ(RoffEscape("--http a\\b"), "\\-\\-http a\\eb");
  EXPECT_EQ(RoffEscape(".starts with a dot\n'and a quote"), "\\&.starts with a dot\n\\&'and a quote");
  EXPECT_EQ(RoffEscape("mid.dle"), "mid.dle");
}

}  // namespace
}  // namespace airlock::cli
