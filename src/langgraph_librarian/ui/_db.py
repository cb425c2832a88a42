"""The chat's SQLite file: checked before use, and the list of threads kept beside the checkpoints.

One file holds everything: LangGraph's ``SqliteSaver`` tables (every thread's messages,
index and gist) and a small ``librarian_ui_threads`` table that lists the threads with a
title and the recall scope each one belongs to, so the thread list does not have to read
every checkpoint and a thread reopened under another ``--scope`` keeps its own.

A file that is not a SQLite database, a damaged one, or the database of another
application is refused with :class:`ChatDatabaseError` before anything is written to it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from langgraph_librarian.errors import LibrarianError

__all__ = ["ChatDatabaseError", "ThreadInfo", "ThreadRegistry", "check_database", "connect"]

_THREADS_TABLE = "librarian_ui_threads"
_OWN_TABLES = {"checkpoints", "writes", _THREADS_TABLE}
_TITLE_CHARS = 60


class ChatDatabaseError(LibrarianError, ValueError):
    """The ``--db`` file cannot be used; it was left as it was."""


def check_database(path: Path) -> None:
    """Refuse a path the chat must not write to; create nothing.

    Raises:
        ChatDatabaseError: ``path`` is a directory, its folder is missing, the file is not
            a readable SQLite database (or fails SQLite's quick check), or it belongs to
            another application (tables, none of them ours).
    """
    if path.is_dir():
        raise ChatDatabaseError(f"--db {path} is a directory; give a file path")
    if not path.parent.is_dir():
        raise ChatDatabaseError(f"--db {path}: the folder {path.parent} does not exist")
    if not path.exists() or path.stat().st_size == 0:
        return
    # Read-only: a damaged file must not be "repaired" or given a journal by us.
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            verdict = conn.execute("PRAGMA quick_check").fetchone()
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise ChatDatabaseError(
            f"--db {path} is not a readable SQLite database ({exc}); it was left untouched"
        ) from None
    if not verdict or verdict[0] != "ok":
        raise ChatDatabaseError(
            f"--db {path} is damaged (SQLite quick_check: {verdict[0] if verdict else '?'}); "
            "it was left untouched"
        )
    if tables and not tables & _OWN_TABLES:
        shown = ", ".join(sorted(tables)[:5])
        raise ChatDatabaseError(
            f"--db {path} is another application's database (tables: {shown}); "
            "give a new file or one this chat created"
        )


def connect(path: Path) -> sqlite3.Connection:
    """A connection usable from the server's worker threads (after :func:`check_database`)."""
    # check_same_thread=False: Gradio runs each request in a worker thread; SqliteSaver
    # serializes its own use of the connection with a lock.
    return sqlite3.connect(str(path), check_same_thread=False)


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation in the thread list."""

    thread_id: str
    title: str
    turns: int
    created_at: float
    updated_at: float
    scope: str | None = None
    """The recall scope the thread belongs to (``None``: recall was off so far)."""

    def label(self) -> str:
        """A one-line label: title, turns and the last change."""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.updated_at))
        turns = f"{self.turns} turn{'s' if self.turns != 1 else ''}"
        # Bidi controls from the first message (U+202E "right-to-left override") would
        # run on past the title and show the turns and the date reversed; the other
        # format characters (zero-width ones) show nothing.
        shown = "".join(ch for ch in self.title if unicodedata.category(ch) != "Cf")
        title = " ".join(shown.split()) or "(untitled)"
        return f"{title} · {turns} · {when}"


_COLUMNS = "thread_id, title, turns, created_at, updated_at, scope"


def _first_shown(text: str, limit: int) -> str:
    """The start of ``text`` up to ``limit`` characters that show: format characters
    (zero-width space, BOM, bidi controls...) are kept as typed but not counted, so a
    title of text copied with 60 zero-width characters in front still says something."""
    shown = 0
    for end, ch in enumerate(text):
        if unicodedata.category(ch) != "Cf":
            shown += 1
            if shown > limit:
                return text[:end]
    return text


class ThreadRegistry:
    """The list of threads with a title and recall scope, beside the checkpoints."""

    def __init__(self, path: Path) -> None:
        self._conn = connect(path)
        self._lock = threading.Lock()
        with self._lock, self._conn:
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_THREADS_TABLE} (thread_id TEXT PRIMARY KEY, "
                "title TEXT NOT NULL, turns INTEGER NOT NULL DEFAULT 0, "
                "created_at REAL NOT NULL, updated_at REAL NOT NULL, scope TEXT)"
            )
            columns = {row[1] for row in self._conn.execute(f"PRAGMA table_info({_THREADS_TABLE})")}
            if "scope" not in columns:  # a file from before threads kept their scope
                self._conn.execute(f"ALTER TABLE {_THREADS_TABLE} ADD COLUMN scope TEXT")

    def touch(
        self, thread_id: str, title: str, *, turns: int = 1, scope: str | None = None
    ) -> None:
        """Record activity on ``thread_id``; the first title and the first scope stick."""
        now = time.time()
        title = _first_shown(" ".join(title[: _TITLE_CHARS * 40].split()), _TITLE_CHARS)
        with self._lock, self._conn:
            self._conn.execute(
                f"INSERT INTO {_THREADS_TABLE} ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET turns = turns + excluded.turns, "
                "updated_at = excluded.updated_at, scope = COALESCE(scope, excluded.scope)",
                (thread_id, title, turns, now, now, scope),
            )

    def list(self, limit: int = 200) -> list[ThreadInfo]:
        """The most recently used threads first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_THREADS_TABLE} ORDER BY updated_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [ThreadInfo(*row) for row in rows]

    def get(self, thread_id: str) -> ThreadInfo | None:
        """The thread, if it is listed."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_THREADS_TABLE} WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
        return ThreadInfo(*row) if row else None

    def delete(self, thread_id: str) -> None:
        """Take ``thread_id`` off the list."""
        with self._lock, self._conn:
            self._conn.execute(f"DELETE FROM {_THREADS_TABLE} WHERE thread_id = ?", (thread_id,))

    def close(self) -> None:
        """Close the registry's connection."""
        with self._lock:
            self._conn.close()
