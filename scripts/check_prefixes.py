#!/usr/bin/env python3
"""Check the naming rule of docs/naming.md on the library's internal symbols:
every global symbol the objects of the internal static library define (nm
--defined-only, types in upper case) starts with the public prefix, a path's
stem or a layer's prefix.  File-static names are free and not looked at.
Used by the test `prefixes` on build/libclphys_internal.a.

Usage: check_prefixes.py LIBRARY.a
Exit status 0 when it holds (the count per prefix printed), 1 when a global
symbol carries another prefix (each named with its object file) or the
library defines none."""
import subprocess
import sys

# clphys_: the public API; cp_: platform/; la_: host/linalg/; ref_: host/ref/
# (not in this library, listed for the rule's sake); a path's stem: host/<stem>/;
# clsrc_: the kernel files embedded by scripts/embed_cl.py (one symbol per file)
ALLOWED = ("clphys_", "cp_", "la_", "ref_", "md_", "nbody_", "lqcd_", "poisson_", "clsrc_")
# What a sanitizer or coverage build adds: GCC's AddressSanitizer defines an
# ODR indicator __odr_asan.NAME beside each global NAME (NAME is checked in its
# place); the instrumentation's own symbols are not the project's names.
ODR_INDICATOR = "__odr_asan."
INSTRUMENTATION = ("__asan", "__ubsan", "__sancov", "__llvm_", "__gcov", "__tsan", "__msan")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_prefixes.py LIBRARY.a")
    lib = sys.argv[1]
    try:
        out = subprocess.run(["nm", "--defined-only", "-A", lib], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("check_prefixes.py: nm %s failed: %s" % (lib, e))
    bad, count = [], {}
    for line in out.splitlines():
        # "LIBRARY:OBJECT:ADDRESS TYPE NAME"
        parts = line.split()
        if len(parts) != 3 or not parts[1].isupper() or parts[1] in "AU":
            continue
        name, obj = parts[2], parts[0].rsplit(":", 2)[-2] if parts[0].count(":") >= 2 else parts[0]
        indicator = name.startswith(ODR_INDICATOR)
        if indicator:
            name = name[len(ODR_INDICATOR):]
        elif name.startswith(INSTRUMENTATION):
            continue
        prefix = next((p for p in ALLOWED if name.startswith(p)), None)
        if prefix is None:
            bad.append("%s (%s)" % (name, obj.rsplit("/", 1)[-1]))
        elif not indicator:
            count[prefix] = count.get(prefix, 0) + 1
    if bad:
        print("%s defines %d global symbol(s) without an allowed prefix (%s; docs/naming.md):"
              % (lib, len(bad), " ".join(ALLOWED)))
        for b in sorted(bad):
            print("  " + b)
        return 1
    if not count:
        print("%s defines no global symbol" % lib)
        return 1
    print("%s: %s" % (lib, ", ".join("%s %d" % (p, n) for p, n in sorted(count.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
