#!/usr/bin/env python3
"""scripts/embed_cl.py: one symbol clsrc_<name> per kernel file, declared in
the header and listed in cp_kernel_files; the output compiles and links
against a program using the symbols.  Refused with a message naming the
files, and nothing written: two kernel files with one base name, two names
that make one symbol, a name that makes no C identifier, an #include of a
file not embedded.  One file listed twice and distinct names embed fine.

Usage: test_embed_cl.py PATH/TO/embed_cl.py"""
import os
import subprocess
import sys
import tempfile


def run(embed, out, *files):
    return subprocess.run([sys.executable, embed, out, out[:-2] + '.h'] + list(files), capture_output=True, text=True)


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)


def main():
    embed = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for sub in ('a', 'b'):
            os.mkdir(os.path.join(d, sub))
            write(os.path.join(d, sub, 'k.cl'), '#include "h.h"\n__kernel void k_%s(void) {}\n' % sub)
        write(os.path.join(d, 'a', 'h.h'), '#define X "q\\\\"\n')
        write(os.path.join(d, 'a', 'k-x.cl'), '__kernel void kx(void) {}\n')
        write(os.path.join(d, 'a', 'k_x.cl'), '__kernel void ky(void) {}\n')
        write(os.path.join(d, 'a', 'bad name.cl'), '__kernel void kz(void) {}\n')
        write(os.path.join(d, 'a', 'inc.cl'), '  # include "nowhere.h"\n')
        a, b, h = (os.path.join(d, 'a', 'k.cl'), os.path.join(d, 'b', 'k.cl'), os.path.join(d, 'a', 'h.h'))
        kdash, kunder = os.path.join(d, 'a', 'k-x.cl'), os.path.join(d, 'a', 'k_x.cl')
        out = os.path.join(d, 'out.c')
        hdr = os.path.join(d, 'out.h')

        refusals = [('same base name', (a, h, b), (a, b)),
                    ('one symbol for two names', (kdash, kunder), (kdash, kunder)),
                    ('no C identifier', (os.path.join(d, 'a', 'bad name.cl'),), ('bad name.cl',)),
                    ('include of a file not embedded', (os.path.join(d, 'a', 'inc.cl'),), ('inc.cl', 'nowhere.h'))]
        for what, files, named in refusals:
            r = run(embed, out, *files)
            if r.returncode == 0 or any(n not in r.stderr for n in named) or os.path.exists(out) \
                    or os.path.exists(hdr):
                print('FAIL: %s: rc %d, stderr %r, output written: %s'
                      % (what, r.returncode, r.stderr, os.path.exists(out) or os.path.exists(hdr)))
                failures += 1

        r = run(embed, out, a, h, a, kdash)
        text = open(out).read() if os.path.exists(out) else ''
        header = open(hdr).read() if os.path.exists(hdr) else ''
        if r.returncode != 0 or text.count('"k.cl"') != 1 or text.count('"h.h"') != 1 or 'k_a' not in text:
            print('FAIL: distinct names: rc %d, stderr %r' % (r.returncode, r.stderr))
            failures += 1
        for sym in ('clsrc_k_cl', 'clsrc_h_h', 'clsrc_k_x_cl'):
            if 'extern const cp_kernel_file %s;' % sym not in header:
                print('FAIL: %s not declared in the header' % sym)
                failures += 1
        # the escaped text is valid C, and a program naming the symbols links
        # against it (a misspelt symbol would not: that is the point)
        main_c = os.path.join(d, 'main.c')
        write(main_c, '#include <string.h>\n#include "out.h"\n'
                      'int main(void) {\n'
                      '  int n = 0;\n'
                      '  for (const cp_kernel_file *const *f = cp_kernel_files; *f; f++) n++;\n'
                      '  return !(n == 3 && !strcmp(clsrc_k_cl.name, "k.cl") && strstr(clsrc_h_h.text, "q\\\\\\\\")\n'
                      '           && strstr(clsrc_k_x_cl.text, "kx"));\n}\n')
        exe = os.path.join(d, 'main')
        cc = subprocess.run(['cc', '-Wall', '-Werror', '-I', d, '-o', exe, main_c, out], capture_output=True, text=True)
        if cc.returncode != 0:
            print('FAIL: generated C does not compile: %s' % cc.stderr)
            failures += 1
        elif subprocess.run([exe]).returncode != 0:
            print('FAIL: the symbols do not hold the files\' names and texts')
            failures += 1
        write(main_c, '#include "out.h"\nint main(void) { return clsrc_k_cx.name != 0; }\n')
        cc = subprocess.run(['cc', '-I', d, '-o', exe, main_c, out], capture_output=True, text=True)
        if cc.returncode == 0:
            print('FAIL: a misspelt symbol compiled and linked')
            failures += 1
    print('%d failure(s)' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
