// Code mode end to end: what a program may do (research codemode.md §6.1
// A1–A9, §6.2 D7/D18) and the governance denials it must meet (§6.3
// G-D1–G-D6), each in JavaScript AND Python. Every test runs `execute` exactly
// as the MCP server does: a real program in the jail, real downstream MCP
// servers behind the gateway (codemode_fixture.h lists the connectors).
//
//   build-x/airlock_tests --gtest_filter='*CodeModeAllowed*:*CodeModeGovernance*'
//
// Programs are written twice (one text per language) and return a JSON
// summary of what they saw, which the test then checks value by value.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "codemode_fixture.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

// The message of every E_TOOL_NOT_DECLARED denial: identical for a tool that
// does not exist and one whose connector this run may not use.
std::string NotAvailable(const std::string& name) { return "tool \"" + name + "\" is not available in this run"; }

// A JSON array of strings as a literal both languages accept.
std::string Literal(const std::vector<std::string>& names) { return json(names).dump(); }

// The calls.log entries of a run.
json Log(const ExecOutcome& r) { return r.sc.value("calls", json::object()).value("log", json::array()); }

// Runs one program per language: the fixture's Execute with the text for the
// parameter's language.
class CodeModeLangTest : public CodeModeTest, public ::testing::WithParamInterface<std::string> {
 protected:
  static bool js() { return GetParam() == "javascript"; }
  static ExecOutcome Run(const std::string& js_code, const std::string& py_code,
                         const json& extra = json::object(), const codemode::Limits& admin = {}) {
    return Execute(GetParam(), js() ? js_code : py_code, extra, admin);
  }
};

class CodeModeAllowed : public CodeModeLangTest {};
class CodeModeGovernance : public CodeModeLangTest {};

std::string LangName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// ------------------------------------------------------------------ allowed

// A1/A2: the program's value, whichever way it is produced, arrives as JSON.
TEST_P(CodeModeAllowed, ReturnsJsonValues) {
  REQUIRE_CODE_MODE();
  struct Case {
    std::string js, py;
    json want;
  };
  const std::vector<Case> cases = {
      {"return 1+1", "1+1", 2},
      // Last expression statement (JS) / the `result` variable (Python).
      {"const x = 20;\nx + 1", "result = 20 + 1", 21},
      {"return {a: 1, list: [1, 'two', null, true, [2.5]], s: 'text', nothing: null}",
       "{'a': 1, 'list': [1, 'two', None, True, [2.5]], 's': 'text', 'nothing': None}",
       json::parse(R"({"a": 1, "list": [1, "two", null, true, [2.5]], "s": "text", "nothing": null})")},
      {"return 'héllo \"w\"'", "'héllo \"w\"'", "héllo \"w\""},
      {"return [[], {}, [1, [2, [3]]]]", "[[], {}, [1, [2, [3]]]]", json::parse(R"([[], {}, [1, [2, [3]]]])")},
      // Top-level await.
      {"const v = await Promise.resolve(6);\nreturn v * 7",
       "import asyncio\nawait asyncio.sleep(0.01)\nv = await asyncio.sleep(0, result=6)\nresult = v * 7", 42},
      // Python: `result` wins over a later expression statement.
      {"return 'var'", "result = 'var'\n'expr'", "var"},
  };
  for (const Case& c : cases) {
    ExecOutcome r = Run(c.js, c.py);
    EXPECT_TRUE(r.ok()) << (js() ? c.js : c.py) << "\n" << r.text;
    EXPECT_FALSE(r.is_error());
    EXPECT_EQ(r.result(), c.want) << (js() ? c.js : c.py);
    EXPECT_EQ(r.sc["calls"]["total"], 0);
    EXPECT_EQ(r.sc["language"], GetParam());
  }
  // null is a value, not an error.
  ExecOutcome r = Run("return null", "None");
  EXPECT_TRUE(r.ok()) << r.text;
  ASSERT_TRUE(r.sc.contains("result"));
  EXPECT_TRUE(r.sc["result"].is_null());
  EXPECT_FALSE(r.sc.contains("error"));
}

