// The pure parts of the gateway's catalog: effective class (G2), result
// normalisation, search ranking helpers, TypeScript signatures, SSE parsing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gateway/gateway.h"
#include "gateway/sse_parser.h"
#include "gateway/tool_search.h"
#include "gateway/ts_signature.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

TEST(GatewayCatalog, EffectiveClassFollowsG2) {
  ConnectorConfig untrusted;
  ConnectorConfig trusted;
  trusted.trusted = true;
  ConnectorConfig pinned;
  pinned.read_only_tools = {"write_note"};
  const json ro = {{"readOnlyHint", true}};
  const json rw = {{"readOnlyHint", false}};
  EXPECT_TRUE(EffectiveReadOnly(trusted, "echo", ro));            // trusted + readOnlyHint
  EXPECT_FALSE(EffectiveReadOnly(untrusted, "echo", ro));         // annotations are untrusted
  EXPECT_FALSE(EffectiveReadOnly(trusted, "write_note", rw));
  EXPECT_FALSE(EffectiveReadOnly(trusted, "crash", json()));      // no annotations: write
  EXPECT_FALSE(EffectiveReadOnly(trusted, "x", json::object()));  // no hint: write
  EXPECT_FALSE(EffectiveReadOnly(trusted, "x", {{"readOnlyHint", "true"}}));  // === true only
  EXPECT_FALSE(EffectiveReadOnly(trusted, "x", {{"readOnlyHint", 1}}));
  EXPECT_TRUE(EffectiveReadOnly(pinned, "write_note", rw));       // admin pin beats annotations
  EXPECT_FALSE(EffectiveReadOnly(pinned, "Write_note", ro));      // exact bytes, untrusted
}

TEST(GatewayCatalog, NormalizesResultsPerBridgeContract) {
  bool is_error = true;
  EXPECT_EQ(NormalizeToolResult({{"content", {{{"type", "text"}, {"text", "x"}}}}, {"structuredContent", {{"a", 1}}}},
                                &is_error),
            json({{"a", 1}}));
  EXPECT_FALSE(is_error);
  EXPECT_EQ(NormalizeToolResult({{"content", {{{"type", "text"}, {"text", "[1,2]"}}}}}, &is_error), json({1, 2}));
  EXPECT_EQ(NormalizeToolResult({{"content", {{{"type", "text"}, {"text", "plain words"}}}}}, &is_error),
            json("plain words"));
  EXPECT_EQ(NormalizeToolResult({{"content", {{{"type", "text"}, {"text", "42"}}}}}, &is_error), json(42));
  json image = {{"content", {{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}}}}};
  EXPECT_EQ(NormalizeToolResult(image, &is_error), image["content"]);
  json err = {{"isError", true}, {"content", {{{"type", "text"}, {"text", "boom"}}}}, {"structuredContent", {{"a", 1}}}};
  EXPECT_EQ(NormalizeToolResult(err, &is_error), json("boom"));
  EXPECT_TRUE(is_error);
}

TEST(GatewayCatalog, BridgeErrorCodes) {
  EXPECT_STREQ(BridgeErrorCode(Cancelled("x")), "E_CANCELLED");
  EXPECT_STREQ(BridgeErrorCode(NotFound("x")), "E_TOOL_NOT_DECLARED");
  EXPECT_STREQ(BridgeErrorCode(InvalidArgument("x")), "E_INVALID_ARGS");
  EXPECT_STREQ(BridgeErrorCode(DeadlineExceeded("x")), "E_TOOL_ERROR");
  EXPECT_STREQ(BridgeErrorCode(Unavailable("x")), "E_TOOL_ERROR");
  CallOutcome bad;
  bad.error_code = "E_TOOL_ERROR";
  bad.error_message = "boom";
  EXPECT_EQ(bad.ToBridgeReply(7), json::parse(R"({"id":7,"ok":false,"error":{"code":"E_TOOL_ERROR","message":"boom"}})"));
  CallOutcome good;
  good.ok = true;
  good.value = {{"a", 1}};
  EXPECT_EQ(good.ToBridgeReply(8), json::parse(R"({"id":8,"ok":true,"result":{"a":1}})"));
}

TEST(GatewayCatalog, TokenizeAndSummary) {
  EXPECT_EQ(Tokenize("crm.getContact_by-ID now"),
            (std::vector<std::string>{"crm", "get", "contact", "by", "id", "now"}));
  EXPECT_EQ(OneLineSummary("Echoes the text. Second sentence.\nSecond line"), "Echoes the text.");
  EXPECT_EQ(OneLineSummary("  first line only\nmore"), "first line only");
  std::string long_text(300, 'a');
  std::string s = OneLineSummary(long_text);
  EXPECT_EQ(s.size(), 120u);
  EXPECT_EQ(s.substr(117), "...");
  // UTF-8 is never cut inside a character.
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xE2\x82\xAC";
  s = OneLineSummary(euros);
  EXPECT_LE(s.size(), 120u);
  EXPECT_EQ((s.size() - 3) % 3, 0u);
}

