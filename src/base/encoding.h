// Text encodings for data that crosses from a jail to a client.
#ifndef AIRLOCK_BASE_ENCODING_H_
#define AIRLOCK_BASE_ENCODING_H_

#include <string>
#include <string_view>

namespace airlock {

// True if `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Replaces every ill-formed sequence with U+FFFD so the result is valid UTF-8.
std::string SanitizeUtf8(std::string_view s);

// Cuts `s` to at most `max_bytes`, never inside a UTF-8 sequence.
std::string_view TruncateUtf8(std::string_view s, size_t max_bytes);

std::string Base64Encode(std::string_view bytes);
// Returns false on malformed input (whitespace is not allowed).
bool Base64Decode(std::string_view text, std::string* out);

// Lower-case hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

}  // namespace airlock

#endif  // AIRLOCK_BASE_ENCODING_H_
