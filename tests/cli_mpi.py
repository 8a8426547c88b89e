"""What the scripts that run the clphys command under mpiexec share: the
device the tests are asked for, an environment in which Open MPI runs as
root and oversubscribed with one PoCL thread per rank, running a command
with a time limit, and counting checks."""
import os
import subprocess

DEV = os.environ.get('CLPHYS_DEVICE') or 'auto'
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
           OMPI_MCA_rmaps_base_oversubscribe='1', POCL_MAX_PTHREAD_COUNT='1')
failures = []


def run(cmd, timeout=120):
    """(exit status or 'timeout', stdout, stderr) of cmd run in ENV."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 'timeout', '', ''


def check(ok, what):
    print(('ok      ' if ok else 'FAILED  ') + what, flush=True)
    if not ok:
        failures.append(what)