// A3: search sees only the granted connectors' tools, ranked, with a flag.
TEST_P(CodeModeAllowed, SearchSeesOnlyGrantedConnectors) {
  REQUIRE_CODE_MODE();
  ExecOutcome only_memory = Run(
      "return {echo: await tools.search('echo', 50), graph: await tools.search('graph', 50)}",
      "result = {'echo': tools.search('echo', 50), 'graph': tools.search('graph', 50)}",
      {{"connectors", {"memory"}}});
  ASSERT_TRUE(only_memory.ok()) << only_memory.text;
  for (const char* key : {"echo", "graph"}) {
    const json s = only_memory.result()[key];
    ASSERT_TRUE(s["tools"].is_array()) << s;
    ASSERT_TRUE(s["truncated"].is_boolean()) << s;
    for (const json& t : s["tools"]) {
      EXPECT_EQ(t["name"].get<std::string>().rfind("memory.", 0), 0u) << "tool of an ungranted connector: " << t;
    }
  }
  std::set<std::string> graph;
  const json graph_hits = only_memory.result()["graph"]["tools"];
  for (const json& t : graph_hits) graph.insert(t["name"]);
  EXPECT_TRUE(graph.count("memory.read_graph")) << only_memory.result()["graph"];

  // All connectors: every echo tool is found, the best match first; a limit
  // of 1 cuts the list and says so.
  ExecOutcome all = Run("return {many: await tools.search('echo', 50), one: await tools.search('echo', 1)}",
                        "result = {'many': tools.search('echo', 50), 'one': tools.search('echo', limit=1)}");
  ASSERT_TRUE(all.ok()) << all.text;
  const json many = all.result()["many"];
  std::set<std::string> names;
  for (const json& t : many["tools"]) {
    names.insert(t["name"]);
    EXPECT_TRUE(t["summary"].is_string()) << t;
    EXPECT_TRUE(t["read_only"].is_boolean()) << t;
  }
  EXPECT_TRUE(names.count("test.echo") && names.count("plain.echo") && names.count("everything.echo")) << many;
  ASSERT_FALSE(many["tools"].empty());
  const std::string first = many["tools"][0]["name"];
  EXPECT_EQ(first.substr(first.find('.')), ".echo") << "ranking: " << many;
  EXPECT_EQ(many["truncated"], false);
  const json one = all.result()["one"];
  EXPECT_EQ(one["tools"].size(), 1u) << one;
  EXPECT_EQ(one["truncated"], true) << one;
  EXPECT_EQ(one["tools"][0], many["tools"][0]);
}

// A4: describe gives the schema and a signature; an undeclared connector's
// tool cannot be described.
TEST_P(CodeModeAllowed, DescribeGivesSchemaAndSignature) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const d = await tools.describe('test.complex');
let denied = null;
try { await tools.describe('memory.read_graph'); } catch (e) { denied = {code: e.code, message: e.message}; }
return {d, denied};)",
                      R"(
d = tools.describe('test.complex')
denied = None
try:
    tools.describe('memory.read_graph')
except ToolError as e:
    denied = {'code': e.code, 'message': e.message}
result = {'d': d, 'denied': denied})",
                      {{"connectors", {"test"}}});
  ASSERT_TRUE(r.ok()) << r.text;
  const json d = r.result()["d"];
  EXPECT_EQ(d["name"], "test.complex");
  EXPECT_EQ(d["description"].get<std::string>().rfind("A tool with a complex schema.", 0), 0u) << d;
  EXPECT_EQ(d["read_only"], true);
  ASSERT_TRUE(d["input_schema"].is_object()) << d;
  EXPECT_EQ(d["input_schema"]["type"], "object");
  for (const char* p : {"id", "fields", "mode", "filter", "key"}) {
    EXPECT_TRUE(d["input_schema"]["properties"].contains(p)) << p << " missing: " << d["input_schema"];
  }
  const json& req = d["input_schema"]["required"];
  EXPECT_EQ(std::set<std::string>(req.begin(), req.end()), (std::set<std::string>{"id", "mode", "key"}));
  ASSERT_TRUE(d["signature"].is_string()) << d;
  const std::string sig = d["signature"];
  for (const char* part : {"complex", "id", "mode", "fast", "filter"}) {
    EXPECT_NE(sig.find(part), std::string::npos) << part << " not in " << sig;
  }
  EXPECT_EQ(r.result()["denied"], json({{"code", "E_TOOL_NOT_DECLARED"}, {"message", NotAvailable("memory.read_graph")}}));
  ASSERT_EQ(Log(r).size(), 2u);
  EXPECT_EQ(Log(r)[0]["decision"], "allowed");
  EXPECT_EQ(Log(r)[1]["decision"], "denied");
  EXPECT_EQ(Log(r)[1]["error_code"], "E_TOOL_NOT_DECLARED");
}

// A5: structuredContent if present, else parsed JSON text, else the text.
TEST_P(CodeModeAllowed, CallReturnsToolValue) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
return {
  structured: await tools.call('test.structured', {}),
  json_text: await tools.call('test.json_text'),
  text: await tools.call('test.echo', {text: 'hi there'}),
  json_looking: await tools.call('test.echo', {text: '[1, 2]'}),
};)",
                      R"(
result = {
    'structured': tools.call('test.structured', {}),
    'json_text': tools.call('test.json_text'),
    'text': tools.call('test.echo', {'text': 'hi there'}),
    'json_looking': tools.call('test.echo', {'text': '[1, 2]'}),
})");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result()["structured"], json({{"answer", 42}}));
  EXPECT_EQ(r.result()["json_text"], json::parse(R"({"a":1,"b":[true]})"));
  EXPECT_EQ(r.result()["text"], "hi there");
  EXPECT_EQ(r.result()["json_looking"], json::parse("[1, 2]"));
  EXPECT_EQ(r.sc["calls"]["total"], 4);
  EXPECT_EQ(r.sc["calls"]["denied"], 0);
}

// A6: a tool's isError reaches the program as a catchable ToolError.
TEST_P(CodeModeAllowed, ToolErrorIsCatchable) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const out = {};
try {
  await tools.call('test.fail', {message: 'boom: disk on fire'});
  out.thrown = false;
} catch (e) {
  out.thrown = true;
  out.is_tool_error = e instanceof ToolError;
  out.is_error = e instanceof Error;
  out.code = e.code;
  out.message = e.message;
}
out.after = await tools.call('test.echo', {text: 'still here'});
return out;)",
                      R"(
