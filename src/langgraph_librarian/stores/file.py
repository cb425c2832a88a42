"""JSON files, one per session, written atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.errors import IndexStoreError

__all__ = ["FileIndexStore"]

_SUFFIX = ".librarian-index.json"
_FORMAT_VERSION = 1
_SLUG_UNSAFE = re.compile(r"[^a-z0-9_-]+")


class FileIndexStore:
    """Keeps each session's index in ``<directory>/<name>.librarian-index.json``.

    File names are derived from the session id: a short readable slug plus a hash of
    the full id. Any id (path separators, ``..``, drive letters, reserved Windows
    names, thousands of characters, ids differing only in case) therefore maps to a
    distinct file inside ``directory``. Writes go to a temporary file that is renamed
    over the old one, so a crash never leaves a half-written index. A file that cannot
    be parsed raises :class:`IndexStoreError` rather than pretending to be empty.

    Example:
        >>> store = FileIndexStore("/tmp/indexes")
        >>> store.save("user-123", [])
        >>> store.load("user-123")
        []
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, session_id: str) -> Path:
        """The file that holds ``session_id``'s index."""
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        slug = _SLUG_UNSAFE.sub("_", session_id.lower()).strip("_")[:40] or "session"
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"{slug}-{digest}{_SUFFIX}"

    def load(self, session_id: str) -> list[IndexEntry] | None:
        path = self.path_for(session_id)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise IndexStoreError(f"cannot read index file {path}: {exc}") from exc
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise IndexStoreError(f"corrupt index file {path}: {exc}") from exc
        if not isinstance(data, dict) or "entries" not in data:
            raise IndexStoreError(f"corrupt index file {path}: missing 'entries'")
        if data.get("session_id") != session_id:
            raise IndexStoreError(f"index file {path} belongs to another session")
        try:
            return entries_from_dicts(data["entries"])
        except ValueError as exc:
            raise IndexStoreError(f"corrupt index file {path}: {exc}") from exc

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        path = self.path_for(session_id)
        self.directory.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": _FORMAT_VERSION,
            "session_id": session_id,
            "entries": entries_to_dicts(list(entries)),
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def delete(self, session_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path_for(session_id).unlink()

    def __repr__(self) -> str:
        return f"FileIndexStore({str(self.directory)!r})"
