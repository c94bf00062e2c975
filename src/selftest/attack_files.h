// The attacker programs of the containment suite, embedded at build time.
//
// Every file of src/selftest/attacks/ is compiled into the binary (see
// cmake/embed_dir.cmake), so `airlock selftest` works without the source tree.
// Names are file names such as "net_tcp4.py"; contents still hold their
// @PLACEHOLDER@s (see containment_suite.h).
#ifndef AIRLOCK_SELFTEST_ATTACK_FILES_H_
#define AIRLOCK_SELFTEST_ATTACK_FILES_H_

#include <optional>
#include <span>
#include <string_view>

namespace airlock::selftest {

struct AttackFile {
  std::string_view name;
  std::string_view content;
};

// All embedded files, sorted by name. Defined in the generated
// ${build}/generated/selftest_attacks.cc.
std::span<const AttackFile> AttackFiles();

// The content of the file called `name`, if embedded.
std::optional<std::string_view> FindAttackFile(std::string_view name);

}  // namespace airlock::selftest

#endif  // AIRLOCK_SELFTEST_ATTACK_FILES_H_
