// wasm::CapMemory: the memory limits of hand-assembled modules.
#include "wasm/module_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace airlock::wasm {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

const std::string kHeader = Bytes({0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00});
constexpr uint64_t kTenPages = 10 * kWasmPageBytes;

TEST(WasmCapMemory, AMemoryWithoutMaximumGetsOne) {
  StatusOr<std::string> out = CapMemory(kHeader + Bytes({0x05, 0x03, 0x01, 0x00, 0x01}), kTenPages);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x01, 0x0a}));
}

TEST(WasmCapMemory, ALargerMaximumIsLoweredAndASmallerOneKept) {
  // (memory 2 100): 100 = 0x64
  StatusOr<std::string> lowered = CapMemory(kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x02, 0x64}), kTenPages);
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(*lowered, kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x02, 0x0a}));
  StatusOr<std::string> kept = CapMemory(kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x02, 0x03}), kTenPages);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x02, 0x03}));
  // A limit that needs a multi-byte LEB128 (300 pages = 0xac 0x02) grows the section.
  StatusOr<std::string> big = CapMemory(kHeader + Bytes({0x05, 0x03, 0x01, 0x00, 0x01}), 300 * kWasmPageBytes);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(*big, kHeader + Bytes({0x05, 0x05, 0x01, 0x01, 0x01, 0xac, 0x02}));
}

TEST(WasmCapMemory, ImportedMemoriesAreCappedAndOtherImportsCopied) {
  const std::string imports = Bytes({0x02, 0x1c, 0x02,
                                     // "wasi" "fd_write" func type 0
                                     0x04, 'w', 'a', 's', 'i', 0x08, 'f', 'd', '_', 'w', 'r', 'i', 't', 'e', 0x00, 0x00,
                                     // "env" "mem" memory (min 1)
                                     0x03, 'e', 'n', 'v', 0x03, 'm', 'e', 'm', 0x02, 0x00, 0x01});
  StatusOr<std::string> out = CapMemory(kHeader + imports, kTenPages);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, kHeader + Bytes({0x02, 0x1d, 0x02, 0x04, 'w', 'a', 's', 'i', 0x08, 'f', 'd', '_', 'w', 'r', 'i',
                                   't', 'e', 0x00, 0x00, 0x03, 'e', 'n', 'v', 0x03, 'm', 'e', 'm', 0x02, 0x01, 0x01,
                                   0x0a}));
}

TEST(WasmCapMemory, OtherSectionsAreCopiedByteForByte) {
  const std::string custom = Bytes({0x00, 0x05, 0x04, 'n', 'a', 'm', 'e'});
  const std::string type = Bytes({0x01, 0x04, 0x01, 0x60, 0x00, 0x00});
  StatusOr<std::string> out = CapMemory(kHeader + custom + type, kTenPages);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, kHeader + custom + type);
}

TEST(WasmCapMemory, AnInitialSizeOverTheLimitIsRefused) {
  StatusOr<std::string> out = CapMemory(kHeader + Bytes({0x05, 0x03, 0x01, 0x00, 0x14}), kTenPages);  // 20 pages
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("over the limit"), std::string::npos) << out.status().message();
}

TEST(WasmCapMemory, MalformedModulesAreErrorsNotCrashes) {
  EXPECT_FALSE(CapMemory("", kTenPages).ok());
  EXPECT_FALSE(CapMemory("\0asm", kTenPages).ok());
  EXPECT_FALSE(CapMemory(kHeader.substr(0, 4) + Bytes({2, 0, 0, 0}), kTenPages).ok());       // version 2
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x09, 0x01, 0x00}), kTenPages).ok());         // size past end
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x02, 0x01, 0x00}), kTenPages).ok());         // limits cut short
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x04, 0x01, 0x03, 0x01, 0x01}), kTenPages).ok());  // shared+max
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x04, 0x01, 0x04, 0x01, 0x01}), kTenPages).ok());  // memory64
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x07, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff}), kTenPages).ok());
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x05, 0x04, 0x01, 0x00, 0x01, 0x00}), kTenPages).ok());  // trailing
  EXPECT_FALSE(CapMemory(kHeader + Bytes({0x02, 0x03, 0x01, 0x7f}), kTenPages).ok());        // name past end
  // Every truncation of a valid module fails cleanly.
  const std::string valid = kHeader + Bytes({0x05, 0x04, 0x01, 0x01, 0x02, 0x64});
  for (size_t n = 9; n < valid.size(); ++n) EXPECT_FALSE(CapMemory(valid.substr(0, n), kTenPages).ok()) << n;
}

}  // namespace
}  // namespace airlock::wasm
