#!/usr/bin/env python3
"""`clphys lqcd solve` as a user runs it, on MILC's 4^4 sample: quiet by
default (a header, one line per solve, a total line, the correlator), every
iteration with --monitor; --output FILE writes the correlator it prints, as
text or, for a name ending in .json, as JSON, atomically (no FILE.tmp left);
and, when MPI is there, `mpiexec -np 2 ... --grid 1x1x1x2` prints the same
lines and writes the same correlator to 1e-10 (summation order), once.

Usage: test_lqcd_solve_cli.py CLPHYS [MPIEXEC]   (an empty MPIEXEC: no MPI part)"""
import json
import os
import subprocess
import sys
import tempfile

CLPHYS = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else ''
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'gauge', 'lat.sample.l4444')
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
           OMPI_MCA_rmaps_base_oversubscribe='1', POCL_MAX_PTHREAD_COUNT='1')
SOLVE = ['lqcd', 'solve', DATA, '--kappa', '0.12', '--tol', '1e-8']
tmp = tempfile.mkdtemp(prefix='clphys-lqcd-')
failures = []


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    return p.returncode, p.stdout, p.stderr


def check(ok, what):
    print(('ok      ' if ok else 'FAILED  ') + what, flush=True)
    if not ok:
        failures.append(what)


def correlator(out):
    return [float(l.split()[2]) for l in out.splitlines() if l.startswith('C ')]


def close(a, b, tol=1e-10):
    return len(a) == len(b) and all(abs(x - y) <= tol * max(abs(x), abs(y), 1e-300) for x, y in zip(a, b))


txt, js = os.path.join(tmp, 'c.txt'), os.path.join(tmp, 'c.json')
rc, out, err = run([CLPHYS] + SOLVE + ['--source', 'point', '--output', txt])
lines = out.splitlines()
solves = [l for l in lines if l.startswith('source spin ')]
C = correlator(out)
check(rc == 0 and len(solves) == 12 and all('converged, ' in l for l in solves), 'point: 12 solve lines, converged')
check(not any('iteration ' in l and '=' in l for l in lines), 'quiet by default: no iteration lines')
check(any(l.startswith('total: 12 solves, ') for l in lines), 'a total line')
check(len(C) == 4 and C[0] > 0, 'the correlator on stdout (4 time slices)')
try:
    filed = [float(l.split()[1]) for l in open(txt) if not l.startswith('#')]
except OSError:
    filed = []
check(close(C, filed, 1e-11), '--output c.txt: the printed correlator, as text')
check(os.listdir(tmp) == ['c.txt'], 'no temporary file left: %s' % os.listdir(tmp))
rc, out2, err = run([CLPHYS] + SOLVE + ['--source', 'point', '--output', js, '--monitor'])
try:
    doc = json.load(open(js))
except (OSError, ValueError):
    doc = {}
check(rc == 0 and close(C, doc.get('C', []), 1e-11) and doc.get('lattice') == [4, 4, 4, 4] and
      doc.get('kappa') == 0.12, '--output c.json: the correlator, kappa and lattice as JSON')
check(sum('iteration ' in l for l in out2.splitlines()) > 12 * 10, '--monitor: every iteration')
rc, out3, err = run([CLPHYS] + SOLVE + ['--source', 'point', '--output', txt])
check(rc == 2 and 'exists' in err, 'an existing --output without --force: exit 2 (%s)' % err.strip())
if MPIEXEC:
    mtxt = os.path.join(tmp, 'mpi.txt')
    rc, out4, err = run([MPIEXEC, '-n', '2', CLPHYS] + SOLVE + ['--source', 'point', '--grid', '1x1x1x2', '--output',
                                                                  mtxt])
    try:
        mfiled = [float(l.split()[1]) for l in open(mtxt) if not l.startswith('#')]
    except OSError:
        mfiled = []
    check(rc == 0 and sum(l.startswith('source spin ') for l in out4.splitlines()) == 12 and
          sum(l.startswith('total: ') for l in out4.splitlines()) == 1, 'mpiexec -n 2: 12 solve lines, one total')
    check(close(C, correlator(out4)) and close(C, mfiled), 'mpiexec -n 2: the same correlator, printed and written')
print('%d failure(s)' % len(failures))
sys.exit(1 if failures else 0)
