// ValidateJsonSchema: every supported keyword (valid and invalid), the JSON
// pointer in messages, local $ref (recursion, cycles), the depth and work
// limits, and real MCP tool input schemas.
#include "gateway/schema_validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace airlock::gateway {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The error message, or "OK".
std::string Check(const json& schema, const json& instance) {
  Status st = ValidateJsonSchema(schema, instance);
  if (st.ok()) return "OK";
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  return st.message();
}

json J(const char* text) { return json::parse(text); }

TEST(SchemaValidator, NullAndBooleanSchemas) {
  EXPECT_EQ(Check(json(), J(R"({"anything": [1, 2]})")), "OK");
  EXPECT_EQ(Check(json(true), 42), "OK");
  EXPECT_EQ(Check(json::object(), "x"), "OK");
  EXPECT_EQ(Check(json(false), 42), "/: no value is allowed here");
  // Not an object or boolean: no constraints (documented).
  EXPECT_EQ(Check(json(17), "x"), "OK");
  EXPECT_EQ(Check(json("string"), "x"), "OK");
  EXPECT_EQ(Check(J(R"({"properties": {"a": false}})"), J(R"({"a": 1})")), "/a: no value is allowed here");
}

TEST(SchemaValidator, TypeNames) {
  struct Case {
    const char* type;
    json ok;
    json bad;
    const char* got;
  } cases[] = {
      {"object", json::object(), json::array(), "array"},
      {"array", json::array(), json::object(), "object"},
      {"string", "s", 1, "number"},
      {"number", 1.5, "1.5", "string"},
      {"integer", 7, 7.5, "number"},
      {"boolean", false, 0, "number"},
      {"null", nullptr, false, "boolean"},
  };
  for (const Case& c : cases) {
    json schema = {{"type", c.type}};
    EXPECT_EQ(Check(schema, c.ok), "OK") << c.type;
    EXPECT_EQ(Check(schema, c.bad), std::string("/: expected ") + c.type + ", got " + c.got) << c.type;
  }
}

TEST(SchemaValidator, IntegerVersusNumber) {
  const json integer = {{"type", "integer"}};
  EXPECT_EQ(Check(integer, J("1.0")), "OK");  // zero fractional part counts
  EXPECT_EQ(Check(integer, J("-3")), "OK");
  EXPECT_EQ(Check(integer, J("18446744073709551615")), "OK");
  EXPECT_EQ(Check(integer, J("1e3")), "OK");
  EXPECT_EQ(Check(integer, J("1.5")), "/: expected integer, got number");
  EXPECT_EQ(Check(integer, J("true")), "/: expected integer, got boolean");
  const json number = {{"type", "number"}};
  EXPECT_EQ(Check(number, J("3")), "OK");
  EXPECT_EQ(Check(number, J("3.25")), "OK");
  EXPECT_EQ(Check(number, J("\"3\"")), "/: expected number, got string");
}

TEST(SchemaValidator, TypeArraysAndNullable) {
  const json schema = J(R"({"type": ["string", "null"]})");
  EXPECT_EQ(Check(schema, "x"), "OK");
  EXPECT_EQ(Check(schema, nullptr), "OK");
  EXPECT_EQ(Check(schema, 3), "/: expected string or null, got number");
  // OpenAPI-style nullable.
  const json nullable = J(R"({"type": "string", "nullable": true})");
  EXPECT_EQ(Check(nullable, nullptr), "OK");
  EXPECT_EQ(Check(nullable, 1), "/: expected string, got number");
  EXPECT_EQ(Check(J(R"({"type": "string"})"), nullptr), "/: expected string, got null");
  // Unknown type names and malformed type values are ignored.
  EXPECT_EQ(Check(J(R"({"type": "any"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"type": 5})"), 1), "OK");
}

