#!/usr/bin/env python3
"""Check that a shared library exports the public API only: every defined
dynamic symbol (nm -D --defined-only) starts with clphys_.  Used by the test
`exports` on the built library and by .ci/run on the installed one.

Usage: check_exports.py LIBRARY.so
Exit status 0 when it holds (the count of exported symbols printed), 1 when
a symbol without the prefix is exported or nothing is (names printed)."""
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: check_exports.py LIBRARY.so')
    lib = sys.argv[1]
    try:
        out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit('check_exports.py: nm -D %s failed: %s' % (lib, e))
    names = []
    for line in out.splitlines():
        parts = line.split()
        # "ADDRESS TYPE NAME[@@VERSION]"; the version node itself is type A
        if len(parts) == 3 and parts[1] != 'A':
            names.append(parts[2].split('@')[0])
    bad = sorted(n for n in names if not n.startswith('clphys_'))
    if bad:
        print('%s exports %d symbol(s) outside the public API (clphys_*):' % (lib, len(bad)))
        for n in bad:
            print('  ' + n)
        return 1
    if not names:
        print('%s exports no clphys_* symbol at all' % lib)
        return 1
    print('%s: %d exported symbols, all clphys_*' % (lib, len(names)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
