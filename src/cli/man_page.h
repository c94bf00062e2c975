// airlock(1) in roff, rendered from the CLI11 definitions themselves.
//
// The build runs the hidden `airlock man` (airlock_main.cc) and gzips what
// it prints into airlock.1.gz, so the man page names every subcommand and
// every option the binary accepts and can never drift from it. Walks the
// whole tree: `keys create`, `tools approve`, `audit verify`, ... each get a
// section with their options; hidden subcommands (group "") are left out.
#ifndef AIRLOCK_CLI_MAN_PAGE_H_
#define AIRLOCK_CLI_MAN_PAGE_H_

#include <string>

#include <CLI/CLI.hpp>

namespace airlock::cli {

struct ManPageInfo {
  std::string name = "airlock";  // the program, as in .TH and NAME
  std::string summary;           // NAME line after the dash
  std::string version;           // .TH's source field ("airlock 0.1.0")
  std::string date;              // .TH's date; empty: none (reproducible builds)
};

// The whole page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (of `app` itself),
// then one COMMANDS subsection per visible subcommand, depth first.
std::string RenderManPage(const CLI::App& app, const ManPageInfo& info);

// `text` with roff's special characters escaped (backslash, '-' as \-, a
// leading '.' or '\'' guarded) so it prints as written.
std::string RoffEscape(const std::string& text);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_MAN_PAGE_H_