TEST(SchemaValidator, PropertiesRequiredAdditional) {
  const json schema = J(R"({
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "required": ["name"],
    "additionalProperties": false})");
  EXPECT_EQ(Check(schema, J(R"({"name": "n"})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"name": "n", "id": 3})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"id": 3})")), "/: missing required property \"name\"");
  EXPECT_EQ(Check(schema, J(R"({"name": "n", "id": "3"})")), "/id: expected integer, got string");
  EXPECT_EQ(Check(schema, J(R"({"name": "n", "extra": 1})")), "/: unexpected property \"extra\"");
  EXPECT_EQ(Check(schema, J("[]")), "/: expected object, got array");

  // additionalProperties as a schema; true; absent.
  const json map = J(R"({"additionalProperties": {"type": "number"}})");
  EXPECT_EQ(Check(map, J(R"({"a": 1, "b": 2.5})")), "OK");
  EXPECT_EQ(Check(map, J(R"({"a": 1, "b": "x"})")), "/b: expected number, got string");
  EXPECT_EQ(Check(J(R"({"additionalProperties": true})"), J(R"({"a": 1})")), "OK");
  EXPECT_EQ(Check(J(R"({"properties": {"a": {"type": "string"}}})"), J(R"({"b": 1})")), "OK");
  // Keywords for objects do not apply to other types.
  EXPECT_EQ(Check(J(R"({"required": ["a"]})"), 5), "OK");
}

TEST(SchemaValidator, PatternPropertiesDisableAdditionalProperties) {
  // Patterns are not matched (no regex on untrusted input), so which
  // properties are "additional" is unknown: both keywords accept.
  const json schema = J(R"({"patternProperties": {"^x-": {"type": "string"}},
                             "additionalProperties": false})");
  EXPECT_EQ(Check(schema, J(R"({"x-a": 1, "other": 2})")), "OK");
  // An empty patternProperties changes nothing.
  EXPECT_EQ(Check(J(R"({"patternProperties": {}, "additionalProperties": false})"), J(R"({"a": 1})")),
            "/: unexpected property \"a\"");
}

TEST(SchemaValidator, MinMaxProperties) {
  const json schema = J(R"({"minProperties": 1, "maxProperties": 2})");
  EXPECT_EQ(Check(schema, J(R"({"a": 1})")), "OK");
  EXPECT_EQ(Check(schema, J("{}")), "/: expected at least 1 properties, got 0");
  EXPECT_EQ(Check(schema, J(R"({"a": 1, "b": 2, "c": 3})")), "/: expected at most 2 properties, got 3");
}

TEST(SchemaValidator, ItemsAndCounts) {
  const json schema = J(R"({"type": "array", "items": {"type": "string", "maxLength": 10},
                             "minItems": 1, "maxItems": 3})");
  EXPECT_EQ(Check(schema, J(R"(["a", "b"])")), "OK");
  EXPECT_EQ(Check(schema, J(R"([])")), "/: expected at least 1 items, got 0");
  EXPECT_EQ(Check(schema, J(R"(["a", "b", "c", "d"])")), "/: expected at most 3 items, got 4");
  EXPECT_EQ(Check(schema, J(R"(["a", 1])")), "/1: expected string, got number");
  EXPECT_EQ(Check(J(R"({"properties": {"tags": {"items": {"maxLength": 10}}}})"),
                  J(R"({"tags": ["a", "b", "0123456789x"]})")),
            "/tags/2: expected at most 10 characters");
}

TEST(SchemaValidator, PrefixItemsAndDraft07Tuples) {
  const json prefix = J(R"({"prefixItems": [{"type": "string"}, {"type": "integer"}],
                             "items": {"type": "boolean"}})");
  EXPECT_EQ(Check(prefix, J(R"(["a", 1, true, false])")), "OK");
  EXPECT_EQ(Check(prefix, J(R"(["a"])")), "OK");
  EXPECT_EQ(Check(prefix, J(R"([1, 1])")), "/0: expected string, got number");
  EXPECT_EQ(Check(prefix, J(R"(["a", 1, "x"])")), "/2: expected boolean, got string");
  const json closed = J(R"({"prefixItems": [{"type": "string"}], "items": false})");
  EXPECT_EQ(Check(closed, J(R"(["a"])")), "OK");
  EXPECT_EQ(Check(closed, J(R"(["a", "b"])")), "/: expected at most 1 items, got 2");

  const json tuple = J(R"({"items": [{"type": "string"}, {"type": "integer"}],
                            "additionalItems": false})");
  EXPECT_EQ(Check(tuple, J(R"(["a", 2])")), "OK");
  EXPECT_EQ(Check(tuple, J(R"(["a", "b"])")), "/1: expected integer, got string");
  EXPECT_EQ(Check(tuple, J(R"(["a", 2, 3])")), "/: expected at most 2 items, got 3");
  const json open_tuple = J(R"({"items": [{"type": "string"}], "additionalItems": {"type": "null"}})");
  EXPECT_EQ(Check(open_tuple, J(R"(["a", null])")), "OK");
  EXPECT_EQ(Check(open_tuple, J(R"(["a", 1])")), "/1: expected null, got number");
  EXPECT_EQ(Check(J(R"({"items": [{"type": "string"}]})"), J(R"(["a", 1])")), "OK");
}

