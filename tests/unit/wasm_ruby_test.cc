// Ruby in the WASM tier end to end through the CLI (`airlock run --isolation
// wasm --lang ruby`): ruby.wasm (scripts/wasm/install_ruby.sh) driven by
// `airlock-js --wasi-ruby` inside the jail — arguments, stdin, files, exit
// statuses, error messages, the standard library, the deadline and the
// absence of the host.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "wasm_cli_fixture.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;

using Outcome = testing::CliOutcome;

class WasmRubyTest : public testing::WasmInterpreterCliTest {
 protected:
  void SetUp() override { Require("ruby/ruby.wasm", "scripts/wasm/install_ruby.sh"); }

  Outcome Run(const std::string& code, const std::string& extra = "") { return RunWasm("ruby", code, extra); }
};

TEST_F(WasmRubyTest, HelloWorld) {
  Outcome o = Run("puts \"hello from #{RUBY_ENGINE} #{RUBY_VERSION}\"\nprint 'no newline'");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["isolation"], "wasm");
  EXPECT_EQ(r["exit_code"], 0);
  EXPECT_EQ(r["stdout"].get<std::string>().rfind("hello from ruby 3.4.", 0), 0u) << r;
  EXPECT_NE(r["stdout"].get<std::string>().find("\nno newline"), std::string::npos) << r;
}

TEST_F(WasmRubyTest, ArgvProgramNameAndStdin) {
  const fs::path in = Write("in.txt", "3\n4\n\xC3\xA9t\xC3\xA9\n");
  Outcome o = Run(R"(lines = $stdin.readlines(chomp: true)
puts ARGV.inspect, $0, __FILE__ == $0
puts lines[0].to_i + lines[1].to_i, lines[2].length, lines[2].encoding
)",
                  "--stdin " + in.string() + " --arg one --arg 'two words' --arg '\"#{1}\"'");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["stdout"], "[\"one\", \"two words\", \"\\\"\\#{1}\\\"\"]\nmain.rb\ntrue\n7\n3\nUTF-8\n") << r;
}

TEST_F(WasmRubyTest, WritesAnOutputFileAndReadsAnInputFile) {
  const fs::path data = Write("data.txt", "a,b\n1,2\n");
  Outcome o = Run(R"(rows = File.readlines("data.txt", chomp: true)
Dir.mkdir("out")
File.write("out/answer.txt", rows.map { |l| l.split(",").reverse.join(",") }.join("\n"))
f = File.open("out/unclosed.txt", "w")
f.write("buffered")
puts Dir.children(".").sort.inspect
)",
                  "--file data.txt=" + data.string() + " --output 'out/*' --output-dir " + (dir_ / "o").string());
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["stdout"], "[\"data.txt\", \"main.rb\", \"out\"]\n") << r;
  ASSERT_EQ(r["files"].size(), 2u) << r;
  std::map<std::string, std::string> files;
  for (const auto& f : r["files"]) files[f["name"]] = f["content"];
  EXPECT_EQ(files["out/answer.txt"], "b,a\n2,1");
  EXPECT_EQ(files["out/unclosed.txt"], "buffered");  // flushed at exit
}

TEST_F(WasmRubyTest, ExitCodesAndAtExit) {
  nlohmann::json three = Run("at_exit { puts 'bye' }\nputs 'before'\nexit 3\nputs 'after'").result();
  ASSERT_TRUE(three.is_object());
  EXPECT_EQ(three["status"], "exit_nonzero") << three;
  EXPECT_EQ(three["exit_code"], 3);
  EXPECT_EQ(three["stdout"], "before\nbye\n");

  nlohmann::json abort = Run("abort 'giving up'").result();
  ASSERT_TRUE(abort.is_object());
  EXPECT_EQ(abort["exit_code"], 1);
  EXPECT_EQ(abort["stderr"], "giving up\n");

  nlohmann::json ok = Run("exit true").result();
  ASSERT_TRUE(ok.is_object());
  EXPECT_EQ(ok["status"], "ok") << ok;
  EXPECT_EQ(ok["exit_code"], 0);

  nlohmann::json bang = Run("$stdout.sync = true\nputs 'x'\nexit!(7)").result();
  ASSERT_TRUE(bang.is_object());
  EXPECT_EQ(bang["exit_code"], 7);
  EXPECT_EQ(bang["stdout"], "x\n");
}

