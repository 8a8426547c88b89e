#!/usr/bin/env python3
"""Compare `clphys bench --json` files from several devices in one chart.

usage: bench/plot/compare.py OUT.png RESULT.json [RESULT.json ...] [--path gravity] [--metric rate|fraction_of_limit]

One panel per compute path; one bar per (device, variant, precision, n), showing the path's own
rate (its rate_unit) or the fraction of the device's measured limit.  Needs matplotlib
(Debian: apt-get install python3-matplotlib)."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--path", action="append", help="only these paths (repeatable)")
    ap.add_argument("--metric", default="rate", choices=["rate", "fraction_of_limit", "kernel_s_median"])
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("compare.py: matplotlib is missing (apt-get install python3-matplotlib)")

    panels = {}
    for f in args.results:
        with open(f) as fh:
            doc = json.load(fh)
        dev = doc["device"]["name"]
        for r in doc.get("results", []):
            if args.path and r["path"] not in args.path:
                continue
            label = f'{dev} | {r["variant"]} {r["precision"]} n={r["n"]}'
            panels.setdefault((r["path"], r.get("rate_unit", "")), []).append((label, r[args.metric], r.get("verified")))
    if not panels:
        sys.exit("compare.py: no results to plot")
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 1.5 + 0.35 * sum(len(v) for v in panels.values())),
                             squeeze=False)
    for ax, ((path, unit), bars) in zip(axes[:, 0], sorted(panels.items())):
        labels = [b[0] + ("" if b[2] else "  (NOT VERIFIED)") for b in bars]
        ax.barh(range(len(bars)), [b[1] for b in bars])
        ax.set_yticks(range(len(bars)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(path)
        ax.set_xlabel({"rate": unit, "fraction_of_limit": "fraction of measured limit",
                       "kernel_s_median": "median kernel time (s)"}[args.metric])
        if args.metric == "rate":
            ax.set_xscale("log")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
