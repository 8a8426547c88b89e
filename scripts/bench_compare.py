#!/usr/bin/env python3
"""Compare two `clphys bench --json` files row by row.

    python3 scripts/bench_compare.py OLD.json NEW.json [--tolerance 0.05]

Rows are matched by path, variant, precision and n (the k-th of equal keys
with the k-th); rows left over are then matched by path, precision and n
alone (a tuned variant's name carries its measured shape, which may differ
between runs; such rows print both names); a path renamed since OLD was written is matched through
PATH_ALIASES.  For every matched row it prints the kernel-time rate ratio
NEW/OLD and marks rows slower than 1 - tolerance.  The exit status is 0 when
every row of NEW verified and no matched row is slower than the tolerance, 1
otherwise, 2 on unreadable input.  Both files should come from the same
device: the script refuses two device names unless --any-device is given,
since a ratio across devices says nothing about a code change.
"""
import argparse
import collections
import json
import sys

# Bench path names before the one-stem rule (docs/naming.md), as written in
# the JSON "path" field of older files -> today's.  rename-keep
PATH_ALIASES = {"gravity": "nbody_gravity", "gravity-multi": "nbody_gravity_multi",  # rename-keep
                "gravity-mpi": "nbody_gravity_mpi", "lj": "md_lj", "neighbor": "md_neighbor",  # rename-keep
                "dslash": "lqcd_dslash", "solver": "lqcd_solver", "dslash_multi": "lqcd_dslash_multi",  # rename-keep
                "solver_multi": "lqcd_solver_multi", "dslash_mpi": "lqcd_dslash_mpi",  # rename-keep
                "solver_mpi": "lqcd_solver_mpi", "poisson-mpi": "poisson_mpi"}  # rename-keep


def fail(msg):
    print(f"bench_compare: {msg}", file=sys.stderr)
    sys.exit(2)


def load(name):
    try:
        with open(name) as f:
            doc = json.load(f)
        rows = doc["results"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{name}: not a clphys bench JSON file ({e})")
    if not isinstance(rows, list):
        fail(f"{name}: 'results' is not a list")
    return doc, rows


def keyed(rows, loose=False):
    seen = collections.Counter()
    out = {}
    for r in rows:
        if not isinstance(r, dict) or "path" not in r:
            continue
        path = PATH_ALIASES.get(r["path"], r["path"])
        k = (path, None if loose else r.get("variant"), r.get("precision"), r.get("n"))
        out[k + (seen[k],)] = r
        seen[k] += 1
    return out


def pair(old_rows, new_rows):
    """(old row or None, new row) for every new row: exact keys, then loose."""
    old, new = keyed(old_rows), keyed(new_rows)
    pairs = [(old.pop(k, None), r) for k, r in new.items()]
    left_old = keyed([o for o in old.values()], loose=True)
    left_new = keyed([r for o, r in pairs if o is None], loose=True)
    by_id = {id(r): k for k, r in left_new.items()}
    return [(o if o is not None else left_old.get(by_id.get(id(r))), r) for o, r in pairs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="a row slower than (1 - tolerance) x OLD is flagged (default 0.05)")
    ap.add_argument("--any-device", action="store_true", help="compare files from different devices")
    a = ap.parse_args()
    old_doc, old_rows = load(a.old)
    new_doc, new_rows = load(a.new)
    od, nd = old_doc.get("device", {}).get("name"), new_doc.get("device", {}).get("name")
    if od != nd and not a.any_device:
        fail(f"devices differ ({od!r} vs {nd!r}); pass --any-device to compare anyway")
    bad = 0
    ratios = []
    pairs = pair(old_rows, new_rows)
    print(f"{'path':<22} {'variant':<44} {'prec':<5} {'n':>10} {'new/old':>8}")
    for o, r in pairs:
        name = f"{r['path']:<22} {str(r.get('variant')):<44} {str(r.get('precision')):<5} {str(r.get('n')):>10}"
        if not r.get("verified", False):
            print(f"{name}  NOT VERIFIED")
            bad += 1
            continue
        if o is None or not o.get("rate") or not r.get("rate"):
            continue
        q = r["rate"] / o["rate"]
        ratios.append(q)
        flag = "  slower" if q < 1 - a.tolerance else ""
        bad += bool(flag)
        was = f"  (was {o.get('variant')})" if o.get("variant") != r.get("variant") else ""
        print(f"{name} {q:8.3f}{flag}{was}")
    unmatched = len(pairs) - len(ratios)
    if ratios:
        s = sorted(ratios)
        print(f"{len(ratios)} rows matched ({unmatched} not), median ratio {s[len(s) // 2]:.3f}, "
              f"range {s[0]:.3f}-{s[-1]:.3f}; {bad} flagged")
    else:
        print(f"no rows matched ({unmatched} in NEW)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
