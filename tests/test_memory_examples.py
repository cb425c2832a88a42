"""The recipe-assistant examples run offline, and remember across a process restart.

Each variant runs Monday in one process and Thursday in another, on the same SQLite
file. The offline chef answers only from its input, so its Thursday answer shows
whether Monday's allergy reached the model, and whether Kim's thread saw Sam's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "recipe_assistant"
VARIANTS = ["summary", "librarian", "both"]


def start(variant: str, day: str, db: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "LIBRARIAN_EMBEDDINGS": "none", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, str(EXAMPLES / f"{variant}.py"), day, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(process: subprocess.Popen[str]) -> dict[str, list[str]]:
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    lines: dict[str, list[str]] = {}
    for line in out.splitlines():
        head, _, text = line.partition(": ")
        lines.setdefault(head, []).append(text)
    return lines


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]]:
    """Monday then Thursday for every variant; the variants run side by side."""
    folder = tmp_path_factory.mktemp("recipes")
    dbs = {v: folder / f"{v}.db" for v in VARIANTS}
    monday = {v: finish(p) for v, p in {v: start(v, "monday", dbs[v]) for v in VARIANTS}.items()}
    thursday = {
        v: finish(p) for v, p in {v: start(v, "thursday", dbs[v]) for v in VARIANTS}.items()
    }
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
    db = tmp_path / "say.db"
    args = [sys.executable, str(EXAMPLES / "summary.py"), "say", "I'm allergic to nuts."]
    env = {**os.environ, "LIBRARIAN_EMBEDDINGS": "none"}
    run = subprocess.run(
        [*args, "--db", str(db), "--thread", "ana"],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=True,
    )
    assert "[ana] aria: Noted! (What I know about your diet: allergic to nuts.)" in run.stdout