TEST(SchemaValidator, UniqueItems) {
  const json schema = J(R"({"uniqueItems": true})");
  EXPECT_EQ(Check(schema, J(R"([1, 2, "1", [1], {"a": 1}, {"a": 2}, null, false, 0])")), "OK");
  EXPECT_EQ(Check(schema, J("[]")), "OK");
  EXPECT_EQ(Check(schema, J("[1, 2, 1.0]")), "/: expected unique items, but items 0 and 2 are equal");
  EXPECT_EQ(Check(schema, J(R"([{"a": [1, {"b": 2}]}, 5, {"a": [1.0, {"b": 2.0}]}])")),
            "/: expected unique items, but items 0 and 2 are equal");
  EXPECT_EQ(Check(schema, J(R"(["x", "y", "y", "x"])")),
            "/: expected unique items, but items 1 and 2 are equal");
  EXPECT_EQ(Check(J(R"({"uniqueItems": false})"), J("[1, 1]")), "OK");
  // Values that only look alike in a naive encoding stay distinct.
  EXPECT_EQ(Check(schema, J(R"([["ab"], ["a", "b"], "ab", {"ab": null}, {"a": "b"}, 1.5, "1.5"])")), "OK");

  // Large arrays are sorted, not compared pairwise.
  json big = json::array();
  for (int i = 0; i < 60000; ++i) big.push_back(i);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Check(schema, big), "OK");
  big.push_back(59999.0);
  EXPECT_EQ(Check(schema, big), "/: expected unique items, but items 59999 and 60000 are equal");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SchemaValidator, EnumAndConst) {
  const json schema = J(R"({"properties": {"mode": {"enum": ["a", "b"]}}})");
  EXPECT_EQ(Check(schema, J(R"({"mode": "b"})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"mode": "c"})")), "/mode: must be one of \"a\", \"b\"");
  EXPECT_EQ(Check(J(R"({"enum": [1, [2], {"x": null}]})"), J("1.0")), "OK");
  EXPECT_EQ(Check(J(R"({"enum": [1, [2], {"x": null}]})"), J("[2.0]")), "OK");
  EXPECT_EQ(Check(J(R"({"enum": [1, [2], {"x": null}]})"), J(R"({"x": null})")), "OK");
  EXPECT_EQ(Check(J(R"({"enum": [1, [2], {"x": null}]})"), J(R"({"x": null, "y": 1})")),
            "/: must be one of 1, [2], {\"x\":null}");
  EXPECT_EQ(Check(J(R"({"enum": [1]})"), J("true")), "/: must be one of 1");  // true is not 1
  EXPECT_EQ(Check(J(R"({"enum": []})"), J("1")), "/: no value is allowed here (empty enum)");
  // Long enums are listed in part.
  json many = json::array();
  for (int i = 0; i < 20; ++i) many.push_back(i);
  EXPECT_EQ(Check(json{{"enum", many}}, 99), "/: must be one of 0, 1, 2, 3, 4, 5, 6, 7, ...");

  EXPECT_EQ(Check(J(R"({"const": 1})"), J("1.0")), "OK");
  EXPECT_EQ(Check(J(R"({"const": 1.0})"), J("1")), "OK");
  EXPECT_EQ(Check(J(R"({"const": -0.0})"), J("0")), "OK");
  EXPECT_EQ(Check(J(R"({"const": 1})"), J("1.5")), "/: must be equal to 1");
  EXPECT_EQ(Check(J(R"({"const": 9007199254740993})"), J("9007199254740992")),
            "/: must be equal to 9007199254740993");  // exact for big integers
  EXPECT_EQ(Check(J(R"({"const": {"a": [1, "x"]}})"), J(R"({"a": [1, "x"]})")), "OK");
  EXPECT_EQ(Check(J(R"({"const": {"a": [1, "x"]}})"), J(R"({"a": [1, "y"]})")),
            "/: must be equal to {\"a\":[1,\"x\"]}");
  EXPECT_EQ(Check(J(R"({"const": null})"), J("null")), "OK");
  EXPECT_EQ(Check(J(R"({"const": null})"), J("false")), "/: must be equal to null");
  // Long values are cut in messages, on a code point boundary.
  std::string long_value(100, 'x');
  std::string message = Check(json{{"const", long_value}}, "y");
  EXPECT_EQ(message, "/: must be equal to \"" + std::string(36, 'x') + "...");
  EXPECT_NO_THROW(json(Check(json{{"const", std::string(36, 'x') + "\xC3\xA9\xC3\xA9"}}, "y")).dump());
}

