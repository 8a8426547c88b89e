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
    out = run([EXAMPLES / "nbody_plummer.py", 512], tmp_path)
    assert "step  50" in out


def test_lj_plot_example(tmp_path, fp64):
    pytest.importorskip("matplotlib")
    png = tmp_path / "drift.png"
    out = run([EXAMPLES / "md_lj_energy_plot.py", png, 100], tmp_path)
    assert png.stat().st_size > 1000 and "wrote" in out


def test_lqcd_example(tmp_path, fp64):
    out = run([EXAMPLES / "lqcd_plaquette.py"], tmp_path)
    assert "plaquette 0.5948501" in out and "C(3)" in out


def test_poisson_example(tmp_path, fp64):
    out = run([EXAMPLES / "poisson_box.py"], tmp_path)
    assert "rhs x 3" in out


def test_readme_snippet(fp64):
    """The README's Python quick start, run as printed from the source folder (its path to the MILC sample is
    relative to it); it prints the plaquette, the Poisson solve's iterations and residual."""
    import re
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)
    assert len(blocks) == 1, "README.md: one Python block expected"
    out = subprocess.run([sys.executable, "-c", blocks[0]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    plaq, iters, res = out.stdout.split()
    assert abs(float(plaq) - 0.594850158947) < 1e-9 and int(iters) > 0 and float(res) <= 1e-7
