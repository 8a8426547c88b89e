#!/usr/bin/env python3
"""Check (or apply) the tree's C and OpenCL C style, `.clang-format`.

    python3 scripts/check_format.py SOURCE_ROOT [--fix]

Formats every .c, .h and .cl file under the folders listed in DIRS with
clang-format 14 (Debian 12's; other major versions place some tokens
differently, so a check with another version would fail on a formatted
tree): without --fix it lists the files whose text would change and exits 1;
with --fix it rewrites them.  Exit 77 (meson's "skipped") when clang-format 14
is not installed; `.ci/run` installs it, so CI always checks.
"""
import os
import re
import shutil
import subprocess
import sys

DIRS = ["bench", "cl", "cli", "examples", "host", "include", "platform", "tests"]
SKIP_DIRS = {os.path.join("tests", "fuzz", "corpus")}
EXTS = (".c", ".h", ".cl")
WANT_MAJOR = 14


def find_clang_format():
    for name in (f"clang-format-{WANT_MAJOR}", "clang-format"):
        exe = shutil.which(name)
        if not exe:
            continue
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", out)
        if m and int(m.group(1)) == WANT_MAJOR:
            return exe
    return None


def sources(root):
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = sorted(x for x in dirnames if os.path.join(rel, x) not in SKIP_DIRS)
            for f in sorted(filenames):
                if f.endswith(EXTS):
                    yield os.path.join(dirpath, f)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root, fix = sys.argv[1], "--fix" in sys.argv[2:]
    exe = find_clang_format()
    if exe is None:
        print(f"check_format: clang-format {WANT_MAJOR} not found (apt-get install clang-format-{WANT_MAJOR}); skipped")
        return 77
    style = "--style=file:" + os.path.join(root, ".clang-format")
    files = list(sources(root))
    if fix:
        subprocess.run([exe, style, "-i", *files], check=True)
        return 0
    bad = []
    for f in files:
        with open(f, "rb") as fh:
            before = fh.read()
        after = subprocess.run([exe, style, f], capture_output=True, check=True).stdout
        if after != before:
            bad.append(os.path.relpath(f, root))
    for f in bad:
        print(f"not formatted: {f}")
    print(f"check_format: {len(files)} files, {len(bad)} not formatted"
          + (" (python3 scripts/check_format.py . --fix)" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
