"""The documented recipes type-check as users write them (the package ships py.typed)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

SNIPPET = """
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph_librarian import FileIndexStore, LibrarianConfig, LibrarianMiddleware


def configs(sqlite: SqliteStore) -> list[LibrarianConfig]:
    # a LangGraph BaseStore is a valid store: the config wraps it
    return [
        LibrarianConfig(store=InMemoryStore()),
        LibrarianConfig(store=sqlite),
        LibrarianConfig(store=FileIndexStore("/tmp/librarian-index")),
        LibrarianConfig(store=None),
    ]


middleware = LibrarianMiddleware(LibrarianConfig(store=InMemoryStore()))
"""


def test_a_langgraph_store_is_a_valid_config_store_for_mypy(tmp_path: Path) -> None:
    path = tmp_path / "user_code.py"
    path.write_text(SNIPPET)
    out, err, status = api.run(
        [str(path), "--strict", "--cache-dir", str(tmp_path / ".mypy_cache"), "--no-error-summary"]
    )
    assert status == 0, out + err
