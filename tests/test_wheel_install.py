"""The built wheel works outside the checkout: installed into a fresh virtual environment, `sendframe demo` runs.

How the environment is made, and why:

- The wheel is built from a copy of ``pyproject.toml``, ``README.md`` and ``src/`` in ``tmp_path`` with
  ``pip wheel --no-deps --no-build-isolation`` (the build backend, setuptools, is in the dev extra), so the
  build needs no network and leaves no ``build/`` or ``*.egg-info`` in the checkout.
- The fresh venv (``python -m venv --without-pip`` in ``tmp_path``, outside the checkout) gets the wheel with
  ``pip --python <venv> install --no-deps --no-index``: the wheel's own files, its console script, nothing else.
- Its dependencies (pandas, pyarrow, starlette, ... about 300 MB) are not downloaded again: one ``.pth`` file in
  the venv's site-packages adds the project interpreter's site-packages *after* the venv's own. Python reads a
  ``.pth`` line as a plain directory to append, so the ``.pth`` files inside that directory (the editable
  install's finder that maps ``sendframe`` to ``src/``) are not run, and the checkout's ``src/`` is never on the
  path; the test asserts that ``sendframe`` is imported from the venv. Downloading the dependencies into the venv
  would test pip and the package index, not our wheel, and take minutes instead of seconds.
- ``PYTHONPATH`` (the helpers' ``PYTHONPATH=src`` habit) is removed from the environment of every command.

What it proves: the wheel carries every file the library reads (price table, sample contacts, suppression list,
report assets), the ``sendframe`` console script works, and the demo (read contacts, preflight, estimate, the
embedded sandbox, the receiver, send, records, summary, report) runs end to end from a folder outside the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}}
    return {**env, **extra}


def _run(command: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "--wheel-dir", str(dist), str(source)], cwd=tmp_path)
    (wheel,) = dist.glob("sendframe-*.whl")
    return wheel


def _fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
          str(wheel)], cwd=tmp_path)
    site_packages = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              cwd=tmp_path).stdout.strip())
    dependencies = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    assert not any(Path(d).resolve().is_relative_to(ROOT / "src") for d in dependencies)
    (site_packages / "project_dependencies.pth").write_text("".join(f"{d}\n" for d in dependencies), encoding="utf-8")
    return venv


@pytest.mark.slow
def test_the_wheel_installed_outside_the_checkout_runs_the_demo(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("sendframe/data/prices.csv", "sendframe/data/contacts.csv", "sendframe/data/suppression.csv",
                    "sendframe/notebook/assets/world_110m.json", "sendframe/py.typed"):
        assert shipped in names, f"the wheel lacks {shipped}"

    venv = _fresh_venv(tmp_path, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    where = _run([str(venv / "bin" / "python"), "-c",
                  "import sendframe, sendframe.pricing as p; print(sendframe.__file__); print(p.DEFAULT_PRICES_PATH)"],
                 cwd=elsewhere).stdout.split()
    for path in map(Path, where):
        assert path.resolve().is_relative_to(venv.resolve()), f"{path} is not inside the new venv {venv}"
        assert not path.resolve().is_relative_to(ROOT), f"{path} comes from the checkout"

    demo = _run([str(venv / "bin" / "sendframe"), "demo", "--out", "report.html"], cwd=elsewhere)
    out = demo.stdout
    assert "Estimate: " in out and "Sent: " in out, out
    assert "Delivery summary" in out and "delivered" in out, out
    report = elsewhere / "report.html"
    assert report.exists() and "<html" in report.read_text(encoding="utf-8").lower()
    assert f"Report written to {report}" in out
