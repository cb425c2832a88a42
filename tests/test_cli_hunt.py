"""The ``librarian`` command's rough edges: what a new user hits by mistake."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_librarian.cli import main
from test_cli import one_error_line

SRC = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(SRC / "src"), str(SRC / "bench" / "src")]),
}


@pytest.fixture
def no_run(monkeypatch):
    """Fail the test if a bench or demo starts working: errors must come first."""

    def boom(*args, **kwargs):
        raise AssertionError("the run started before the bad input was reported")

    monkeypatch.setattr("librarian_bench.runner.run_bench", boom)
    monkeypatch.setattr("librarian_bench.tool_bench.run_tool_bench", boom)
    monkeypatch.setattr("langgraph_librarian.demo.run_demo", boom)
    monkeypatch.setattr("librarian_bench.datasets.synthetic.generate_dataset", boom)


def _locomo(category: object) -> list[dict]:
    turn = {"speaker": "Ann", "dia_id": "D1:1", "text": "The budget is 12,000 dollars."}
    qa = {"question": "What is the budget?", "answer": "12,000", "evidence": ["D1:1"]}
    return [
        {
            "sample_id": "c0",
            "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": [turn]},
            "qa": [{**qa, "category": category}],
        }
    ]


@pytest.mark.parametrize("category", ["multi-hop", [1], {"n": 1}, float("inf")])
def test_locomo_category_that_is_not_a_number_is_a_format_error(tmp_path, capsys, category):
    data = tmp_path / "data.json"
    data.write_text(json.dumps(_locomo(category)))
    argv = ["bench", "--dataset", "locomo", "--data", str(data), "--quiet"]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert "not LoCoMo-shaped" in line and "category" in line


def test_answer_and_judge_model_errors_name_their_option(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["bench", "--conversations", "1", "--messages", "20", "--limit", "1", "--quiet"]
    assert main([*argv, "--answer-model", "nope:x", "--judge-model", "nope:x"]) == 2
    assert "--answer-model" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "--messages", "10000000"], "--messages must be at most 100,000"),
        (["bench", "--conversations", "1000000"], "--conversations must be at most 1,000"),
        (
            ["bench", "--dataset", "tools", "--tools", "500", "100000000"],
            "--tools must be at most 100,000",
        ),
        (
            ["bench", "--dataset", "tools", "--limit", "100000000"],
            "--limit must be at most 100,000",
        ),
    ],
)
def test_sizes_that_would_run_for_hours_are_refused(argv, expected, capsys, no_run):
    assert main([*argv, "--quiet"]) == 2
    assert expected in one_error_line(capsys)


def _librarian(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    code = "import sys; from langgraph_librarian.cli import main; sys.exit(main())"
    return subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or ENV,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--messages", "20"],
        ["bench", "--dataset", "tools", "--tools", "50", "--limit", "5", "--quiet", "--json"],
    ],
)
def test_output_piped_into_a_closed_pipe_ends_quietly(argv):
    proc = _librarian(*argv)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away, as `librarian demo | head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) != 0
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.parametrize("argv", [["demo"], ["bench", "--limit", "1", "--quiet"]])
def test_ctrl_c_says_so_and_exits_130(argv, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("langgraph_librarian.demo.run_demo", interrupted)
    monkeypatch.setattr("librarian_bench.runner.run_bench", interrupted)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "librarian: interrupted" and "Traceback" not in err


def test_demo_on_an_ascii_terminal(capsys, monkeypatch):
    """Summaries hold characters (an ellipsis) that an ASCII terminal cannot show."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["demo", "--messages", "20", "--verbose"]) == 0
    out.flush()
    text = out.buffer.getvalue().decode("ascii")  # type: ignore[attr-defined]
    assert "needed messages present" in text


@pytest.mark.parametrize(
    ("argv", "blocked"),
    [
        (["--conversations", "1", "--messages", "20", "--limit", "1"], "synthetic-outcomes.json"),
        (["--dataset", "tools", "--tools", "50", "--limit", "3"], "tools-summary.json"),
    ],
)
def test_a_result_file_that_cannot_be_written_is_one_error_line(tmp_path, capsys, argv, blocked):
    (tmp_path / blocked).mkdir()  # a directory where the result file goes
    assert main(["bench", *argv, "--quiet", "--out", str(tmp_path)]) == 2
    line = one_error_line(capsys)
    assert "cannot write" in line and blocked in line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--dataset", "tools", "--budget", "2000"], "--budget does not apply to --dataset tools"),
        (["--dataset", "tools", "--budget", "lots"], "--budget does not apply to --dataset tools"),
        (["--dataset", "tools", "--phrasings", "--limit", "3"], "--limit does not apply"),
    ],
)
def test_tool_options_that_would_be_ignored_are_refused(
    argv, expected, capsys, no_run, monkeypatch
):
    monkeypatch.setattr("librarian_bench.tool_bench.run_phrasing_bench", no_run_phrasings)
    assert main(["bench", *argv, "--quiet"]) == 2
    assert expected in one_error_line(capsys)


