"""The wheel and the sdist as a user gets them: LICENSE inside, metadata PyPI accepts.

The runtime wheel holds no evaluation: that is the bench wheel (``bench/``), built here
too, which carries its datasets as data files.

Builds with hatchling's PEP 517 hooks in a subprocess (no build isolation, so no
download) and checks the archives with ``twine check --strict``. Both tools come with
the ``test`` extra.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LICENSE = (ROOT / "LICENSE").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    script = (
        "import sys, hatchling.build as b\n"
        "print(b.build_wheel(sys.argv[1]))\n"
        "print(b.build_sdist(sys.argv[1]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    wheel_name, sdist_name = result.stdout.split()[-2:]
    bench_script = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    bench = subprocess.run(
        [sys.executable, "-c", bench_script, str(out)],
        cwd=ROOT / "bench",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bench.returncode == 0, bench.stderr
    bench_name = bench.stdout.split()[-1]
    return {"wheel": out / wheel_name, "sdist": out / sdist_name, "bench": out / bench_name}


def _metadata(wheel: zipfile.ZipFile) -> Any:
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel.read(name).decode())


def test_license_is_mit_for_the_contributors():
    assert LICENSE.startswith("MIT License")
    assert "Copyright (c) 2026 langgraph-librarian contributors" in LICENSE


def test_wheel_ships_license_typing_marker_and_console_script(dist):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = wheel.namelist()
        licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(licenses) == 1
        assert wheel.read(licenses[0]).decode() == LICENSE
        assert "langgraph_librarian/py.typed" in names
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "librarian = langgraph_librarian.cli:main" in wheel.read(entry_points).decode()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE"
    # SQLite persistence comes with the base install (SqliteSaver / SqliteStore in the
    # docs' chatbot recipe, and the chat's file); the old [sqlite] extra still resolves.
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("langgraph-checkpoint-sqlite") and "extra" not in r for r in requires)
    assert "sqlite" in (metadata.get_all("Provides-Extra") or [])
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "langgraph-librarian" in metadata.get_payload()  # the README as description
    assert not any(n.startswith(("tests/", "examples/")) for n in names)


def test_sdist_ships_license_docs_and_the_studio_example(dist):
    with tarfile.open(dist["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        top = sdist.getnames()[0].split("/")[0]
        member = sdist.extractfile(f"{top}/LICENSE")
        assert member is not None and member.read().decode() == LICENSE
    for needed in ("README.md", "CHANGELOG.md", "pyproject.toml", "PKG-INFO", "langgraph.json"):
        assert needed in names
    assert "examples/studio/graph.py" in names and "docs/librarian.md" in names
    assert not any(n.startswith(".ci/") for n in names)


def test_twine_accepts_both_archives(dist):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(dist["wheel"]),
            str(dist["sdist"]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_the_runtime_wheel_holds_no_evaluation_code_or_data(dist):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = wheel.namelist()
        metadata = _metadata(wheel)
    assert not [n for n in names if "/evals/" in n or n.startswith("librarian_bench")]
    assert "langgraph_librarian/_apps/demo_conversation.json" in names  # the demo's own data
    version = metadata["Version"]
    bench = [
        r for r in metadata.get_all("Requires-Dist") or [] if "extra == " in r and "bench" in r
    ]
    assert [r.split(";")[0] for r in bench] == [f"langgraph-librarian-bench=={version}"]


def test_the_bench_wheel_carries_its_code_and_data_files(dist):
    data = ROOT / "bench" / "src" / "librarian_bench" / "data"
    files = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    assert "phenomena_text.txt" in files and "tool_phrasings.json" in files
    with zipfile.ZipFile(dist["bench"]) as wheel:
        names = set(wheel.namelist())
        metadata = _metadata(wheel)
    assert {f"librarian_bench/data/{f}" for f in files} <= names
    assert {"librarian_bench/cli.py", "librarian_bench/py.typed"} <= names
    assert not any(n.startswith("langgraph_librarian/") for n in names)
    with zipfile.ZipFile(dist["wheel"]) as runtime:
        version = _metadata(runtime)["Version"]
    assert metadata["Name"] == "langgraph-librarian-bench" and metadata["Version"] == version
    assert f"langgraph-librarian=={version}" in (metadata.get_all("Requires-Dist") or [])


def test_both_wheels_run_bench_and_demo_from_their_own_files(dist, tmp_path):
    """The built files, not the checkout: bench data is read from the installed package."""
    for wheel in (dist["wheel"], dist["bench"]):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "LIBRARIAN_EMBEDDINGS": "none"}
    check = "import librarian_bench, langgraph_librarian; print(librarian_bench.__file__)"
    where = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(tmp_path)), where.stderr
    cli = [sys.executable, "-m", "langgraph_librarian.cli"]
    bench = subprocess.run(
        [*cli, "bench", "--dataset", "tools", "--tools", "60", "--limit", "5", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bench.returncode == 0, bench.stderr
    assert "| 60 |" in bench.stdout
    demo = subprocess.run(
        [*cli, "demo", "--messages", "20", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr
    assert '"questions"' in demo.stdout


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that ``path`` imports (anywhere in the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n == package or n.startswith(package + "."))
    return found


def test_the_runtime_never_imports_the_evaluation_by_name():
    # `librarian bench` finds the evaluation through its entry point, so the runtime has no
    # import of it at all: no circle between the two distributions, even a lazy one.
    src = ROOT / "src" / "langgraph_librarian"
    users = {
        p.relative_to(src).as_posix() for p in src.rglob("*.py") if _imports(p, "librarian_bench")
    }
    assert users == set()
    bench = (ROOT / "bench" / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points."langgraph_librarian.commands"]' in bench
    assert 'bench = "librarian_bench.cli:main"' in bench


def test_the_bench_package_has_no_import_circle():
    src = ROOT / "bench" / "src"
    modules = {
        ".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__"): p
        for p in src.rglob("*.py")
    }
    graph = {
        name: {m for m in _imports(path, "librarian_bench") if m in modules and m != name}
        for name, path in modules.items()
    }
    # A package imports its __init__ implicitly: only edges between modules count here.
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join((*path, name)))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, (*path, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())
