#!/usr/bin/env python3
"""Charts of `clphys bench --json` files from one or several devices.

usage: bench/plot/charts.py OUTDIR RESULT.json [RESULT.json ...] [--title TEXT]

Writes into OUTDIR (each chart only when the files have rows for it):
  best.png            per compute path, the fastest verified variant of each
                      device and precision as grouped bars coloured by device
                      (log scale: devices differ by orders of magnitude), the
                      variant, size and fraction of the device's measured
                      limit written beside each bar; peers (OpenMM, LAMMPS,
                      the C reference) as hatched bars beside them
  roofline-<dev>.png  per device: each path's best verified row per precision,
                      achieved FLOP/s against arithmetic intensity (flops per
                      byte under the row's declared byte model), under the
                      device's measured copy bandwidth and fp32 / fp64 FMA
                      rates; rows without a byte model stand at the right edge
  scaling.png         distributed rows only: those carrying the scaling
                      schema of bench/scaling.h (params gpus, ranks,
                      scaling, speedup, efficiency) with more than one
                      device or rank; per path, precision and kind of
                      scaling, the measured parallel efficiency as bars
                      (100% = ideal), the speed-up and the devices and
                      ranks written beside each

A device is its name, platform and driver; files of one device are merged
(the newest row of a path/variant/precision/size wins).  md rows are
compared by wall-clock steps/s (params.wall_steps_per_s where a file has it).
Needs matplotlib (Debian: apt-get install python3-matplotlib; or pip).
"""
import argparse
import json
import math
import os
import re
import sys

PEER = re.compile(r"^(openmm|lammps|c-openmp)")
PATHS = ["nbody_gravity", "md_lj", "md_neighbor", "md", "lqcd_dslash", "lqcd_solver", "poisson"]
# The rows' paths before the one-stem rule (docs/naming.md): committed results are history and keep
# them; a row is read under its new name (the one map, scripts/bench_compare.py's).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from bench_compare import PATH_ALIASES as OLD_PATHS  # noqa: E402
UNIT_SHORT = {"interactions/s": "interactions/s", "pair-evaluations/s": "pair evaluations/s",
              "particles/s": "particles/s", "steps/s": "MD steps/s", "sites/s": "sites/s", "solves/s": "solves/s",
              "unknowns/s": "unknowns/s (7-point stencil, V-cycle)"}
LIMIT_SHORT = {"fma_fp32_flops": "fp32 FMA", "fma_fp64_flops": "fp64 FMA", "copy_bytes_per_s": "copy BW",
               "triad_bytes_per_s": "triad BW"}
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


def device_label(dev):
    """Short and distinct: a CPU's model, cores and (PoCL) instruction-set target, the implementation."""
    name, plat, drv = dev.get("name", "?"), dev.get("platform", ""), dev.get("driver_version", "")
    cu = dev.get("compute_units", 0)
    cores = f", {cu} core{'s' if cu != 1 else ''}" if dev.get("type") == "CPU" and cu else ""
    if "Portable Computing Language" in plat or plat.lower().startswith("pocl"):
        m = re.match(r"^(?:pthread|cpu|basic)-([a-z0-9_-]+?)-([A-Z].*)$", name)
        cpu, target = (m.group(2), f", {m.group(1)}") if m else (name, "")
        return f"{cpu}{cores}{target} · PoCL {drv.split('+')[0]}"
    if "Intel" in plat and dev.get("type") != "GPU":
        return f"{name}{cores} · Intel CPU runtime {'.'.join(drv.split('.')[:2])}"
    if "NVIDIA" in plat:
        return f"{name.replace(' 80GB HBM3', '')} · NVIDIA {drv}"
    return f"{name} · {plat} {drv}"


def rate_of(r):
    """What a path's bars compare: its rate (md: wall clock), or for the
    solver, whose solves/s depend on the lattice, its GFLOP/s."""
    if r["path"] == "lqcd_solver":
        return r.get("gflops", 0) * 1e9
    if r["path"] == "md" and "wall_steps_per_s" in r.get("params", {}):
        return r["params"]["wall_steps_per_s"]
    if r["path"] == "poisson" and r.get("rate_unit") != "unknowns/s":
        return 0  # solves/s depend on the grid and the problem: the stencil and V-cycle rows compare
    return r.get("rate", 0)


