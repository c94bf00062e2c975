// The jail host for tests that make jails: airlock-init from this build tree
// (AIRLOCK_BINARY_DIR), every other host option at its default.
#ifndef AIRLOCK_TESTS_UNIT_TEST_JAIL_HOST_H_
#define AIRLOCK_TESTS_UNIT_TEST_JAIL_HOST_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "jail/host.h"

namespace airlock::tests {

inline StatusOr<std::unique_ptr<jail::JailHost>> CreateJailHost() {
  jail::HostOptions opts;
  opts.init_path = std::string(AIRLOCK_BINARY_DIR) + "/airlock-init";
  return jail::JailHost::Create(opts);
}

}  // namespace airlock::tests

#endif  // AIRLOCK_TESTS_UNIT_TEST_JAIL_HOST_H_
