// What of a tool call's arguments may go into the audit log (research
// codemode.md §6.5 AU3: "stored redacted or truncated by a documented rule;
// secrets never appear").
//
//   CallRow row{..., .args_sha256 = Sha256Hex(args.dump()), .args_redacted = RedactArgs(args)};
//
// The rule, applied recursively to objects and arrays:
//   1. A member whose KEY contains, ignoring case, any of
//        password passwd secret token api_key api-key apikey authorization
//        auth cookie private_key credential
//      has its value (whatever its type) replaced by "[redacted]". This errs
//      on the side of hiding: "author" and "tokens_used" are hidden too.
//   2. A string VALUE that starts with "Bearer " or "Basic " (any case) is
//      replaced by "[redacted]" (an Authorization header passed as data).
//   3. A string longer than 256 bytes keeps its first 256 bytes (never cut
//      inside a UTF-8 sequence) followed by "…[N bytes]", N the original size.
//   4. Values nested more than 32 levels deep become "[too deep]".
//   5. If the compact JSON of the result is still larger than `max_bytes`,
//      the whole value becomes {"_truncated": true, "_bytes": N}, N the size
//      of that JSON.
// Numbers, booleans and null are kept. Keys are kept (they are needed to
// read the record); a key that is itself a secret is the caller's problem.
#ifndef AIRLOCK_AUDIT_REDACTION_H_
#define AIRLOCK_AUDIT_REDACTION_H_

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace airlock::audit {

inline constexpr size_t kRedactMaxStringBytes = 256;
inline constexpr int kRedactMaxDepth = 32;

// The redacted copy of `args`, as described above.
nlohmann::json RedactArgs(const nlohmann::json& args, size_t max_bytes = 4096);

// True if a member named `key` has its value hidden (rule 1).
bool IsSecretKey(const std::string& key);

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_REDACTION_H_