def unit_of(path, r):
    if path == "lqcd_solver":
        return f"FLOP/s ({r.get('flops_convention', '')})"
    u = r.get("rate_unit", "")
    return UNIT_SHORT.get(u, u) + (" (wall clock)" if path == "md" else "")


def common_sizes(devices, path):
    """Sizes every device ran a path at (md's steps/s compare only at one size); empty: any."""
    sizes = None
    for d in devices.values():
        ns = {r["n"] for r in d["rows"] if r["path"] == path and r.get("verified")}
        if ns:
            sizes = ns if sizes is None else sizes & ns
    return sizes or set()


def load(files):
    """{device label: {"limits": {...}, "rows": [...]}} with duplicates resolved (later file wins)."""
    devices = {}
    for f in files:
        with open(f) as fh:
            doc = json.load(fh)
        label = device_label(doc.get("device", {}))
        d = devices.setdefault(label, {"limits": {}, "rows": {}, "date": ""})
        for k, v in doc.get("limits", {}).items():  # the highest measured: the least disturbed run
            if isinstance(v, (int, float)) and v > d["limits"].get(k, 0):
                d["limits"][k] = v
        for r in doc.get("results", []):
            r = dict(r, path=OLD_PATHS.get(r["path"], r["path"]))
            key = (r["path"], r["variant"], r["precision"], r["n"])
            if key not in d["rows"] or doc.get("date", "") >= d["rows"][key][0]:
                d["rows"][key] = (doc.get("date", ""), r)
        d["date"] = max(d["date"], doc.get("date", ""))
    for d in devices.values():
        d["rows"] = [r for _, r in d["rows"].values()]
    return devices


def best_rows(rows, path, peers, sizes=()):
    """{precision: row}: the fastest verified row of a path (peers or clphys's own), at one of sizes if given."""
    out = {}
    for r in rows:
        if r["path"] != path or not r.get("verified") or bool(PEER.match(r["variant"])) != peers:
            continue
        if sizes and r["n"] not in sizes:
            continue
        if rate_of(r) > 0 and (r["precision"] not in out or rate_of(r) > rate_of(out[r["precision"]])):
            out[r["precision"]] = r
    return out


def si(x):
    for f, s in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= f:
            return f"{x / f:.3g} {s}"
    return f"{x:.3g}"


def bar_text(r, peer):
    frac = r.get("fraction_of_limit", 0)
    lim = f" · {frac:.0%} of {LIMIT_SHORT.get(r.get('limit'), r.get('limit'))}" if frac > 0 else ""
    v = r["variant"]
    if peer and r["path"] == "md" and "platform" in r.get("params", {}):
        v += f" ({r['params'].get('device') or r['params']['platform']})"
    return f"{si(rate_of(r))}  {v}, n={r['n']:,}{lim}"