TEST_F(WasmRubyTest, AnUncaughtExceptionReadsLikeRuby) {
  nlohmann::json r = Run("puts 'start'\ndef check(n)\n  raise ArgumentError, \"bad n: #{n}\" if n > 1\nend\ncheck(2)\n")
                         .result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["exit_code"], 1);
  EXPECT_EQ(r["stdout"], "start\n");
  // As ruby 3.4 prints it: error_highlight's snippet, the program's frames only.
  EXPECT_EQ(r["stderr"],
            "main.rb:3:in 'Object#check': bad n: 2 (ArgumentError)\n"
            "\n"
            "  raise ArgumentError, \"bad n: #{n}\" if n > 1\n"
            "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            "\tfrom main.rb:5:in '<top (required)>'\n")
      << r;

  nlohmann::json nil = Run("x = nil\nx.upcase").result();
  ASSERT_TRUE(nil.is_object());
  EXPECT_EQ(nil["exit_code"], 1);
  EXPECT_EQ(nil["stderr"].get<std::string>().rfind(
                "main.rb:2:in '<top (required)>': undefined method 'upcase' for nil (NoMethodError)", 0),
            0u)
      << nil;
}

TEST_F(WasmRubyTest, ASyntaxErrorIsReported) {
  nlohmann::json r = Run("puts 'never'\ndef broken(\n").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["exit_code"], 1);
  EXPECT_EQ(r["stdout"], "");
  const std::string err = r["stderr"];
  EXPECT_EQ(err.rfind("main.rb:", 0), 0u) << err;
  EXPECT_NE(err.find("(SyntaxError)"), std::string::npos) << err;
}

TEST_F(WasmRubyTest, StandardLibraryBasics) {
  Outcome o = Run(R"(require "json"
require "set"
require "time"
require "date"
require "digest"
require "stringio"
data = JSON.parse('{"a": [1, 2, {"b": null}]}')
puts JSON.generate(data)
puts Set[3, 1, 3].to_a.sort.inspect
puts Time.iso8601("2026-12-03T10:20:30Z").utc.hour
puts Date.new(2026, 12, 3).next_day.strftime("%Y-%m-%d %A")
puts Digest::SHA256.hexdigest("abc")[0, 16]
io = StringIO.new; io.puts "sio"; print io.string
puts [1, 2, 3].sum { _1 * 2 }, 2**100
puts Gem::Version.new("1.10") > Gem::Version.new("1.9")
)");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["stdout"],
            "{\"a\":[1,2,{\"b\":null}]}\n[1, 3]\n10\n2026-12-04 Friday\nba7816bf8f01cfea\nsio\n12\n"
            "1267650600228229401496703205376\ntrue\n")
      << r;
}

TEST_F(WasmRubyTest, BundledGemsAndMinitestViaAtExit) {
  Outcome o = Run(R"(ENV["MT_CPU"] = "0"  # minitest's parallel executor would start threads
require "csv"
require "minitest/autorun"
class T < Minitest::Test
  def test_csv = assert_equal([%w[a b], %w[1 2]], CSV.parse("a,b\n1,2"))
  def test_bad = assert_equal(3, 1 + 1)
end
)");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["exit_code"], 1) << r;  // at_exit ran the tests; one failed
  EXPECT_NE(r["stdout"].get<std::string>().find("2 runs, 2 assertions, 1 failures, 0 errors"), std::string::npos)
      << r;
}

TEST_F(WasmRubyTest, AnEndlessLoopIsStoppedAtTheDeadline) {
  nlohmann::json r = Run("loop { }", "--timeout-ms 3000").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "timeout") << r;
  EXPECT_LT(r["wall_ms"].get<int64_t>(), 10000);
}

TEST_F(WasmRubyTest, TheHostIsNotThere) {
  nlohmann::json r = Run(R"(seen = []
["/etc/passwd", "/proc/self/environ", "/opt/airlock/airlock-js", "../../etc/passwd", "/usr/bin/ruby"].each do |p|
  File.read(p)
  seen << p
rescue SystemCallError, IOError
end
begin
  require "socket"
  TCPSocket.new("127.0.0.1", 80)
  seen << "socket"
rescue LoadError, StandardError, NotImplementedError
end
begin
  `id`
  seen << "subprocess"
rescue StandardError, NotImplementedError
end
puts "visible: #{seen.inspect} env: #{ENV.keys.inspect}"
)").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["stdout"], "visible: [] env: []\n") << r;
}

TEST_F(WasmRubyTest, JavaScriptInteropIsAClearError) {
  nlohmann::json r = Run("require 'js'\nputs 'loaded'\n$stdout.flush\nJS.global\nputs 'unreachable'").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["stdout"], "loaded\n");
  EXPECT_NE(r["stderr"].get<std::string>().find("JavaScript interop (require \"js\") is not available"),
            std::string::npos)
      << r;
}

}  // namespace
}  // namespace airlock