out = {}
try:
    tools.call('test.fail', {'message': 'boom: disk on fire'})
    out['thrown'] = False
except ToolError as e:
    out['thrown'] = True
    out['is_tool_error'] = isinstance(e, ToolError)
    out['is_error'] = isinstance(e, Exception)
    out['code'] = e.code
    out['message'] = e.message
    out['str'] = str(e)
out['after'] = tools.call('test.echo', {'text': 'still here'})
result = out)");
  ASSERT_TRUE(r.ok()) << r.text;
  const json v = r.result();
  EXPECT_EQ(v["thrown"], true);
  EXPECT_EQ(v["is_tool_error"], true);
  EXPECT_EQ(v["is_error"], true);
  EXPECT_EQ(v["code"], "E_TOOL_ERROR");
  EXPECT_EQ(v["message"], "boom: disk on fire");
  if (!js()) {
    EXPECT_EQ(v["str"], "boom: disk on fire");
  }
  EXPECT_EQ(v["after"], "still here");
  ASSERT_EQ(Log(r).size(), 2u);
  EXPECT_EQ(Log(r)[0]["name"], "test.fail");
  EXPECT_EQ(Log(r)[0]["error_code"], "E_TOOL_ERROR");
  EXPECT_EQ(Log(r)[1]["error_code"], "");
}

// A7: 16 calls of 300 ms in flight at once finish in about 300 ms, not 4.8 s.
TEST_P(CodeModeAllowed, ConcurrentCallsRunTogether) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const t0 = Date.now();
const values = await Promise.all(Array.from({length: 16}, () => tools.call('test.slow', {ms: 300})));
return {values, elapsed_ms: Date.now() - t0};)",
                      R"(
import asyncio, time
t0 = time.monotonic()
values = await asyncio.gather(*[tools.acall('test.slow', {'ms': 300}) for _ in range(16)])
result = {'values': list(values), 'elapsed_ms': int((time.monotonic() - t0) * 1000)})");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result()["values"], json(std::vector<std::string>(16, "done")));
  const int elapsed = r.result()["elapsed_ms"];
  EXPECT_GE(elapsed, 290);
  EXPECT_LT(elapsed, 16 * 300 / 2) << "the calls did not run concurrently";
  EXPECT_LT(r.sc["wall_ms"].get<int>(), 16 * 300);
  EXPECT_EQ(r.sc["calls"]["total"], 16);
  EXPECT_EQ(r.sc["calls"]["denied"], 0);
}

// A8: console output is returned beside the result, never inside it.
TEST_P(CodeModeAllowed, ConsoleGoesToStdoutAndStderr) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
console.log('out line', 1, {k: 'v'});
console.info('info line');
console.error('err line');
console.warn('warn line');
return 'value';)",
                      R"(
import sys
print('out line', 1, {'k': 'v'})
print('err line', file=sys.stderr)
sys.stderr.write('warn line\n')
result = 'value')");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), "value");
  EXPECT_NE(r.out().find("out line 1"), std::string::npos) << r.out();
  EXPECT_NE(r.err().find("err line"), std::string::npos) << r.err();
  EXPECT_NE(r.err().find("warn line"), std::string::npos) << r.err();
  EXPECT_EQ(r.out().find("err line"), std::string::npos) << r.out();
  EXPECT_EQ(r.err().find("out line"), std::string::npos) << r.err();
  if (js()) {
    EXPECT_NE(r.out().find("info line"), std::string::npos) << r.out();
  }
  EXPECT_EQ(r.sc["console_truncated"], false);
}

// A9: the language's own built-ins work. SpiderMonkey 102 as embedded has the
// ECMAScript built-ins only: no structuredClone, TextEncoder/TextDecoder,
// setTimeout, URL or atob (they are web APIs), nor WeakRef (off by default).
TEST_P(CodeModeAllowed, BuiltinsWork) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const m = new Map([[1, 'a'], [2, 'b']]);
const s = new Set([1, 1, 2, 3]);
const absent = {};
for (const n of ['structuredClone', 'TextEncoder', 'TextDecoder', 'setTimeout', 'URL', 'atob', 'WeakRef'])
  absent[n] = typeof globalThis[n] === 'undefined';
return {
  json: JSON.parse(JSON.stringify({a: [1, {b: null}]})),
  math: [Math.max(3, 9), Math.round(2.5), Math.sqrt(16), Math.floor(-1.5)],
  date: new Date(Date.UTC(2024, 1, 29, 12)).toISOString(),
  now: typeof Date.now() === 'number' && Date.now() > 1.7e12,
  regexp: ['a1b22'.replace(/\d+/g, (x) => `<${x}>`), /(?<y>\d{4})/.exec('in 2024').groups.y, /(?<=\$)\d+/.exec('$42')[0]],
  map: [...m.entries()], set: [...s],
  typed: Array.from(new Uint8Array([1, 2, 300])),
  bigint: (2n ** 64n).toString(),
  intl: new Intl.NumberFormat('en-US').format(1234.5),
  misc: [[1, 2, 3].at(-1), Object.hasOwn({q: 1}, 'q'), 'abc'.padStart(5, '-'), [[1], [2]].flat()],
  absent,
};)",
                      R"(
