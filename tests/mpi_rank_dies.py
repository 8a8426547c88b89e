#!/usr/bin/env python3
"""A rank that dies in the middle of the halo exchanges: the job must end
(no rank left waiting), with a non-zero status and the launcher's message
naming the rank, well within the timeout.

Usage: mpi_rank_dies.py MPIEXEC ARGS... PROGRAM
runs MPIEXEC ARGS... PROGRAM --die (test_lqcd_mpi: rank 1 exits without
MPI_Finalize during its sixth application)."""
import re
import subprocess
import sys
import time

LIMIT = 90  # seconds; a hang fails here, before meson's timeout

def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = sys.argv[1:] + ['--die']
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        print('FAIL: the job did not end within %d s after a rank died (a rank waits forever)' % LIMIT)
        return 1
    out = p.stdout.decode(errors='replace')
    print(out)
    print('exit status %d after %.1f s' % (p.returncode, time.time() - t0))
    if p.returncode == 0:
        print('FAIL: the job reported success although rank 1 died')
        return 1
    if 'rank 1: exiting' not in out:
        print('FAIL: rank 1 did not reach the exchanges')
        return 1
    # Open MPI names it "Process name: [[JOB,1],1]", others "rank 1"
    rest = out.replace('rank 1: exiting', '')
    if not re.search(r'\[\[\d+,\d+\],1\]', rest) and 'rank 1' not in rest:
        print('FAIL: the launcher did not name the rank that died')
        return 1
    print('ok: the job ended with status %d, the dead rank named' % p.returncode)
    return 0

if __name__ == '__main__':
    sys.exit(main())