TEST(SchemaValidator, NumericBounds) {
  const json schema = J(R"({"minimum": 1, "maximum": 10})");
  EXPECT_EQ(Check(schema, 1), "OK");
  EXPECT_EQ(Check(schema, 10.0), "OK");
  EXPECT_EQ(Check(schema, 0.5), "/: expected >= 1, got 0.5");
  EXPECT_EQ(Check(schema, 11), "/: expected <= 10, got 11");
  EXPECT_EQ(Check(schema, "100"), "OK");  // bounds apply to numbers only

  const json exclusive = J(R"({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5})");
  EXPECT_EQ(Check(exclusive, 1), "OK");
  EXPECT_EQ(Check(exclusive, 0), "/: expected > 0, got 0");
  EXPECT_EQ(Check(exclusive, 1.5), "/: expected < 1.5, got 1.5");

  // Draft-04 boolean form.
  const json draft4 = J(R"({"minimum": 0, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": true})");
  EXPECT_EQ(Check(draft4, 3), "OK");
  EXPECT_EQ(Check(draft4, 0), "/: expected > 0, got 0");
  EXPECT_EQ(Check(draft4, 5), "/: expected < 5, got 5");
  const json draft4_inclusive = J(R"({"minimum": 0, "exclusiveMinimum": false})");
  EXPECT_EQ(Check(draft4_inclusive, 0), "OK");

  // Integers beyond double precision compare exactly; signs and unsigned mix.
  EXPECT_EQ(Check(J(R"({"maximum": 9007199254740992})"), J("9007199254740993")),
            "/: expected <= 9007199254740992, got 9007199254740993");
  EXPECT_EQ(Check(J(R"({"minimum": -5})"), J("18446744073709551615")), "OK");
  EXPECT_EQ(Check(J(R"({"maximum": -5})"), J("-4")), "/: expected <= -5, got -4");
  EXPECT_EQ(Check(J(R"({"minimum": -5})"), J("-6")), "/: expected >= -5, got -6");
}

TEST(SchemaValidator, MultipleOf) {
  EXPECT_EQ(Check(J(R"({"multipleOf": 3})"), 9), "OK");
  EXPECT_EQ(Check(J(R"({"multipleOf": 3})"), -9), "OK");
  EXPECT_EQ(Check(J(R"({"multipleOf": 3})"), 10), "/: expected a multiple of 3, got 10");
  EXPECT_EQ(Check(J(R"({"multipleOf": 0.1})"), 0.3), "OK");  // despite binary rounding
  EXPECT_EQ(Check(J(R"({"multipleOf": 0.01})"), 19.99), "OK");
  EXPECT_EQ(Check(J(R"({"multipleOf": 0.1})"), 0.35), "/: expected a multiple of 0.1, got 0.35");
  EXPECT_EQ(Check(J(R"({"multipleOf": 2})"), 3.0), "/: expected a multiple of 2, got 3.0");
  EXPECT_EQ(Check(J(R"({"multipleOf": 0})"), 3), "OK");  // invalid schema value: ignored
}

