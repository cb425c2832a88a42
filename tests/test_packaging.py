"""The wheel and the sdist as a user gets them: LICENSE inside, metadata PyPI accepts.

Builds with hatchling's PEP 517 hooks in a subprocess (no build isolation, so no
download) and checks the archives with ``twine check --strict``. Both tools come with
the ``test`` extra.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

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
    return {"wheel": out / wheel_name, "sdist": out / sdist_name}


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
