"""The ``librarian`` command as a new user meets it: errors, help, version, notes, demo."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import metadata

import pytest

from langgraph_librarian import cli
from langgraph_librarian.cli import main

TINY_BENCH = ["bench", "--conversations", "1", "--messages", "20", "--limit", "2", "--quiet"]


@pytest.fixture
def no_run(monkeypatch):
    """Fail the test if a bench or demo starts working: errors must come first."""

    def boom(*args, **kwargs):
        raise AssertionError("the run started before the bad input was reported")

    monkeypatch.setattr("librarian_bench.runner.run_bench", boom)
    monkeypatch.setattr("librarian_bench.tool_bench.run_tool_bench", boom)
    monkeypatch.setattr("langgraph_librarian.demo.run_demo", boom)


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("librarian: error:")]
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["demo", "--messages", "0"], "--messages must be at least 20 (got 0)"),
        (["demo", "--messages", "5"], "--messages must be at least 20"),
        (["bench", "--dataset", "tools", "--tools", "0"], "--tools must be at least 1"),
        (["bench", "--dataset", "tools", "--tools", "-5"], "--tools must be at least 1"),
        (["bench", "--limit", "0"], "--limit must be at least 1 (got 0)"),
        (["bench", "--limit", "-3"], "--limit must be at least 1 (got -3)"),
        (["bench", "--budget", "0"], "--budget: a token budget must be at least 1"),
        (["bench", "--budget", "lots"], "--budget: budget must be tokens"),
        (["bench", "--budget", "0%"], "--budget: a share budget must be in (0, 100]%"),
        (["bench", "--messages", "3"], "--messages must be at least 20"),
        (["bench", "--conversations", "0"], "--conversations must be at least 1"),
        (["bench", "--data", "x.json"], "--data applies to --dataset locomo only"),
        (["bench", "--tools", "50"], "--tools applies to --dataset tools only"),
        (["bench", "--dataset", "locomo"], "--dataset locomo needs --data PATH"),
        (["bench", "--dataset", "tools", "--strategies", "bm25"], "does not apply"),
        (["bench", "--answer-model", "x:y", "--strategies", "bm25"], "--judge-model"),
        (["bench", "--strategies", "librarian-llm"], "librarian-llm needs --model"),
    ],
)
def test_bad_values_give_one_error_line_and_status_2(argv, expected, capsys, no_run):
    assert main(argv) == 2
    assert expected in one_error_line(capsys)


def test_data_pointing_at_a_directory_says_so(tmp_path, capsys, no_run):
    assert main(["bench", "--dataset", "locomo", "--data", str(tmp_path)]) == 2
    line = one_error_line(capsys)
    assert "is a directory" in line and "not found" not in line


def test_data_that_is_not_a_regular_file_says_so(capsys):
    assert main(["bench", "--dataset", "locomo", "--data", "/dev/zero", "--quiet"]) == 2
    line = one_error_line(capsys)
    assert "not a regular file" in line and "not found" not in line


def test_demo_length_is_bounded(capsys):
    assert main(["demo", "--messages", "100000000"]) == 2
    assert "--messages must be at most 100,000" in one_error_line(capsys)


def test_missing_and_malformed_data_files(tmp_path, capsys):
    assert main(["bench", "--dataset", "locomo", "--data", str(tmp_path / "nope.json")]) == 2
    assert "not found" in one_error_line(capsys)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xd0\xff\x00garbage")
    assert main(["bench", "--dataset", "locomo", "--data", str(binary), "--quiet"]) == 2
    assert "not valid JSON" in one_error_line(capsys)


@pytest.mark.parametrize("categories", ["x", "1,,2", "7", "0"])
def test_bad_categories(tmp_path, capsys, categories):
    data = tmp_path / "data.json"
    data.write_text("[]")
    argv = ["bench", "--dataset", "locomo", "--data", str(data), "--categories", categories]
    assert main(argv) == 2
    assert "--categories takes numbers 1-5" in one_error_line(capsys)


def test_out_pointing_at_a_file_fails_before_the_run(tmp_path, capsys, no_run):
    existing = tmp_path / "results.txt"
    existing.write_text("keep me")
    assert main([*TINY_BENCH, "--out", str(existing)]) == 2
    assert "is an existing file" in one_error_line(capsys)
    assert existing.read_text() == "keep me"
    assert main([*TINY_BENCH, "--out", str(existing / "sub")]) == 2
    assert "cannot create the directory" in one_error_line(capsys)


def test_unknown_flag_shows_the_subcommand_usage(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--frobnicate"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: librarian demo ")
    assert err.strip().endswith("librarian: error: unrecognized arguments: --frobnicate")
    with pytest.raises(SystemExit):
        main(["bench", "--limit", "many"])
    err = capsys.readouterr().err
    assert err.startswith("usage: librarian bench ") and "invalid int value" in err


def test_unknown_strategy_lists_the_names(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--strategies", "telepathy"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "librarian: error: argument --strategies: invalid choice: 'telepathy'" in err
    assert "librarian-lexical" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"librarian {metadata.version('langgraph-librarian')}"
    )


def test_help_shows_defaults_and_strategy_names(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for name in ("brute-force", "last-n", "bm25", "vector", "librarian-lexical", "librarian-llm"):
        assert name in text
    for default in ("(default: synthetic)", "(default: auto)", "(default: 120)", "(default: 3)"):
        assert default in text
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 240)" in text and "(default: medium)" in text


def test_console_script_errors_without_traceback(tmp_path):
    """The installed entry point, as a shell user runs it."""
    result = subprocess.run(
        [sys.executable, "-m", "langgraph_librarian.cli", "demo", "--messages", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == "librarian: error: --messages must be at least 20 (got 0)\n"


def test_without_embeddings_bench_says_what_it_dropped(capsys):
    assert main([*TINY_BENCH, "--no-embeddings"]) == 0
    captured = capsys.readouterr()
    assert "--no-embeddings: strategy 'vector' is left out" in captured.err
    assert (
        "--no-embeddings: 'librarian' runs the lexical engine, the same as "
        "'librarian-lexical' (they share one index)" in captured.err
    )
    assert "bench synthetic: 2 of " in captured.err  # the one-line summary of the run
    assert "| vector |" not in captured.out and "| librarian |" in captured.out


def test_missing_matplotlib_is_said_and_the_rest_is_written(tmp_path, capsys, monkeypatch):
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "matplotlib" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails like when missing
    out = tmp_path / "out"
    argv = [*TINY_BENCH, "--no-embeddings", "--strategies", "bm25", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "matplotlib is not installed, so no PNG plot will be written" in err
    assert sorted(p.suffix for p in out.iterdir()) == [".csv", ".json"]


def test_demo_shows_evidence_marks_and_engine(capsys):
    assert main(["demo", "--messages", "40"]) == 0
    out = capsys.readouterr().out
    assert "embeddings: none, lexical only" in out  # tests run lexical-only
    assert "NEEDED" in out
    # Each question shows the passage that matched: a quoted sentence from a message.
    questions = out.split("\nQ: ")[1:]
    assert questions and all('"' in block for block in questions)


def test_demo_json_reports_evidence_per_selected_message(capsys):
    assert main(["demo", "--messages", "40", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["embeddings"] is None
    for row in report["questions"]:
        needed = {r["position"] for r in row["selected"] if r["needed"]}
        needed |= {r["position"] for r in row["missed"]}
        assert sorted(needed) == row["evidence_positions"]
        assert row["needed_present"] == (not row["missed"])
    matched = [r for row in report["questions"] for r in row["selected"] if r["needed"]]
    # The gold message's passage states the gold answer (the fact, not filler).
    first = report["questions"][0]
    gold_passages = [r["passage"] for r in first["selected"] if r["needed"] and r["passage"]]
    assert matched and any(first["answer"].split(" -> ")[-1] in p for p in gold_passages)


def test_parser_is_built_without_running_anything():
    from librarian_bench.cli import build_parser

    assert cli.build_parser().parse_args(["demo"]).messages == 240
    args = build_parser().parse_args(["--dataset", "tools", "--tools", "10", "20"])
    assert args.tools == [10, 20] and args.messages is None


def test_bench_without_the_evaluation_package_says_how_to_install_it(capsys, monkeypatch):
    # The runtime finds `bench` by entry point only: with none registered, it is missing.
    monkeypatch.setattr(cli, "entry_points", lambda **_: ())
    assert main(["bench", "--dataset", "tools"]) == 2
    err = capsys.readouterr().err
    assert "from a checkout, pip install ./bench" in err  # what works today
    assert "pip install -e ./bench" in err


def test_the_runtime_never_imports_the_evaluation():
    code = (
        "import sys\n"
        "import langgraph_librarian, langgraph_librarian.cli, langgraph_librarian.demo\n"
        "from langgraph_librarian.cli import build_parser\n"
        "build_parser().parse_args(['demo'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('librarian_bench')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_demo_is_short_by_default_and_marks_the_superseded_value(capsys):
    assert main(["demo"]) == 0
    short = capsys.readouterr().out
    assert len(short.splitlines()) < 60
    assert "--verbose" in short
    # The booking reference changed: the old one is marked, with the message that replaced it.
    superseded = [line for line in short.splitlines() if "SUPERSEDED" in line and "#" in line]
    assert any("(old value, replaced by #" in line for line in superseded)
    assert "the same #number can show a different passage" in " ".join(short.split())

    assert main(["demo", "--verbose", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for row in report["questions"]:
        for pick in row["selected"]:
            if pick["superseded"]:
                assert not pick["needed"] and pick["replaced_by"]
    assert main(["demo", "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert verbose.count("\nQ: ") == len(report["questions"]) > short.count("\nQ: ")
    assert "more picked" not in verbose  # every pick is listed


def test_bench_out_writes_the_summary_of_strategies_with_different_columns(tmp_path):
    """An LLM-selector strategy reports fallback columns the others lack: the CSV has them
    all (it raised 'dict contains fields not in fieldnames')."""
    import csv

    out = tmp_path / "out"
    argv = [
        *TINY_BENCH,
        "--no-embeddings",
        "--strategies",
        "bm25",
        "librarian-llm",
        "--model",
        "scripted:weak",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    (summary,) = out.glob("*-summary.csv")
    rows = list(csv.DictReader(summary.open()))
    assert {r["strategy"] for r in rows} >= {"bm25", "librarian-llm"}
    assert "fallback_rate" in rows[0]


def test_python_dash_m_runs_the_command():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "langgraph_librarian", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("librarian") or done.stdout.strip()
    failed = subprocess.run(
        [sys.executable, "-m", "langgraph_librarian", "bench", "--no-such-option"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert failed.returncode == 2  # argparse's usage error, passed on as the exit status
