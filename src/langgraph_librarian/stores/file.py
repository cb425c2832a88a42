"""JSON files, one per session, written atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.errors import IndexStoreError
from langgraph_librarian.stores.base import ThreadIndexMethods, key_deletion, key_name

__all__ = ["FileIndexStore"]

_SUFFIX = ".librarian-index.json"
_TEMP_PREFIX = ".tmp-"
_FORMAT_VERSION = 1
_SLUG_UNSAFE = re.compile(r"[^a-z0-9_-]+")
_STALE_TEMP_SECONDS = 600.0
"""A temporary file this old was left by a writer that crashed; younger ones may be live."""


class FileIndexStore(ThreadIndexMethods):
    """Keeps each session's index in ``<directory>/<name>.librarian-index.json``.

    File names are derived from the session id: a short readable slug plus a hash of
    the full id. Any id (path separators, ``..``, drive letters, reserved Windows
    names, NUL bytes, lone surrogates, thousands of characters, ids differing only in
    case) therefore maps to a distinct file inside ``directory``. Writes go to a
    temporary file that is renamed over the old one, so a crash never leaves a
    half-written index; temporary files left by a crashed writer are removed by later
    saves. A file that cannot be read or parsed, whatever is wrong with it, raises
    :class:`~langgraph_librarian.IndexStoreError` rather than pretending to be empty.

    With ``LibrarianConfig(store=FileIndexStore(...))`` the session id is the thread's
    key (:func:`~langgraph_librarian.stores.base.session_key`): read and drop a thread's
    index with ``load_thread(thread_id)`` / ``delete_thread(thread_id)``.

    Example:
        >>> store = FileIndexStore("/tmp/indexes")
        >>> store.save("user-123", [])
        >>> store.load("user-123")
        []
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._last_sweep = 0.0

    def path_for(self, session_id: str) -> Path:
        """The file that holds ``session_id``'s index."""
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        slug = _SLUG_UNSAFE.sub("_", session_id.lower()).strip("_")[:40] or "session"
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"{slug}-{digest}{_SUFFIX}"

    def load(self, session_id: str) -> list[IndexEntry] | None:
        """The session's index, or ``None`` when it has none.

        Raises:
            IndexStoreError: the file exists but cannot be read or is not a valid index.
        """
        path = self.path_for(session_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except (TimeoutError, ConnectionError):
            # A network file system's hiccup, not a defect of the store: raised as it is,
            # so a turn takes it for the transient failure it is (and goes on).
            raise
        except OSError as exc:
            raise IndexStoreError(
                f"cannot read index file {path} ({key_name(session_id)}): {exc}"
            ) from exc
        data = _parse(raw, path, lambda: self._way_out(session_id))
        if data.get("session_id") != session_id:
            raise IndexStoreError(
                f"index file {path} belongs to another session than {key_name(session_id)}"
            )
        try:
            return entries_from_dicts(data["entries"])
        except (ValueError, TypeError) as exc:
            raise _corrupt(path, exc, lambda: self._way_out(session_id)) from exc

    def _way_out(self, session_id: str) -> str:
        """Who the file belongs to and the call that removes it, for a corrupt file's
        error: the index is derived from the thread's messages, so removing the file lets
        the next turn index the thread again."""
        return (
            f"the index of {key_name(session_id)}, rebuilt from the thread's "
            f"messages once this file is removed: FileIndexStore({str(self.directory)!r})."
            f"{key_deletion(session_id)}"
        )

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        """Replace the session's index (atomically: old file or new file, never half)."""
        path = self.path_for(session_id)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sweep_stale_temps()
        payload = {
            "version": _FORMAT_VERSION,
            "session_id": session_id,
            "entries": entries_to_dicts(list(entries)),
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=_TEMP_PREFIX, suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                # ensure_ascii escapes lone surrogates (hostile ids, odd text) as \\udxxx,
                # which JSON reads back exactly; raw UTF-8 cannot encode them.
                json.dump(payload, handle, ensure_ascii=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def delete(self, session_id: str) -> None:
        """Forget the session's index (no error when there is none)."""
        with contextlib.suppress(FileNotFoundError):
            self.path_for(session_id).unlink()

    def _sweep_stale_temps(self) -> None:
        now = time.time()
        if now - self._last_sweep < _STALE_TEMP_SECONDS:
            return
        self._last_sweep = now
        for leftover in self.directory.glob(f"{_TEMP_PREFIX}*{_SUFFIX}"):
            with contextlib.suppress(OSError):
                if now - leftover.stat().st_mtime > _STALE_TEMP_SECONDS:
                    leftover.unlink()

    def __repr__(self) -> str:
        return f"FileIndexStore({str(self.directory)!r})"


def _corrupt(path: Path, problem: object, way_out: Callable[[], str]) -> IndexStoreError:
    """The error for a file that is not a valid index, with the way out
    (``FileIndexStore._way_out``)."""
    return IndexStoreError(f"corrupt index file {path}: {problem} ({way_out()})")


def _parse(raw: bytes, path: Path, way_out: Callable[[], str]) -> dict[str, Any]:
    """The file's JSON object, or :class:`IndexStoreError` for any defect."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"not UTF-8 ({exc})", way_out) from exc
    except RecursionError:
        raise _corrupt(path, "nested too deeply", way_out) from None
    except ValueError as exc:  # JSONDecodeError
        raise _corrupt(path, exc, way_out) from exc
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise _corrupt(path, "no 'entries' list", way_out)
    version = data.get("version", _FORMAT_VERSION)
    if type(version) is not int or version > _FORMAT_VERSION:
        raise IndexStoreError(
            f"index file {path} has format version {version!r}; "
            f"this release reads version {_FORMAT_VERSION} (upgrade langgraph-librarian)"
        )
    return data
