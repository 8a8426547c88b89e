"""Write the C source of the cffi extension clphys._clphys_cffi (API mode).

Run by python/meson.build: python3 build_cffi.py CDEF OUTPUT.c.  The
generated source includes clphys.h and is compiled and linked against
libclphys.so by meson, so the extension reaches the public API only (the
library exports clphys_* alone, include/clphys.map).
"""
import sys

import cffi


def main():
    cdef_file, out = sys.argv[1], sys.argv[2]
    ffi = cffi.FFI()
    with open(cdef_file) as f:
        ffi.cdef(f.read())
    ffi.set_source("clphys._clphys_cffi", "#include <clphys.h>\n")
    ffi.emit_c_code(out)


if __name__ == "__main__":
    main()
