#!/usr/bin/env bash
# Every kernel of every path on a small case under Oclgrind, Debian's
# checking OpenCL device: out-of-bounds accesses, barrier divergence and
# invalid work-group functions (always), data races (--data-races) and
# uninitialized values (--uninitialized).  Runs tests/oclgrind/kernels.c (the
# bench cases of each path at a small size, every variant and precision,
# verified against the fp64 references; MD, and with it every LJ kernel, for
# each LJ variant) in one Oclgrind process per run below, and writes the
# report: per run its exit status, time and count of reports, then one line
# per (message, kernel) with its count, then each run's cases and the first
# lines of its log.
#   bash scripts/oclgrind.sh [BUILD_DIR [REPORT]]   (defaults: build, oclgrind-report.txt)
# OCLGRIND_RUNS="label ..." runs only those runs (labels below).
# Takes about 28 minutes on 2 cores (2026-11-24); not part of .ci/run for that reason
# (tests/oclgrind/README.md: when to run it, what it found).
#
# How the runs are cut, from the limits of Oclgrind 21.10 (Debian 12):
#  - its optimiser emits llvm.experimental.noalias.scope.decl for
#    lj_full_transposed, which its interpreter does not know ("Undefined
#    external function"): kernels are built with -cl-opt-disable;
#  - its --uninitialized plugin takes buffers zeroed by clEnqueueFillBuffer
#    for uninitialized (cell_assign's counters) and then crashes (SIGSEGV
#    inside Oclgrind) on the neighbour-list programs of every particle path
#    but gravity: uninitialized values are checked on gravity, dslash and
#    solver, in runs of their own;
#  - it stops reporting after --max-errors: a kernel that reports on every
#    launch (the compare-exchange loops of half-cas) would hide the kernels
#    after it, so each LJ variant has its own run.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
report=${2:-oclgrind-report.txt}
exe=$build/tests/oclgrind_kernels
[ -x "$exe" ] || { echo "no $exe: build first (ninja -C $build)"; exit 2; }
command -v oclgrind > /dev/null || { echo "oclgrind is not installed (apt-get install oclgrind)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# under oclgrind its simulator is the only device (a GPU)
export CLPHYS_DEVICE=gpu CLPHYS_CACHE_DIR=$tmp/cache
# label | kernels.c argument | the checks beyond the always-on ones
runs=(
  "gravity|nbody_gravity|--data-races"
  "gravity-uninit|nbody_gravity|--uninitialized"
  "neighbor|md_neighbor|--data-races"
)
for v in full-csr full-transposed full-group half-cas half-fixedpoint cpu full-staged; do
  runs+=("md-$v|md:$v|--data-races")
done
runs+=("dslash|lqcd_dslash|--data-races" "dslash-uninit|lqcd_dslash|--uninitialized"
       "solver|lqcd_solver|--data-races" "solver-uninit|lqcd_solver|--uninitialized")
if [ -n "${OCLGRIND_RUNS:-}" ]; then
  chosen=()
  for r in "${runs[@]}"; do
    case " $OCLGRIND_RUNS " in *" ${r%%|*} "*) chosen+=("$r") ;; esac
  done
  runs=("${chosen[@]}")
fi
status=0
{
  echo "Oclgrind report: $(oclgrind --version 2>&1 | grep -m1 -i oclgrind), clphys $(git describe --always --dirty 2>/dev/null), $(date -u +%Y-%m-%d)"
  echo "each run: oclgrind --build-options -cl-opt-disable --max-errors 1000 CHECKS $exe ARG"
  echo
} > "$tmp/head"
labels=()
for r in "${runs[@]}"; do
  IFS='|' read -r label arg checks <<< "$r"
  labels+=("$label")
  t0=$SECONDS
  oclgrind --build-options -cl-opt-disable $checks --max-errors 1000 --log "$tmp/$label.log" \
    "$exe" "$arg" > "$tmp/$label.out" 2>&1
  rc=$?
  [ -f "$tmp/$label.log" ] || : > "$tmp/$label.log"
  n=$(grep -c 'Kernel:' "$tmp/$label.log")
  echo "$label: $arg, $checks: exit $rc, $((SECONDS - t0)) s, $n report(s)" | tee -a "$tmp/head"
  [ "$rc" -eq 0 ] || status=1
done
{
  cat "$tmp/head"
  echo
  echo "Reports by run, message and kernel (count):"
  for label in "${labels[@]}"; do
    awk -v p="$label" '/^[A-Z][a-z]/ && !/^Oclgrind/ {msg=$0} /Kernel:/ {print p ": " msg " | " $2}' "$tmp/$label.log" |
      sed -E 's/address 0x[0-9a-f]+/address X/'
  done | sort | uniq -c
  for label in "${labels[@]}"; do
    echo
    echo "==== $label: the cases run (verified against the fp64 reference) ===="
    cat "$tmp/$label.out"
    echo "==== $label: Oclgrind's log (first 60 lines) ===="
    head -n 60 "$tmp/$label.log"
  done
} > "$report"
echo "report: $report"
exit $status
