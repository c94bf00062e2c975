// The airlock command line. Subcommands: run, serve, doctor, selftest,
// languages, runner-host (and the internal `runner`, started by `serve`,
// and `man`, which prints airlock(1) for the build).
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/man_page.h"

int main(int argc, char** argv) {
  using namespace airlock::cli;
  CLI::App app{"airlock: run untrusted code safely, for AI agents (MCP server and CLI)"};
  app.set_version_flag("--version", AIRLOCK_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run one program in a fresh jail");
  run_cmd->add_option("--lang", run.language, "Language (see `airlock languages`)")->required();
  run_cmd->add_option("--isolation", run.isolation, "native or wasm (default: the config's languages.default_isolation, native; see `airlock languages`)")
      ->check(CLI::IsMember({"native", "wasm"}));
  run_cmd->add_option("--stdin", run.stdin_file, "File whose content is the program's stdin");
  run_cmd->add_option("--arg", run.args, "Argument passed to the program (repeatable)")->allow_extra_args(false);
  run_cmd->add_option("--timeout-ms", run.timeout_ms, "Wall-clock limit in ms");
  run_cmd->add_option("--memory-mb", run.memory_mb, "Memory limit in MiB");
  run_cmd->add_option("--file", run.files, "Input file NAME=PATH copied into /work (repeatable)")->allow_extra_args(false);
  run_cmd->add_option("--output", run.outputs, "Glob of output files to collect (repeatable)")->allow_extra_args(false);
  run_cmd->add_option("--output-dir", run.output_dir, "Where collected files are written");
  run_cmd->add_flag("--json", run.json, "Print the full result as JSON");
  run_cmd->add_flag("--allow-degraded", run.allow_degraded, "Run even without cgroup limits");
  run_cmd->add_option("--config", run.config_path, "Configuration file (JSON)");
  run_cmd->add_flag("--code-mode", run.code_mode,
                    "Run a javascript/python program with `tools` bridged to the config's mcpServers; "
                    "prints the result as JSON (like the MCP tool `execute`)");
  run_cmd->add_option("--connector", run.connectors, "Code mode: a connector the program may use (repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_option("source", run.source, "Source file, or - for stdin")->required();

  bool json = false;
  CLI::App* doctor = app.add_subcommand("doctor", "Show which isolation layers this host offers");
  doctor->add_flag("--json", json, "JSON output");
  CLI::App* languages = app.add_subcommand("languages", "List languages, versions and default limits");
  languages->add_flag("--json", json, "JSON output");
  CLI::App* selftest = app.add_subcommand("selftest", "Run the containment suite against this installation");
  selftest->add_flag("--json", json, "JSON output");

  ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "Serve MCP over stdio (default) or Streamable HTTP");
  serve_cmd->add_option("--config", serve.config_path, "Configuration file (JSON); defaults are embedded");
  serve_cmd->add_option("--http", serve.http, "Serve Streamable HTTP on HOST:PORT (endpoint /mcp) instead of stdio");
  serve_cmd->add_option("--token-file", serve.token_file, "Require this bearer token on HTTP requests");
  serve_cmd->add_flag("--allow-degraded", serve.allow_degraded, "Run code even without cgroup limits");
  serve_cmd->add_option("--endpoint", serve.endpoint, "stdio: the endpoint to serve (config \"endpoints\")");
  serve_cmd->add_option("--state-dir", serve.state_dir, "Directory for audit.db and codetools.db");
  serve_cmd->add_option("--log-format", serve.log_format,
                        "text (default) or json: every stderr line one JSON object, plus one per tool call")
      ->check(CLI::IsMember({"text", "json"}));
  serve_cmd->add_option("--metrics", serve.metrics,
                        "Serve /metrics (Prometheus) on HOST:PORT instead of the HTTP listener; also with stdio");

  KeysOptions keys;
  CLI::App* keys_cmd = app.add_subcommand("keys", "Manage HTTP API keys (stored hashed)");
  keys_cmd->add_option("--file", keys.file,
                       "The key file (JSON, mode 0600); default: the config's server.http.keys_file, else "
                       "<state dir>/keys.json, or the database with state.backend \"postgres\"");
  keys_cmd->add_flag("--json", keys.json, "JSON output");
  keys_cmd->add_option("--config", keys.config_path, "Configuration file (the key store and the audit log)");
  keys_cmd->add_option("--as", keys.actor, "Who is acting (recorded in the audit log; default: the OS user)");
  CLI::App* keys_create = keys_cmd->add_subcommand("create", "Create a key; prints it once");
  keys_create->add_option("--user", keys.user, "Who the key belongs to")->required();
  keys_create->add_option("--role", keys.role, "The role it grants")->required();
  keys_create->add_option("--name", keys.name, "What it is for");
  CLI::App* keys_list = keys_cmd->add_subcommand("list", "List keys (never the secrets)");
  CLI::App* keys_revoke = keys_cmd->add_subcommand("revoke", "Revoke a key; effective on the next request");
  keys_revoke->add_option("id", keys.id, "The key's id (k_...)")->required();
  for (CLI::App* sub : {keys_create, keys_list, keys_revoke}) sub->fallthrough();  // --file, --json anywhere
  keys_cmd->require_subcommand(1);

  Subcommand tools_cmd = AddToolsCommand(app);
  Subcommand audit_cmd = AddAuditCommand(app);
  Subcommand live_cmd = AddLiveCommand(app);
  Subcommand runner_host_cmd = AddRunnerHostCommand(app);
  Subcommand config_cmd = AddConfigCommand(app);

  int channel_fd = -1;
  std::string runner_config;
  bool runner_degraded = false;
  CLI::App* runner_cmd = app.add_subcommand("runner", "(internal) the code runner process started by serve");
  runner_cmd->group("");  // hidden from --help
  runner_cmd->add_option("--channel-fd", channel_fd)->required();
  runner_cmd->add_option("--config", runner_config);
  runner_cmd->add_flag("--allow-degraded", runner_degraded);
  // The build pipes this into airlock.1.gz (CMakeLists.txt): the man page is
  // made from the definitions above, every subcommand and option included.
  CLI::App* man_cmd = app.add_subcommand("man", "(internal) print airlock(1) in roff");
  man_cmd->group("");  // hidden from --help

  // A usage error exits 2, as every Unix command does (CLI11's own codes,
  // 105, 106, 109, ..., say nothing to a shell); --help and --version exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (*man_cmd) {
    std::cout << RenderManPage(app, {.name = "airlock",
                                     .summary = "an MCP server that runs untrusted code in a sandbox",
                                     .version = std::string("airlock ") + AIRLOCK_VERSION});
    return 0;
  }
  if (*serve_cmd) return ServeCommand(serve);
  if (*runner_cmd) return RunnerCommand(channel_fd, runner_config, runner_degraded);
  if (*run_cmd) return RunCommand(run);
  if (*keys_cmd) {
    keys.action = *keys_create ? "create" : *keys_list ? "list" : "revoke";
    return KeysCommand(keys);
  }
  if (*tools_cmd.app) return tools_cmd.run();
  if (*audit_cmd.app) return audit_cmd.run();
  if (*live_cmd.app) return live_cmd.run();
  if (*runner_host_cmd.app) return runner_host_cmd.run();
  if (*config_cmd.app) return config_cmd.run();
  if (*doctor) return DoctorCommand(json);
  if (*languages) return LanguagesCommand(json);
  if (*selftest) return SelftestCommand(json);
  return 2;
}
