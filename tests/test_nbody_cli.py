#!/usr/bin/env python3
"""`clphys nbody` as a user runs it: the step count from --t-end/--dt (a whole
number >= 1, else a clear error naming the options); and, when MPI is there,
the distributed driver: `mpiexec -np P clphys nbody` with every exchange, P = 2
and 3, a rank without particles, prints the energy rows and writes the snapshot
of the single-process run to 1e-12 (relative to the size of each quantity);
several devices in one process (the test device twice) give the one-device
rows; failures end every rank with a non-zero status and a message naming the
rank, and nothing hangs: options that differ between ranks, a device one rank
cannot open, an input file rank 0 cannot read, a rank killed mid-run (the
snapshot is then whole or absent, never half-written).

Usage: test_nbody_cli.py CLPHYS [MPIEXEC]   (an empty MPIEXEC: no MPI part)"""
import os
import sys
import tempfile

from cli_mpi import DEV, ENV, check, failures, run

CLPHYS = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else ''
RUN = ['--plummer', '61', '--seed', '7', '--dt', '0.005', '--t-end', '0.05', '--eps', '0.05',
       '--energy-every', '0.01']


def rows(out):
    """The energy rows: [time, K, W, E, rel_err, Q, |p|] per row."""
    return [[float(v) for v in line.split()] for line in out.splitlines()
            if line and not line.startswith('#') and not line.startswith('time')]


def snapshot(path):
    with open(path) as f:
        return [[float(v) for v in line.split()] for line in f if line.strip()]


def same_rows(a, b):
    if len(a) != len(b) or not a:
        return False
    for ra, rb in zip(a, b):
        scale = abs(ra[1]) + abs(ra[2])  # |K| + |W|: the size of every energy column
        if ra[0] != rb[0]:
            return False
        for c in (1, 2, 3):
            if abs(ra[c] - rb[c]) > 1e-12 * scale:
                return False
        # printed with 7 digits: (E - E0)/|E0| and |sum m v| to their last digit
        if abs(ra[4] - rb[4]) > 2e-12 * scale / abs(a[0][3]) + 1e-6 * abs(ra[4]):
            return False
        if abs(ra[6] - rb[6]) > 1e-12 + 1e-6 * abs(ra[6]):
            return False
    return True


