#!/usr/bin/env python3
"""scripts/embed_cl.py: two kernel files with one base name fail with a
message naming both; one file listed twice and distinct names embed fine.

Usage: test_embed_cl.py PATH/TO/embed_cl.py"""
import os
import subprocess
import sys
import tempfile


def run(embed, out, *files):
    return subprocess.run([sys.executable, embed, out] + list(files), capture_output=True, text=True)


def main():
    embed = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for sub in ('a', 'b'):
            os.mkdir(os.path.join(d, sub))
            with open(os.path.join(d, sub, 'k.cl'), 'w') as f:
                f.write('__kernel void k_%s(void) {}\n' % sub)
        with open(os.path.join(d, 'a', 'h.h'), 'w') as f:
            f.write('#define X "q\\\\"\n')
        a, b, h = (os.path.join(d, 'a', 'k.cl'), os.path.join(d, 'b', 'k.cl'), os.path.join(d, 'a', 'h.h'))
        out = os.path.join(d, 'out.c')

        r = run(embed, out, a, h, b)
        if r.returncode == 0 or a not in r.stderr or b not in r.stderr or os.path.exists(out):
            print('FAIL: same base name: rc %d, stderr %r, output written: %s'
                  % (r.returncode, r.stderr, os.path.exists(out)))
            failures += 1

        r = run(embed, out, a, h, a)
        text = open(out).read() if os.path.exists(out) else ''
        if r.returncode != 0 or text.count('"k.cl"') != 1 or text.count('"h.h"') != 1 or 'k_a' not in text:
            print('FAIL: distinct names: rc %d, stderr %r' % (r.returncode, r.stderr))
            failures += 1
        # the escaped text is valid C
        cc = subprocess.run(['cc', '-x', 'c', '-fsyntax-only', out], capture_output=True, text=True)
        if cc.returncode != 0:
            print('FAIL: generated C does not compile: %s' % cc.stderr)
            failures += 1
    print('%d failure(s)' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
