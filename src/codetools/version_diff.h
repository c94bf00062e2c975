// Line diffs for `airlock tools diff` (DiffVersions in code_tool_store.h is
// built on UnifiedLineDiff): what an admin reads before approving a version.
//
//   std::cout << UnifiedLineDiff("a\nb\nc\n", "a\nB\nc\n");
//   // @@ -1,3 +1,3 @@
//   //  a
//   // -b
//   // +B
//   //  c
//
// The diff is a longest common subsequence of lines after the common prefix
// and suffix are set aside; when what remains is too large for that
// (kMaxDiffCells), the remaining lines are shown as removed and re-added.
#ifndef AIRLOCK_CODETOOLS_VERSION_DIFF_H_
#define AIRLOCK_CODETOOLS_VERSION_DIFF_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace airlock::codetools {

// Bound on (lines removed) x (lines added) for the LCS table (4 bytes each).
inline constexpr size_t kMaxDiffCells = size_t{4} << 20;

// Unified-format hunks ("@@ -l,s +l,s @@", then lines prefixed ' ', '-',
// '+'), with `context` unchanged lines around each change; "" if equal.
// Lines are split at '\n'; a final line without '\n' counts as a line.
std::string UnifiedLineDiff(std::string_view from, std::string_view to, size_t context = 3);

}  // namespace airlock::codetools

#endif  // AIRLOCK_CODETOOLS_VERSION_DIFF_H_