import json, math, re, datetime, collections, itertools, functools, statistics, base64, hashlib
result = {
    'json': json.loads(json.dumps({'a': [1, {'b': None}]})),
    'math': [max(3, 9), round(2.5), math.sqrt(16), math.floor(-1.5)],
    'date': datetime.datetime(2024, 2, 29, 12, tzinfo=datetime.timezone.utc).isoformat(),
    'regexp': [re.sub(r'\d+', lambda m: '<%s>' % m.group(0), 'a1b22'), re.search(r'(?P<y>\d{4})', 'in 2024').group('y')],
    'counter': collections.Counter('abracadabra').most_common(1),
    'sum': functools.reduce(lambda a, b: a + b, itertools.chain([1, 2], [3])),
    'mean': statistics.mean([1, 2, 3, 4]),
    'b64': base64.b64encode(b'airlock').decode(),
    'sha': hashlib.sha256(b'').hexdigest()[:8],
    'bigint': str(2 ** 64),
})");
  ASSERT_TRUE(r.ok()) << r.text;
  const json v = r.result();
  EXPECT_EQ(v["json"], json::parse(R"({"a":[1,{"b":null}]})"));
  EXPECT_EQ(v["bigint"], "18446744073709551616");
  if (js()) {
    EXPECT_EQ(v["math"], json::parse("[9, 3, 4, -2]"));
    EXPECT_EQ(v["date"], "2024-02-29T12:00:00.000Z");
    EXPECT_EQ(v["now"], true);
    EXPECT_EQ(v["regexp"], json::parse(R"(["a<1>b<22>", "2024", "42"])"));
    EXPECT_EQ(v["map"], json::parse(R"([[1,"a"],[2,"b"]])"));
    EXPECT_EQ(v["set"], json::parse("[1, 2, 3]"));
    EXPECT_EQ(v["typed"], json::parse("[1, 2, 44]"));
    EXPECT_EQ(v["intl"], "1,234.5");
    EXPECT_EQ(v["misc"], json::parse(R"([3, true, "--abc", [1, 2]])"));
    for (const auto& [name, is_absent] : v["absent"].items()) {
      EXPECT_EQ(is_absent, true) << name << " now exists: update this test and the docs";
    }
  } else {
    EXPECT_EQ(v["math"], json::parse("[9, 2, 4.0, -2]"));  // banker's rounding
    EXPECT_EQ(v["date"], "2024-02-29T12:00:00+00:00");
    EXPECT_EQ(v["regexp"], json::parse(R"(["a<1>b<22>", "2024"])"));
    EXPECT_EQ(v["counter"], json::parse(R"([["a", 5]])"));
    EXPECT_EQ(v["sum"], 6);
    EXPECT_EQ(v["mean"], 2.5);
    EXPECT_EQ(v["b64"], "YWlybG9jaw==");
    EXPECT_EQ(v["sha"], "e3b0c442");
  }
}

// One program, two downstream servers (server-everything and server-memory).
TEST_P(CodeModeAllowed, CallsTwoServersInOneProgram) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const [echo, graph] = await Promise.all([
  tools.call('everything.echo', {message: 'from js'}),
  tools.call('memory.read_graph', {}),
]);
return {echo, graph};)",
                      R"(
result = {'echo': tools.call('everything.echo', {'message': 'from python'}),
          'graph': tools.call('memory.read_graph', {})})",
                      {{"connectors", {"everything", "memory"}}});
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result()["echo"], js() ? "Echo: from js" : "Echo: from python");
  EXPECT_EQ(r.result()["graph"], json::parse(R"({"entities": [], "relations": []})"));
  ASSERT_EQ(Log(r).size(), 2u);
  std::set<std::string> called;
  for (const json& c : Log(r)) {
    called.insert(c["name"]);
    EXPECT_EQ(c["decision"], "allowed") << c;
    EXPECT_EQ(c["error_code"], "") << c;
  }
  EXPECT_EQ(called, (std::set<std::string>{"everything.echo", "memory.read_graph"}));
}

// D18: a bridge frame printed to stdout/stderr is only console text.
TEST_P(CodeModeAllowed, ForgedFrameOnConsoleIsJustText) {
  REQUIRE_CODE_MODE();
  const std::string body = R"({"op":"result","value":"forged"})";
  ExecOutcome r = Run(R"(
const body = '{"op":"result","value":"forged"}';
const frame = String.fromCharCode(0, 0, 0, body.length) + body;
console.log(frame);
console.error(frame);
return 'real';)",
                      R"(
import sys
body = b'{"op":"result","value":"forged"}'
frame = len(body).to_bytes(4, 'big') + body
sys.stdout.flush()
sys.stdout.buffer.write(frame)
sys.stdout.buffer.flush()
sys.stderr.buffer.write(frame)
sys.stderr.buffer.flush()
result = 'real')");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), "real");
  const std::string frame = std::string("\0\0\0", 3) + static_cast<char>(body.size()) + body;
  EXPECT_NE(r.out().find(frame), std::string::npos) << r.sc["stdout"].dump();
  EXPECT_NE(r.err().find(frame), std::string::npos) << r.sc["stderr"].dump();
  EXPECT_EQ(r.sc["calls"]["total"], 0);
}

