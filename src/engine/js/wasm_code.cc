#include "engine/js/wasm_code.h"

#include <elf.h>
#include <link.h>

#include <js/BuildId.h>
#include <js/CallAndConstruct.h>
#include <js/ContextOptions.h>
#include <js/Object.h>
#include <js/Promise.h>
#include <js/StreamConsumer.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

namespace airlock::engine::js {
namespace {

// What WebAssembly.compileStreaming(source) is fed: `source` is an object of
// kSourceClass whose reserved slot points at one of these while the call
// runs. Script can make no such object, so script calling compileStreaming
// gets an error, never a stream.
struct StreamInput {
  std::string_view module_bytes;  // compiled when `encoding` is empty
  std::string_view encoding;      // loaded instead, when set
  JS::OptimizedEncodingListener* listener = nullptr;
};

constexpr JSClass kSourceClass = {"AirlockWasmSource", JSCLASS_HAS_RESERVED_SLOTS(1), nullptr, nullptr, nullptr,
                                  nullptr};

constexpr char kCompileStreaming[] =
    "(function (source) { return WebAssembly.compileStreaming(source); })";

bool ConsumeStream(JSContext* cx, JS::HandleObject source, JS::MimeType, JS::StreamConsumer* consumer) {
  if (JS::GetClass(source) != &kSourceClass || JS::GetReservedSlot(source, 0).isUndefined()) {
    JS_ReportErrorASCII(cx, "WebAssembly.compileStreaming is not available here");
    return false;
  }
  auto* input = static_cast<StreamInput*>(JS::GetReservedSlot(source, 0).toPrivate());
  if (!input->encoding.empty()) {
    consumer->consumeOptimizedEncoding(reinterpret_cast<const uint8_t*>(input->encoding.data()),
                                       input->encoding.size());
    return true;
  }
  // One chunk: the consumer parses the module's sections as they come, so
  // the whole module at once reaches the same state as many small chunks.
  if (consumer->consumeChunk(reinterpret_cast<const uint8_t*>(input->module_bytes.data()),
                             input->module_bytes.size())) {
    consumer->streamEnd(input->listener);
  }
  return true;
}

void ReportStreamError(JSContext* cx, size_t code) {
  JS_ReportErrorASCII(cx, "WebAssembly stream error %zu", code);
}

// The ELF build id (NT_GNU_BUILD_ID) of the shared object that holds
// SpiderMonkey: a different libmozjs build has a different one.
bool MozjsBuildId(JS::BuildIdCharVector* out) {
  struct Search {
    uintptr_t address;
    JS::BuildIdCharVector* out;
    bool found;
  } search{reinterpret_cast<uintptr_t>(&JS_NewContext), out, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          contains = ph.p_type == PT_LOAD && s->address >= begin && s->address < begin + ph.p_memsz;
        }
        if (!contains) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char* at = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = at + ph.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
            const char* name = at + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
                desc + note->n_descsz <= end) {
              s->found = s->out->append(desc, note->n_descsz);
              return 1;
            }
            at = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the right object, but it has no build id
      },
      &search);
  // What this embedding asks of the compiler is part of the code too.
  constexpr char kOptions[] = "airlock:ion-only:1";
  return search.found && out->append(kOptions, sizeof kOptions - 1);
}

// Receives the encoding on one of SpiderMonkey's helper threads.
class EncodingListener final : public JS::OptimizedEncodingListener {
 public:
  MozExternalRefCountType MOZ_XPCOM_ABI AddRef() override { return ++refs_; }
  MozExternalRefCountType MOZ_XPCOM_ABI Release() override {
    const uint32_t left = --refs_;
    if (left == 0) delete this;
    return left;
  }
  void storeOptimizedEncoding(const uint8_t* bytes, size_t length) override {
    std::lock_guard<std::mutex> lock(mu_);
    encoding_.assign(reinterpret_cast<const char*>(bytes), length);
    stored_ = true;
    cv_.notify_all();
  }
  // Waits for the encoding; false if none came within `limit`.
  bool Take(std::chrono::seconds limit, std::string* out) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, limit, [this] { return stored_; })) return false;
    *out = std::move(encoding_);
    return true;
  }

 private:
  ~EncodingListener() override = default;
  std::atomic<uint32_t> refs_{1};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stored_ = false;
  std::string encoding_;
};

// Runs compileStreaming over `input` to its end. False, with no exception
// left pending, if it did not give a module.
bool CompileStreaming(JsEngine& engine, StreamInput& input, JS::MutableHandleObject module) {
  JSContext* cx = engine.cx();
  JS::RootedObject source(cx, JS_NewObject(cx, &kSourceClass));
  JS::RootedValue fn(cx);
  JS::RootedValue rval(cx);
  bool ok = source != nullptr;
  if (ok) {
    JS::SetReservedSlot(source, 0, JS::PrivateValue(&input));
    JS::RootedValueArray<1> args(cx);
    args[0].setObject(*source);
    ok = engine.EvaluateScript(kCompileStreaming, "airlock-wasm-code", 1, &fn) &&
         JS_CallFunctionValue(cx, nullptr, fn, args, &rval) && rval.isObject() &&
         JS::IsPromiseObject(JS::RootedObject(cx, &rval.toObject()));
  }
  if (ok) {
    JS::RootedObject promise(cx, &rval.toObject());
    ok = engine.RunUntilSettled(promise, {}) == JsEngine::LoopResult::kSettled &&
         JS::GetPromiseState(promise) == JS::PromiseState::Fulfilled;
    if (ok) {
      JS::RootedValue result(cx, JS::GetPromiseResult(promise));
      ok = result.isObject();
      if (ok) module.set(&result.toObject());
    }
  }
  if (source) JS::SetReservedSlot(source, 0, JS::UndefinedValue());
  JS_ClearPendingException(cx);
  return ok;
}

}  // namespace

void InstallWasmStreaming(JSContext* cx) {
  JS::SetProcessBuildIdOp(&MozjsBuildId);
  JS::InitConsumeStreamCallback(cx, &ConsumeStream, &ReportStreamError);
}

std::string WasmCodeBuildId() {
  JS::SetProcessBuildIdOp(&MozjsBuildId);
  JS::BuildIdCharVector id;
  if (!JS::GetOptimizedEncodingBuildId(&id)) return {};
  return std::string(id.begin(), id.end());
}

StatusOr<std::string> EncodeWasmModule(JsEngine& engine, std::string_view module_bytes) {
  JSContext* cx = engine.cx();
  JS::ContextOptionsRef(cx).setWasmBaseline(false).setWasmIon(true);
  auto* listener = new EncodingListener();
  StreamInput input{module_bytes, {}, listener};
  JS::RootedObject module(cx);
  const bool compiled = CompileStreaming(engine, input, &module);
  std::string encoding;
  // With Ion alone the engine serializes as it finishes the module, before
  // the promise settles; the wait only covers a late helper thread.
  const bool stored = compiled && listener->Take(std::chrono::seconds(30), &encoding);
  listener->Release();
  if (!compiled) return InvalidArgument("the module did not compile");
  if (!stored || encoding.empty()) return FailedPrecondition("the engine did not serialize the module");
  return encoding;
}

bool LoadWasmModule(JsEngine& engine, std::string_view encoding, JS::MutableHandleObject module) {
  if (encoding.empty()) return false;
  StreamInput input{{}, encoding, nullptr};
  return CompileStreaming(engine, input, module);
}

}  // namespace airlock::engine::js