def same_snapshot(a, b):
    if len(a) != len(b) or not a:
        return False
    return all(abs(x - y) <= 1e-12 * max(1.0, abs(x)) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def option_errors():
    cases = [(['--t-end', '0.004'], 'fewer than 1 step'),
             (['--t-end', '1', '--dt', '0.3'], 'not a whole number of steps'),
             (['--t-end', '1e300', '--dt', '1e-300'], 'too many'),
             (['--t-end', '-1'], '--t-end'),
             (['--dt', 'nan'], '--dt'),
             (['--energy-every', '0.0123'], 'not a whole number of steps'),
             (['--plummer', '10abc'], '--plummer'),
             (['--exchange', 'star'], '--exchange')]
    base = {'--plummer': '61', '--seed': '7', '--dt': '0.005', '--t-end': '0.05', '--eps': '0.05'}
    for extra, want in cases:
        opts = dict(base)
        for k in range(0, len(extra), 2):
            opts[extra[k]] = extra[k + 1]
        cmd = [CLPHYS, 'nbody'] + [w for kv in opts.items() for w in kv]
        rc, out, err = run(cmd)
        check(rc == 2 and want in err, 'option error %s -> "%s" (rc %s: %s)' % (' '.join(extra), want, rc,
                                                                                 err.strip()[:200]))


def main():
    option_errors()
    tmp = tempfile.mkdtemp(prefix='clphys_nbody_cli_')
    ref_snap = os.path.join(tmp, 'ref.txt')
    rc, out, err = run([CLPHYS, 'nbody'] + RUN + ['--device', DEV, '--output', ref_snap])
    check(rc == 0, 'single-process run (rc %s %s)' % (rc, err.strip()[-300:]))
    if rc != 0:
        return
    ref, snap = rows(out), snapshot(ref_snap)
    check(len(ref) == 6 and len(snap) == 61, 'six energy rows and a whole snapshot')

    # several devices in one process
    rc, out, err = run([CLPHYS, 'nbody'] + RUN + ['--device', DEV + ',' + DEV])
    check(rc == 0 and same_rows(ref, rows(out)), 'two devices in one process (rc %s %s)' % (rc, err.strip()[-300:]))

    if not MPIEXEC:
        print('no mpiexec: the distributed part is skipped')
        return
    mpi = [MPIEXEC, '--oversubscribe']
    for np_ in ('2', '3'):
        for ex in ('ring', 'doubling', 'hybrid', 'allgather'):
            out_snap = os.path.join(tmp, 'np%s_%s.txt' % (np_, ex))
            rc, out, err = run(mpi + ['-np', np_, CLPHYS, 'nbody'] + RUN +
                               ['--device', DEV, '--exchange', ex, '--output', out_snap])
            ok = rc == 0 and same_rows(ref, rows(out)) and same_snapshot(snap, snapshot(out_snap))
            check(ok, '-np %s --exchange %s equals the single-process run (rc %s %s)' % (np_, ex, rc,
                                                                                       err.strip()[-300:]))
            check('not hidden' in err and 'largest over the ranks' in err, '-np %s %s prints the time split' %
                  (np_, ex))

    # a rank without particles: 2 particles on 3 ranks
    two = ['--plummer', '2', '--seed', '3', '--dt', '0.01', '--t-end', '0.05', '--eps', '0.05']
    rc1, out1, _ = run([CLPHYS, 'nbody'] + two + ['--device', DEV])
    rc3, out3, err3 = run(mpi + ['-np', '3', CLPHYS, 'nbody'] + two + ['--device', DEV, '--exchange', 'doubling'])
    check(rc1 == 0 and rc3 == 0 and same_rows(rows(out1), rows(out3)),
          'a rank without particles (rc %s %s)' % (rc3, err3.strip()[-300:]))

    # one rank under the launcher, and two devices per rank
    rc, out, err = run(mpi + ['-np', '1', CLPHYS, 'nbody'] + RUN + ['--device', DEV])
    check(rc == 0 and same_rows(ref, rows(out)), '-np 1 (rc %s %s)' % (rc, err.strip()[-300:]))
    rc, out, err = run(mpi + ['-np', '2', CLPHYS, 'nbody'] + RUN + ['--device', DEV + ',' + DEV, '--exchange', 'ring'])
    check(rc == 0 and same_rows(ref, rows(out)), '-np 2, two devices per rank (rc %s %s)' % (rc, err.strip()[-300:]))

    # failures: every rank ends, non-zero, with the cause
    rc, out, err = run(mpi + ['-np', '1', CLPHYS, 'nbody'] + RUN + ['--device', DEV, ':', '-np', '1', CLPHYS,
                                                                    'nbody'] + RUN[:-2] +
                       ['--energy-every', '0.02', '--device', DEV], timeout=60)
    check(rc not in (0, 'timeout') and 'differ' in err and 'rank 1' in err,
          'options that differ between ranks (rc %s %s)' % (rc, err.strip()[-300:]))
    rc, out, err = run(mpi + ['-np', '1', CLPHYS, 'nbody'] + RUN + ['--device', DEV, ':', '-np', '1', CLPHYS,
                                                                    'nbody'] + RUN + ['--device', '97:97'],
                       timeout=60)
    check(rc not in (0, 'timeout') and 'rank 1' in err and '97:97' in err,
          'a device rank 1 cannot open (rc %s %s)' % (rc, err.strip()[-300:]))
    missing = os.path.join(tmp, 'missing.txt')
    rc, out, err = run(mpi + ['-np', '2', CLPHYS, 'nbody', '--input', missing, '--dt', '0.01', '--t-end', '0.1',
                              '--eps', '0.01', '--device', DEV], timeout=60)
    check(rc not in (0, 'timeout') and missing in err, 'an input rank 0 cannot read (rc %s %s)' %
          (rc, err.strip()[-300:]))
    # a rank killed after 2 s of a long run writing snapshots all the time
    killed = os.path.join(tmp, 'killed.txt')
    script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec "$@"')
    rc, out, err = run(mpi + ['-np', '2', 'sh', '-c', script, 'sh', CLPHYS, 'nbody', '--plummer', '200', '--seed',
                              '1', '--dt', '1e-4', '--t-end', '1000', '--eps', '0.05', '--energy-every', '1e-4',
                              '--output', killed, '--device', DEV], timeout=90)
    whole = True
    if os.path.exists(killed):
        try:
            whole = len(snapshot(killed)) == 200
        except ValueError:
            whole = False
    check(rc not in (0, 'timeout') and whole, 'a rank killed mid-run: the job ends non-zero, the snapshot is whole '
          '(rc %s, %s)' % (rc, 'whole' if whole else 'half-written'))


if __name__ == '__main__':
    main()
    print('%d failed' % len(failures))
    sys.exit(1 if failures else 0)
