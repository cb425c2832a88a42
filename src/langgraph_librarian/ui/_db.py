"""The chat's SQLite file: checked before use, and the list of threads kept beside the checkpoints.

One file holds everything: LangGraph's ``SqliteSaver`` tables (every thread's messages,
index and gist) and a small ``librarian_ui_threads`` table that lists the threads with a
title and the recall scope each one belongs to, so the thread list does not have to read
every checkpoint and a thread reopened under another ``--scope`` keeps its own.

A file that is not a SQLite database, a damaged one, or the database of another
application is refused with :class:`ChatDatabaseError` before anything is written to it.

Several processes may use one file (two ``librarian ui`` servers, or the web chat and
``librarian chat``): SQLite keeps the file whole, and :class:`ThreadLocks` makes turns on
one thread take turns across processes too (two turns answered at once each saved a
copy of the thread with only its own turn: one of them was lost), and the tables'
creation run once at a time (two servers started together crashed on it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ClassVar

from langgraph_librarian.errors import LibrarianError

try:  # POSIX record locks; elsewhere (Windows) the locks hold within one process only
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ChatDatabaseError",
    "ThreadInfo",
    "ThreadLock",
    "ThreadLocks",
    "ThreadRegistry",
    "check_database",
    "connect",
]

_THREADS_TABLE = "librarian_ui_threads"
_DELETED_TABLE = "librarian_ui_deleted"
_OWN_TABLES = {"checkpoints", "writes", _THREADS_TABLE, _DELETED_TABLE}
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
            # The ids of deleted threads: a tab (or a process) still showing one must not
            # bring it back, with only its next message, by sending to it.
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_DELETED_TABLE} (thread_id TEXT PRIMARY KEY, "
                "deleted_at REAL NOT NULL)"
            )

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
        """Take ``thread_id`` off the list for good (:meth:`deleted` says so from then on)."""
        with self._lock, self._conn:
            self._conn.execute(f"DELETE FROM {_THREADS_TABLE} WHERE thread_id = ?", (thread_id,))
            self._conn.execute(
                f"INSERT OR REPLACE INTO {_DELETED_TABLE} (thread_id, deleted_at) VALUES (?, ?)",
                (thread_id, time.time()),
            )

    def deleted(self, thread_id: str) -> bool:
        """Whether ``thread_id`` was deleted (its id is not used again)."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT 1 FROM {_DELETED_TABLE} WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return row is not None

    def close(self) -> None:
        """Close the registry's connection."""
        with self._lock:
            self._conn.close()


_POLL = 0.05
"""How often a turn waiting for another process's turn looks again (seconds)."""
_SETUP_SLOT = 0
"""The byte of the lock file held while a process creates the file's tables."""


def _slot(thread_id: str) -> int:
    """The byte of the lock file that stands for ``thread_id`` (never the setup's)."""
    digest = hashlib.blake2b(thread_id.encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return 1 + int.from_bytes(digest, "big") % (2**31 - 2)


class ThreadLock:
    """One thread's lock: within the process (a ``threading.Lock``) and, on POSIX, across
    processes on the same file (a record lock on one byte of ``<db>.lock``).

    Used like a ``threading.Lock``: ``acquire(blocking=True, timeout=-1)``, ``release()``,
    ``locked()`` (here: a turn runs on the thread in this process or another) and ``with``.
    """

    def __init__(self, owner: ThreadLocks, thread_id: str) -> None:
        self._owner = owner
        self._slot = _slot(thread_id)
        self._local = threading.Lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock (wait up to ``timeout`` seconds, for ever if negative)."""
        deadline = None if timeout < 0 else time.monotonic() + timeout
        if not (self._local.acquire(blocking, timeout) if blocking else self._local.acquire(False)):
            return False
        while not self._owner._try_file(self._slot):
            if not blocking or (deadline is not None and time.monotonic() >= deadline):
                self._local.release()
                return False
            time.sleep(_POLL)
        return True

    def release(self) -> None:
        """Give the lock back."""
        self._owner._unlock_file(self._slot)
        self._local.release()

    def locked(self) -> bool:
        """Whether a turn holds the lock, in this process or another one on the file."""
        if not self.acquire(blocking=False):
            return True
        self.release()
        return False

    def __enter__(self) -> ThreadLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class ThreadLocks:
    """The per-thread locks of one chat file, shared by every service on it in this process
    (POSIX record locks belong to the process: two services with a lock file each would
    not exclude each other, and closing one file would drop the other's locks)."""

    _open: ClassVar[dict[str, ThreadLocks]] = {}
    _open_guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, key: str, lock_path: Path) -> None:
        self._key = key
        self._users = 0
        self._guard = threading.Lock()
        self._setup_guard = threading.Lock()
        self._locks: dict[str, ThreadLock] = {}
        self._file: IO[bytes] | None = None
        if fcntl is not None:
            self._file = lock_path.open("a+b")

    @classmethod
    def for_path(cls, path: Path) -> ThreadLocks:
        """The locks of the chat file ``path`` (its lock file is ``<path>.lock``); give
        them back with :meth:`close`.

        Raises:
            OSError: the lock file cannot be created beside the database.
        """
        key = os.path.normcase(str(path.resolve()))
        with cls._open_guard:
            locks = cls._open.get(key)
            if locks is None:
                locks = cls(key, path.with_name(path.name + ".lock"))
                cls._open[key] = locks
            locks._users += 1
            return locks

    def get(self, thread_id: str) -> ThreadLock:
        """The lock of ``thread_id``."""
        with self._guard:
            lock = self._locks.get(thread_id)
            if lock is None:
                lock = self._locks[thread_id] = ThreadLock(self, thread_id)
            return lock

    @contextlib.contextmanager
    def setting_up(self) -> Iterator[None]:
        """Held while the file's tables are created: one process at a time (LangGraph's
        stores run their migrations unguarded: two at once crashed with "duplicate
        column name")."""
        with self._setup_guard:  # one service of this process at a time, too
            if self._file is not None:
                fcntl.lockf(self._file, fcntl.LOCK_EX, 1, _SETUP_SLOT)
            try:
                yield
            finally:
                if self._file is not None:
                    fcntl.lockf(self._file, fcntl.LOCK_UN, 1, _SETUP_SLOT)

    def _try_file(self, slot: int) -> bool:
        if self._file is None:
            return True
        try:
            fcntl.lockf(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
        except OSError:  # another process holds it (EACCES or EAGAIN)
            return False
        return True

    def _unlock_file(self, slot: int) -> None:
        if self._file is not None:
            fcntl.lockf(self._file, fcntl.LOCK_UN, 1, slot)

    def close(self) -> None:
        """Give the locks back; the last service on the file closes the lock file."""
        with self._open_guard:
            self._users -= 1
            if self._users > 0:
                return
            self._open.pop(self._key, None)
        if self._file is not None:
            self._file.close()
