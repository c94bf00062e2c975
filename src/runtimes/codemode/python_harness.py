"""airlock code-mode harness for Python: runs main.py with a `tools` global.

Airlock runs it inside the jail as

    /usr/bin/python3 -I -c <this file's text> main.py [ARGS...]
    /usr/bin/python3 -I -c <this file's text> --resume-fd 4 main.py
        (pre-started: the arguments arrive on fd 4, see _take_hand_over)

    /usr/bin/python3 -I -c <this file's text + the session harness> --session
        (a code-mode session: see _SessionHooks at the end)

with fd 3 an open AF_UNIX stream socket: the bridge (src/runtimes/bridge.h;
frames are a 4-byte big-endian length, then at most 2 MiB of UTF-8 JSON).
Pure standard library; nothing from site-packages is needed.

The program sees two extra globals, `tools` and `ToolError`:

    tools.search(query, limit=None)   -> {"tools": [...], "truncated": bool}
    tools.describe(name)              -> {"name", "description", "input_schema", ...}
    tools.call(name, args=None)       -> the tool's value (any JSON value)

Those block until airlock answers. For concurrency each has an awaitable
twin -- `await tools.asearch(...)`, `await tools.adescribe(...)`,
`await tools.acall(...)` -- usable with asyncio.gather; top-level `await`
works (the program then runs in a fresh event loop via asyncio.run, so it
must not call asyncio.run itself). Sync methods may be called from any
thread, even from inside a coroutine (they block the loop while waiting).

A failed request raises ToolError (a subclass of Exception) with `.code`
("E_TOOL_ERROR", "E_LIMIT_CALLS", "E_BRIDGE_PROTOCOL", ...) and `.message`;
str(e) is the message. Arguments are checked before anything is sent: the
name and query must be str, limit a positive integer, args a dict (or None
for {}) that json.dumps accepts (allow_nan=False), else E_INVALID_ARGS; a
request frame over 2 MiB is E_LIMIT_ARGS. Once the bridge breaks (EOF, a bad
frame), pending and later requests raise E_BRIDGE_PROTOCOL.

The program's value: the global `result` if the program defines it, else
the value of the last top-level statement if it is an expression statement,
else None. It leaves as the last frame, {"op":"result","value":V}. Otherwise
the last frame is {"op":"result_error","error":{"name","message","stack"}}
(plus "code" for an uncaught ToolError):
  * an uncaught exception (SyntaxError included): name is the exception's
    class name, message str(e), stack the traceback text (harness frames
    removed) that is also printed to stderr; exit code 1;
  * E_RESULT_NOT_JSON: the value has no JSON form (json.dumps refuses it:
    NaN, cycles, sets, objects...); exit code 1;
  * E_LIMIT_RESULT: the result frame would exceed 2 MiB; exit code 1.
SystemExit (sys.exit(n)) is not an error: the result frame is sent (the
`result` global, or null) and the process exits as Python would (n, 0 for
None, 1 after printing a non-integer). os._exit() sends no frame at all.
Exit code 0 on success; 2 if fd 3 is not a socket or main.py is missing.

print() and anything else on stdout/stderr never becomes a frame; stdout
and stderr are flushed before the final frame is sent. The program runs in
a fresh __main__ module (sys.modules["__main__"]) holding only what a new
module has plus __file__, __builtins__, tools and ToolError; sys.argv is
[main.py, ARGS...]; tracebacks name the file by its absolute path, as
`python3 main.py` does.

This harness is a convenience, not a security boundary: Python has no
in-process isolation, so a program can reach the harness's internals or
write raw frames to fd 3 itself. The jail and airlock's validation of every
frame (codemode::BridgeSession) are what hold.
"""

import ast
import json
import os
import stat
import sys
import threading
import types

_MAX_FRAME_BYTES = 2 << 20
_MAX_ERROR_NAME_CHARS = 256
_MAX_ERROR_FIELD_CHARS = 64 << 10
_BRIDGE_FD = 3
_VALUE_NAME = "__airlock_last_value__"
_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect
_HARNESS_GLOBALS = globals()
_HARNESS_MODULE = sys.modules["__main__"]  # stays alive once __main__ is the program
_os_read, _os_write = os.read, os.write  # not the program's monkeypatches


