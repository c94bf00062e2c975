// The Ruby code with which `airlock-js --wasi-ruby` runs a program (see
// ruby_runner.h): what `ruby SCRIPT ARGS` does after parsing its options.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/js/ruby_runner.h"

namespace airlock::engine::js {
namespace {

// A double-quoted Ruby string literal of `s`: every byte that is not plainly
// safe becomes \xHH, so nothing in it can end the literal or interpolate.
std::string RubyLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' ||
                       c == '.' || c == '/' || c == '-' || c == '_' || c == ',' || c == ':' || c == '=' || c == '+';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    }
  }
  return out + "\"";
}

// Runs after ruby-init. --disable-gems also skips what `ruby` loads by
// default with RubyGems: RubyGems itself costs a third of a second of
// start-up (over a second with its gem specs), so it loads on first use of
// `Gem` and the bundled gems' lib dirs go on the load path directly;
// error_highlight and did_you_mean (a few ms each) load here.
//
// at_exit blocks are collected here and run after the program, last first
// (Ruby would run them in ruby_cleanup, which this embedding never reaches);
// a SystemExit in one sets the status, another exception is printed and
// makes it 1. Uncaught exceptions print as `ruby` prints them, without the
// bootstrap's own frames ("eval:N" and the frameless Kernel.eval).
constexpr char kBootstrap[] = R"RUBY(
Object.autoload(:Gem, "rubygems") unless defined?(::Gem)
$LOAD_PATH.concat(Dir.glob("/usr/local/lib/ruby/gems/*/gems/*/lib").sort)
begin
  require "error_highlight"
  require "did_you_mean"
rescue LoadError
end
$__airlock_at_exit = []
module Kernel
  def at_exit(&block)
    raise ArgumentError, "called without a block" unless block
    $__airlock_at_exit << block
    block
  end
  module_function :at_exit
end
__airlock_report = lambda do |e|
  bt = e.backtrace
  if bt
    bt = bt.dup
    bt.pop while !bt.empty? && (bt[-1].start_with?("eval:") || bt[-1] !~ /:\d+:in /)
    e.set_backtrace(bt)
  end
  text = begin
    bt && bt.empty? ? e.detailed_message(highlight: false) + "\n" : e.full_message(highlight: false)
  rescue Exception
    "#{bt&.first || $0}: #{e.message} (#{e.class})\n"
  end
  $stderr.write(text)
end
__airlock_status = begin
  if __airlock_code
    TOPLEVEL_BINDING.eval(__airlock_code, "-e", 1)
  else
    load __airlock_script
  end
  0
rescue SystemExit => e
  e.status
rescue Exception => e
  __airlock_report.(e)
  1
end
while (__airlock_block = $__airlock_at_exit.pop)
  begin
    __airlock_block.call
  rescue SystemExit => e
    __airlock_status = e.status
  rescue Exception => e
    __airlock_report.(e)
    __airlock_status = 1
  end
end
ObjectSpace.each_object(IO) { |io| io.flush unless io.closed? rescue nil }
exit!(__airlock_status)
)RUBY";

}  // namespace

std::string RubyBootstrap(const std::string& script, const std::vector<std::string>& args,
                          const std::optional<std::string>& code) {
  std::string out = "__airlock_script = " + RubyLiteral(script) + "\n$0 = __airlock_script\n__airlock_code = " +
                    (code ? RubyLiteral(*code) : std::string("nil")) + "\nARGV.replace([";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + RubyLiteral(args[i]);
  out += "])\n";
  return out + kBootstrap;
}

}  // namespace airlock::engine::js
