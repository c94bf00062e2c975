// Stored code tools (issue 5, research codemode.md §7 G4): programs an agent
// proposed and an admin approved, offered to MCP clients as ordinary tools.
//
// A proposal is immutable. Its hash binds everything that decides what the
// program can do: sha256 of the canonical JSON of
//   {language, code, input_schema, connectors, tools, limits}
// (HashOf). An approval stores that hash; a version whose stored fields no
// longer hash to the approved value (edited in the database) is not active
// (G-D9). Changing a tool means proposing it again under the same name: the
// new version waits for its own approval while the old approved one stays
// active; approving the new one supersedes the old.
//
// States: proposed -> approved -> (superseded | revoked); proposed -> rejected.
// Nobody approves or rejects their own proposal (G-D8); whether the actor is
// an admin is the caller's check (the store knows no roles).
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto store, SqliteCodeToolStore::Open(dir + "/codetools.db"));
//   AIRLOCK_ASSIGN_OR_RETURN(CodeTool p, store->Propose(proposal, "bob", "team"));
//   AIRLOCK_RETURN_IF_ERROR(store->Approve(p.id, "alice", {.allow_write = true}));
//   for (const CodeTool& t : store->Active("team")) ...        // what tools/list shows
//   if (store->Generation() != seen) server.NotifyToolsChanged();
//
// All methods are thread-safe; several processes may share one file (the CLI
// approves while a server runs). The stores: SqliteCodeToolStore (a file)
// and PgCodeToolStore (a database several gateways share), with the same
// rules (code_tool_rows.h); state/state_stores.h opens the configured one.
#ifndef AIRLOCK_CODETOOLS_CODE_TOOL_STORE_H_
#define AIRLOCK_CODETOOLS_CODE_TOOL_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::codetools {

// What an agent proposes (propose_code_tool's arguments).
struct Proposal {
  std::string name;         // [a-z][a-z0-9_]{0,63}; no dots (those are connector tools)
  std::string description;  // <= 4096 bytes
  std::string language;     // "javascript" | "python"
  std::string code;         // <= 256 KiB
  nlohmann::json input_schema = {{"type", "object"}};  // a JSON Schema object (type "object")
  std::vector<std::string> connectors;  // declared connectors, sorted, unique, non-empty
  std::vector<std::string> tools;       // declared tools: "connector.tool" or "connector.*"; empty = every
                                        // tool of the declared connectors
  nlohmann::json limits = nlohmann::json::object();  // codemode::Limits fields to lower (may be {})
};


enum class State { kProposed, kApproved, kRejected, kRevoked, kSuperseded };
const char* StateName(State s);  // "proposed", "approved", ...

// Set by the approving admin; not part of the hash.
struct Approval {
  bool allow_write = false;   // may call write tools (still only where the caller's role may write)
  bool run_as_definer = false;  // inner calls checked against definer_role instead of the caller's
  std::string definer_role;   // required when run_as_definer
  std::string reason;
};

struct CodeTool {
  std::string id;       // "ct_" + 12 hex digits
  int64_t version = 0;  // 1, 2, ... per (endpoint, name)
  std::string endpoint;  // the endpoint it was proposed on (where it is offered)
  Proposal proposal;
  std::string hash;      // HashOf(proposal) at proposal time
  State state = State::kProposed;
  std::string proposer;
  int64_t proposed_at = 0;  // unix ms
  std::string decided_by;   // approver / rejecter / revoker (a supersede keeps the approver)
  int64_t decided_at = 0;
  std::string approved_by;  // who approved it; kept when later superseded or revoked
  int64_t approved_at = 0;
  Approval approval;        // meaningful when approved (or later superseded/revoked)
  std::string reason;       // reject / revoke reason
  // False if the stored fields no longer hash to `hash` (tampered row).
  bool intact = true;
};

// sha256 hex of the canonical JSON (sorted keys, no spaces) of the fields above,
// exactly as given (Propose sorts connectors and tools first). "" if a field
// is not valid UTF-8 (ValidateProposal refuses that), which matches no hash.
std::string HashOf(const Proposal& p);
// Checks names, sizes, UTF-8, language, schema shape, connector/tool name
// syntax and limit keys; the error names the field ("connectors[1]: ...").
Status ValidateProposal(const Proposal& p);

class CodeToolStore {
 public:
  virtual ~CodeToolStore() = default;

  // Stores a new version (state proposed) with connectors and tools sorted
  // and de-duplicated. InvalidArgument if the proposal is invalid, proposer
  // or endpoint is empty, or an identical hash is already proposed or
  // approved under this endpoint and name (nothing new is stored).
  virtual StatusOr<CodeTool> Propose(const Proposal& p, const std::string& proposer, const std::string& endpoint) = 0;

  // PermissionDenied if actor == proposer; FailedPrecondition unless the
  // version is proposed and intact; NotFound for an unknown id;
  // InvalidArgument for an empty actor, or run_as_definer without a
  // definer_role. Approving supersedes the previously approved version of the
  // same name/endpoint, in the same transaction.
  virtual Status Approve(const std::string& id, const std::string& actor, const Approval& approval) = 0;
  // PermissionDenied if actor == proposer; FailedPrecondition unless proposed.
  virtual Status Reject(const std::string& id, const std::string& actor, const std::string& reason) = 0;
  // Revokes an approved version (FailedPrecondition otherwise).
  virtual Status Revoke(const std::string& id, const std::string& actor, const std::string& reason) = 0;

  virtual StatusOr<CodeTool> Get(const std::string& id) = 0;
  // Every version, newest first; `state` filters when set; `endpoint` "" = all.
  virtual StatusOr<std::vector<CodeTool>> List(std::optional<State> state, const std::string& endpoint) = 0;
  // The approved AND intact versions of `endpoint`, one per name, by name.
  virtual StatusOr<std::vector<CodeTool>> Active(const std::string& endpoint) = 0;

  // Changes whenever any process changed the store (cheap; for polling).
  virtual int64_t Generation() = 0;
};

class SqliteCodeToolStore;  // sqlite_code_tool_store.h
// Opens (creating, mode 0600, WAL) the SQLite store at `path`.
StatusOr<std::unique_ptr<CodeToolStore>> OpenSqliteCodeToolStore(const std::string& path);

// A unified line diff of two versions (code, schema, connectors, tools,
// limits, description), for `airlock tools diff`. `from` may be null (new tool).
std::string DiffVersions(const CodeTool* from, const CodeTool& to);

}  // namespace airlock::codetools

#endif  // AIRLOCK_CODETOOLS_CODE_TOOL_STORE_H_