class ToolError(Exception):
    """A tool request failed; `.code` says why ("E_TOOL_ERROR", ...)."""

    def __init__(self, code, message=""):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self):
        return str(self.message)


def _to_utf8(text):
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates have no UTF-8 form: pair what pairs, replace the rest.
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return fixed.encode("utf-8", "replace")


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[_os_write(fd, view):]


def _read_exact(fd, n):
    """n bytes from fd, or None at end of stream before the first byte."""
    chunks = []
    left = n
    while left:
        chunk = _os_read(fd, min(left, 1 << 16))
        if not chunk:
            if left == n:
                return None
            raise EOFError("the bridge closed in the middle of a frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Bridge:
    """The program side of fd 3: numbered requests, one reader thread."""

    def __init__(self, fd):
        self._fd = fd
        self._lock = threading.Lock()        # _next_id, _pending, _failure
        self._write_lock = threading.Lock()  # one frame at a time on the fd
        self._next_id = 1
        self._pending = {}                   # id -> done(ok, value)
        self._failure = None
        reader = threading.Thread(target=self._read_loop, name="airlock-bridge", daemon=True)
        reader.start()
        self._reader = reader

    def request(self, fields, done):
        """Sends {"id":N, **fields}; done(ok, result | (code, message)) runs
        later on the reader thread. Raises ToolError if nothing was sent."""
        try:
            body = _to_utf8(_dumps(fields))
        except Exception as e:
            raise ToolError("E_INVALID_ARGS", "tools.%s: args are not JSON-serialisable: %s"
                            % (fields.get("op"), e)) from None
        with self._lock:
            if self._failure is not None:
                raise ToolError("E_BRIDGE_PROTOCOL", "the bridge is closed: " + self._failure)
            req_id = self._next_id
            frame = b'{"id":%d,' % req_id + body[1:]
            if len(frame) > _MAX_FRAME_BYTES:
                raise ToolError("E_LIMIT_ARGS", "request of %d bytes exceeds the bridge frame limit of %d bytes"
                                % (len(frame), _MAX_FRAME_BYTES))
            self._next_id += 1
            self._pending[req_id] = done
        try:
            self.send_frame(frame)
        except OSError as e:
            with self._lock:
                self._pending.pop(req_id, None)
            self._fail("cannot write to the bridge: %s" % e)
            raise ToolError("E_BRIDGE_PROTOCOL", "cannot write to the bridge: %s" % e) from None

    def send_frame(self, payload):
        with self._write_lock:
            _write_all(self._fd, len(payload).to_bytes(4, "big") + payload)

    def end(self):
        """After the final frame: tells airlock nothing else will be sent."""
        try:
            import socket
            with socket.socket(fileno=os.dup(self._fd)) as s:
                s.shutdown(socket.SHUT_WR)
        except Exception:
            pass

    def close(self):
        """Ends the bridge for good (a session's cell is over): the reader
        wakes at end of stream and is waited for, then the descriptor is
        closed -- not before, so no later bridge that reuses the number is
        read by this reader."""
        try:
            import socket
            with socket.socket(fileno=os.dup(self._fd)) as s:
                s.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass
        self._reader.join(5)
        if not self._reader.is_alive():
            os.close(self._fd)

    def _fail(self, why):
        with self._lock:
            if self._failure is None:
                self._failure = why
            pending, self._pending = self._pending, {}
        for done in pending.values():
            done(False, ("E_BRIDGE_PROTOCOL", "the bridge failed: " + why))

    def _read_loop(self):
        try:
            while True:
                header = _read_exact(self._fd, 4)
                if header is None:
                    raise EOFError("airlock closed the bridge")
                size = int.from_bytes(header, "big")
                if size > _MAX_FRAME_BYTES:
                    raise ValueError("reply frame of %d bytes exceeds %d" % (size, _MAX_FRAME_BYTES))
                payload = _read_exact(self._fd, size) if size else b""
                if payload is None:
                    raise EOFError("the bridge closed in the middle of a frame")
                self._dispatch(payload)
        except Exception as e:
            self._fail(str(e) or type(e).__name__)

    def _dispatch(self, payload):
        try:
            reply = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ValueError("reply frame is not JSON") from None
        if not isinstance(reply, dict):
            raise ValueError("reply frame is not a JSON object")
        req_id, ok = reply.get("id"), reply.get("ok")
        if type(req_id) is not int or type(ok) is not bool:
            raise ValueError("reply frame lacks an integer id or a boolean ok")
        with self._lock:
            done = self._pending.pop(req_id, None)
        if done is None:
            raise ValueError("reply for unknown request id %d" % req_id)
        if ok:
            done(True, reply.get("result"))
            return
        code, message = "E_TOOL_ERROR", ""
        error = reply.get("error")
        if isinstance(error, dict):
            if isinstance(error.get("code"), str):
                code = error["code"]
            if isinstance(error.get("message"), str):
                message = error["message"]
        done(False, (code, message))


def _make_tools(bridge):
    """The `tools` object. State lives in closures, not attributes."""

    def search_fields(query, limit):
        if not isinstance(query, str):
            raise ToolError("E_INVALID_ARGS", "tools.search(query, limit=None): query must be a str")
        fields = {"op": "search", "query": query}
        if limit is not None:
            if isinstance(limit, float) and limit.is_integer():
                limit = int(limit)
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000000:
                raise ToolError("E_INVALID_ARGS", "tools.search(query, limit=None): limit must be a positive integer")
            fields["limit"] = int(limit)
        return fields

    def describe_fields(name):
        if not isinstance(name, str):
            raise ToolError("E_INVALID_ARGS", "tools.describe(name): name must be a str")
        return {"op": "describe", "name": name}

    def call_fields(name, args):
        if not isinstance(name, str):
            raise ToolError("E_INVALID_ARGS", "tools.call(name, args=None): name must be a str")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ToolError("E_INVALID_ARGS", "tools.call(name, args=None): args must be a dict")
        return {"op": "call", "name": name, "args": args}

    def wait(fields):
        event = threading.Event()
        box = []

        def done(ok, value):
            box.append((ok, value))
            event.set()

        bridge.request(fields, done)
        event.wait()
        ok, value = box[0]
        if ok:
            return value
        raise ToolError(*value)

    async def wait_async(fields):
        import asyncio
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def settle(ok, value):
            if future.done():  # cancelled meanwhile
                return
            if ok:
                future.set_result(value)
            else:
                future.set_exception(ToolError(*value))

        def done(ok, value):
            try:
                loop.call_soon_threadsafe(settle, ok, value)
            except RuntimeError:  # the loop is gone; nobody is waiting
                pass

        bridge.request(fields, done)
        return await future

    class Tools:
        """airlock's tools: search, describe, call (and asearch, adescribe, acall)."""

        __slots__ = ()

        def search(self, query, limit=None):
            """Finds tools: {"tools": [...], "truncated": bool}."""
            return wait(search_fields(query, limit))

        def describe(self, name):
            """One tool's description and input schema."""
            return wait(describe_fields(name))

        def call(self, name, args=None):
            """Calls a tool with `args` (a dict) and returns its value."""
            return wait(call_fields(name, args))

        async def asearch(self, query, limit=None):
            return await wait_async(search_fields(query, limit))

        async def adescribe(self, name):
            return await wait_async(describe_fields(name))

        async def acall(self, name, args=None):
            return await wait_async(call_fields(name, args))

        def __repr__(self):
            return "<airlock tools>"

    return Tools()


def _strip_harness_frames(exc, filename, seen):
    """Drops the harness's (and asyncio's runner) frames from exc's tracebacks."""
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    tbs = []
    tb = exc.__traceback__
    while tb is not None:
        tbs.append(tb)
        tb = tb.tb_next
    for i, t in enumerate(tbs):
        if t.tb_frame.f_code.co_filename == filename:
            tbs = tbs[i:]
            break
    kept = [t for t in tbs if t.tb_frame.f_globals is not _HARNESS_GLOBALS]
    try:
        for a, b in zip(kept, kept[1:]):
            a.tb_next = b
        if kept:
            kept[-1].tb_next = None
        exc.__traceback__ = kept[0] if kept else None
    except (TypeError, ValueError):
        pass
    _strip_harness_frames(exc.__cause__, filename, seen)
    _strip_harness_frames(exc.__context__, filename, seen)
    for sub in getattr(exc, "exceptions", None) or ():
        if isinstance(sub, BaseException):
            _strip_harness_frames(sub, filename, seen)


def _describe_exception(exc, filename):
    import traceback
    _strip_harness_frames(exc, filename, set())
    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        text = "%s: <traceback unavailable>\n" % type(exc).__name__
    try:
        message = str(exc)
    except Exception:
        message = "<str() failed>"
    described = {"name": type(exc).__name__, "message": message, "stack": text}
    code = getattr(exc, "code", None) if isinstance(exc, ToolError) else None
    if isinstance(code, str) and code:
        described["code"] = code  # an uncaught ToolError keeps its E_... code
    return described


def _warn(text):
    try:
        sys.stderr.write(text)
    except Exception:
        pass


def _flush_output():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def _error_frame(error):
    def cut(s, n):
        s = s if isinstance(s, str) else str(s)
        return s if len(s) <= n else s[:n]

    fields = {"name": cut(error.get("name", ""), _MAX_ERROR_NAME_CHARS),
              "message": cut(error.get("message", ""), _MAX_ERROR_FIELD_CHARS),
              "stack": cut(error.get("stack", ""), _MAX_ERROR_FIELD_CHARS)}
    if error.get("code"):
        fields["code"] = cut(error["code"], _MAX_ERROR_NAME_CHARS)
    return _to_utf8(_dumps({"op": "result_error", "error": fields}))


def _send_final(bridge, frame):
    _flush_output()
    try:
        bridge.send_frame(frame)
    except OSError as e:
        _warn("airlock: cannot send the final frame: %s\n" % e)
        _flush_output()
        return False
    bridge.end()
    return True


def _finish_ok(bridge, value):
    """Sends the result frame (or why it cannot be sent); returns success."""
    try:
        text = _dumps(value)
    except Exception as e:
        why = "the program's value cannot be converted to JSON: %s" % e
        _warn("airlock: E_RESULT_NOT_JSON: %s\n" % why)
        _send_final(bridge, _error_frame({"name": "E_RESULT_NOT_JSON", "message": why}))
        return False
    frame = b'{"op":"result","value":' + _to_utf8(text) + b"}"
    if len(frame) > _MAX_FRAME_BYTES:
        why = ("the return value is %d bytes of JSON, over the bridge frame limit of %d bytes"
               % (len(frame), _MAX_FRAME_BYTES))
        _warn("airlock: E_LIMIT_RESULT: %s\n" % why)
        _send_final(bridge, _error_frame({"name": "E_LIMIT_RESULT", "message": why}))
        return False
    return _send_final(bridge, frame)


def _finish_error(bridge, exc, filename):
    error = _describe_exception(exc, filename)
    _warn(error["stack"])
    _send_final(bridge, _error_frame(error))


def _compile_program(source, filename):
    tree = ast.parse(source, filename, "exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(id=_VALUE_NAME, ctx=ast.Store())], value=last.value)
        tree.body[-1] = ast.copy_location(assign, last)
        ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _remember_source(source, filename):
    """Lets tracebacks quote main.py even if the program changes it."""
    try:
        import io
        import linecache
        import tokenize
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        lines = source.decode(encoding, "replace").splitlines(True)
        linecache.cache[filename] = (len(source), None, lines, filename)
    except Exception:
        pass


def _take_hand_over():
    """Pre-started (`--resume-fd N main.py`): the harness is loaded; wait for
    airlock-init's hand-over on fd N (the program's arguments, each
    NUL-terminated, then EOF) and make sys.argv what the cold command has."""
    if len(sys.argv) < 4 or sys.argv[1] != "--resume-fd":
        return
    fd = int(sys.argv[2])
    raw = bytearray()
    while True:
        chunk = _os_read(fd, 65536)
        if not chunk:
            break
        raw += chunk
    os.close(fd)
    args = [a.decode("utf-8", "surrogateescape") for a in bytes(raw).split(b"\0")[:-1]]
    sys.argv = [sys.argv[0], sys.argv[3]] + args


def _main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python3 -I -c <airlock harness> main.py [ARGS...]\n")
        return 2
    try:
        is_socket = stat.S_ISSOCK(os.fstat(_BRIDGE_FD).st_mode)
    except OSError:
        is_socket = False
    if not is_socket:
        sys.stderr.write("airlock: this program runs in code mode and needs airlock's tools bridge "
                         "on fd 3, which is not an open socket (run it through airlock's code mode)\n")
        return 2
    os.set_inheritable(_BRIDGE_FD, False)  # child processes do not get the bridge
    _take_hand_over()

    path = sys.argv[1]
    filename = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        sys.stderr.write("airlock: cannot read %s: %s\n" % (path, e))
        return 2
    _remember_source(source, filename)

    bridge = _Bridge(_BRIDGE_FD)
    program = types.ModuleType("__main__")
    program.__dict__.update({"__file__": filename, "__builtins__": __builtins__,
                             "tools": _make_tools(bridge), "ToolError": ToolError})
    sys.modules["__main__"] = program
    sys.argv = sys.argv[1:]
    space = program.__dict__

    exit_request = None
    try:
        try:
            code = _compile_program(source, filename)
        except (SyntaxError, ValueError) as e:
            if not isinstance(e, SyntaxError):  # "source code string cannot contain null bytes"
                e = SyntaxError(str(e))
            e.__traceback__ = None  # as Python reports it: no harness or ast.py frames
            _finish_error(bridge, e, filename)
            return 1
        if code.co_flags & _CO_COROUTINE:  # top-level await
            import asyncio
            asyncio.run(eval(code, space))
        else:
            exec(code, space)
    except SystemExit as e:
        exit_request = e
    except BaseException as e:
        _finish_error(bridge, e, filename)
        return 1

    value = space.pop(_VALUE_NAME, None)
    if "result" in space or exit_request is not None:
        value = space.get("result")
    if not _finish_ok(bridge, value):
        return 1
    if exit_request is not None:
        raise exit_request
    return 0


class _SessionHooks:
    """A code-mode session (session_harness.cc's _airlock_session with
    hooks, started with `--session`): every cell gets a bridge of its own,
    a socket that comes with the turn's message on the control channel (fd
    3, SCM_RIGHTS) and is closed when the cell ends, so no bridge is open
    between cells. `tools` and `ToolError` are globals of the session; a
    tools request outside a cell (a thread the cell left running) raises
    E_BRIDGE_PROTOCOL. After each cell one final frame goes to airlock:
    {"op":"result","value":V} with the last expression's value when it has
    a JSON form under 2 MiB (else null: its repr is in stdout), or
    {"op":"result_error",...} for an uncaught exception (already printed to
    stderr by the session harness)."""

    def __init__(self):
        self._bridge = None
        self._control = None

    def setup(self, space):
        space.update(tools=_make_tools(self), ToolError=ToolError)

    def receive(self, ctl, n, passed):
        """recv(ctl, n), adding any descriptors that came with it to `passed`."""
        import socket
        if self._control is None:
            self._control = socket.socket(fileno=ctl)  # owns fd 3 for the session's life
        data, ancillary, _, _ = self._control.recvmsg(n, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                whole = len(payload) - len(payload) % 4
                passed.extend(int.from_bytes(payload[i:i + 4], sys.byteorder) for i in range(0, whole, 4))
        return data

    def begin(self, passed):
        for extra in passed[1:]:
            os.close(extra)
        self._bridge = _Bridge(passed[0]) if passed else None

    def request(self, fields, done):
        bridge = self._bridge
        if bridge is None:
            raise ToolError("E_BRIDGE_PROTOCOL", "the tools bridge is open only while a cell runs")
        bridge.request(fields, done)

    def end(self, value, failure, filename):
        bridge, self._bridge = self._bridge, None
        if bridge is None:
            return
        if failure is not None:
            _send_final(bridge, _error_frame(_describe_exception(failure, filename)))
        else:
            try:
                frame = b'{"op":"result","value":' + _to_utf8(_dumps(value)) + b"}"
            except Exception:
                frame = None
            if frame is None or len(frame) > _MAX_FRAME_BYTES:
                frame = b'{"op":"result","value":null}'
            _send_final(bridge, frame)
        bridge.close()


if sys.argv[1:] != ["--session"]:
    raise SystemExit(_main())
