#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md resolves.

    tests/docs/check_links.py ROOT [--skip-prefix PREFIX]...

ROOT is the source tree, or an installed documentation tree such as
/usr/share/doc/airlock (README.md with docs/ beside it). For each markdown
link or image outside code, `[text](target)` or `![alt](target)`, whose
target is not a URL: the file must exist under ROOT, and a `#anchor` in a
link to a markdown file (or to the same page) must name one of its headings
(GitHub's heading ids). A target whose path relative to ROOT starts with a
--skip-prefix (e.g. `tests/` for an installed tree, which does not ship the
test suite) is not checked. Prints each broken link and exits 1 if any.
"""
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"`[^`]*`")


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def anchors(path, cache={}):
    """GitHub's ids for the headings of a markdown file."""
    if path not in cache:
        seen, ids = {}, set()
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read()):
                m = HEADING.match(line)
                if not m:
                    continue
                title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))  # link text only
                slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                ids.add(slug if count == 0 else f"{slug}-{count}")
        cache[path] = ids
    return cache[path]


def check(root, skip_prefixes):
    root = os.path.realpath(root)
    pages = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    broken, checked = [], 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for n, line in prose_lines(text):
            for target in LINK.findall(INLINE_CODE.sub("", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
                    continue
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                rel = os.path.relpath(dest, root)
                where = f"{os.path.relpath(page, root)}:{n}: {target}"
                if rel.startswith(".."):
                    broken.append(f"{where}: points outside {root}")
                    continue
                if any(rel.startswith(p) for p in skip_prefixes):
                    continue
                checked += 1
                if not os.path.exists(dest):
                    broken.append(f"{where}: {rel} does not exist")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    broken.append(f"{where}: no heading #{anchor} in {rel}")
    return broken, checked, len(pages)


def main(argv):
    args, skip = [], []
    it = iter(argv[1:])
    for a in it:
        if a == "--skip-prefix":
            skip.append(next(it))
        else:
            args.append(a)
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    broken, checked, pages = check(args[0], skip)
    for b in broken:
        print("broken link:", b, file=sys.stderr)
    if broken:
        return 1
    print(f"check_links: {checked} relative links in {pages} pages resolve under {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
