// Turning a runtimes::RunResult into an MCP CallToolResult:
//  * structuredContent: runtimes::ToJson(result) (described by
//    RunResultOutputSchema());
//  * content: one readable text block (status line, compile output, stdout,
//    stderr, file list), then every image file (png/jpeg/gif/webp) as an
//    `image` block and every other file as an embedded `resource` with uri
//    file:///work/<name> (text when valid UTF-8, else base64 blob);
//  * isError: true whenever status != ok.
#ifndef AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_
#define AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "runtimes/run_types.h"

namespace airlock::mcp {

nlohmann::json BuildRunCodeResult(const runtimes::RunResult& result);

// The run_code outputSchema (JSON Schema of runtimes::ToJson(RunResult)).
nlohmann::json RunResultOutputSchema();

// The readable summary used as the first text block.
std::string RunResultText(const runtimes::RunResult& result);

// "file:///work/" + name with characters outside RFC 3986 unreserved and
// '/' percent-encoded.
std::string WorkFileUri(const std::string& name);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_
