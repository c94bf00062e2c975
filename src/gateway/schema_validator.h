// Validates tool-call arguments against a tool's `inputSchema` (JSON Schema)
// before the gateway dispatches them to a downstream MCP server.
//
// The arguments come from untrusted code, so the validator is written to be
// safe on hostile input: it never throws, never runs a regex, caps recursion
// and caps the total work of one call. It is a pre-check, not the authority:
// the downstream server still validates its own arguments, so keywords that
// cannot be checked cheaply and safely are skipped (they accept) rather than
// guessed at.
//
//   Status st = ValidateJsonSchema(tool.input_schema, arguments);
//   if (!st.ok()) return st;  // e.g. "/id: expected integer, got string"
//
// On failure the result is InvalidArgument, and its message starts with the
// JSON pointer of the first violation ("/" is the whole value), then what was
// expected:
//   "/: missing required property \"name\""
//   "/tags/2: expected at most 10 characters"
//   "/mode: must be one of \"a\", \"b\""
//
// Supported keywords (draft 2020-12 and draft-07 / draft-04 spellings):
//   boolean schemas (true, false); a null schema means "no constraints"
//   type (a name or an array of names; "integer" also accepts 1.0),
//     OpenAPI "nullable": true (null passes the type check)
//   properties, required, additionalProperties (bool or schema),
//     minProperties, maxProperties
//   items (schema; the draft-07 array form is a tuple, with additionalItems),
//     prefixItems, minItems, maxItems, uniqueItems
//   enum, const (JSON equality; 1 and 1.0 are equal)
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (2020 number form
//     and draft-04 boolean form), multipleOf
//   minLength, maxLength (counted in Unicode code points)
//   allOf, anyOf, oneOf, not, if / then / else
//   $ref to a local JSON pointer ("#", "#/$defs/X", "#/definitions/X", with
//     ~0 ~1 and %-escapes), resolved against the root schema; siblings of
//     $ref are applied too (2020-12 semantics)
//
// Ignored (they accept anything; the downstream server still checks them):
//   pattern, format (no regex engine runs on untrusted input: ReDoS and deep
//     backtracking stacks), patternProperties (and, when it is present and
//     non-empty, additionalProperties too: without matching the patterns the
//     validator cannot tell which properties are "additional"), propertyNames,
//     contains, dependentRequired, dependentSchemas, dependencies,
//     unevaluatedProperties, unevaluatedItems, content*, $dynamicRef, and any
//     unknown keyword.
//   $ref that is remote ("other.json#/x", "https://..."), an anchor ("#foo"),
//     or a local pointer that does not resolve; $id / $anchor never change
//     how "#/..." resolves (always against the root schema).
//   A schema (or subschema) that is neither an object nor a boolean, and a
//     keyword whose value has the wrong JSON type (e.g. "minLength": "3"),
//     or an unknown type name in "type".
//
// Limits (each fails with InvalidArgument, never inverted by not/anyOf/oneOf/if):
//   * more than kMaxSchemaDepth nested subschema applications (each $ref,
//     allOf/anyOf/... branch and property/item step counts one):
//     "schema too deeply nested". This bounds recursion on both the schema
//     and the instance.
//   * a $ref that leads back to itself on the same value (e.g. {"$ref": "#"}):
//     "$ref cycle".
//   * more than kMaxValidationSteps units of work (subschema applications,
//     visited properties, enum comparisons, string/uniqueItems bytes): this
//     bounds schemas whose anyOf/oneOf/$ref structure would otherwise make the
//     work exponential, and large instances meeting expensive schemas.
//   * enum/const/uniqueItems comparisons of values nested deeper than 128.
#ifndef AIRLOCK_GATEWAY_SCHEMA_VALIDATOR_H_
#define AIRLOCK_GATEWAY_SCHEMA_VALIDATOR_H_

#include <cstddef>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::gateway {

// The most nested subschema applications one validation may make.
inline constexpr int kMaxSchemaDepth = 64;

// The work budget of one validation (see "Limits" above). A unit costs about
// 0.1-0.3 us, so a hostile call burns at most a few hundred milliseconds of
// CPU; 256 KiB of arguments checked element by element use about a tenth.
inline constexpr size_t kMaxValidationSteps = 2'000'000;

// Validates `instance` against `schema`. OK, or InvalidArgument whose message
// names the JSON pointer of the first violation and what was expected.
// Never throws; never recurses unboundedly.
Status ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& instance);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_SCHEMA_VALIDATOR_H_