// D7: the program has no environment holding a downstream secret; the
// secret exists (a tool of the connector that has it can report it), so the
// jail's view is a meaningful negative.
TEST_P(CodeModeAllowed, NoSecretReachesTheJail) {
  REQUIRE_CODE_MODE();
  ExecOutcome control = Execute("javascript", "return await tools.call('test.env', {name: 'AIRLOCK_TEST_SECRET'})",
                                {{"connectors", {"test"}}});
  ASSERT_TRUE(control.ok()) << control.text;
  ASSERT_EQ(control.result(), json({{"set", true}, {"value", kDownstreamSecret}}));

  ExecOutcome r = Run(R"(
const g = Object.getOwnPropertyNames(globalThis);
console.log(g.join(' '));
return {process: typeof process, require: typeof require, Deno: typeof Deno, os: typeof os,
        environment: typeof environment, getenv: typeof getenv, read: typeof read, globals: g};)",
                      R"(
import os
out = {'environ': dict(os.environ), 'files': {}}
print(os.environ)
paths = ['/proc/self/environ', '/proc/1/environ']
try:
    paths += ['/proc/%s/environ' % p for p in os.listdir('/proc') if p.isdigit()]
except OSError as e:
    out['listdir'] = repr(e)
for p in paths:
    try:
        with open(p, 'rb') as f:
            out['files'][p] = f.read().decode('latin-1')
    except OSError as e:
        out['files'][p] = 'error: ' + type(e).__name__
print(out['files'])
result = out)");
  ASSERT_TRUE(r.ok()) << r.text;
  const std::string everything = r.raw.dump();
  EXPECT_EQ(everything.find(kDownstreamSecret), std::string::npos) << "the secret reached the jail";
  EXPECT_EQ(everything.find("AIRLOCK_TEST_SECRET"), std::string::npos);
  EXPECT_EQ(r.out().find(kDownstreamSecret), std::string::npos);
  EXPECT_FALSE(r.out().empty());  // the program did print what it saw
  if (js()) {
    for (const char* name : {"process", "require", "Deno", "os", "environment", "getenv", "read"}) {
      EXPECT_EQ(r.result()[name], "undefined") << name;
    }
    // Nothing but ECMAScript built-ins, console and the bridge.
    const std::set<std::string> ecmascript = {
        "AggregateError", "Array", "ArrayBuffer", "Atomics", "BigInt", "BigInt64Array", "BigUint64Array",
        "Boolean", "DataView", "Date", "Error", "EvalError", "FinalizationRegistry", "Float32Array",
        "Float64Array", "Function", "Infinity", "Int16Array", "Int32Array", "Int8Array", "InternalError", "Intl",
        "JSON", "Map", "Math", "NaN", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError",
        "Reflect", "RegExp", "Set", "SharedArrayBuffer", "String", "Symbol", "SyntaxError", "TypeError",
        "URIError", "Uint16Array", "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakRef",
        "WeakSet", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "eval",
        "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "undefined", "unescape"};
    std::set<std::string> host;
    const json globals = r.result()["globals"];
    for (const json& g : globals) {
      if (!ecmascript.count(g.get<std::string>())) host.insert(g);
    }
    EXPECT_EQ(host, (std::set<std::string>{"console", "tools", "ToolError"}));
  } else {
    EXPECT_FALSE(r.result()["environ"].contains("AIRLOCK_TEST_SECRET")) << r.result()["environ"];
    // The jail's own environment is readable (so the negative above means
    // something) and holds only the runtime's few variables.
    EXPECT_TRUE(r.result()["environ"].contains("PATH")) << r.result()["environ"];
    const std::string self = r.result()["files"].value("/proc/self/environ", "");
    EXPECT_NE(self.find("PATH="), std::string::npos) << self;
  }
}

INSTANTIATE_TEST_SUITE_P(Lang, CodeModeAllowed, ::testing::Values("javascript", "python"), LangName);

// --------------------------------------------------------------- governance

// G-D1: a tool of a connector the run did not declare does not exist for it.
TEST_P(CodeModeGovernance, UndeclaredConnectorIsNotDeclared) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
try { await tools.call('test.echo', {text: 'x'}); return 'called'; }
catch (e) { return {code: e.code, message: e.message}; })",
                      R"(
try:
    tools.call('test.echo', {'text': 'x'})
    result = 'called'
except ToolError as e:
    result = {'code': e.code, 'message': e.message})",
                      {{"connectors", {"memory"}}});
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json({{"code", "E_TOOL_NOT_DECLARED"}, {"message", NotAvailable("test.echo")}}));
  ASSERT_EQ(Log(r).size(), 1u);
  EXPECT_EQ(Log(r)[0]["op"], "call");
  EXPECT_EQ(Log(r)[0]["name"], "test.echo");
  EXPECT_EQ(Log(r)[0]["decision"], "denied");
  EXPECT_EQ(Log(r)[0]["error_code"], "E_TOOL_NOT_DECLARED");
  EXPECT_EQ(r.sc["calls"]["denied"], 1);
}

