"""The README's and docs' Python examples run as written, each one on its own (offline).

Every ```python block runs in a fresh namespace, as a reader pasting it alone would run
it: a block that relies on an import or a name from an earlier block fails here.
``# -> text`` lines must be printed as whole lines, in their order. A block marked
``# doc: no-run`` (it needs a provider package or an API key) is only compiled.
"""

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


def blocks() -> list[pytest.param]:
    params = []
    for path in DOCS:
        for n, block in enumerate(python_blocks(path)):
            params.append(pytest.param(path, n, block, id=f"{path.name}[{n}]"))
    return params


@pytest.mark.embeddings  # as a reader runs them: with the packaged model
@pytest.mark.parametrize(("path", "n", "block"), blocks())
def test_example_runs_alone(path, n, block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = compile(block, f"{path.name}[{n}]", "exec")
    if "# doc: no-run" in block:
        return
    # A real module per block lets typing resolve the annotations of classes it defines.
    module = types.ModuleType(f"doc_{path.stem.replace('-', '_')}_{n}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, module.__dict__)
    printed = [line.rstrip() for line in out.getvalue().splitlines()]
    at = 0
    for expected in re.findall(r"^# -> (.*)$", block, re.M):
        # A whole printed line, in the order of the comments: a substring test let
        # "True" pass on an earlier line's "True 0".
        found = next((i for i in range(at, len(printed)) if printed[i] == expected.rstrip()), None)
        assert found is not None, (
            f"{path.name} block {n}: {expected!r} not printed as a line (after line {at}); "
            f"printed: {printed[at:]}"
        )
        at = found + 1


def test_every_doc_page_has_its_examples_collected():
    assert sum(len(python_blocks(p)) for p in DOCS) >= 10
