#include "engine/js/async_body.h"

#include <js/CallAndConstruct.h>
#include <js/CompilationAndEvaluation.h>
#include <js/CompileOptions.h>
#include <js/GlobalObject.h>
#include <js/RealmOptions.h>
#include <js/SourceText.h>

#include <optional>

#include "engine/js/js_strings.h"

namespace airlock::engine::js {
namespace {

// Runs in the private parser global. Returns the rewritten source or null.
// Positions from Reflect.parse are (1-based line, 0-based UTF-16 column).
// (The callee check also rejects code that closed the wrapper early.)
constexpr std::string_view kRewriter = R"JS((function (src) {
  "use strict";
  var ast;
  try { ast = Reflect.parse(src, {loc: true}); } catch (e) { return null; }
  var top = ast.body;
  if (top.length !== 1 || top[0].type !== "ExpressionStatement") return null;
  var call = top[0].expression;
  if (call.type !== "CallExpression" || call.arguments.length !== 0 ||
      call.callee.type !== "FunctionExpression" || !call.callee.async) return null;
  var stmts = call.callee.body.body;
  if (stmts.length === 0) return null;
  var last = stmts[stmts.length - 1];
  if (last.type !== "ExpressionStatement" || !last.loc) return null;
  var starts = [0];
  for (var i = 0; i < src.length; i++) {
    var c = src.charCodeAt(i);
    if (c === 13 && src.charCodeAt(i + 1) === 10) { starts.push(i + 2); i++; }
    else if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) starts.push(i + 1);
  }
  function offset(p) { return starts[p.line - 1] + p.column; }
  // Reflect.parse starts an expression statement at its expression, after
  // any opening parentheses, and may end the previous statement before its
  // ";". So the first candidate starts where the previous statement (or the
  // body's "{") ends, minus leading blanks and semicolons; the second at the
  // expression. The first candidate that parses to a body ending in a
  // return statement wins.
  var from = stmts.length > 1 ? offset(stmts[stmts.length - 2].loc.end)
                              : offset(call.callee.body.loc.start) + 1;
  var e = offset(last.loc.end);
  var candidates = [from, offset(last.expression.loc.start)];
  for (var k = 0; k < candidates.length; k++) {
    var s = candidates[k];
    if (!(s >= 0 && e > s && e <= src.length)) continue;
    var text = src.slice(s, e);
    var lead = /^[\s;]*/.exec(text)[0];
    text = text.slice(lead.length).replace(/;\s*$/, "");
    var out = src.slice(0, s) + lead + "return (" + text + "\n);" + src.slice(e);
    try {
      var check = Reflect.parse(out).body[0].expression.callee.body.body;
      if (check[check.length - 1].type === "ReturnStatement") return out;
    } catch (err) {}
  }
  return null;
}))JS";

const JSClass kParserGlobalClass = {"AirlockParserGlobal", JSCLASS_GLOBAL_FLAGS,
                                    &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

// Rewrites inside `parser_global`; nullopt on any failure.
std::optional<std::string> Rewrite(JSContext* cx, JS::HandleObject parser_global,
                                   const std::string& wrapped) {
  JSAutoRealm ar(cx, parser_global);
  if (!JS::InitRealmStandardClasses(cx) || !JS_InitReflectParse(cx, parser_global)) {
    return std::nullopt;
  }
  JS::CompileOptions opts(cx);
  opts.setFileAndLine("airlock:rewriter", 1);
  JS::SourceText<mozilla::Utf8Unit> src;
  if (!src.init(cx, kRewriter.data(), kRewriter.size(), JS::SourceOwnership::Borrowed)) {
    return std::nullopt;
  }
  JS::RootedValue fn(cx);
  if (!JS::Evaluate(cx, opts, src, &fn)) return std::nullopt;
  JS::RootedString input(cx, NewJsString(cx, wrapped));
  if (!input) return std::nullopt;
  JS::RootedValueArray<1> args(cx);
  args[0].setString(input);
  JS::RootedValue out(cx);
  if (!JS::Call(cx, JS::UndefinedHandleValue, fn, args, &out) || !out.isString()) {
    return std::nullopt;
  }
  JS::RootedString out_str(cx, out.toString());
  std::string rewritten;
  if (!JsStringToUtf8(cx, out_str, &rewritten)) return std::nullopt;

  // The rewrite must still compile (compile only; nothing runs).
  JS::SourceText<mozilla::Utf8Unit> check;
  if (!check.init(cx, rewritten.data(), rewritten.size(), JS::SourceOwnership::Borrowed)) {
    return std::nullopt;
  }
  JS::CompileOptions check_opts(cx);
  check_opts.setFileAndLine("main.js", 1);
  JS::RootedScript script(cx, JS::Compile(cx, check_opts, check));
  if (!script) return std::nullopt;
  return rewritten;
}

}  // namespace

std::string BuildAsyncBodySource(JSContext* cx, std::string_view code) {
  std::string wrapped;
  wrapped.reserve(kAsyncBodyPrefix.size() + code.size() + kAsyncBodySuffix.size());
  wrapped.append(kAsyncBodyPrefix).append(code).append(kAsyncBodySuffix);

  JS::RealmOptions options;
  JS::RootedObject parser_global(
      cx, JS_NewGlobalObject(cx, &kParserGlobalClass, nullptr, JS::FireOnNewGlobalHook, options));
  std::optional<std::string> rewritten;
  if (parser_global) rewritten = Rewrite(cx, parser_global, wrapped);
  JS_ClearPendingException(cx);
  return rewritten ? *rewritten : wrapped;
}

}  // namespace airlock::engine::js
