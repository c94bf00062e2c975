// Turning a runtimes::RunResult into an MCP CallToolResult:
//  * structuredContent: runtimes::ToJson(result) (described by
//    RunResultOutputSchema());
//  * content: one readable text block (status line, compile output, stdout,
//    stderr, file list), then every image file (png/jpeg/gif/webp) as an
//    `image` block and every other file as an embedded `resource` with uri
//    file:///work/<name> (text when valid UTF-8, else base64 blob);
//  * isError: true whenever status != ok.
// The whole result stays under kMaxToolResultBytes serialized (see
// FitToReplyBudget).
#ifndef AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_
#define AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "runtimes/run_types.h"

namespace airlock::mcp {

// The largest tools/call result airlock builds, serialized. The official
// TypeScript SDK's stdio transport drops the connection on a message over
// 10 MiB (its ReadBuffer limit), and file bytes appear twice in a result
// (structuredContent and a content block); 9 MiB leaves room for the
// JSON-RPC envelope.
inline constexpr size_t kMaxToolResultBytes = 9u << 20;

// Applies FitToReplyBudget(result, kMaxToolResultBytes), then builds the
// CallToolResult.
nlohmann::json BuildRunCodeResult(const runtimes::RunResult& result);

// Makes `result` fit a CallToolResult of at most `max_bytes` serialized:
// output files that would not fit (in order, the first ones kept) move to
// files_skipped with reason "max_reply_bytes"; if the rest alone is too
// large, stdout, stderr and compile output are cut (their truncated flags
// set). Every change is said in notes. A result that fits is unchanged.
runtimes::RunResult FitToReplyBudget(runtimes::RunResult result, size_t max_bytes);

// The run_code outputSchema (JSON Schema of runtimes::ToJson(RunResult)).
nlohmann::json RunResultOutputSchema();

// The readable summary used as the first text block.
std::string RunResultText(const runtimes::RunResult& result);

// "file:///work/" + name with characters outside RFC 3986 unreserved and
// '/' percent-encoded.
std::string WorkFileUri(const std::string& name);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_RESULT_H_
