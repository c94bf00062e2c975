// A jail host, a local executor and the planted host bait, for test binaries
// that run the containment suite (containment_test.cc against cold jails,
// pooled_containment_test.cc against pooled ones). The bait (and its
// environment variable) exists before the executor, so nothing the executor
// starts could have missed it.
#ifndef AIRLOCK_TESTS_UNIT_CONTAINMENT_ENV_H_
#define AIRLOCK_TESTS_UNIT_CONTAINMENT_ENV_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "jail/host.h"
#include "runtimes/jail_pool.h"
#include "runtimes/local_executor.h"
#include "runtimes/wasm_code_store.h"
#include "selftest/host_bait.h"
#include "test_jail_host.h"

namespace airlock::selftest {

class ContainmentEnv {
 public:
  // With `pool`, runs take jails from a pool (LocalExecutor::EnablePool).
  // `wasm_tier`: the executor also has the WASM tier's languages (airlock-js
  // from the build, the interpreters from the WASM cache). `wasm_code`: and
  // they load their compiled code (runtimes/wasm_code_store.h, the machine's
  // directory as `airlock serve` uses it), written before the first case.
  explicit ContainmentEnv(std::optional<runtimes::JailPoolOptions> pool = std::nullopt, bool wasm_tier = false,
                          bool wasm_code = false) {
    auto bait = HostBait::Create();
    if (!bait.ok()) {
      error_ = "bait: " + bait.status().ToString();
      return;
    }
    bait_ = std::move(bait).value();
    auto host = tests::CreateJailHost();
    if (!host.ok()) {
      error_ = "jail host: " + host.status().ToString();
      return;
    }
    host_ = std::move(host).value();
    std::vector<runtimes::LanguageSpec> languages = runtimes::BuiltinLanguages();
    // Code mode's Python (its sessions: session_containment_test.cc).
    for (runtimes::LanguageSpec& l : runtimes::CodeModeLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) {
      languages.push_back(std::move(l));
    }
    if (wasm_tier) {
      for (runtimes::LanguageSpec& l : runtimes::WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js",
                                                                   runtimes::DefaultWasmCacheDir())) {
        languages.push_back(std::move(l));
      }
    }
    auto executor = runtimes::LocalExecutor::Create(*host_, {}, std::move(languages));
    if (!executor.ok()) {
      error_ = "executor: " + executor.status().ToString();
      return;
    }
    executor_ = std::move(executor).value();
    if (wasm_tier && wasm_code) {
      auto store = runtimes::WasmCodeStore::Open(runtimes::DefaultWasmCacheDir() + "-code",
                                                 std::string(AIRLOCK_BINARY_DIR) + "/airlock-js");
      if (!store.ok()) {
        error_ = "wasm code store: " + store.status().ToString();
        return;
      }
      runtimes::WasmCodeStore* s = store->get();
      executor_->EnableWasmCodeStore(std::move(*store));
      s->WaitIdle();
    }
    if (pool) executor_->EnablePool(*pool, {});
  }

  runtimes::LocalExecutor* executor() { return executor_.get(); }
  HostBait* bait() { return bait_.get(); }
  const std::string& error() const { return error_; }

 private:
  // Destruction order: executor, host, then the bait.
  std::unique_ptr<HostBait> bait_;
  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<runtimes::LocalExecutor> executor_;
  std::string error_;
};

}  // namespace airlock::selftest

#endif  // AIRLOCK_TESTS_UNIT_CONTAINMENT_ENV_H_
