#!/usr/bin/env python3
"""`clphys md` as a user runs it under an MPI launcher: `mpiexec -np P clphys
md` (P = 2, 3, 4; grids 2x1x1, 1x3x1, 2x2x1) prints the thermo rows of the
single process and writes the same --write-data and --xyz files (atom-ID
order, values to 1e-9); `-np 1` without --grid too.  Failures end every rank
non-zero with a message and leave no output file: a subdomain too thin,
options that differ between ranks, a device rank 1 cannot open, a half-list
variant on a cut grid, a rank killed mid-run while --xyz is written.

Usage: test_md_mpi_cli.py CLPHYS [MPIEXEC]   (an empty MPIEXEC: nothing to test)"""
import glob
import os
import sys
import tempfile

from cli_mpi import DEV, ENV, check, failures, run

CLPHYS = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else ''
# 6^3 fcc cells at 0.8442 (864 atoms, edge 10.08: 3.36 per subdomain in three)
RUN = ['--fcc', '0.8442', '--cells', '6', '--temp', '1.44', '--seed', '5', '--rcut', '2.5', '--skin', '0.3',
       '--dt', '0.005', '--steps', '60', '--thermo', '20', '--neigh-every', '20', '--neigh-check', 'no',
       '--variant', 'full-csr', '--device', DEV]


def rows(out):
    return [[float(v) for v in line.split()] for line in out.splitlines()
            if line.strip() and not line.lstrip().startswith('Step')]


def numbers(path):
    """Every number of a text file, in order (words that are not numbers kept as text)."""
    vals = []
    with open(path) as f:
        for w in f.read().replace('"', ' ').replace('=', ' ').split():
            try:
                vals.append(float(w))
            except ValueError:
                vals.append(w)
    return vals


def close(a, b, tol):
    if len(a) != len(b) or not a:
        return False
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif abs(x - y) > tol * max(abs(y), 1.0):
            return False
    return True


def same_rows(a, b):
    return len(a) == len(b) and all(close(x, y, 2e-7) for x, y in zip(a, b))


def main():
    if not MPIEXEC:
        print('no mpiexec: nothing to test')
        return
    tmp = tempfile.mkdtemp(prefix='clphys_md_mpi_cli_')
    ref_data, ref_xyz = os.path.join(tmp, 'ref.data'), os.path.join(tmp, 'ref.xyz')
    rc, out, err = run([CLPHYS, 'md'] + RUN + ['--write-data', ref_data, '--xyz', ref_xyz])
    check(rc == 0, 'single process (rc %s %s)' % (rc, err.strip()[-300:]))
    ref = rows(out)
    check(len(ref) == 4, 'single process: 4 thermo rows')
    mpi = [MPIEXEC, '--oversubscribe']
    for np_, grid in (('1', None), ('2', '2x1x1'), ('3', '1x3x1'), ('4', '2x2x1')):
        data, xyz = os.path.join(tmp, 'np%s.data' % np_), os.path.join(tmp, 'np%s.xyz' % np_)
        cmd = mpi + ['-np', np_, CLPHYS, 'md'] + RUN + ['--write-data', data, '--xyz', xyz]
        if grid:
            cmd += ['--grid', grid]
        rc, out, err = run(cmd)
        got = rows(out)
        check(rc == 0 and same_rows(ref, got) and out.count('Step') == 1,
              '-np %s grid %s: the single process\'s thermo rows, printed once (rc %s %s)' %
              (np_, grid, rc, err.strip()[-300:]))
        check(err.count('steps/s') == 1, '-np %s: the summary printed once' % np_)
        ok = rc == 0 and close(numbers(ref_data), numbers(data), 1e-9) and close(numbers(ref_xyz), numbers(xyz), 1e-8)
        check(ok, '-np %s: --write-data and --xyz as the single process writes them' % np_)

    def no_outputs(name):
        return not glob.glob(os.path.join(tmp, name + '*'))

    # failures: every rank ends, non-zero, with the cause; no output file
    out_f = ['--write-data', os.path.join(tmp, 'f.data'), '--xyz', os.path.join(tmp, 'f.xyz')]
    rc, out, err = run(mpi + ['-np', '4', CLPHYS, 'md'] + RUN + out_f + ['--grid', '1x1x4'], timeout=60)
    check(rc not in (0, 'timeout') and 'thinner than r_cut + skin' in err and no_outputs('f.'),
          'a subdomain too thin (rc %s %s)' % (rc, err.strip()[-300:]))
    half = RUN[:RUN.index('--variant') + 1] + ['half-fixedpoint'] + RUN[RUN.index('--variant') + 2:]
    rc, out, err = run(mpi + ['-np', '2', CLPHYS, 'md'] + half + out_f, timeout=60)
    check(rc not in (0, 'timeout') and 'reverse exchange' in err and no_outputs('f.'),
          'a half-list variant on a cut grid (rc %s %s)' % (rc, err.strip()[-300:]))
    two = RUN[:RUN.index('--dt') + 1] + ['0.004'] + RUN[RUN.index('--dt') + 2:]
    rc, out, err = run(mpi + ['-np', '1', CLPHYS, 'md'] + RUN + out_f + [':', '-np', '1', CLPHYS, 'md'] + two + out_f,
                       timeout=60)
    check(rc not in (0, 'timeout') and 'differ' in err and 'rank 1' in err and no_outputs('f.'),
          'options that differ between ranks (rc %s %s)' % (rc, err.strip()[-300:]))
    rc, out, err = run(mpi + ['-np', '1', CLPHYS, 'md'] + RUN + out_f + [':', '-np', '1', CLPHYS, 'md'] + RUN[:-2] +
                       ['--device', '97:97'] + out_f, timeout=60)
    check(rc not in (0, 'timeout') and 'rank 1' in err and '97:97' in err and no_outputs('f.'),
          'a device rank 1 cannot open (rc %s %s)' % (rc, err.strip()[-300:]))
    # a time step far too large: the integration diverges; every rank ends,
    # non-zero, with the cause, and none hangs
    fast = RUN[:RUN.index('--dt') + 1] + ['0.2'] + RUN[RUN.index('--dt') + 2:]
    rc, out, err = run(mpi + ['-np', '2', CLPHYS, 'md'] + fast + out_f, timeout=60)
    check(rc not in (0, 'timeout') and 'the integration diverged' in err and no_outputs('f.'),
          'a diverging run (rc %s %s)' % (rc, err.strip()[-300:]))
    # a rank killed after 2 s of a long run writing a trajectory
    script = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec "$@"'
    long_run = RUN[:RUN.index('--steps') + 1] + ['1000000'] + RUN[RUN.index('--steps') + 2:]
    rc, out, err = run(mpi + ['-np', '2', 'sh', '-c', script, 'sh', CLPHYS, 'md'] + long_run + out_f, timeout=90)
    check(rc not in (0, 'timeout') and not os.path.exists(os.path.join(tmp, 'f.xyz')) and
          not os.path.exists(os.path.join(tmp, 'f.data')),
          'a rank killed mid-run: the job ends non-zero, no output in place (rc %s)' % rc)
    for f in glob.glob(os.path.join(tmp, '*')):
        os.remove(f)
    os.rmdir(tmp)


if __name__ == '__main__':
    main()
    print('%d failed' % len(failures))
    sys.exit(1 if failures else 0)
