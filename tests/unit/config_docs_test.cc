// docs/configuration.md tells the truth about the config loader: its "Full
// example (all defaults)" is accepted by the real loader, sets every key the
// loader knows to exactly its built-in default, and covers every key of the
// page's own table; and a default the table states as a JSON value is the
// loader's default. A key added to the loader without documentation fails
// here, naming the key.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "codemode/settings.h"
#include "config/config.h"

namespace airlock::config {
namespace {

using nlohmann::json;

const char kDoc[] = "docs/configuration.md";
const char kExampleHeading[] = "## Full example (all defaults)";

// Top-level objects that have no values to show in an "all defaults" file:
// their defaults are built-in behaviour (no connectors; endpoint "default";
// roles reader and admin; access), stated in the example's preamble.
const std::set<std::string> kOpaqueKeys = {"mcpServers", "endpoints", "roles", "access"};

std::string ReadDoc() {
  std::ifstream in(std::string(AIRLOCK_SOURCE_DIR) + "/" + kDoc);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of the first ```json block after `heading`; "" if there is none.
std::string JsonBlockAfter(const std::string& doc, const std::string& heading) {
  size_t h = doc.find("\n" + heading + "\n");
  if (h == std::string::npos) return "";
  size_t open = doc.find("```json\n", h);
  size_t next_heading = doc.find("\n## ", h + 1);
  if (open == std::string::npos || (next_heading != std::string::npos && open > next_heading)) return "";
  open += 8;
  size_t close = doc.find("\n```", open);
  return close == std::string::npos ? "" : doc.substr(open, close - open + 1);
}

// Every leaf of `j` by dotted path ("server.http.listen"); arrays are leaves.
void Leaves(const json& j, const std::string& prefix, std::map<std::string, json>* out) {
  if (!j.is_object() || j.empty()) {
    (*out)[prefix] = j;
    return;
  }
  for (const auto& [key, value] : j.items()) Leaves(value, prefix.empty() ? key : prefix + "." + key, out);
}

std::map<std::string, json> LeavesOf(const json& j) {
  std::map<std::string, json> out;
  Leaves(j, "", &out);
  return out;
}

struct TableRow {
  std::string key;
  std::string default_cell;
};

// The rows of the "## Keys" table: | `key` | type | default | meaning |.
std::vector<TableRow> TableRows(const std::string& doc) {
  std::vector<TableRow> rows;
  size_t start = doc.find("\n## Keys\n");
  if (start == std::string::npos) return rows;
  size_t end = doc.find("\n## ", start + 1);
  std::istringstream lines(doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  static const std::regex kRow(R"(^\| `([A-Za-z_$][A-Za-z0-9_.]*)` \|[^|]*\| *(.*?) *\|)");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, kRow)) rows.push_back({m[1], m[2]});
  }
  return rows;
}

// `path` or one of its dotted prefixes is in `keys`.
bool CoveredBy(const std::string& path, const std::set<std::string>& keys) {
  for (size_t dot = path.size(); dot != std::string::npos; dot = path.rfind('.', dot - 1)) {
    if (keys.count(path.substr(0, dot))) return true;
    if (dot == 0) break;
  }
  return false;
}

class ConfigDocs : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_ = ReadDoc();
    ASSERT_FALSE(doc_.empty()) << "cannot read " << AIRLOCK_SOURCE_DIR << "/" << kDoc;
    std::string block = JsonBlockAfter(doc_, kExampleHeading);
    ASSERT_FALSE(block.empty()) << kDoc << ": no ```json block under \"" << kExampleHeading << "\"";
    example_ = json::parse(block, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    ASSERT_FALSE(example_.is_discarded()) << kDoc << ": the full example is not valid JSON";
    ASSERT_TRUE(example_.is_object());
    defaults_ = ConfigToJson(DefaultConfig());
    for (const TableRow& r : TableRows(doc_)) table_.insert(r.key);
    ASSERT_GT(table_.size(), 50u) << kDoc << ": the keys table was not found or not parsed";
  }

  std::string doc_;
  json example_;
  json defaults_;
  std::set<std::string> table_;
};

TEST_F(ConfigDocs, FullExampleIsAcceptedByTheLoader) {
  StatusOr<Config> c = ConfigFromJson(example_);
  ASSERT_TRUE(c.ok()) << kDoc << "'s full example is rejected by the config loader: " << c.status().message();
  StatusOr<codemode::Settings> s = codemode::SettingsFromJson(example_.value("codeMode", json()));
  ASSERT_TRUE(s.ok()) << kDoc << "'s full example: codeMode is rejected: " << s.status().message();
}

