// Text for a human's terminal: what an agent, a client or a connector wrote
// (a proposal's name, description and code, audit details, key names, user
// names) can hold escape sequences that move the cursor, erase lines or
// reorder what is shown ("Trojan Source"). Every CLI command prints such
// text through TerminalText, so what the admin reads is what is stored.
//
//   std::cout << TerminalText(tool.proposal.code, TextShape::kBlock);
//   std::cout << TerminalText(tool.proposal.name, TextShape::kLine) << "\n";
//
// Rendered visibly instead of passed through:
//   - C0 controls (U+0000-U+001F) and DEL as \xNN (\n and \t kept in kBlock);
//   - C1 controls (U+0080-U+009F, encoded in UTF-8) as \u0080 ... \u009f;
//   - bidirectional controls U+202A-U+202E, U+2066-U+2069 and the marks
//     U+200E, U+200F, U+061C as \u202e, ...;
//   - bytes that are not well-formed UTF-8 (stray 0x9b included) as \xNN.
// Everything else, backslashes included, is unchanged. `--json` output needs
// none of this: JSON escaping already makes it inert.
#ifndef AIRLOCK_BASE_TERMINAL_TEXT_H_
#define AIRLOCK_BASE_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace airlock {

enum class TextShape {
  kLine,   // one line: \n and \t are escaped too
  kBlock,  // several lines (code, a diff, a description): \n and \t kept
};

std::string TerminalText(std::string_view text, TextShape shape = TextShape::kLine);

}  // namespace airlock

#endif  // AIRLOCK_BASE_TERMINAL_TEXT_H_
