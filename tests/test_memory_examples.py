"""The recipe-assistant examples run offline, and remember across a process restart.

Monday runs for every variant in one child process; Thursday runs here, in the test
process, on the same SQLite files: each variant crosses one real restart (a new
process, a new connection), without paying a Python start-up per day and variant.
The offline chef answers only from its input, so its Thursday answer shows whether
Monday's allergy reached the model, and whether Kim's thread saw Sam's.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "recipe_assistant"
VARIANTS = ["summary", "librarian", "both"]
OFFLINE = {"LIBRARIAN_EMBEDDINGS": "none", "PYTHONUNBUFFERED": "1"}

# Runs each example's Monday in turn, like `python <variant>.py monday --db <file>`.
MONDAY = """
import runpy, sys
folder, *pairs = sys.argv[1:]
sys.path.insert(0, folder)
for variant, db in zip(pairs[::2], pairs[1::2]):
    print(f"=== {variant}", flush=True)
    sys.argv = [f"{variant}.py", "monday", "--db", db]
    runpy.run_path(f"{folder}/{variant}.py", run_name="__main__")
"""

Transcript = dict[str, list[str]]


def parse(out: str) -> Transcript:
    lines: Transcript = {}
    for line in out.splitlines():
        head, _, text = line.partition(": ")
        lines.setdefault(head, []).append(text)
    return lines


def mondays(dbs: dict[str, Path]) -> dict[str, Transcript]:
    pairs = [str(x) for v in VARIANTS for x in (v, dbs[v])]
    run = subprocess.run(
        [sys.executable, "-c", MONDAY, str(EXAMPLES), *pairs],
        capture_output=True,
        text=True,
        env={**os.environ, **OFFLINE},
        timeout=240,
    )
    assert run.returncode == 0, run.stderr
    sections = run.stdout.split("=== ")[1:]
    return {s.split("\n", 1)[0]: parse(s.split("\n", 1)[1]) for s in sections}


@contextlib.contextmanager
def example_process(variant: str, *args: str) -> Iterator[io.StringIO]:
    """Run an example here as if started with ``python <variant>.py <args>``."""
    out = io.StringIO()
    with (
        mock.patch.dict(os.environ, OFFLINE),
        mock.patch.object(sys, "argv", [f"{variant}.py", *args]),
        mock.patch.object(sys, "path", [str(EXAMPLES), *sys.path]),
        contextlib.redirect_stdout(out),
    ):
        try:
            runpy.run_path(str(EXAMPLES / f"{variant}.py"), run_name="__main__")
            yield out
        finally:
            sys.modules.pop("shared", None)  # the examples' helper module


def here(variant: str, *args: str) -> Transcript:
    with example_process(variant, *args) as out:
        pass
    return parse(out.getvalue())


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> dict[str, tuple[Transcript, Transcript]]:
    """Monday (child process) then Thursday (this process) for every variant."""
    folder = tmp_path_factory.mktemp("recipes")
    dbs = {v: folder / f"{v}.db" for v in VARIANTS}
    monday = mondays(dbs)
    thursday = {v: here(v, "thursday", "--db", str(dbs[v])) for v in VARIANTS}
    return {v: (monday[v], thursday[v]) for v in VARIANTS}


@pytest.mark.parametrize("variant", VARIANTS)
def test_thursday_in_a_new_process_still_knows_mondays_allergy(week, variant):
    monday, thursday = week[variant]
    assert len(monday["[sam] aria"]) == 7 and len(monday["[kim] aria"]) == 2
    (sam,) = thursday["[sam] aria"]
    assert sam.startswith("Better not: you told me you're allergic to nuts")


@pytest.mark.parametrize("variant", VARIANTS)
def test_threads_never_see_each_other(week, variant):
    _, thursday = week[variant]
    (kim,) = thursday["[kim] aria"]
    assert kim == "Happy to help! (What I know about your diet: nothing special.)"


def test_running_summary_keeps_the_checkpoint_small(week):
    monday, thursday = week["summary"]
    kept = [int(m.split()[0]) for m in monday["[sam] memory"] + thursday["[sam] memory"]]
    assert max(kept) <= 6 and kept[3] == 2  # the 4th turn crossed the threshold
    assert "allergic to nuts" in thursday["[sam] memory"][0]


def test_both_keeps_a_summary_and_a_bounded_history(week):
    _, thursday = week["both"]
    last = thursday["[sam] memory"][0]
    kept = int(last.split()[0])
    assert kept <= 10 and "summary 0 chars" not in last


def test_say_sends_one_message_to_a_thread(tmp_path):
    said = here(
        "summary",
        "say",
        "I'm allergic to nuts.",
        "--db",
        str(tmp_path / "say.db"),
        "--thread",
        "ana",
    )
    assert said["[ana] aria"] == ["Noted! (What I know about your diet: allergic to nuts.)"]
