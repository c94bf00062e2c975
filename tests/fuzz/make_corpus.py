#!/usr/bin/python3
"""Writes the seed corpus of every fuzz target into tests/fuzz/corpus/TARGET/.

Seeds are small valid (and a few nearly valid) inputs of each format, so the
fuzzer starts deep inside the parser instead of at its first byte. Files are
named by the hash of their content; running this again rewrites the same
files and leaves crash reproducers (named crash-*, regression-*) alone.

    /usr/bin/python3 tests/fuzz/make_corpus.py
"""
import hashlib
import io
import json
import os
import struct
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def line(obj):
    return json.dumps(obj, separators=(",", ":")) + "\n"


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(i, name, args, meta=None):
    params = {"name": name, "arguments": args}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def jsonrpc_stdio():
    head = line(INIT) + line(INITIALIZED)
    put("jsonrpc_stdio", head + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    put("jsonrpc_stdio", head + line(call(2, "run_code", {"language": "python", "code": "print(1)"})))
    put("jsonrpc_stdio", head + line(call(2, "run_code", {
        "language": "c", "code": "int main(){}", "stdin": "x", "args": ["a"], "timeout_ms": 100,
        "memory_mb": 64, "files": [{"path": "in.txt", "content": "aGk=", "encoding": "base64"}],
        "output_files": ["*.txt"]}, {"progressToken": "p"})))
    put("jsonrpc_stdio", head + line(call(2, "list_languages", {})))
    put("jsonrpc_stdio", head + line({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}) +
        line({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "airlock://languages"}}))
    put("jsonrpc_stdio", head + line({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
                                       "params": {"level": "debug"}}) +
        line({"jsonrpc": "2.0", "id": 6, "method": "ping"}) +
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}))
    put("jsonrpc_stdio", line(call(1, "run_code", {"language": "python"})))  # before initialize
    put("jsonrpc_stdio", head + '[{"jsonrpc":"2.0","id":9,"method":"ping"}]\n')  # a batch
    put("jsonrpc_stdio", head + '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n{"jsonrpc":"1.0"}\nnot json\n\n')
    put("jsonrpc_stdio", head + '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code",'
        '"arguments":{"language":"python","code":"\xff\xfe"}}}\n')
    put("jsonrpc_stdio", head + line({"jsonrpc": "2.0", "id": 8, "result": {}}))


