#!/usr/bin/env python3
"""Every program clphys builds, compiled by AMD's and Intel's own GPU compilers.

No AMD or Intel GPU is lent to this project, but their compilers run on any
x86-64 Debian machine.  For each target of tests/gpu_targets.c (gfx90a and
gfx1030 for AMD, acm-g10 and pvc for Intel) this script

 1. asks build/tests/gpu_programs for the programs the host builds on that
    GPU as described (every plan of every path made on the test device with
    the description copied into the context: the options are exactly what
    platform/program.c passes, cp_build_options), and the plans it refuses;
    then the programs only split problems build: the plans over several
    devices of one process (lattice grid 2x2x2x2) and, under mpiexec on 2
    ranks, the plans over MPI ranks (each rank's programs); each program
    says which plans first built it (single, multi, mpi);
 2. compiles each program as the vendor's runtime would:
    AMD: clang-15 -x cl OPTIONS -target amdgcn-amd-amdhsa -mcpu=TARGET -O3
         --rocm-device-lib-path=DIR, linked by ld.lld into a code object
         (ROCm's runtime links too: a call to a function without a
         definition fails there, not at -c);
    Intel: ocloc compile -device TARGET -options OPTIONS;
 3. reads each kernel's resources from the binary: on AMD the code object's
    metadata note (llvm-readelf-15 --notes: .vgpr_count, .sgpr_count,
    .vgpr_spill_count, .sgpr_spill_count, .private_segment_fixed_size,
    .group_segment_fixed_size, .max_flat_workgroup_size, .wavefront_size);
    on Intel the patch tokens of the device binary (the execution
    environment's NumGRFRequired and SIMD size, the scratch space per thread,
    the inline local memory) and derives the occupancy they allow;
 4. checks that the host's capability logic matches the compiler: an
    extension the description lists (cl_khr_fp64, cl_khr_int64_base_atomics)
    is one the compiler accepts, and one it omits is one the compiler
    refuses; for a target without fp64, every fp64 program another target of
    the same compiler builds is refused by this target's compiler too.

Reports: bench/results/gpu-targets/TARGET.json (every kernel) and .md (a
table); docs/gpu-targets.md explains them.

  scripts/gpu_targets.py --write          compile everything, write the reports
  scripts/gpu_targets.py --check          CI: compile, fail on a compile error,
                                          a capability mismatch or a spill the
                                          committed report does not have
  --subset auto|all|quick  (default auto: all when a file under cl/ differs
                           from the one the committed reports were made
                           from, else quick: on gfx90a and acm-g10 the fp32
                           programs, on gfx1030 and pvc the fp64 programs,
                           and everywhere those without a precision)
  --targets gfx90a,pvc     a subset of the targets
  --build DIR              the meson build folder (default build)
  -j N                     parallel compiles (default: the CPU count)

Exit status: 0 all well, 1 a finding that fails CI, 2 a tool is missing.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results", "gpu-targets")
CLANG = os.environ.get("CLANG15", "clang-15")
READELF = os.environ.get("LLVM_READELF", "llvm-readelf-15")
OCLOC = os.environ.get("OCLOC", "ocloc")
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
# the plans over MPI ranks are made on 2 ranks (the lattice split along t,
# MD cut along x, the Poisson grid 2x1; rank 0 also keeps the gathered
# coarse levels, so each rank's programs are read)
MPI_RANKS = 2
GATED = ("cl_khr_fp64", "cl_khr_int64_base_atomics")

# The code object's target string: ROCm's runtime compiles for the GPU's
# own feature set; MI200s run with SRAM ECC on and XNACK off unless
# HSA_XNACK=1 (XNACK on reserves more SGPRs).
AMD_MCPU = {"gfx90a": "gfx90a:sramecc+:xnack-", "gfx940": "gfx940:sramecc+:xnack-", "gfx1030": "gfx1030"}

# Occupancy rules (per SIMD): total VGPRs, allocation granule, most waves.
# CDNA2/3 (AMD Instinct MI200/MI300 ISA guides; LLVM AMDGPUBaseInfo for the
# granule): 512 unified (arch + acc) VGPRs per lane, granule 8, 8 waves.
# RDNA2 in wave32: 1024 VGPRs, granule 16, 16 waves.
AMD_RULES = {
    "gfx90a": {"vgprs": 512, "granule": 8, "waves": 8, "lds_per_cu": 65536, "simds": 4, "sgprs": 800},
    "gfx940": {"vgprs": 512, "granule": 8, "waves": 8, "lds_per_cu": 65536, "simds": 4, "sgprs": 800},
    "gfx1030": {"vgprs": 1024, "granule": 16, "waves": 16, "lds_per_cu": 65536, "simds": 2, "sgprs": None},
}
# Intel Xe (oneAPI GPU optimization guide): 8 hardware threads per XVE with
# 128 GRF registers, 4 with 256 (large GRF mode); XVEs per Xe-core: 16 on
# Xe-HPG (acm-g10), 8 on Xe-HPC (pvc); SLM per Xe-core 64 KiB (acm-g10),
# 128 KiB usable per work-group (pvc).
INTEL_RULES = {
    "acm-g10": {"xve_per_core": 16, "slm_per_core": 65536},
    "pvc": {"xve_per_core": 8, "slm_per_core": 131072},
}


def die(msg, code=2):
    print("gpu_targets: " + msg, file=sys.stderr)
    sys.exit(code)


def tool_version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (out.stdout + out.stderr).strip()
    except OSError:
        return ""


def dpkg_version(pkg):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    except OSError:
        return ""


def rocm_device_lib_dir():
    d = os.environ.get("ROCM_DEVICE_LIB_PATH")
    if d:
        return d
    try:
        out = subprocess.run(["dpkg", "-L", "rocm-device-libs"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if line.endswith("/ocml.bc"):
            return os.path.dirname(line)
    return ""


def cl_digest():
    h = hashlib.sha256()
    cl = os.path.join(ROOT, "cl")
    for name in sorted(os.listdir(cl)):
        h.update(name.encode() + b"\0")
        with open(os.path.join(cl, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


# ---- the programs the host builds ------------------------------------------------

def host_targets(helper):
    out = subprocess.run([helper, "--targets"], capture_output=True, text=True, check=True).stdout
    ts = {}
    for line in out.splitlines():
        f = line.split("\t")
        ts[f[0]] = {"id": f[0], "compiler": f[1], "fp64": f[2] == "1", "int64_atomics": f[3] == "1",
                    "local_mem": int(f[4]), "max_work_group": int(f[5]), "width": int(f[6]), "name": f[7]}
    return ts


def read_programs(outdir, list_name, refused_name):
    progs, refused = [], []
    with open(os.path.join(outdir, list_name)) as f:
        for line in f:
            name, file, prec, exts, opts, plans = line.rstrip("\n").split("\t")
            progs.append({"name": name, "file": file, "precision": prec,
                          "extensions": [] if exts == "-" else exts.split(), "options": opts, "plans": plans,
                          "src": os.path.join(outdir, name + ".cl")})
    with open(os.path.join(outdir, refused_name)) as f:
        for line in f:
            what, msg = line.rstrip("\n").split("\t", 1)
            refused.append({"plan": what, "message": msg})
    return progs, refused


def host_programs(helper, target, outdir, env):
    """The programs of every plan (single-device, several devices of one
    process, then over MPI_RANKS ranks: each rank's), each (file, options)
    once, and the plans refused; (None, None, log) when a plan failed."""
    r = subprocess.run([helper, target, outdir], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, None, r.stderr
    progs, refused = read_programs(outdir, "programs.tsv", "refused.tsv")
    log = r.stderr
    mpiexec = shutil.which(MPIEXEC)
    cmd = ([mpiexec, "-n", str(MPI_RANKS)] if mpiexec else []) + [helper, "--mpi", target, outdir]
    env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", POCL_MAX_PTHREAD_COUNT="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    log += r.stdout + r.stderr
    if r.returncode == 3 and not mpiexec:  # a build without MPI has no plan over ranks
        return progs, refused, log
    if r.returncode != 0 or not mpiexec:
        return None, None, log + ("" if mpiexec else "%s not found: the plans over MPI ranks were not made\n" % MPIEXEC)
    seen = {(p["file"], p["options"]) for p in progs}
    seen_refused = {x["plan"] for x in refused}
    for rank in range(MPI_RANKS):
        mp, mr = read_programs(outdir, "mpi-r%d.tsv" % rank, "mpi-refused-r%d.tsv" % rank)
        for p in mp:
            if (p["file"], p["options"]) not in seen:
                seen.add((p["file"], p["options"]))
                progs.append(p)
        for x in mr:
            if x["plan"] not in seen_refused:
                seen_refused.add(x["plan"])
                refused.append(x)
    return progs, refused, log


# ---- AMD ---------------------------------------------------------------------------

def amd_compile(target, libdir, src, options, out):
    cmd = [CLANG, "-x", "cl"] + shlex.split(options) + [
        "-target", "amdgcn-amd-amdhsa", "-mcpu=" + AMD_MCPU[target], "-O3",
        "--rocm-device-lib-path=" + libdir, src, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, shlex.join(cmd), r.stderr


def amd_kernels(obj):
    out = subprocess.run([READELF, "--notes", obj], capture_output=True, text=True, check=True).stdout
    kernels, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^  - \.(\w+):\s*(.*)$", line)
        if m and line.startswith("  - ."):
            cur = {}
            kernels.append(cur)
            cur[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^    \.(\w+):\s*(.*)$", line)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2).strip()
    res = []
    for k in kernels:
        def num(key):
            v = k.get(key, "0")
            return int(v) if re.fullmatch(r"\d+", v) else 0
        res.append({"kernel": k.get("name", "?"),
                    "vgpr": num("vgpr_count"), "agpr": num("agpr_count"), "sgpr": num("sgpr_count"),
                    "vgpr_spill": num("vgpr_spill_count"), "sgpr_spill": num("sgpr_spill_count"),
                    "private_bytes": num("private_segment_fixed_size"),
                    "dynamic_stack": k.get("uses_dynamic_stack", "false") == "true",
                    "local_bytes": num("group_segment_fixed_size"),
                    "max_work_group": num("max_flat_workgroup_size"),
                    "wave": num("wavefront_size")})
    return res


def amd_occupancy(target, k):
    r = AMD_RULES[target]
    g = r["granule"]
    alloc = max(g, -(-k["vgpr"] // g) * g)
    waves = min(r["waves"], r["vgprs"] // alloc)
    limiter = "VGPRs" if waves < r["waves"] else "-"
    if r["sgprs"]:
        sg = min(r["waves"], r["sgprs"] // max(16, -(-k["sgpr"] // 16) * 16))
        if sg < waves:
            waves, limiter = sg, "SGPRs"
    k["waves_per_simd"] = waves
    k["occupancy_limiter"] = limiter
    k["groups_per_cu_by_lds"] = r["lds_per_cu"] // k["local_bytes"] if k["local_bytes"] else None
    k["spill"] = k["vgpr_spill"] > 0 or k["sgpr_spill"] > 0
    return k


# ---- Intel -------------------------------------------------------------------------

def intel_compile(target, src, options, outdir):
    cmd = [OCLOC, "compile", "-q", "-file", src, "-device", target, "-options", options,
           "-output_no_suffix", "-out_dir", outdir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    ok = r.returncode == 0 and "Build failed" not in r.stdout
    return ok, shlex.join(cmd), (r.stdout + r.stderr)


def elf_section(path, sh_type):
    """The bytes of the first section of that type in a 64-bit ELF file."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"\x7fELF" or b[4] != 2:
        raise ValueError("not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    for i in range(shnum):
        _, typ, _, _, off, size = struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
        if typ == sh_type:
            return b[off:off + size]
    raise ValueError("no section of type %#x" % sh_type)


# Patch tokens (IGC's executable_format/patch_list.h): the ones read here.
TOK_LOCAL_SURFACE, TOK_VFE_STATE, TOK_EXEC_ENV, TOK_PRIVATE, TOK_VFE_STATE_SLOT1 = 15, 18, 23, 38, 55


def intel_kernels(binary):
    """Each kernel of an Intel device binary (patch-token format, the one
    this ocloc writes: ICBE version 1081 and later keep these fields)."""
    blob = elf_section(binary, 0xFF000005)  # "Intel(R) OpenCL Device Binary"
    magic, _ver, _dev, _ptr, nkern, _step, plist = struct.unpack_from("<7I", blob, 0)
    if magic != 0x494E5443:
        raise ValueError("no patch-token program header")
    off = 28 + plist
    res = []
    for _ in range(nkern):
        (_ck, _hash, name_sz, patch_sz, heap, gsh, dsh, ssh, _unpadded) = struct.unpack_from("<IQ7I", blob, off)
        off += 40
        name = blob[off:off + name_sz].split(b"\0")[0].decode()
        off += name_sz + heap + gsh + dsh + ssh
        end, p = off + patch_sz, off
        k = {"kernel": name, "grf": 0, "simd": 0, "scratch_bytes": 0, "scratch_slot1_bytes": 0,
             "private_bytes": 0, "local_bytes": 0, "stateless_spill_fill": False}
        while p + 8 <= end:
            tok, size = struct.unpack_from("<II", blob, p)
            if size < 8:
                raise ValueError("bad patch token size")
            body = blob[p + 8:p + size]
            words = struct.unpack_from("<%dI" % (len(body) // 4), body)
            if tok == TOK_EXEC_ENV and len(words) > 20:
                k["simd"] = words[3]
                k["stateless_spill_fill"] = bool(words[13])
                k["grf"] = words[20]
            elif tok == TOK_VFE_STATE and len(words) >= 2:
                k["scratch_bytes"] = words[1]
            elif tok == TOK_VFE_STATE_SLOT1 and len(words) >= 2:
                k["scratch_slot1_bytes"] = words[1]
            elif tok == TOK_LOCAL_SURFACE and len(words) >= 2:
                k["local_bytes"] = words[1]
            elif tok == TOK_PRIVATE and len(words) >= 4:
                k["private_bytes"] = words[3]
            p += size
        off = end
        res.append(k)
    return res


def intel_occupancy(target, k, device_max_wg):
    r = INTEL_RULES[target]
    threads = 8 if k["grf"] <= 128 else 4
    k["threads_per_xve"] = threads
    k["max_work_group"] = min(device_max_wg, k["simd"] * r["xve_per_core"] * threads) if k["simd"] else 0
    k["groups_per_core_by_slm"] = r["slm_per_core"] // k["local_bytes"] if k["local_bytes"] else None
    # scratch space in slot 0 is where IGC puts spilled registers
    k["spill"] = k["scratch_bytes"] > 0 or k["stateless_spill_fill"]
    return k


# ---- capability probes ---------------------------------------------------------------

PROBE = {
    "cl_khr_fp64": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                   "__kernel void k(__global double *a) { a[get_global_id(0)] = sqrt(a[0]); }\n",
    "cl_khr_int64_base_atomics": "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
                                 "__kernel void k(__global ulong *a) { atom_add(a, 1UL); atom_cmpxchg(a, 0UL, 1UL); }\n",
}


def compile_one(t, libdir, src, options, work):
    """(ok, command, log, kernels) for one program on target t."""
    os.makedirs(work, exist_ok=True)
    base = os.path.splitext(os.path.basename(src))[0]
    if t["compiler"] == "amdgcn":
        obj = os.path.join(work, base + ".co")
        ok, cmd, log = amd_compile(t["id"], libdir, src, options, obj)
        return ok, cmd, log, (amd_kernels(obj) if ok else [])
    ok, cmd, log = intel_compile(t["id"], src, options, work)
    return ok, cmd, log, (intel_kernels(os.path.join(work, base)) if ok else [])


def capability_probes(t, libdir, work):
    """[(extension, the host says, the compiler accepts)]."""
    out = []
    os.makedirs(work, exist_ok=True)
    for ext, text in PROBE.items():
        src = os.path.join(work, "probe_%s.cl" % ext)
        with open(src, "w") as f:
            f.write(text)
        ok = compile_one(t, libdir, src, "-cl-std=CL1.2", os.path.join(work, "probe-" + ext))[0]
        out.append((ext, t["fp64"] if ext == "cl_khr_fp64" else t["int64_atomics"], ok))
    return out


# ---- reports -------------------------------------------------------------------------

def key(p, k):
    return "%s|%s|%s" % (p["file"], p["options"], k["kernel"])


def load_report(target):
    path = os.path.join(RESULTS, target + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


# options every program has on an Intel GPU (platform/program.c), left out
# of the markdown tables so that each program's own options show
INTEL_COMMON = ("-cl-intel-enable-auto-large-GRF-mode", "-DINTEL_SG=16")


def markdown(rep):
    t = rep["target"]
    amd = t["compiler"] == "amdgcn"
    lines = ["# %s (%s): every clphys program, compiled, not run" % (t["id"], t["name"]), "",
             "Compiler: %s.  Made %s from cl/ digest %s by scripts/gpu_targets.py; "
             "docs/gpu-targets.md explains the columns.%s" % (
                 rep["compiler"], rep["date"], rep["cl_digest"],
                 "" if amd else "  Options below leave out `-cl-std=CL1.2 -DCLPHYS_GPU=1 %s`, "
                 "which every program has here." % " ".join(INTEL_COMMON)), ""]
    if amd:
        lines += ["| program | kernel | VGPR | SGPR | spills (V/S) | private B | local B | max WG | waves/SIMD |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    else:
        lines += ["| program | kernel | SIMD | GRF | scratch B | private B | local B | max WG | threads/XVE |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for p in rep["programs"]:
        opts = p["options"].replace("-cl-std=CL1.2 -DCLPHYS_GPU=1 ", "")
        for common in INTEL_COMMON:
            opts = opts.replace(common + " ", "")
        prog = "%s `%s`%s" % (p["file"], opts if len(opts) < 130 else opts[:127] + "...",
                               "" if p.get("plans", "single") == "single" else " (%s)" % p["plans"])
        if not p["compiled"]:
            lines.append("| %s | COMPILE ERROR | | | | | | | |" % prog)
        for k in p["kernels"]:
            flag = " **spill**" if k["spill"] else ""
            if amd:
                lines.append("| %s | %s | %d | %d | %d/%d%s | %d%s | %d | %d | %d%s |" % (
                    prog, k["kernel"], k["vgpr"], k["sgpr"], k["vgpr_spill"], k["sgpr_spill"], flag,
                    k["private_bytes"], " (call stack)" if k["dynamic_stack"] else "", k["local_bytes"],
                    k["max_work_group"], k["waves_per_simd"],
                    "" if k["occupancy_limiter"] == "-" else " (" + k["occupancy_limiter"] + ")"))
            else:
                lines.append("| %s | %s | %d | %d | %d%s | %d | %d | %d | %d |" % (
                    prog, k["kernel"], k["simd"], k["grf"], k["scratch_bytes"], flag, k["private_bytes"],
                    k["local_bytes"], k["max_work_group"], k["threads_per_xve"]))
            prog = "〃"
    if rep["refused"]:
        lines += ["", "Plans the host refuses on this target (CLPHYS_ERR_UNSUPPORTED):", ""]
        for r in rep["refused"]:
            lines.append("- %s: %s" % (r["plan"], r["message"]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--subset", choices=("auto", "all", "quick"), default="auto")
    ap.add_argument("--targets", default="")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()

    helper = os.path.join(a.build, "tests", "gpu_programs")
    if not os.access(helper, os.X_OK):
        die("%s not built (meson setup + ninja first)" % helper)
    for tool in (CLANG, READELF, OCLOC, "ld.lld"):
        if not shutil.which(tool):
            die("%s not found: apt-get install clang-15 llvm-15 lld-15 rocm-device-libs intel-opencl-icd" % tool)
    libdir = rocm_device_lib_dir()
    if not libdir or not os.path.exists(os.path.join(libdir, "ocml.bc")):
        die("ROCm device libraries not found (apt-get install rocm-device-libs, or set ROCM_DEVICE_LIB_PATH)")

    targets = host_targets(helper)
    chosen = a.targets.split(",") if a.targets else list(targets)
    for c in chosen:
        if c not in targets:
            die("unknown target %s (known: %s)" % (c, ", ".join(targets)))
    digest = cl_digest()
    subset = a.subset
    if subset == "auto":
        reps = [load_report(c) for c in chosen]
        subset = "quick" if a.check and all(r and r.get("cl_digest") == digest for r in reps) else "all"
    versions = {
        "amdgcn": "Debian clang %s (clang-15 %s), rocm-device-libs %s, lld %s" % (
            dpkg_version("clang-15"), tool_version([CLANG, "--version"]).splitlines()[0].split("version ")[-1]
            if tool_version([CLANG, "--version"]) else "?", dpkg_version("rocm-device-libs"), dpkg_version("lld-15")),
        "ocloc": "Intel ocloc from intel-opencl-icd %s, IGC libigc1 %s" % (
            dpkg_version("intel-opencl-icd"), dpkg_version("libigc1")),
    }
    env = dict(os.environ)
    env.setdefault("CLPHYS_CACHE_DIR", os.path.join(a.build, "tests", "kcache"))
    env["CLPHYS_NO_TUNE"] = "1"

    findings, t0 = [], time.time()
    tmp = tempfile.mkdtemp(prefix="clphys-gpu-targets-")
    try:
        lists = {}
        for c in chosen:
            d = os.path.join(tmp, c)
            os.makedirs(d)
            progs, refused, log = host_programs(helper, c, d, env)
            if progs is None:
                findings.append("%s: the host could not make its plans:\n%s" % (c, log))
                continue
            lists[c] = (progs, refused)
        t_host = time.time() - t0
        jobs = []
        for c, (progs, _) in lists.items():
            t = targets[c]
            for p in progs:
                pick = subset == "all" or p["precision"] == "-" or \
                    p["precision"] == ("fp32" if c in ("gfx90a", "acm-g10") else "fp64")
                if pick:
                    jobs.append((c, p))
        with cf.ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
            futs = {ex.submit(compile_one, targets[c], libdir, p["src"], p["options"],
                              os.path.join(tmp, c, "out", p["name"])): (c, p) for c, p in jobs}
            probes = {c: ex.submit(capability_probes, targets[c], libdir, os.path.join(tmp, c, "probe"))
                      for c in lists}
            # a target without fp64: every fp64 program of a sibling target must be refused
            refusal_jobs = {}
            for c in lists:
                t = targets[c]
                if t["fp64"]:
                    continue
                sib = next((s for s in lists if s != c and targets[s]["compiler"] == t["compiler"]
                            and targets[s]["fp64"]), None)
                if not sib:
                    continue
                for p in lists[sib][0]:
                    if "cl_khr_fp64" in p["extensions"]:
                        refusal_jobs[ex.submit(compile_one, t, libdir, p["src"], p["options"],
                                               os.path.join(tmp, c, "refusal", p["name"]))] = (c, sib, p)
            done = {}
            for f in cf.as_completed(futs):
                c, p = futs[f]
                ok, cmd, log, kernels = f.result()
                t = targets[c]
                for k in kernels:
                    if t["compiler"] == "amdgcn":
                        amd_occupancy(c, k)
                    else:
                        intel_occupancy(c, k, t["max_work_group"])
                done[(c, p["name"])] = dict(p, compiled=ok, kernels=kernels)
                if not ok:
                    findings.append("%s: %s (%s) does not compile:\n  %s\n%s" % (
                        c, p["file"], p["options"], cmd, "\n".join(log.splitlines()[-15:])))
            for c, f in probes.items():
                for ext, host, comp in f.result():
                    if host != comp:
                        findings.append("%s: the host's capability logic says %s %s, the compiler %s it" % (
                            c, ext, "present" if host else "absent", "accepts" if comp else "refuses"))
            n_refusal = {}
            for f in cf.as_completed(refusal_jobs):
                c, sib, p = refusal_jobs[f]
                n_refusal[c] = n_refusal.get(c, 0) + 1
                if f.result()[0]:
                    findings.append("%s: the host refuses fp64, yet its compiler accepts %s (%s) from %s" % (
                        c, p["file"], p["options"], sib))
        t_compile = time.time() - t0 - t_host

        # spills, limits, and the comparison with the committed reports
        for c, (progs, refused) in lists.items():
            t = targets[c]
            old = load_report(c) if a.check else None
            old_spill = {}
            if old:
                for p in old["programs"]:
                    for k in p["kernels"]:
                        old_spill[key(p, k)] = k["spill"]
            for p in progs:
                r = done.get((c, p["name"]))
                if not r:
                    continue
                for k in r["kernels"]:
                    if k["local_bytes"] > t["local_mem"]:
                        findings.append("%s: %s kernel %s needs %d bytes of local memory, the device has %d" % (
                            c, p["file"], k["kernel"], k["local_bytes"], t["local_mem"]))
                    if a.check and k["spill"] and not old_spill.get(key(p, k), False):
                        findings.append("%s: %s (%s) kernel %s spills, which the committed report %s" % (
                            c, p["file"], p["options"], k["kernel"],
                            "does not show" if key(p, k) in old_spill else "does not list"))
            if a.write:
                rep = {"target": t, "compiler": versions[t["compiler"]],
                       "date": time.strftime("%Y-%m-%d", time.gmtime()), "cl_digest": digest,
                       "programs": [dict((kk, vv) for kk, vv in done[(c, p["name"])].items() if kk != "src")
                                    for p in progs if (c, p["name"]) in done],
                       "refused": refused,
                       "refusals_checked": n_refusal.get(c, 0)}
                os.makedirs(RESULTS, exist_ok=True)
                with open(os.path.join(RESULTS, c + ".json"), "w") as f:
                    json.dump(rep, f, indent=1, sort_keys=True)
                    f.write("\n")
                with open(os.path.join(RESULTS, c + ".md"), "w") as f:
                    f.write(markdown(rep))
            ncomp = sum(1 for (cc, _), r in done.items() if cc == c)
            nk = sum(len(r["kernels"]) for (cc, _), r in done.items() if cc == c)
            nsp = sum(1 for (cc, _), r in done.items() if cc == c for k in r["kernels"] if k["spill"])
            print("%-8s %3d programs compiled (%s), %3d kernels, %d spilling; %d plans refused%s" % (
                c, ncomp, subset, nk, nsp, len(refused),
                ", each fp64 refusal confirmed by the compiler (%d programs)" % n_refusal[c]
                if c in n_refusal else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("host plans %.0f s, compiles %.0f s (%d jobs), total %.0f s" % (
        t_host, t_compile, len(jobs), time.time() - t0))
    for f in findings:
        print("FINDING " + f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
