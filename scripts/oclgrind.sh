#!/usr/bin/env bash
# Every kernel of every path on a small case under Oclgrind, Debian's
# checking OpenCL device (out-of-bounds accesses, barrier divergence and
# invalid work-group functions always; data races with --data-races;
# uninitialized values with --uninitialized).  Runs tests/oclgrind/kernels.c
# (the bench cases of each path at a small size, every variant and
# precision, verified; MD with every LJ variant) once per path, and writes
# the report: one line per (message, kernel) with its count, then the full
# log of each path.
#   bash scripts/oclgrind.sh [BUILD_DIR [REPORT]]     (defaults: build, oclgrind-report.txt)
# Takes TIME_PLACEHOLDER on 2 cores; not part of .ci/run for that reason
# (tests/oclgrind/README.md: when to run it, what it found).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
report=${2:-oclgrind-report.txt}
exe=$build/tests/oclgrind_kernels
[ -x "$exe" ] || { echo "no $exe: build first (ninja -C $build)"; exit 2; }
command -v oclgrind > /dev/null || { echo "oclgrind is not installed (apt-get install oclgrind)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CLPHYS_DEVICE=gpu CLPHYS_CACHE_DIR=$tmp/cache  # under oclgrind its simulator is the only (GPU) device
# Two limits of Oclgrind 21.10 (Debian 12) shape the runs:
#  - its optimiser emits llvm.experimental.noalias.scope.decl for
#    lj_full_transposed, which its interpreter does not know ("Undefined
#    external function"), so kernels are built with -cl-opt-disable;
#  - its --uninitialized plugin takes buffers zeroed by clEnqueueFillBuffer
#    for uninitialized (cell_assign's counters) and then crashes (SIGSEGV
#    inside Oclgrind) on the neighbour-list programs that every particle
#    path but gravity builds: uninitialized values are checked on gravity,
#    dslash and solver.
declare -A extra=([gravity]=--uninitialized [neighbor]= [lj]= [md]= [dslash]=--uninitialized [solver]=--uninitialized)
status=0
{
  echo "Oclgrind report: $(oclgrind --version 2>&1 | head -n 1), clphys $(git describe --always --dirty 2>/dev/null), $(date -u +%Y-%m-%d)"
  echo
} > "$tmp/head"
for p in gravity neighbor lj md dslash solver; do
  t0=$SECONDS
  # shellcheck disable=SC2086
  oclgrind --build-options -cl-opt-disable --data-races ${extra[$p]} --max-errors 1000 --log "$tmp/$p.log" \
    "$exe" "$p" > "$tmp/$p.out" 2>&1
  rc=$?
  [ -f "$tmp/$p.log" ] || : > "$tmp/$p.log"
  n=$(grep -c -E '^[A-Z][a-z].*(race|bounds|uninitialized|barrier|divergence|invalid|Invalid)' "$tmp/$p.log")
  echo "$p: exit $rc, $((SECONDS - t0)) s, $n report(s) (oclgrind --build-options -cl-opt-disable --data-races ${extra[$p]})" |
    tee -a "$tmp/head"
  [ "$rc" -eq 0 ] || status=1
done
{
  cat "$tmp/head"
  echo
  echo "Reports by message and kernel (count):"
  for p in gravity neighbor lj md dslash solver; do
    awk -v p="$p" '/^[A-Z][a-z]/ && !/^Oclgrind/ {msg=$0} /Kernel:/ {print p ": " msg " | " $2}' "$tmp/$p.log"
  done | sort | uniq -c
  for p in gravity neighbor lj md dslash solver; do
    echo
    echo "==== $p: the cases run (verified against the fp64 reference) ===="
    cat "$tmp/$p.out"
    echo "==== $p: Oclgrind's log (first 300 lines) ===="
    head -n 300 "$tmp/$p.log"
  done
} > "$report"
echo "report: $report"
exit $status