def chart_best(plt, devices, out, title):
    labels = list(devices)
    colour = {d: COLOURS[i % len(COLOURS)] for i, d in enumerate(labels)}
    panels = []
    for path in PATHS:
        bars = []  # (group precision, device, row, peer)
        sizes = common_sizes(devices, path) if path == "md" else set()
        for prec in ("fp32", "mixed", "fp64"):
            for dev in labels:
                for peer in (False, True):
                    r = best_rows(devices[dev]["rows"], path, peer, sizes).get(prec)
                    if r:
                        bars.append((prec, dev, r, peer))
        if bars:
            panels.append((path, bars))
    if not panels:
        return None
    labels = [d for d in labels if any(dev == d for _, b in panels for _, dev, _, _ in b)]  # devices with bars
    heights = [0.42 * len(b) + 0.9 for _, b in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, sum(heights) + 1.2),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (path, bars) in zip(axes[:, 0], panels):
        y, ticks, tick_labels, prev = 0, [], [], None
        xs = [rate_of(r) for _, _, r, _ in bars]
        for prec, dev, r, peer in bars:
            if prev is not None and prec != prev:
                y += 0.6  # gap between precision groups
            ax.barh(y, rate_of(r), color=colour[dev], hatch="//" if peer else None, alpha=0.55 if peer else 1.0,
                    edgecolor="white" if not peer else colour[dev], height=0.8)
            ax.text(rate_of(r) * 1.08, y, bar_text(r, peer), va="center", fontsize=9)
            ticks.append(y)
            tick_labels.append(prec + (" peer" if peer else ""))
            prev, y = prec, y + 1
        ax.set_yticks(ticks, tick_labels, fontsize=9)
        ax.invert_yaxis()
        ax.set_xscale("log")
        lo, hi = min(xs), max(xs)
        ax.set_xlim(lo / 3, hi * 10 ** (0.45 * max(1.0, math.log10(hi / lo) + 1)))
        ax.set_title(f"{path} — {unit_of(path, bars[0][2])}", loc="left", fontsize=11, fontweight="bold")
        ax.set_xlabel(unit_of(path, bars[0][2]) + ", log scale", fontsize=9)
        ax.grid(axis="x", which="major", alpha=0.3)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[d]) for d in labels]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="grey", hatch="//"))
    total = sum(heights) + 1.2
    fig.suptitle(title or "Fastest verified variant per device and precision", y=1 - 0.15 / total, fontsize=13)
    fig.legend(handles, labels + ["peer program, same device, same run"], loc="upper center",
               bbox_to_anchor=(0.5, 1 - 0.5 / total), ncol=min(3, len(handles)), fontsize=10, frameon=False)
    fig.text(0.01, 0.003, "% of a limit: the row's rate under its byte or flop model over the device's measured "
             "copy bandwidth or FMA rate; above 100% of a bandwidth: caches serve part of the traffic the byte model "
             "counts (it credits no reuse); of an FMA rate: the flop convention counts more than the device executes", fontsize=8, color="dimgrey")
    fig.tight_layout(rect=(0, 0.015, 1, 1 - 1.0 / total))
    path = os.path.join(out, "best.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def chart_roofline(plt, label, dev, out):
    lim = dev["limits"]
    bw, f32, f64 = lim.get("copy_bytes_per_s"), lim.get("fma_fp32_flops"), lim.get("fma_fp64_flops")
    if not bw or not f32:
        return None
    pts = []
    for path in PATHS:
        for prec, r in best_rows(dev["rows"], path, False).items():
            flops = r.get("gflops", 0) * 1e9
            if flops > 0:
                pts.append((path, prec, r, flops, flops / r["bytes_per_s"] if r.get("bytes_per_s", 0) > 0 else None))
    if not pts:
        return None
    ais = [p[4] for p in pts if p[4]] + [f32 / bw]
    xlo, xhi = min(ais) / 4, max(ais) * 16
    edge = xhi / 1.6  # where rows without a byte model stand
    fig, ax = plt.subplots(figsize=(10, 6.5))
    xs = [xlo * (xhi / xlo) ** (i / 200) for i in range(201)]
    for peak, name, style in ((f32, "fp32", "-"), (f64, "fp64", "--")):
        if peak:
            ax.plot(xs, [min(peak, bw * x) for x in xs], style, color="black", lw=1.4,
                    label=f"copy bandwidth {si(bw)}B/s, then {name} FMA {si(peak)}FLOP/s (measured)")
    marker = {"fp32": "o", "fp64": "s", "mixed": "^"}
    pcol = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(PATHS)}
    placed = []  # label positions (log x, log y) so far: a close one moves down
    for path, prec, r, flops, ai in sorted(pts, key=lambda p: -p[3]):
        x = ai if ai else edge
        ax.scatter([x], [flops], s=70, marker=marker.get(prec, "D"), color=pcol[path], edgecolor="black", zorder=3)
        note = "" if ai else " (no byte model)"
        lx, ly, dy = math.log10(x), math.log10(flops), 4
        while any(abs(lx - px) < 0.6 and abs(ly + dy / 60 - py) < 0.07 for px, py in placed):
            dy -= 12
        placed.append((lx, ly + dy / 60))
        ax.annotate(f"{path} {prec}{note}", (x, flops), xytext=(-8 if not ai else 7, dy),
                    ha="right" if not ai else "left", textcoords="offset points", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xlo, xhi)
    ys = [p[3] for p in pts]
    ax.set_ylim(min(min(ys), bw * xlo) / 3, max(f32, max(ys)) * 3)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    ax.set_xlabel("arithmetic intensity (flops per byte, under each path's stated byte model)")
    ax.set_ylabel("achieved FLOP/s (flop convention of the path)")
    ax.set_title(f"Roofline: {label}\nbest verified row of each path and precision; ceilings: the highest "
                 "limits measured in these files\n(a point above the roof: its byte model counts no cache reuse)",
                 fontsize=10)
    ax.grid(which="major", alpha=0.3)
    fig.tight_layout()
    safe = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower()
    path = os.path.join(out, f"roofline-{safe}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def chart_scaling(plt, devices, out):
    """Distributed rows only (the scaling schema, more than one device or rank): efficiency bars."""
    panels = {}  # (path, precision, scaling) -> [(device label, row)]
    for label, dev in devices.items():
        for r in dev["rows"]:
            p = r.get("params", {})
            if not all(k in p for k in ("gpus", "ranks", "scaling", "speedup", "efficiency")):
                continue
            if not r.get("verified") or not isinstance(p["efficiency"], (int, float)) or max(p["gpus"], p["ranks"]) < 2:
                continue
            panels.setdefault((r["path"], r["precision"], p["scaling"]), []).append((label, r))
    if not panels:
        return None
    keys = sorted(panels)
    ncol = min(2, len(keys))
    nrow = (len(keys) + ncol - 1) // ncol
    heights = [0.45 * max(len(panels[k]) for k in keys[i * ncol:(i + 1) * ncol]) + 1.4 for i in range(nrow)]
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.5 * ncol, sum(heights) + 1.4), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    colour = {d: COLOURS[i % len(COLOURS)] for i, d in enumerate(devices)}
    for ax, key in zip(axes.flat, keys):
        rows = sorted(panels[key], key=lambda x: (x[0], x[1]["variant"], x[1]["n"]))
        top = max(1.2, max(r["params"]["efficiency"] for _, r in rows)) * 1.75  # room for the text
        for y, (label, r) in enumerate(rows):
            p = r["params"]
            eff = p["efficiency"]
            ax.barh(y, eff * 100, color=colour[label], height=0.7)
            where = f"{p['gpus']} device{'s' if p['gpus'] > 1 else ''}" + (
                f", {p['ranks']} MPI ranks" if p["ranks"] > 1 else ", one process")
            sp = f" · speed-up {p['speedup']:.2f}x" if isinstance(p.get("speedup"), (int, float)) else ""
            ax.text(eff * 100 + 1, y, f"{eff:.0%}{sp} · {where}", va="center", fontsize=8)
        ax.set_yticks(range(len(rows)), [f"{r['variant']}, n={r['n']:,}" for _, r in rows], fontsize=8)
        ax.invert_yaxis()
        ax.axvline(100, color="black", lw=0.8)
        ax.set_xlim(0, top * 100)
        ax.set_xlabel("parallel efficiency, % (100 = ideal)", fontsize=8)
        ax.set_title(f"{key[0]}, {key[1]}, {key[2]} scaling", loc="left", fontsize=10, fontweight="bold")
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    used = sorted({label for k in keys for label, _ in panels[k]})
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[d]) for d in used]
    fig.legend(handles, used, loc="lower center", ncol=min(3, len(used)), fontsize=9, frameon=False)
    fig.text(0.5, 0.035, "efficiency: strong scaling, speed-up / devices (speed-up: one device's time for the whole "
             "problem over the distributed time); weak scaling, one device's time for its share over the distributed "
             "time; above 100%: super-linear", ha="center", fontsize=8, color="dimgrey")
    fig.suptitle("Scaling over devices and MPI ranks: distributed rows only, each against its one-device baseline "
                 "measured in the same run", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    path = os.path.join(out, "scaling.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("charts.py: matplotlib is missing (apt-get install python3-matplotlib, or pip install matplotlib)")
    devices = load(args.results)
    os.makedirs(args.outdir, exist_ok=True)
    made = [chart_best(plt, devices, args.outdir, args.title), chart_scaling(plt, devices, args.outdir)]
    made += [chart_roofline(plt, label, dev, args.outdir) for label, dev in devices.items()]
    made = [m for m in made if m]
    if not made:
        sys.exit("charts.py: no verified rows to chart")
    for m in made:
        print(f"wrote {m}")


if __name__ == "__main__":
    main()
