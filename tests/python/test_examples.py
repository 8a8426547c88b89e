"""Every script of examples/python runs (the plot written to a file)."""
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = REPO / "examples" / "python"


def run(args, cwd):
    r = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_gravity_example(tmp_path, fp64):
    out = run([EXAMPLES / "gravity_plummer.py", 512], tmp_path)
    assert "step  50" in out


def test_lj_plot_example(tmp_path, fp64):
    pytest.importorskip("matplotlib")
    png = tmp_path / "drift.png"
    out = run([EXAMPLES / "lj_energy_plot.py", png, 100], tmp_path)
    assert png.stat().st_size > 1000 and "wrote" in out


def test_lqcd_example(tmp_path, fp64):
    out = run([EXAMPLES / "lqcd_plaquette.py"], tmp_path)
    assert "plaquette 0.5948501" in out and "C(3)" in out


def test_poisson_example(tmp_path, fp64):
    out = run([EXAMPLES / "poisson_box.py"], tmp_path)
    assert "rhs x 3" in out
