#!/usr/bin/env python3
"""Every function a kernel file (cl/*.cl, cl/*.h) declares inline is static.

A plain `inline` definition is, in OpenCL C as in C99, an inline definition
only: no definition of the function is emitted for the program, so a call
the compiler leaves out of line refers to a symbol nothing defines.  AMD's
toolchain then fails to link the program (ld.lld: undefined hidden symbol,
docs/gpu-targets.md), and so may any compiler at -O0 or with another
inliner.  `static inline` keeps a definition in the program.

  scripts/check_cl_inline.py CL_DIR     exit 1 naming each plain inline

Before the files, the checker runs on samples of its own (a plain inline
must be found, the static forms must pass), so that it cannot pass by
finding nothing.
"""
import os
import re
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
INLINE = re.compile(r"\binline\b")


def plain_inlines(text):
    """[(line number, source line)] of each `inline` whose declaration lacks
    `static` (comments and preprocessor lines are ignored)."""
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    code = re.sub(r"(?m)^[ \t]*#(?:.*\\\n)*.*$", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    found = []
    for m in INLINE.finditer(code):
        # the declaration: back to the end of the previous statement or block
        start = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1
        decl = code[start:m.end()]
        if not re.search(r"\bstatic\b", decl):
            line = code.count("\n", 0, m.start()) + 1
            found.append((line, text.split("\n")[line - 1].strip()))
    return found


SAMPLES = [
    ("inline int f(int x) { return x; }", 1),
    ("static inline int f(int x) { return x; }", 0),
    ("static inline __attribute__((always_inline)) void g(void) {}", 0),
    ("__attribute__((always_inline)) inline void g(void) {}", 1),
    ("int a;\ninline\nfloat h(float y)\n{ return y; }", 1),
    ("/* inline in a comment */ // inline\n#define X inline\nstatic inline int k(void) { return 0; }", 0),
    ("#define M(a) \\\n    do { } while (0)\ninline int m(void) { return 0; }", 1),
]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for text, want in SAMPLES:
        if len(plain_inlines(text)) != want:
            print("check_cl_inline: the checker misreads its sample %r" % text, file=sys.stderr)
            return 2
    bad, n = [], 0
    for name in sorted(os.listdir(sys.argv[1])):
        if not name.endswith((".cl", ".h")):
            continue
        n += 1
        with open(os.path.join(sys.argv[1], name)) as f:
            for line, src in plain_inlines(f.read()):
                bad.append("%s:%d: plain inline (make it static inline): %s" % (name, line, src))
    for b in bad:
        print(b)
    print("%d kernel files, %d plain inline" % (n, len(bad)))
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