TEST_F(ConfigDocs, FullExampleSetsEveryValueToItsDefault) {
  StatusOr<Config> c = ConfigFromJson(example_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  json loaded = ConfigToJson(*c);
  loaded.erase("codeMode");  // compared below, through its own loader
  // The same keys on both sides (both come from ConfigToJson), so this
  // compares every value.
  std::map<std::string, json> defaults = LeavesOf(defaults_);
  for (const auto& [path, value] : LeavesOf(loaded)) {
    EXPECT_EQ(value, defaults[path]) << kDoc << "'s full example sets " << path << " to " << value.dump()
                                     << ", but its default is " << defaults[path].dump();
  }

  StatusOr<codemode::Settings> s = codemode::SettingsFromJson(example_.value("codeMode", json()));
  ASSERT_TRUE(s.ok()) << s.status().message();
  const codemode::Settings d;
  EXPECT_EQ(s->enabled, d.enabled) << "codeMode.enabled";
  EXPECT_EQ(s->proposals_per_hour, d.proposals_per_hour) << "codeMode.proposals_per_hour";
  EXPECT_EQ(s->limits.ToJson(), d.limits.ToJson()) << "codeMode.limits";
}

// The completeness check: a key the loader knows (it has a default, or
// ConfigSchemaDoc() describes it) must be in the example.
TEST_F(ConfigDocs, FullExampleHasEveryKeyTheLoaderKnows) {
  std::map<std::string, json> shown = LeavesOf(example_);
  std::set<std::string> known;
  for (const auto& [path, value] : LeavesOf(defaults_)) known.insert(path);
  const json schema = ConfigSchemaDoc(), limits = codemode::Limits{}.ToJson();
  for (const auto& [path, entry] : schema.items()) known.insert(path);
  for (const auto& [key, value] : limits.items()) known.insert("codeMode.limits." + key);
  known.insert("codeMode.enabled");
  known.insert("codeMode.proposals_per_hour");
  for (const std::string& key : known) {
    if (kOpaqueKeys.count(key) || key == "codeMode") continue;
    EXPECT_TRUE(shown.count(key)) << "config key " << key << " is accepted by the loader but missing from " << kDoc
                                  << "'s full example (add it there with its default value)";
  }
  for (const auto& [path, value] : shown) {
    EXPECT_TRUE(known.count(path)) << kDoc << "'s full example has " << path
                                   << ", which the loader has no default for";
  }
}

TEST_F(ConfigDocs, TableAndExampleNameTheSameKeys) {
  std::map<std::string, json> shown = LeavesOf(example_);
  std::set<std::string> shown_objects;  // "server", "server.http", ... and every leaf
  for (const auto& [path, value] : shown) {
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
      shown_objects.insert(path.substr(0, dot));
    }
    shown_objects.insert(path);
  }
  for (const std::string& key : table_) {
    if (kOpaqueKeys.count(key)) continue;
    EXPECT_TRUE(shown_objects.count(key)) << "config key " << key << " is in " << kDoc
                                          << "'s table but missing from its full example";
  }
  for (const auto& [path, value] : shown) {
    EXPECT_TRUE(CoveredBy(path, table_)) << "config key " << path << " is in " << kDoc
                                         << "'s full example but has no row in its table";
  }
  const json schema = ConfigSchemaDoc();
  for (const auto& [path, entry] : schema.items()) {
    EXPECT_TRUE(table_.count(path)) << "config key " << path << " is described by ConfigSchemaDoc() but has no row in "
                                    << kDoc << "'s table";
  }
}

// A default cell that is one JSON value in backticks (`3600`, `"native"`,
// `["python"]`, `null`) must be the loader's default.
TEST_F(ConfigDocs, TableDefaultsAreTheLoadersDefaults) {
  std::map<std::string, json> defaults = LeavesOf(defaults_);
  static const std::regex kOneValue(R"(^`([^`]*)`$)");
  int compared = 0;
  for (const TableRow& r : TableRows(doc_)) {
    std::smatch m;
    if (!defaults.count(r.key) || !std::regex_match(r.default_cell, m, kOneValue)) continue;
    json stated = json::parse(m[1].str(), nullptr, /*allow_exceptions=*/false);
    if (stated.is_discarded()) continue;
    ++compared;
    EXPECT_EQ(stated, defaults[r.key]) << kDoc << "'s table says " << r.key << " defaults to " << r.default_cell
                                       << ", but the loader's default is " << defaults[r.key].dump();
  }
  EXPECT_GT(compared, 40) << "too few table defaults could be compared; has the table's format changed?";
}

}  // namespace
}  // namespace airlock::config
