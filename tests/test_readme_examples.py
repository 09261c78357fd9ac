"""Every ```python block of README.md runs verbatim, as a reader would paste it at the checkout's root.

Each block runs on its own (a block must not need an earlier one) in a subprocess with the project's
interpreter, against the shipped data (``data/contacts.csv``, ...). Relative paths resolve as from the
checkout's root: the working folder is a fresh folder holding a symbolic link to every top-level entry of the
checkout, so what a block reads is the repository's, while what it writes (a callback log, a ledger) lands in
``tmp_path``: a run never leaves files in the checkout and never resumes an earlier run's ledger.

The block is written to a file padded with blank lines, so the line numbers of a traceback are README.md's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line of the block's first code line in the file, code) of every ```python block."""
    return [(text.count("\n", 0, match.start(1)) + 1, match.group(1)) for match in _FENCE.finditer(text)]


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_python_examples():
    assert BLOCKS, "README.md has no ```python block: this test would check nothing"


def _checkout_root_view(folder: Path) -> Path:
    folder.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".venv"}:
            (folder / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return folder


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_the_readme_example_runs_verbatim(tmp_path, line, code):
    cwd = _checkout_root_view(tmp_path / "checkout")
    script = tmp_path / f"README.md-line-{line}.py"
    script.write_text("\n" * (line - 1) + code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"the ```python block of README.md at lines {line}-{line + code.count(chr(10)) - 1} failed "
        f"(the traceback's line numbers are README.md's):\n"
        f"{done.stderr[-4000:]}")
