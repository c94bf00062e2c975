#include "selftest/attack_files.h"

namespace airlock::selftest {

std::optional<std::string_view> FindAttackFile(std::string_view name) {
  for (const AttackFile& f : AttackFiles())
    if (f.name == name) return f.content;
  return std::nullopt;
}

}  // namespace airlock::selftest