// G-D2/G-D4: unknown, case-spoofed, padded and look-alike names are denied
// exactly like a real tool of an undeclared connector: a tool's existence
// never leaks through the code or the message. Names are compared as bytes.
TEST_P(CodeModeGovernance, SpoofedAndUnknownNamesLookLikeUndeclared) {
  REQUIRE_CODE_MODE();
  const std::vector<std::string> names = {
      "memory.read_graph",   // exists, connector not granted
      "test.no_such_tool",   // granted connector, no such tool
      "nosuch.tool",         // no such connector
      "TEST.echo",           // case
      "test.Echo",           // case
      "test.echo ",          // trailing space
      " test.echo",          // leading space
      "test.\xEF\xBD\x85" "cho",  // fullwidth 'e' (U+FF45)
      "test.echo\xE2\x80\x8B",    // zero-width space
      "test",                // no dot
      "",                    // empty
  };
  ExecOutcome r = Run(R"(
const out = [];
for (const name of )" + Literal(names) + R"() {
  for (const op of ['call', 'describe']) {
    try {
      await (op === 'call' ? tools.call(name, {text: 'x'}) : tools.describe(name));
      out.push({name, op, code: 'none'});
    } catch (e) { out.push({name, op, code: e.code, message: e.message}); }
  }
}
return out;)",
                      R"(
out = []
for name in )" + Literal(names) + R"(:
    for op in ('call', 'describe'):
        try:
            tools.call(name, {'text': 'x'}) if op == 'call' else tools.describe(name)
            out.append({'name': name, 'op': op, 'code': 'none'})
        except ToolError as e:
            out.append({'name': name, 'op': op, 'code': e.code, 'message': e.message})
result = out)",
                      {{"connectors", {"test"}}});
  ASSERT_TRUE(r.ok()) << r.text;
  ASSERT_EQ(r.result().size(), names.size() * 2) << r.result();
  for (const json& o : r.result()) {
    const std::string name = o["name"];
    EXPECT_EQ(o["code"], "E_TOOL_NOT_DECLARED") << o;
    EXPECT_EQ(o["message"], NotAvailable(name)) << o;
  }
  // The session saw exactly the bytes the program sent.
  ASSERT_EQ(Log(r).size(), names.size() * 2);
  for (size_t i = 0; i < Log(r).size(); ++i) {
    EXPECT_EQ(Log(r)[i]["name"], names[i / 2]);
    EXPECT_EQ(Log(r)[i]["decision"], "denied");
    EXPECT_EQ(Log(r)[i]["error_code"], "E_TOOL_NOT_DECLARED");
  }
  EXPECT_EQ(r.sc["calls"]["denied"], static_cast<int>(names.size() * 2));
}

// G-D3/G-D5: write tools are denied in an inline run: a trusted server's
// readOnlyHint:false tool, every tool of an untrusted server (whatever it
// claims), an unpinned tool of memory; memory's admin-pinned reads pass. The
// denied calls never reach the server.
TEST_P(CodeModeGovernance, WriteToolsAreDenied) {
  REQUIRE_CODE_MODE();
  const std::vector<std::string> writes = {"test.write_note", "plain.echo", "plain.structured",
                                           "memory.create_entities", "everything.toggle-simulated-logging"};
  ExecOutcome r = Run(R"(
const ARGS = {
  'test.write_note': {key: 'k', text: 't'}, 'plain.echo': {text: 'x'}, 'plain.structured': {},
  'memory.create_entities': {entities: [{name: 'n', entityType: 't', observations: []}]},
  'everything.toggle-simulated-logging': {},
};
const before = await tools.call('test.stats');
const denied = {};
for (const name of )" + Literal(writes) + R"() {
  try { await tools.call(name, ARGS[name]); denied[name] = 'called'; }
  catch (e) { denied[name] = {code: e.code, message: e.message}; }
}
const after = await tools.call('test.stats');
return {denied, dispatched: after.calls - before.calls, graph: await tools.call('memory.read_graph', {}),
        described: await tools.describe('plain.echo'),
        found: (await tools.search('echo', 50)).tools.filter((t) => t.name === 'plain.echo')};)",
                      R"(
ARGS = {
    'test.write_note': {'key': 'k', 'text': 't'}, 'plain.echo': {'text': 'x'}, 'plain.structured': {},
    'memory.create_entities': {'entities': [{'name': 'n', 'entityType': 't', 'observations': []}]},
    'everything.toggle-simulated-logging': {},
}
before = tools.call('test.stats')
denied = {}
for name in )" + Literal(writes) + R"(:
    try:
        tools.call(name, ARGS[name])
        denied[name] = 'called'
    except ToolError as e:
        denied[name] = {'code': e.code, 'message': e.message}
after = tools.call('test.stats')
result = {'denied': denied, 'dispatched': after['calls'] - before['calls'],
          'graph': tools.call('memory.read_graph', {}), 'described': tools.describe('plain.echo'),
          'found': [t for t in tools.search('echo', 50)['tools'] if t['name'] == 'plain.echo']})");
  ASSERT_TRUE(r.ok()) << r.text;
  const json v = r.result();
  for (const std::string& name : writes) {
    const std::string connector = name.substr(0, name.find('.'));
    EXPECT_EQ(v["denied"][name],
              json({{"code", "E_WRITE_NOT_ALLOWED"},
                    {"message", "tool \"" + name + "\" may change data, and this run is not allowed to write through \"" +
                                    connector + "\""}}))
        << name;
  }
  EXPECT_EQ(v["dispatched"], 1) << "only the second test.stats call itself reached the test server";
  EXPECT_EQ(v["graph"], json::parse(R"({"entities": [], "relations": []})")) << "create_entities was dispatched";
  // G-D5: the untrusted server's readOnlyHint:true on echo does not make it read.
  EXPECT_EQ(v["described"]["read_only"], false);
  ASSERT_EQ(v["found"].size(), 1u);
  EXPECT_EQ(v["found"][0]["read_only"], false);
  int write_denials = 0;
  for (const json& c : Log(r)) {
    if (c["error_code"] == "E_WRITE_NOT_ALLOWED") {
      ++write_denials;
      EXPECT_EQ(c["decision"], "denied");
    } else {
      EXPECT_EQ(c["decision"], "allowed") << c;
    }
  }
  EXPECT_EQ(write_denials, static_cast<int>(writes.size()));
  EXPECT_EQ(r.sc["calls"]["denied"], static_cast<int>(writes.size()));
}