TEST(SchemaValidator, StringLengthInCodePoints) {
  const json schema = J(R"({"minLength": 2, "maxLength": 3})");
  EXPECT_EQ(Check(schema, "ab"), "OK");
  EXPECT_EQ(Check(schema, "a"), "/: expected at least 2 characters");
  EXPECT_EQ(Check(schema, "abcd"), "/: expected at most 3 characters");
  // "héé" is 5 bytes but 3 code points; an emoji (4 bytes) is one.
  EXPECT_EQ(Check(schema, "h\xC3\xA9\xC3\xA9"), "OK");
  EXPECT_EQ(Check(schema, "\xF0\x9F\x98\x80\xF0\x9F\x98\x80"), "OK");
  EXPECT_EQ(Check(schema, "\xF0\x9F\x98\x80"), "/: expected at least 2 characters");
  EXPECT_EQ(Check(J(R"({"maxLength": 1})"), J(R"("\u00e9")")), "OK");
  EXPECT_EQ(Check(J(R"({"maxLength": "3"})"), "abcdef"), "OK");  // malformed: ignored
}

TEST(SchemaValidator, PatternAndFormatAreIgnored) {
  // Not run: a catastrophic-backtracking pattern on a long input would hang std::regex.
  const json schema = J(R"({"type": "string", "pattern": "^(a+)+$", "format": "email"})");
  EXPECT_EQ(Check(schema, std::string(50000, 'a') + "!"), "OK");
}

TEST(SchemaValidator, AllOf) {
  const json schema = J(R"({"allOf": [{"type": "integer"}, {"minimum": 5}]})");
  EXPECT_EQ(Check(schema, 7), "OK");
  EXPECT_EQ(Check(schema, 3), "/: expected >= 5, got 3");
  EXPECT_EQ(Check(schema, "7"), "/: expected integer, got string");
}

TEST(SchemaValidator, AnyOfReportsTheClosestAlternative) {
  const json optional_int = J(R"({"anyOf": [{"type": "integer"}, {"type": "null"}]})");
  EXPECT_EQ(Check(optional_int, 3), "OK");
  EXPECT_EQ(Check(optional_int, nullptr), "OK");
  EXPECT_EQ(Check(optional_int, "x"),
            "/: matches no alternative of anyOf (closest: /: expected integer, got string)");
  const json shapes = J(R"({"anyOf": [
      {"type": "string"},
      {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]}]})");
  EXPECT_EQ(Check(shapes, J(R"({"r": "big"})")),
            "/: matches no alternative of anyOf (closest: /r: expected number, got string)");
  // Nested alternatives report only the innermost closest failure.
  const json nested = J(R"({"anyOf": [
      {"anyOf": [{"type": "string"}, {"type": "null"}]},
      {"type": "object", "properties": {"a": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}}}]})");
  EXPECT_EQ(Check(nested, 1), "/: matches no alternative of anyOf (closest: /: expected string, got number)");
  EXPECT_EQ(Check(nested, J(R"({"a": "x"})")),
            "/: matches no alternative of anyOf (closest: /a: expected integer, got string)");
}

TEST(SchemaValidator, OneOf) {
  const json schema = J(R"({"oneOf": [{"type": "integer"}, {"minimum": 10}]})");
  EXPECT_EQ(Check(schema, 3), "OK");     // integer only
  EXPECT_EQ(Check(schema, 10.5), "OK");  // minimum only
  EXPECT_EQ(Check(schema, 12), "/: matches more than one alternative of oneOf (0 and 1)");
  EXPECT_EQ(Check(schema, 2.5), "/: matches no alternative of oneOf (closest: /: expected integer, got number)");
}

TEST(SchemaValidator, Not) {
  const json schema = J(R"({"not": {"type": "string"}})");
  EXPECT_EQ(Check(schema, 1), "OK");
  EXPECT_EQ(Check(schema, "s"), "/: must not match the \"not\" schema");
  EXPECT_EQ(Check(J(R"({"properties": {"a": {"not": true}}})"), J(R"({"a": 1})")),
            "/a: must not match the \"not\" schema");
}

