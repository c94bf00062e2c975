// TypeScript-style signatures for tools, generated from their JSON Schemas,
// so a model writing code sees `function "crm.get_contact"(args: { id:
// number; fields?: string[] }): Promise<unknown>` instead of raw schema.
//
// Handles type (and type arrays), object properties with required/optional,
// arrays and tuples, enum/const literals, anyOf/oneOf unions, allOf
// intersections, local $ref (#/$defs, #/definitions), additionalProperties
// maps and `nullable`. Descriptions become JSDoc comments. Anything else is
// `unknown`. Nesting deeper than 8 levels is cut to `unknown`. Properties are
// listed required first, then optional, each group by name.
#ifndef AIRLOCK_GATEWAY_TS_SIGNATURE_H_
#define AIRLOCK_GATEWAY_TS_SIGNATURE_H_

#include <string>

#include <nlohmann/json.hpp>

namespace airlock::gateway {

// The TypeScript type of `schema`; `indent` is the current indentation
// (two spaces per level) used when the type spans lines.
std::string SchemaToTypeScript(const nlohmann::json& schema, int indent = 0);

// The full signature, with the description as a JSDoc block on top. The
// return type is the output schema's type when there is one (the bridge
// returns structuredContent), else `unknown`.
std::string ToolSignature(const std::string& name, const std::string& description,
                          const nlohmann::json& input_schema, const nlohmann::json& output_schema);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_TS_SIGNATURE_H_
