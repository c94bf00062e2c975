// Whether a user named on the command line (`--as USER`) is an admin, for
// the admin commands of the CLI (`airlock tools approve|reject|revoke`).
//
// USER is an admin if the API key store (state.backend's: the database, or
// the key file when API keys are on) holds an active key of that user
// whose role is an admin role, or USER is the
// stdio user (Policy::stdio().user: access.stdio.user, default the OS user
// name) and the stdio role is an admin role. Roles come from the governance policy.
//
//   AIRLOCK_ASSIGN_OR_RETURN(bool admin, IsAdminUser(config, policy, "alice"));
//   if (!admin) { std::cerr << "alice is not an admin\n"; return 3; }
//
// The name is what the operator says it is: whoever runs the CLI can
// already write the state files, so this check keeps honest operators to
// the policy and names them in the audit log; it is not authentication.
#ifndef AIRLOCK_CLI_ADMIN_IDENTITY_H_
#define AIRLOCK_CLI_ADMIN_IDENTITY_H_

#include <string>

#include "base/status.h"
#include "config/config.h"
#include "governance/policy.h"

namespace airlock::cli {

// An error only if the key store exists but cannot be read (or, with
// postgres, the database cannot be reached). A missing key file (or none
// configured) means no API-key admins.
StatusOr<bool> IsAdminUser(const config::Config& config, const governance::Policy& policy,
                           const std::string& user);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_ADMIN_IDENTITY_H_