TEST(SchemaValidator, IfThenElse) {
  const json schema = J(R"({
    "if": {"properties": {"kind": {"const": "file"}}, "required": ["kind"]},
    "then": {"required": ["path"]},
    "else": {"required": ["url"]}})");
  EXPECT_EQ(Check(schema, J(R"({"kind": "file", "path": "/x"})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"kind": "file"})")), "/: missing required property \"path\"");
  EXPECT_EQ(Check(schema, J(R"({"kind": "web", "url": "u"})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"kind": "web"})")), "/: missing required property \"url\"");
  EXPECT_EQ(Check(J(R"({"if": {"type": "string"}, "then": {"minLength": 2}})"), 5), "OK");  // no else
  EXPECT_EQ(Check(J(R"({"then": false})"), 5), "OK");  // then without if
}

TEST(SchemaValidator, RefToDefsAndDefinitions) {
  const json schema = J(R"({
    "$defs": {"id": {"type": "integer", "minimum": 1}},
    "definitions": {"name": {"type": "string"}, "a/b": {"const": 1}, "t~x": {"const": 2},
                    "sp ace": {"const": 3}},
    "type": "object",
    "properties": {
      "id": {"$ref": "#/$defs/id"},
      "name": {"$ref": "#/definitions/name"},
      "slash": {"$ref": "#/definitions/a~1b"},
      "tilde": {"$ref": "#/definitions/t~0x"},
      "space": {"$ref": "#/definitions/sp%20ace"},
      "first": {"$ref": "#/properties/id"}
    }})");
  EXPECT_EQ(Check(schema, J(R"({"id": 1, "name": "n", "slash": 1, "tilde": 2, "space": 3, "first": 2})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"id": 0})")), "/id: expected >= 1, got 0");
  EXPECT_EQ(Check(schema, J(R"({"name": 5})")), "/name: expected string, got number");
  EXPECT_EQ(Check(schema, J(R"({"slash": 2})")), "/slash: must be equal to 1");
  EXPECT_EQ(Check(schema, J(R"({"tilde": 1})")), "/tilde: must be equal to 2");
  EXPECT_EQ(Check(schema, J(R"({"space": 1})")), "/space: must be equal to 3");
  EXPECT_EQ(Check(schema, J(R"({"first": "x"})")), "/first: expected integer, got string");
  // Siblings of $ref apply too (2020-12).
  EXPECT_EQ(Check(J(R"({"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n", "maximum": 3})"), 4),
            "/: expected <= 3, got 4");
  // Items of arrays in pointers.
  EXPECT_EQ(Check(J(R"({"anyOf": [{"type": "string"}], "properties": {"a": {"$ref": "#/anyOf/0"}}})"),
                  J(R"({"a": 1})")),
            "/a: expected string, got number");
}

