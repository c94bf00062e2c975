#include "engine/js/self_hosted_cache.h"

#include <memory>
#include <string_view>

#include "engine/js/js_engine.h"
#include "engine/js/wasm_code.h"
#include "engine/js/write_all.h"

namespace airlock::engine::js {

wasm::CodeCacheKey SelfHostedCacheKey() {
  wasm::CodeCacheKey key;
  key.build_id = WasmCodeBuildId();
  return key;
}

StatusOr<wasm::MappedCode> MapSelfHostedCache(const std::string& path) {
  const wasm::CodeCacheKey key = SelfHostedCacheKey();
  if (key.build_id.empty()) return FailedPrecondition("the engine gives no build id");
  return wasm::ReadCodeCache(path, key);
}

int SelfHostedCacheMain(int argc, char** argv) {
  if (argc != 3) {
    WriteAll(2, "usage: airlock-js --self-hosted-cache-write OUT\n");
    return 2;
  }
  const std::string out_path = argv[2];
  EngineOptions options;
  options.encode_self_hosted = true;
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    WriteAll(2, "airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return 1;
  }
  const wasm::CodeCacheKey key = SelfHostedCacheKey();
  if (key.build_id.empty()) {
    WriteAll(2, "airlock-js: the engine gives no build id\n");
    return 1;
  }
  StatusOr<wasm::CacheUpdate> update = wasm::UpdateCodeCache(out_path, key, [&]() -> StatusOr<std::string> {
    if ((*engine)->self_hosted_encoding().empty()) return Internal("the engine wrote no self-hosted encoding");
    return std::string((*engine)->self_hosted_encoding());
  });
  if (!update.ok()) {
    WriteAll(2, "airlock-js: " + out_path + ": " + update.status().ToString() + "\n");
    return 1;
  }
  WriteAll(1, out_path + (*update == wasm::CacheUpdate::kUpToDate
                              ? std::string(": up to date\n")
                              : ": " + std::to_string((*engine)->self_hosted_encoding().size()) +
                                    " bytes of self-hosted code\n"));
  return 0;
}

int SelfHostedStatusMain(int argc, char** /*argv*/, const EngineOptions& base) {
  if (argc != 2) {
    WriteAll(2, "usage: airlock-js [--self-hosted-cache FILE] --self-hosted-status\n");
    return 2;
  }
  EngineOptions options = base;
  options.encode_self_hosted = true;
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    WriteAll(2, "airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return 1;
  }
  WriteAll(1, (*engine)->self_hosted_encoding().empty() ? "decoded\n" : "parsed\n");
  return 0;
}

}  // namespace airlock::engine::js