def http_request():
    # mode byte (method index, 0x80: a fuzzed path), flags byte, then the
    # header values the flags ask for (length-prefixed) and the body.
    def req(mode, flags, body, values=b""):
        return bytes([mode, flags]) + values + body.encode()
    session_accept_ct = 1 | 4 | 8
    put("http_request", req(0, session_accept_ct, line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})))
    put("http_request", req(0, session_accept_ct, line(call(2, "run_code", {"language": "python", "code": "1"},
                                                                {"progressToken": 1}))))
    put("http_request", req(0, 4 | 8, line(INIT)))
    put("http_request", req(0, session_accept_ct | 16, line(INITIALIZED), bytes([10]) + b"2025-06-18"))
    put("http_request", req(0, 4 | 8 | 32, line(INIT), bytes([18]) + b"http://evil.example"))
    put("http_request", req(0, 4 | 8 | 64, line(INIT), bytes([5]) + b"token"))
    put("http_request", req(3, 1 | 4, ""))
    put("http_request", req(3, 1 | 4 | 128, "", bytes([3]) + b"1-5"))
    put("http_request", req(4, 1, ""))
    put("http_request", req(0, 2 | 4 | 8, line(INIT), bytes([32]) + b"0" * 32))
    put("http_request", b"\xff" + b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n"
        b"5\r\n{\"jso\r\n0\r\n\r\n")
    put("http_request", b"\xff" + b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")


def bridge_frames():
    frames = [
        {"op": "search", "id": 1, "query": "item"},
        {"op": "describe", "id": 2, "tool": "fake.read_item"},
        {"op": "call", "id": 3, "tool": "fake.read_item", "args": {"id": 1, "tags": ["a"]}},
        {"op": "call", "id": 4, "tool": "fake.write_item", "args": {}},
        {"op": "call", "id": 5, "tool": "fake.read_item", "args": {"id": "x"}},
        {"op": "call", "id": 6, "tool": "other.tool", "args": {}},
        {"op": "call", "id": 7, "tool": "fake.read_item", "args": {"id": 1, "nest": 200}},
        {"op": "result", "value": {"done": True}},
    ]
    put("bridge_frames", "".join(line(f) for f in frames))
    put("bridge_frames", line({"op": "result_error", "error": {"name": "Error", "message": "boom"}}))
    put("bridge_frames", line(frames[2]) * 40)
    put("bridge_frames", '{"op":"call","id":1}\n{"id":2}\n[1]\n{"op":"nope","id":3}\n\xff\n')
    put("bridge_frames", line({"op": "call", "id": 9, "tool": "fake.read_item", "args": {"id": 1, "nest": 5000}}))


def json_schema():
    pairs = [
        ({"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}}, "required": ["id"]},
         {"id": 3}),
        ({"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True}, ["a", "bb"]),
        ({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}, "x"),
        ({"$ref": "#"}, 1),
        ({"anyOf": [{"type": "null"}, {"enum": [1, 2.0, "x"]}], "not": {"const": 2}}, 2),
        ({"if": {"type": "number"}, "then": {"multipleOf": 0.5}, "else": {"minLength": 1}}, 1.5),
        ({"prefixItems": [{"type": "boolean"}], "items": False}, [True, 1]),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1.0),
        ({"additionalProperties": {"type": "string"}, "maxProperties": 2}, {"a": "b", "c": 1}),
        (True, None),
    ]
    for schema, instance in pairs:
        put("json_schema", json.dumps(schema).encode() + b"\xff" + json.dumps(instance).encode())
    put("json_schema", b'{"items":' * 80 + b"{}" + b"}" * 80 + b"\xff" + b"[" * 80 + b"]" * 80)


def wasi_host():
    names = ["args_get", "args_sizes_get", "environ_get", "environ_sizes_get", "clock_res_get",
             "clock_time_get", "fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get",
             "fd_fdstat_set_flags", "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size",
             "fd_filestat_set_times", "fd_pread", "fd_prestat_get", "fd_prestat_dir_name", "fd_pwrite",
             "fd_read", "fd_readdir", "fd_renumber", "fd_seek", "fd_sync", "fd_tell", "fd_write",
             "path_create_directory", "path_filestat_get", "path_filestat_set_times", "path_link",
             "path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
             "path_unlink_file", "poll_oneoff", "proc_exit", "proc_raise", "sched_yield", "random_get"]
    idx = {n: i for i, n in enumerate(names)}

    def small(v):  # v < 16
        return bytes([v])

    def mem(v):  # v < 65536
        return bytes([100, v >> 8, v & 0xFF])

    def calls(*cs):
        out = b""
        for name, args in cs:
            out += bytes([idx[name]]) + b"".join(args)
        return out

    # Memory seed at 4096: "a.txt" at 4096, "sub" at 4102, an iovec at 4112
    # {buf 8192, len 64}, "new" at 4120.
    seed = b"a.txt\0sub\0\0\0\0\0\0" + struct.pack("<II", 8192, 64) + b"new\0"
    prefix = bytes([len(seed)]) + seed
    put("wasi_host", prefix + calls(
        ("fd_prestat_get", [small(3), mem(8000)]),
        ("fd_prestat_dir_name", [small(3), mem(8000), small(5)]),
        ("path_open", [small(3), small(0), mem(4096), small(5), small(0), small(15), small(15), small(0), mem(8004)]),
        ("fd_read", [small(4), mem(4112), small(1), mem(8008)]),
        ("fd_seek", [small(4), small(0), small(0), mem(8012)]),
        ("fd_write", [small(1), mem(4112), small(1), mem(8016)]),
        ("fd_readdir", [small(3), mem(9000), mem(512), small(0), mem(8020)]),
        ("path_create_directory", [small(3), mem(4120), small(3)]),
        ("path_rename", [small(3), mem(4096), small(5), small(3), mem(4120), small(3)]),
        ("path_filestat_get", [small(3), small(0), mem(4102), small(3), mem(8100)]),
        ("fd_close", [small(4)]),
        ("args_sizes_get", [mem(8200), mem(8204)]),
        ("args_get", [mem(8300), mem(8400)]),
        ("clock_time_get", [small(1), small(0), mem(8500)]),
        ("random_get", [mem(8600), small(8)]),
        ("proc_exit", [small(3)])))
    put("wasi_host", prefix + calls(
        ("path_open", [small(3), small(0), mem(4096), small(5), small(9), small(15), small(15), small(0), mem(8004)]),
        ("fd_pwrite", [small(4), mem(4112), small(1), small(7), mem(8008)]),
        ("fd_filestat_set_size", [small(4), mem(60000)]),
        ("fd_allocate", [small(4), small(0), mem(50000)]),
        ("path_unlink_file", [small(3), mem(4096), small(5)]),
        ("path_remove_directory", [small(3), mem(4102), small(3)]),
        ("fd_renumber", [small(4), small(9)]),
        ("poll_oneoff", [mem(4112), mem(9000), small(1), mem(8008)])))


def tar_reader():
    def archive(fmt, entries):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
            for name, kind, data in entries:
                info = tarfile.TarInfo(name)
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    t.addfile(info)
                elif kind == "sym":
                    info.type = tarfile.SYMTYPE
                    info.linkname = data
                    t.addfile(info)
                else:
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
        return buf.getvalue()
    files = [("lib", "dir", None), ("lib/os.py", "file", b"import sys\n"), ("lib/x", "sym", "os.py")]
    put("tar_reader", archive(tarfile.USTAR_FORMAT, files))
    put("tar_reader", archive(tarfile.GNU_FORMAT, files + [("lib/" + "long" * 40 + ".py", "file", b"1")]))
    put("tar_reader", archive(tarfile.PAX_FORMAT, files + [("lib/\u00e9" + "p" * 120, "file", b"2")]))
    put("tar_reader", archive(tarfile.USTAR_FORMAT, [("../evil", "file", b"x"), ("/abs/y", "file", b"y")]))


def leb(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def wasm_module():
    magic = b"\0asm\x01\0\0\0"

    def section(sid, body):
        return bytes([sid]) + leb(len(body)) + body
    mem_min = section(5, leb(1) + b"\x00" + leb(2))                   # (memory 2)
    mem_max = section(5, leb(1) + b"\x01" + leb(1) + leb(70000))      # (memory 1 70000)
    shared = section(5, leb(1) + b"\x03" + leb(1) + leb(4))           # shared
    mem64 = section(5, leb(1) + b"\x04" + leb(1))                     # memory64
    imp = section(2, leb(1) + leb(3) + b"env" + leb(6) + b"memory" + b"\x02" + b"\x01" + leb(1) + leb(100))
    custom = section(0, leb(4) + b"name" + b"\x00\x01\x00")
    typ = section(1, leb(1) + b"\x60\x00\x00")
    for body in (mem_min, mem_max, shared, mem64, imp, custom + typ + mem_min, imp + mem_max):
        put("wasm_module", bytes([3, 1]) + magic + body)
    put("wasm_module", bytes([0, 0]) + magic)


def sse_parser():
    put("sse_parser", b"\x07" + b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1\n\n")
    put("sse_parser", b"\x01" + b"\xef\xbb\xbfdata: a\r\ndata: b\r\n\r\n: comment\nretry: 10\n\n")
    put("sse_parser", b"\x40" + b"data\n\ndata:x\rid: 2\0\r\n\n" + b"data: " + b"y" * 300 + b"\n\n")


def config_loader():
    put("config_loader", "{}")
    with open(os.path.join(REPO, "packaging", "airlock.json"), "rb") as f:
        put("config_loader", f.read())
    put("config_loader", line({
        "server": {"http": {"listen": "0.0.0.0:9000", "allowed_origins": ["https://a.example"],
                            "console": {"enabled": True, "path": "/ops"}},
                   "max_message_bytes": 1024, "shutdown_grace_s": 5},
        "limits": {"max_concurrent_runs": 2},
        "pool": {"enabled": True},
        "sessions": {"enabled": True, "max_total": 3},
        "mcpServers": {"crm": {"command": "node", "args": ["x.mjs"], "timeout_ms": 100}},
        "roles": {"reader": {"tools": ["*"]}},
        "endpoints": {"default": {"connectors": ["crm"]}},
        "audit": {"enabled": True, "fail_closed": True}}))
    put("config_loader", '{"server": {"http": {"listen": "[::1]:99999"}}, "limits": {"unknown": 1}}')


def code_tool_hash():
    base = {"name": "lookup", "description": "finds things", "language": "javascript",
            "code": "return await tools.call('crm.get', {id: args.id});",
            "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "connectors": ["crm"], "tools": ["crm.get"], "limits": {"max_calls": 3}}
    put("code_tool_hash", json.dumps(base))
    put("code_tool_hash", json.dumps(dict(base, language="python", tools=[], connectors=["b", "a", "a"])))
    put("code_tool_hash", json.dumps(dict(base, name="Bad.Name", code="\u00e9\u0000")))
    put("code_tool_hash", json.dumps(dict(base, limits={"wall_ms": -1, "x": 1})))


for make in (jsonrpc_stdio, http_request, bridge_frames, json_schema, wasi_host, tar_reader, wasm_module,
             sse_parser, config_loader, code_tool_hash):
    make()