// G-D6: airlock's own tools (execute, search_tools, ...) are not reachable
// from a program: no recursion.
TEST_P(CodeModeGovernance, AirlockToolsAreNotCallable) {
  REQUIRE_CODE_MODE();
  const std::vector<std::string> names = {"airlock.execute", "execute", "airlock.search_tools", "search_tools",
                                          "airlock.describe_tool", "airlock.run_code", "run_code"};
  ExecOutcome r = Run(R"(
const out = {};
for (const name of )" + Literal(names) + R"() {
  try { await tools.call(name, {language: 'javascript', code: 'return 1'}); out[name] = 'called'; }
  catch (e) { out[name] = {code: e.code, message: e.message}; }
}
const found = [];
for (const q of ['execute', 'search_tools', 'run_code'])
  for (const t of (await tools.search(q, 50)).tools) found.push(t.name);
return {out, found};)",
                      R"(
out = {}
for name in )" + Literal(names) + R"(:
    try:
        tools.call(name, {'language': 'python', 'code': '1'})
        out[name] = 'called'
    except ToolError as e:
        out[name] = {'code': e.code, 'message': e.message}
found = [t['name'] for q in ('execute', 'search_tools', 'run_code') for t in tools.search(q, 50)['tools']]
result = {'out': out, 'found': found})");
  ASSERT_TRUE(r.ok()) << r.text;
  for (const std::string& name : names) {
    EXPECT_EQ(r.result()["out"][name], json({{"code", "E_TOOL_NOT_DECLARED"}, {"message", NotAvailable(name)}}))
        << name;
  }
  const json found = r.result()["found"];
  for (const json& f : found) {
    const std::string n = f;
    EXPECT_NE(n.rfind("airlock.", 0), 0u) << n;
    for (const char* own : {"execute", "search_tools", "run_code", "describe_tool"}) {
      EXPECT_NE(n, own);
    }
  }
}

