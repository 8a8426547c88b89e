#!/usr/bin/env python3
"""`clphys poisson` over MPI ranks as a user runs it: `mpiexec -np P clphys
poisson ...` with P = 2 and 3 and process grids 2x1, 1x2, 3x1 and the
default gives the single process's results: the same iteration count (within
1), a residual below --tol, the same discretization error of the manufactured
solution (6 digits: a function of the whole solution), the same last-line
format, an output file of the same size; the right-hand side read from a
NetCDF file on rank 0 gives the single process's iterations too.  Failures
end every rank with a non-zero status and a message, nothing hangs and no
output file is left: a process grid of other ranks, a grid larger than the
horizontal extent, a bathymetry rank 0 cannot read, a rank killed mid-run.

Usage: test_poisson_cli_mpi.py CLPHYS [MPIEXEC]   (an empty MPIEXEC: skipped)"""
import os
import re
import sys
import tempfile

from cli_mpi import DEV, ENV, check, failures, run

CLPHYS = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else ''
PROB = ['--basin', '40x28', '--seed', '5', '--levels', '6', '--precision', 'fp64', '--tol', '1e-10',
        '--device', DEV]


LAST = re.compile(r'^iterations (\d+) residual (\S+) time (\S+) s$')


def last(out):
    lines = out.strip().splitlines()
    m = LAST.match(lines[-1]) if lines else None
    return (int(m.group(1)), float(m.group(2))) if m else None


def disc(out):
    m = re.search(r'discretization error \(manufactured\): rms (\S+), max (\S+)', out)
    return (float(m.group(1).rstrip(',')), float(m.group(2))) if m else None


def close(a, b, rel):
    return a is not None and b is not None and all(abs(x - y) <= rel * abs(y) for x, y in zip(a, b))


def main():
    if not MPIEXEC:
        print('no MPI: skipped')
        return
    mpi = [MPIEXEC]
    tmp = tempfile.mkdtemp(prefix='clphys_poisson_mpi_')
    single = os.path.join(tmp, 'single.nc')
    rc, out, err = run([CLPHYS, 'poisson'] + PROB + ['--output', single])
    check(rc == 0 and last(out) and disc(out), 'single process (rc %s %s)' % (rc, err.strip()[-300:]))
    if rc != 0:
        return
    it1, _ = last(out)
    d1 = disc(out)
    for np_, grid in (('2', ['--grid', '2x1']), ('2', ['--grid', '1x2']), ('3', ['--grid', '3x1']), ('3', [])):
        dist = os.path.join(tmp, 'dist.nc')
        rc, out2, err = run(mpi + ['-np', np_, CLPHYS, 'poisson'] + PROB + grid + ['--output', dist])
        l2 = last(out2)
        ok = rc == 0 and l2 and abs(l2[0] - it1) <= 1 and l2[1] <= 1e-10 and close(disc(out2), d1, 1e-6) and \
            os.path.exists(dist) and os.path.getsize(dist) == os.path.getsize(single)
        check(ok, '-np %s %s: iterations %s vs %d, discretization error %s vs %s (rc %s %s)' %
              (np_, ' '.join(grid) or 'default grid', l2 and l2[0], it1, disc(out2), d1, rc, err.strip()[-300:]))
        if os.path.exists(dist):
            os.remove(dist)
    # the right-hand side from a file, read on rank 0 (the single run's p as f)
    rhs = ['--rhs-file', single, '--rhs-var', 'p']
    rc, out, err = run([CLPHYS, 'poisson'] + PROB + rhs)
    rc2, out2, err2 = run(mpi + ['-np', '2', CLPHYS, 'poisson'] + PROB + rhs)
    check(rc == 0 and rc2 == 0 and last(out) and last(out2) and abs(last(out)[0] - last(out2)[0]) <= 1,
          '--rhs-file on rank 0: %s vs %s (rc %s %s %s)' % (last(out2), last(out), rc, rc2, err2.strip()[-300:]))
    # failures: every rank non-zero, a message, no hang, no output
    bad = os.path.join(tmp, 'bad.nc')
    cases = [
        ('a process grid of other ranks', ['-np', '2'], PROB + ['--grid', '3x1'], 'grid 3x1'),
        ('a grid larger than the horizontal extent', ['-np', '3'],
         ['--box', '2x8x2', '--grid', '3x1', '--device', DEV], 'larger than the horizontal extent'),
        ('a bathymetry rank 0 cannot read', ['-np', '2'],
         ['--bathymetry', os.path.join(tmp, 'missing.nc'), '--depth-var', 'depth', '--device', DEV], 'missing.nc'),
    ]
    for what, n, args, msg in cases:
        rc, out, err = run(mpi + n + [CLPHYS, 'poisson'] + args + ['--output', bad], timeout=90)
        check(rc not in (0, 'timeout') and msg in err and not os.path.exists(bad),
              '%s (rc %s %s)' % (what, rc, err.strip()[-300:]))
    # a rank killed while the job runs: it ends non-zero, nothing written
    script = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec "$@"'
    rc, out, err = run(mpi + ['-np', '2', 'sh', '-c', script, 'sh', CLPHYS, 'poisson', '--basin', '256x256',
                              '--seed', '1', '--levels', '32', '--precision', 'fp64', '--tol', '1e-14',
                              '--output', bad, '--device', DEV], timeout=120)
    left = [f for f in os.listdir(tmp) if f not in ('single.nc',)]
    check(rc not in (0, 'timeout') and not left, 'a rank killed mid-run: the job ends non-zero (rc %s), files left: %s'
          % (rc, left))


if __name__ == '__main__':
    main()
    print('%d failed' % len(failures))
    sys.exit(1 if failures else 0)