TEST(GatewayCatalog, ScoringWeightsNameOverParamsOverDescription) {
  SearchDocument by_name{"a.contact", "contact", "does things", {}};
  SearchDocument by_param{"a.lookup", "lookup", "does things", {"contact"}};
  SearchDocument by_desc{"a.other", "other", "finds a contact", {}};
  SearchDocument none{"a.zzz", "zzz", "nothing", {"q"}};
  auto terms = Tokenize("contact");
  double n = ScoreTool(terms, "contact", by_name), p = ScoreTool(terms, "contact", by_param),
         d = ScoreTool(terms, "contact", by_desc);
  EXPECT_GT(n, p);
  EXPECT_GT(p, d);
  EXPECT_GT(d, 0);
  EXPECT_EQ(ScoreTool(terms, "contact", none), 0);
}

TEST(GatewayCatalog, SignatureFromSchema) {
  json schema = json::parse(R"({
    "type": "object",
    "properties": {
      "id": {"type": "number"},
      "fields": {"type": "array", "items": {"type": "string"}}
    },
    "required": ["id"]
  })");
  EXPECT_EQ(ToolSignature("crm.get_contact", "", schema, json()),
            R"(function "crm.get_contact"(args: { id: number; fields?: string[] }): Promise<unknown>)");

  json complex = json::parse(R"({
    "type": "object",
    "$defs": {"Tag": {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}},
    "properties": {
      "mode": {"enum": ["fast", "full"], "description": "How hard to try"},
      "key": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
      "maybe": {"type": ["string", "null"]},
      "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
      "filter": {"type": "object", "properties": {"min-age": {"type": "integer", "description": "years */ evil"}}},
      "meta": {"type": "object", "additionalProperties": {"type": "boolean"}},
      "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
      "either": {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "number"}]}},
      "fixed": {"const": 3}
    },
    "required": ["mode", "key"]
  })");
  std::string sig = ToolSignature("t.complex", "Does it.\nReally. */ not closed", complex,
                                  json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean"}}})"));
  EXPECT_NE(sig.find("/**\n * Does it.\n * Really. *\\/ not closed\n */\n"), std::string::npos) << sig;
  EXPECT_NE(sig.find(R"(function "t.complex"(args: {)"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  /** How hard to try */\n  mode: \"fast\" | \"full\";"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  key: string | number;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  maybe?: string | null;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  tags?: { label: string }[];"), std::string::npos) << sig;
  EXPECT_NE(sig.find("    /** years *\\/ evil */\n    \"min-age\"?: number;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  meta?: Record<string, boolean>;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  pair?: [string, number];"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  either?: (string | number)[];"), std::string::npos) << sig;
  EXPECT_NE(sig.find("  fixed?: 3;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("}): Promise<{ ok?: boolean }>"), std::string::npos) << sig;

  // No required properties: args may be omitted; no properties at all: {}.
  EXPECT_EQ(ToolSignature("a.b", "", json::parse(R"({"type":"object"})"), json()),
            R"(function "a.b"(args?: {}): Promise<unknown>)");
  // Self-reference is cut, not looped.
  json recursive = json::parse(R"({"type":"object","properties":{"next":{"$ref":"#"}}})");
  EXPECT_NE(SchemaToTypeScript(recursive).find("unknown"), std::string::npos);
}

TEST(GatewayCatalog, SseParser) {
  std::vector<SseEvent> events;
  SseParser parser([&](const SseEvent& e) { events.push_back(e); });
  // Split across chunks, CRLF and LF, comments, multi-line data, ids, other event types.
  ASSERT_TRUE(parser.Feed(": keep-alive\r\nevent: message\r\nid: 1\r\ndata: {\"a\":"));
  ASSERT_TRUE(parser.Feed("1}\r\n\r"));
  ASSERT_TRUE(parser.Feed("\ndata: line1\ndata:line2\n\nevent: ping\ndata: x\n\nid: 9\n\n"));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[0].id, "1");
  EXPECT_EQ(events[1].data, "line1\nline2");
  EXPECT_EQ(events[1].event, "message");
  EXPECT_EQ(events[2].event, "ping");
  EXPECT_EQ(parser.last_event_id(), "1");  // an event without data is not dispatched
}

}  // namespace
}  // namespace airlock::gateway