// Arguments are validated against the tool's input schema before dispatch;
// args that are not an object are refused.
TEST_P(CodeModeGovernance, InvalidArgsAreDeniedBeforeDispatch) {
  REQUIRE_CODE_MODE();
  // Each case: the tool, its args, as a literal both languages read.
  ExecOutcome r = Run(R"(
const bad = [['test.echo', {text: 5}], ['test.echo', {}], ['test.complex', {id: 1, mode: 'slow', key: 'k'}],
             ['test.complex', {id: 'one', mode: 'fast', key: 'k'}]];
const before = await tools.call('test.stats');
const schema = [];
for (const [name, args] of bad) {
  try { await tools.call(name, args); schema.push('called'); } catch (e) { schema.push(e.code); }
}
const after = await tools.call('test.stats');
// Not an object: refused in the program, before anything is sent (null
// means {} and is refused by airlock's schema check instead).
const local = [];
for (const args of [5, 'text', [1], null, () => 1]) {
  try { await tools.call('test.echo', args); local.push('called'); } catch (e) { local.push(e.code); }
}
return {schema, dispatched: after.calls - before.calls, local, server_side: []};)",
                      R"(
bad = [['test.echo', {'text': 5}], ['test.echo', {}], ['test.complex', {'id': 1, 'mode': 'slow', 'key': 'k'}],
       ['test.complex', {'id': 'one', 'mode': 'fast', 'key': 'k'}]]
before = tools.call('test.stats')
schema = []
for name, args in bad:
    try:
        tools.call(name, args)
        schema.append('called')
    except ToolError as e:
        schema.append(e.code)
after = tools.call('test.stats')
local = []
for args in (5, 'text', [1], (1,), lambda: 1):
    try:
        tools.call('test.echo', args)
        local.append('called')
    except ToolError as e:
        local.append(e.code)

# The harness checks args itself; to reach airlock's own check, send raw
# requests through the harness's bridge (found in tools.call's closure).
import threading
wait = next(c.cell_contents for c in type(tools).call.__closure__
            if getattr(c.cell_contents, '__name__', '') == 'wait')
bridge = next(c.cell_contents for c in wait.__closure__ if type(c.cell_contents).__name__ == '_Bridge')
def raw(fields):
    event, box = threading.Event(), []
    def done(ok, value):
        box.append([ok, value])
        event.set()
    bridge.request(fields, done)
    event.wait()
    return box[0]
server_side = [raw({'op': 'call', 'name': 'test.echo', 'args': a})[1][0] for a in (5, 'text', [1], True)]
result = {'schema': schema, 'dispatched': after['calls'] - before['calls'], 'local': local,
          'server_side': server_side})");
  ASSERT_TRUE(r.ok()) << r.text;
  const json v = r.result();
  EXPECT_EQ(v["schema"], json(std::vector<std::string>(4, "E_INVALID_ARGS")));
  EXPECT_EQ(v["dispatched"], 1) << "a call with invalid args reached the server";
  EXPECT_EQ(v["local"], json(std::vector<std::string>(5, "E_INVALID_ARGS")));
  json log = Log(r);
  // stats, 4 schema denials, stats, then the server-side denials: JS sends
  // `null` args as {} (which test.echo's schema refuses: text is required),
  // Python sends 4 raw non-object args.
  const size_t server_side = js() ? 1 : 4;
  ASSERT_EQ(log.size(), 6u + server_side) << log;
  for (size_t i = 1; i <= 4; ++i) {
    EXPECT_EQ(log[i]["decision"], "denied") << log[i];
    EXPECT_EQ(log[i]["error_code"], "E_INVALID_ARGS") << log[i];
  }
  if (!js()) {
    EXPECT_EQ(v["server_side"], json(std::vector<std::string>(4, "E_INVALID_ARGS")));
  }
  for (size_t i = 6; i < log.size(); ++i) {
    EXPECT_EQ(log[i]["decision"], "denied") << log[i];
    EXPECT_EQ(log[i]["error_code"], "E_INVALID_ARGS") << log[i];
  }
  EXPECT_EQ(r.sc["calls"]["denied"], static_cast<int>(4 + server_side));
}

// The calls log of the result is what the program did, request by request.
TEST_P(CodeModeGovernance, CallsLogMatchesTheProgram) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"(
const codes = [];
const attempt = async (p) => { try { await p(); codes.push(''); } catch (e) { codes.push(e.code); } };
await attempt(() => tools.search('echo'));
await attempt(() => tools.describe('test.echo'));
await attempt(() => tools.call('test.echo', {text: 'x'}));
await attempt(() => tools.call('test.fail', {}));
await attempt(() => tools.call('memory.read_graph', {}));
await attempt(() => tools.call('test.write_note', {key: 'k', text: 't'}));
await attempt(() => tools.call('test.echo', {text: 5}));
codes)",
                      R"(
codes = []
def attempt(f):
    try:
        f()
        codes.append('')
    except ToolError as e:
        codes.append(e.code)
attempt(lambda: tools.search('echo'))
attempt(lambda: tools.describe('test.echo'))
attempt(lambda: tools.call('test.echo', {'text': 'x'}))
attempt(lambda: tools.call('test.fail', {}))
attempt(lambda: tools.call('memory.read_graph', {}))
attempt(lambda: tools.call('test.write_note', {'key': 'k', 'text': 't'}))
attempt(lambda: tools.call('test.echo', {'text': 5}))
codes)",
                      {{"connectors", {"test"}}});
  ASSERT_TRUE(r.ok()) << r.text;
  struct Want {
    const char *op, *name, *decision, *code;
  };
  const std::vector<Want> want = {
      {"search", "echo", "allowed", ""},
      {"describe", "test.echo", "allowed", ""},
      {"call", "test.echo", "allowed", ""},
      {"call", "test.fail", "allowed", "E_TOOL_ERROR"},
      {"call", "memory.read_graph", "denied", "E_TOOL_NOT_DECLARED"},
      {"call", "test.write_note", "denied", "E_WRITE_NOT_ALLOWED"},
      {"call", "test.echo", "denied", "E_INVALID_ARGS"},
  };
  json codes = json::array();
  for (const Want& w : want) codes.push_back(w.code);
  EXPECT_EQ(r.result(), codes) << "what the program saw";
  EXPECT_EQ(r.sc["calls"]["total"], want.size());
  EXPECT_EQ(r.sc["calls"]["denied"], 3);
  json log = Log(r);
  ASSERT_EQ(log.size(), want.size()) << log;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(log[i]["seq"], i + 1) << log[i];
    EXPECT_EQ(log[i]["op"], want[i].op) << log[i];
    EXPECT_EQ(log[i]["name"], want[i].name) << log[i];
    EXPECT_EQ(log[i]["decision"], want[i].decision) << log[i];
    EXPECT_EQ(log[i]["error_code"], want[i].code) << log[i];
    EXPECT_TRUE(log[i]["duration_ms"].is_number_unsigned()) << log[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Lang, CodeModeGovernance, ::testing::Values("javascript", "python"), LangName);

}  // namespace
}  // namespace airlock::testing