TEST(SchemaValidator, UnresolvableAndRemoteRefsAcceptAnything) {
  EXPECT_EQ(Check(J(R"({"$ref": "#/$defs/missing"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "https://example.com/schema.json"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "other.json#/x"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "#anchor"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "#/bad~2escape"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "#/%zz"})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": "#/anyOf/01", "anyOf": [true, false]})"), 1), "OK");
  EXPECT_EQ(Check(J(R"({"$ref": 5})"), 1), "OK");
  // ...but the siblings still apply.
  EXPECT_EQ(Check(J(R"({"$ref": "https://example.com/s", "type": "string"})"), 1),
            "/: expected string, got number");
}

TEST(SchemaValidator, RecursiveTreeSchema) {
  const json schema = J(R"({
    "$ref": "#/$defs/node",
    "$defs": {"node": {
      "type": "object",
      "properties": {"value": {"type": "integer"},
                     "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "required": ["value"],
      "additionalProperties": false}}})");
  const json tree = J(R"({"value": 1, "children": [
      {"value": 2},
      {"value": 3, "children": [{"value": 4, "children": [{"value": 5, "children": []}]}]}]})");
  EXPECT_EQ(Check(schema, tree), "OK");
  json bad = tree;
  bad["children"][1]["children"][0]["children"][0]["value"] = "five";
  EXPECT_EQ(Check(schema, bad), "/children/1/children/0/children/0/value: expected integer, got string");
  bad = tree;
  bad["children"][1]["children"][0]["extra"] = true;
  EXPECT_EQ(Check(schema, bad), "/children/1/children/0: unexpected property \"extra\"");

  // Arbitrarily deep values hit the depth cap instead of the stack.
  json deep = {{"value", 0}};
  for (int i = 0; i < 1000; ++i) {
    json parent = {{"value", i}, {"children", json::array()}};
    parent["children"].push_back(std::move(deep));
    deep = std::move(parent);
  }
  EXPECT_THAT(Check(schema, deep), HasSubstr("schema too deeply nested"));
}

TEST(SchemaValidator, SelfReferenceDoesNotHang) {
  EXPECT_THAT(Check(J(R"({"$ref": "#"})"), 1), HasSubstr("$ref cycle"));
  EXPECT_THAT(Check(J(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                          "$ref": "#/$defs/a"})"),
                    J("{}")),
              StartsWith("/: $ref cycle"));
  // A cycle is not inverted by "not" or hidden by anyOf.
  EXPECT_THAT(Check(J(R"({"not": {"$ref": "#"}})"), 1), HasSubstr("$ref cycle"));
  EXPECT_THAT(Check(J(R"({"anyOf": [{"type": "string"}, {"$ref": "#"}]})"), 1), HasSubstr("$ref cycle"));
  EXPECT_EQ(Check(J(R"({"anyOf": [{"type": "string"}, {"$ref": "#"}]})"), "s"), "OK");
  // Recursion that descends into the value is not a cycle.
  EXPECT_EQ(Check(J(R"({"items": {"$ref": "#"}})"), J("[[[]], []]")), "OK");
}

TEST(SchemaValidator, DepthCap) {
  json schema = json::object();
  for (int i = 0; i < kMaxSchemaDepth; ++i) schema = {{"allOf", json::array({schema})}};
  EXPECT_EQ(Check(schema, 1), "OK");  // exactly at the cap
  schema = {{"allOf", json::array({schema})}};
  EXPECT_EQ(Check(schema, 1), "/: schema too deeply nested");
  // Not inverted by "not".
  EXPECT_EQ(Check(json{{"not", schema}}, 1), "/: schema too deeply nested");

  json nested_schema = {{"type", "array"}};
  json nested_value = json::array();
  for (int i = 0; i < 200; ++i) {
    nested_schema = {{"items", nested_schema}};
    nested_value = json::array({nested_value});
  }
  EXPECT_THAT(Check(nested_schema, nested_value), HasSubstr("schema too deeply nested"));
}

TEST(SchemaValidator, ExponentialSchemaHitsTheWorkBudget) {
  // d0 = anyOf[d1, d1], d1 = anyOf[d2, d2], ... d29 = false: 2^30 paths.
  json defs = json::object();
  for (int i = 0; i < 29; ++i) {
    std::string next = "#/$defs/d" + std::to_string(i + 1);
    defs["d" + std::to_string(i)] = {{"anyOf", {{{"$ref", next}}, {{"$ref", next}}}}};
  }
  defs["d29"] = false;
  const json schema = {{"$defs", defs}, {"$ref", "#/$defs/d0"}};
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(Check(schema, 1), HasSubstr("validation too expensive"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Not inverted by "not" either.
  EXPECT_THAT(Check(json{{"$defs", defs}, {"not", {{"$ref", "#/$defs/d0"}}}}, 1),
              HasSubstr("validation too expensive"));
}

TEST(SchemaValidator, LargeInstancesStayFast) {
  // ~256 KiB of arguments against a schema that looks at every element.
  json big = json::object();
  json& list = big["values"] = json::array();
  for (int i = 0; i < 40000; ++i) list.push_back({{"k", i % 7}, {"s", "abc"}});
  const json schema = J(R"({"properties": {"values": {"type": "array", "uniqueItems": false, "items": {
      "type": "object", "required": ["k"], "additionalProperties": {"type": "string", "maxLength": 5},
      "properties": {"k": {"anyOf": [{"type": "string"}, {"enum": [0, 1, 2, 3, 4, 5, 6]}]}}}}}})");
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Check(schema, big), "OK");
  big["values"][39999]["s"] = "toolong";
  EXPECT_EQ(Check(schema, big), "/values/39999/s: expected at most 5 characters");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(SchemaValidator, DeeplyNestedValuesAreNotComparedRecursively) {
  json deep = 1;
  for (int i = 0; i < 5000; ++i) {
    json parent = json::array();
    parent.push_back(std::move(deep));
    deep = std::move(parent);
  }
  EXPECT_EQ(Check(J(R"({"const": 1})"), deep), "/: must be equal to 1");  // stops at the shallow side
  EXPECT_THAT(Check(J(R"({"uniqueItems": true})"), json::array({deep, deep})),
              HasSubstr("value nested too deeply to compare"));
  EXPECT_THAT(Check(json{{"not", {{"uniqueItems", true}}}}, json::array({deep, 2})),
              HasSubstr("value nested too deeply to compare"));
  EXPECT_THAT(Check(json{{"enum", json::array({deep})}}, deep), HasSubstr("value nested too deeply to compare"));
}

TEST(SchemaValidator, PointerEscaping) {
  const json schema = J(R"({"additionalProperties": {"type": "string"}})");
  EXPECT_EQ(Check(schema, J(R"({"a/b~c": 1})")), "/a~1b~0c: expected string, got number");
  EXPECT_EQ(Check(schema, J(R"({"": 1})")), "/: expected string, got number");
  EXPECT_EQ(Check(J(R"({"additionalProperties": false})"), J(R"({"q\"x": 1})")),
            "/: unexpected property \"q\\\"x\"");
}

TEST(SchemaValidator, UnknownKeywordsAreIgnored) {
  const json schema = J(R"({"type": "string", "x-custom": {"type": "number"}, "description": "d",
                             "propertyNames": false, "contains": false, "unevaluatedProperties": false})");
  EXPECT_EQ(Check(schema, "s"), "OK");
  EXPECT_EQ(Check(J(R"({"propertyNames": {"maxLength": 1}})"), J(R"({"long": 1})")), "OK");
}

// server-everything's `add` tool.
TEST(SchemaValidator, McpEverythingAdd) {
  const json schema = J(R"({
    "type": "object",
    "properties": {"a": {"type": "number", "description": "First number"},
                   "b": {"type": "number", "description": "Second number"}},
    "required": ["a", "b"],
    "additionalProperties": false,
    "$schema": "http://json-schema.org/draft-07/schema#"})");
  EXPECT_EQ(Check(schema, J(R"({"a": 1, "b": 2.5})")), "OK");
  EXPECT_EQ(Check(schema, J(R"({"a": 1})")), "/: missing required property \"b\"");
  EXPECT_EQ(Check(schema, J(R"({"a": "1", "b": 2})")), "/a: expected number, got string");
  EXPECT_EQ(Check(schema, J(R"({"a": 1, "b": 2, "c": 3})")), "/: unexpected property \"c\"");
  EXPECT_EQ(Check(schema, J("null")), "/: expected object, got null");
}

// server-memory's `create_entities` tool.
TEST(SchemaValidator, McpMemoryCreateEntities) {
  const json schema = J(R"({
    "type": "object",
    "properties": {
      "entities": {
        "type": "array",
        "items": {
          "type": "object",
          "properties": {
            "name": {"type": "string", "description": "The name of the entity"},
            "entityType": {"type": "string", "description": "The type of the entity"},
            "observations": {"type": "array", "items": {"type": "string"},
                             "description": "An array of observation contents"}
          },
          "required": ["name", "entityType", "observations"]
        }
      }
    },
    "required": ["entities"]})");
  EXPECT_EQ(Check(schema, J(R"({"entities": [
      {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
      {"name": "Engine", "entityType": "machine", "observations": []}]})")),
            "OK");
  EXPECT_EQ(Check(schema, J(R"({"entities": []})")), "OK");
  EXPECT_EQ(Check(schema, J("{}")), "/: missing required property \"entities\"");
  EXPECT_EQ(Check(schema, J(R"({"entities": [{"name": "Ada", "observations": []}]})")),
            "/entities/0: missing required property \"entityType\"");
  EXPECT_EQ(Check(schema, J(R"({"entities": [
      {"name": "Ada", "entityType": "person", "observations": ["ok"]},
      {"name": "Bob", "entityType": "person", "observations": ["ok", 7]}]})")),
            "/entities/1/observations/1: expected string, got number");
  EXPECT_EQ(Check(schema, J(R"({"entities": {"name": "Ada"}})")), "/entities: expected array, got object");
}

}  // namespace
}  // namespace airlock::gateway