def no_run_phrasings(*args, **kwargs):
    raise AssertionError("the phrasing benchmark ran with an option it ignores")


@pytest.mark.parametrize(
    ("typed", "setting"),
    [
        ("The budget is 12,000 dollars\u2026\n".encode(), {"PYTHONIOENCODING": "ascii"}),
        # UTF-8 mode (or a C.UTF-8 locale) reads bad bytes as lone surrogates
        (b"\xff\xfe not UTF-8\n", {"PYTHONUTF8": "1"}),
    ],
)
def test_chat_input_the_terminal_cannot_decode(tmp_path, typed, setting):
    env = {**ENV, **setting, "XDG_DATA_HOME": str(tmp_path)}
    proc = _librarian("chat", "--db", str(tmp_path / "chat.db"), env=env)
    _out, err = proc.communicate(typed + b"What is the budget?\n", timeout=120)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err


@pytest.mark.parametrize("argv", [["demo"], ["bench", "--limit", "1"], ["chat"], ["ui"]])
def test_unknown_embedding_model_in_the_environment(argv, capsys, monkeypatch, no_run, tmp_path):
    monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "bogus")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("langgraph_librarian.ui._terminal.run_terminal_chat", no_chat)
    assert main([*argv, "--quiet"] if argv[0] == "bench" else argv) == 2
    line = one_error_line(capsys)
    assert "LIBRARIAN_EMBEDDINGS=bogus" in line and "unknown embedding model" in line


def no_chat(*args, **kwargs):
    raise AssertionError("the chat started with embeddings it cannot load")


def test_locomo_samples_with_the_same_id_are_a_format_error(tmp_path, capsys):
    """Their message ids collide: the Librarian then scored half of the copies as missed."""
    data = tmp_path / "twice.json"
    data.write_text(json.dumps(_locomo(1) * 2))
    assert main(["bench", "--dataset", "locomo", "--data", str(data), "--quiet"]) == 2
    line = one_error_line(capsys)
    assert "same sample_id 'c0'" in line


def test_an_empty_out_is_refused_not_ignored(capsys, no_run):
    assert main(["bench", "--limit", "1", "--quiet", "--out", ""]) == 2
    assert "--out needs a directory" in one_error_line(capsys)


def test_locomo_file_nested_too_deep_for_the_json_parser(tmp_path, capsys):
    data = tmp_path / "deep.json"
    data.write_text("[" * 200_000 + "]" * 200_000)
    assert main(["bench", "--dataset", "locomo", "--data", str(data), "--quiet"]) == 2
    assert "not valid JSON" in one_error_line(capsys)


def test_phrasings_with_tools_is_refused_before_the_embeddings_load(capsys, monkeypatch):
    def no_load(disabled):
        raise AssertionError("the embeddings were loaded before the bad options were seen")

    monkeypatch.setattr("librarian_bench.cli._embeddings", no_load)
    assert main(["bench", "--dataset", "tools", "--phrasings", "--tools", "50"]) == 2
    assert "two different tool benchmarks" in one_error_line(capsys)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_to_a_full_disk_is_one_error_line():
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from langgraph_librarian.cli import main; sys.exit(main())",
                "demo",
                "--messages",
                "20",
            ],
            stdout=full,
            stderr=subprocess.PIPE,
            env=ENV,
            timeout=120,
        )
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert "librarian: error: cannot write the output (No space left on device)" in err


_INTERRUPTED_IMPORT = """
import importlib.abc, sys, tomllib

class CtrlC(importlib.abc.MetaPathFinder):
    # Ctrl-C while Python imports the library's dependencies (the command's first second)
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("langchain_core", "langgraph", "langchain"):
            raise KeyboardInterrupt
        return None

with open(sys.argv.pop(1), "rb") as f:
    target = tomllib.load(f)["project"]["scripts"]["librarian"]
module, _, function = target.partition(":")
sys.meta_path.insert(0, CtrlC())
# What the installed console script does:
main = getattr(__import__(module, fromlist=[function]), function)
sys.exit(main())
"""


@pytest.mark.parametrize("argv", [["demo"], ["chat", "--help"], ["--version"]])
def test_ctrl_c_while_the_command_imports_the_library_exits_130_quietly(argv):
    """The console script imported the package (langchain, langgraph: a second or more)
    before the command's own Ctrl-C handling ran: Ctrl-C then printed a traceback."""
    result = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT, str(SRC / "pyproject.toml"), *argv],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (130, "\nlibrarian: interrupted\n")
