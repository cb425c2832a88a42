"""The README's and docs' Python examples run as written (offline)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_examples_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Blocks build on each other; a real module lets typing resolve annotations.
    module = types.ModuleType(f"doc_{path.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for n, block in enumerate(python_blocks(path)):
        if "# doc: no-run" in block:
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, f"{path.name}[{n}]", "exec"), namespace)
        for expected in re.findall(r"^# -> (.*)$", block, re.M):
            assert expected in out.getvalue(), f"{path.name} block {n}: {expected!r} not printed"
