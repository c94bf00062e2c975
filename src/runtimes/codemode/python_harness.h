// The code-mode harness for Python: the text of python_harness.py, embedded
// at build time (cmake/embed_text.cmake), which runs the program in main.py
// with a `tools` global speaking the bridge protocol (bridge.h) on fd 3.
//
// It is passed on the command line, so nothing needs to exist in the jail:
//
//   run_argv = {"/usr/bin/python3", "-I", "-c", std::string(PythonHarnessSource()), "main.py"};
//
// The program's API (python_harness.py's docstring is the full contract):
//   tools.search(query, limit=None)  -> {"tools": [...], "truncated": bool}
//   tools.describe(name)             -> the tool's description (a dict)
//   tools.call(name, args=None)      -> the tool's value (any JSON)
//   await tools.asearch(...) / tools.adescribe(...) / tools.acall(...)
//                                    -> the same, awaitable (asyncio.gather works)
// Synchronous calls block until airlock replies; top-level `await` works.
// A failed request raises ToolError (also a global) with .code ("E_TOOL_ERROR",
// "E_LIMIT_CALLS", "E_INVALID_ARGS", "E_LIMIT_ARGS", "E_BRIDGE_PROTOCOL", ...)
// and .message. Arguments are checked and request frames over 2 MiB refused
// locally, without sending anything.
//
// The last frame is {"op":"result","value":V} -- V is the global `result` if
// the program sets it, else the last top-level expression statement's value,
// else null -- or {"op":"result_error","error":{"name","message","stack"}}
// for an uncaught exception (name = its class, SyntaxError included; the
// traceback also goes to stderr), E_RESULT_NOT_JSON or E_LIMIT_RESULT.
// Exit codes: 0 success, 1 result_error, 2 no bridge on fd 3 / no main.py;
// sys.exit(n) sends the result frame and exits as Python does. stdout and
// stderr are never frames, and are flushed before the last frame.
//
// The harness is a convenience, not a boundary: Python has no in-process
// isolation, so a program can bypass it and write any frame to fd 3. The jail
// and the server's validation of every frame are what hold.
#ifndef AIRLOCK_RUNTIMES_CODEMODE_PYTHON_HARNESS_H_
#define AIRLOCK_RUNTIMES_CODEMODE_PYTHON_HARNESS_H_

#include <string_view>

namespace airlock::runtimes {

// The harness's Python source: UTF-8, no NUL byte, under 128 KiB (one argv
// string). Defined in the generated ${build}/generated/python_harness.cc.
std::string_view PythonHarnessSource();

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_CODEMODE_PYTHON_HARNESS_H_
