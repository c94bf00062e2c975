#!/usr/bin/env python3
"""airlock(1) documents every subcommand and every option the binary takes.

    tests/docs/man_page_test.py AIRLOCK_BIN MAN_PAGE_GZ

Walks the command tree through `AIRLOCK_BIN [SUB...] --help` (CLI11's help:
the "Options:", "Positionals:" and "Subcommands:" sections) and checks, for
each subcommand, that the man page has a section ".SS "airlock SUB ..."" and
that this very section (not some other one: --config is everywhere) names
each of its options and positionals. The page must also format without a
groff warning. `serve` and `runner-host` must have their known options
(--http, --config, --listen, ...), so a help parser that found nothing would
fail too. Prints every problem and exits 1 if any.
"""
import gzip
import re
import subprocess
import sys

# Options we know each of these has: guards the --help parsing itself.
KNOWN = {
    ("serve",): {"--http", "--config", "--token-file", "--metrics", "--state-dir"},
    ("runner-host",): {"--listen", "--config", "--tls-ca", "--tls-cert", "--tls-key", "--probe"},
}
ENTRY = re.compile(r"^  (\S+)")


def help_sections(binary, path):
    """{section title: [first word of each entry]} of `binary PATH --help`."""
    out = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, check=True).stdout
    sections, current = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and (m := ENTRY.match(line)):
            current.append(m.group(1))
    return sections


def walk(binary, path=()):
    """Yields (path, options, positionals) for every subcommand below `path`."""
    sections = help_sections(binary, path)
    if path:
        options = set()
        for entry in sections.get("Options", []):
            options.update(n for n in entry.split(",") if n.startswith("-"))
        positionals = {p.upper() for p in sections.get("Positionals", [])}
        yield path, options, positionals
    for sub in sections.get("Subcommands", []):
        yield from walk(binary, path + (sub,))


def man_sections(roff):
    """{"airlock serve": plain text of its .SS section} from the roff source."""
    text = roff.replace("\\-", "-").replace("\\e", "\\")
    text = re.sub(r"\\f[BIRP]", "", text)
    sections, title, body = {}, None, []
    for line in text.splitlines():
        if line.startswith(".SS ") or line.startswith(".SH "):
            if title is not None:
                sections[title] = "\n".join(body)
            title, body = None, []
            if line.startswith(".SS "):
                usage = line[4:].strip().strip('"')
                # "airlock keys create [OPTIONS] ID" -> "airlock keys create"
                title = " ".join(w for w in usage.split() if re.fullmatch(r"[a-z][a-z0-9-]*", w))
        elif title is not None:
            body.append(line)
    if title is not None:
        sections[title] = "\n".join(body)
    return sections


def main():
    binary, man_gz = sys.argv[1], sys.argv[2]
    with gzip.open(man_gz, "rt") as f:
        roff = f.read()
    problems = []
    groff = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=roff, capture_output=True, text=True)
    if groff.returncode != 0 or groff.stderr.strip():
        problems.append("groff warns: " + groff.stderr.strip())
    if not roff.startswith(".\\\"") or "\n.TH AIRLOCK 1 " not in roff:
        problems.append("no .TH AIRLOCK 1 header")

    sections = man_sections(roff)
    seen = set()
    for path, options, positionals in walk(binary):
        seen.add(path)
        name = "airlock " + " ".join(path)
        missing_known = KNOWN.get(path, set()) - options
        if missing_known:
            problems.append(f"`{name} --help` lacks {sorted(missing_known)} (help parsing broken?)")
        body = sections.get(name)
        if body is None:
            problems.append(f"the man page has no section for `{name}`")
            continue
        for opt in sorted(options | positionals):
            if not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", body):
                problems.append(f"the man page's `{name}` section does not name {opt}")
    for path in KNOWN:
        if path not in seen:
            problems.append(f"`airlock --help` does not list {' '.join(path)}")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"ok: {len(seen)} subcommands, every option in its man page section")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
