"""Keep the index in any LangGraph ``BaseStore`` (in-memory, SQLite, Postgres...).

Layout: a session's index is cut into chunks of :data:`CHUNK_SIZE` entries and, past
the last full one, of :data:`TAIL_SIZE`; one store item each (``"<session>#<n>"``),
plus a small manifest item (``"<session>#m"``) that lists a token per chunk. A turn
appends a few entries, so a save rewrites the last (small) chunk and the manifest, not
the whole index; a load reads the manifest and only the
chunks whose token differs from what this process last read or wrote. Chunks carry
their token too: a chunk rewritten by another worker between our manifest read and
chunk read is detected and read again. Should a mixed index slip through anyway, it
costs nothing worse than re-indexing: reconciliation matches entries to messages by
id and content hash, never by position.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import random
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from langgraph_librarian._engine.concurrency import off_loop
from langgraph_librarian._engine.text import clean_text
from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.errors import IndexStoreError
from langgraph_librarian.stores.base import ThreadIndexMethods, key_deletion, key_name

__all__ = ["LangGraphIndexStore"]

CHUNK_SIZE = 128
"""Entries per full store item: large, so the manifest (read by every load) stays short."""
TAIL_SIZE = 16
"""Entries per item past the last full chunk. A turn appends a few entries and rewrites
the item they land in: with the tail cut in items of 16 that is at most 16 entries, not
up to 128 (at 100 messages every turn re-serialized and re-wrote all 100: 33 KB, an
upsert of 2.7 ms against 0.35 ms for a few entries). Once the tail reaches 128 entries
it becomes one full chunk. The cut depends on the entry count alone, so every worker
cuts an index the same way."""


def _bounds(count: int) -> list[tuple[int, int]]:
    """(start, end) of each chunk of an index of ``count`` entries."""
    full = count - count % CHUNK_SIZE
    bounds = [(start, start + CHUNK_SIZE) for start in range(0, full, CHUNK_SIZE)]
    bounds += [(start, min(start + TAIL_SIZE, count)) for start in range(full, count, TAIL_SIZE)]
    return bounds


_SAFE_KEY = re.compile(r"[\w.:@/+=-]{1,200}")
_FORMAT = 2
_CACHE_LIMIT = 256

Chunks = list[tuple[str, list[IndexEntry]]]  # (token, entries) per chunk
_READS = 3
"""Reads of a manifest and its chunks before the chunks are taken as they are stored."""
_BEYOND = 8
"""Chunk positions read at once when ``delete`` (or the first save of a process, over a
manifest it cannot read) looks for stored chunks past those the manifest names; the
search ends at a batch that holds none (a gap of fewer positions is stepped over)."""
_MOST_CHUNKS = 1 << 16
"""Where probing for a damaged manifest's chunks stops (about 8 million entries at 128 a
chunk): a backend answering every read of the range (or failing to decode every row)
cannot keep a delete running for ever."""
_UNDECODABLE = (json.JSONDecodeError, UnicodeDecodeError)
"""What a backend raises for a row it cannot decode (orjson's error is a
``json.JSONDecodeError``): the row is there, damaged. Any other ``ValueError`` (an
invalid namespace, a closed connection) is the backend's own and is raised."""
logger = logging.getLogger("langgraph_librarian")

_TOKENS = random.Random()
"""Chunk tokens: 64 random bits from a private generator seeded by ``os.urandom`` (and
again in a forked child, so two workers never share a sequence). Not ``uuid4``: its
``os.urandom`` call releases the GIL, and taking it back while LangGraph's background
thread serializes a checkpoint stalled the save (its preparation at 100 messages on
PostgreSQL: mean 0.1-0.3 ms, p90 0.4-0.9 ms with ``uuid4``; 0.04 / 0.05 ms without)."""


def _reseed_tokens() -> None:
    _TOKENS.seed(os.urandom(32))


_reseed_tokens()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_tokens)


def _new_token() -> str:
    return f"{_TOKENS.getrandbits(64):016x}"


def _storable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entry dicts without what the backends reject in text: NUL (PostgreSQL) and lone
    surrogates (UTF-8, also SQLite). New entries are clean already (the indexer cleans
    summaries and names); this covers a message id or an entry from elsewhere (an older
    state). A value that needed cleaning no longer matches its message on the next load,
    so that message is indexed again, rather than every save failing."""
    for row in rows:
        for field, value in row.items():
            if isinstance(value, str) and ("\x00" in value or not value.isascii()):
                row[field] = clean_text(value)
    return rows


_DEFAULT_NAMESPACE = ("librarian", "index")


def _deletion(session_id: str, namespace: tuple[str, ...]) -> str:
    """The call that deletes the index of ``session_id`` (a thread's top-level index by
    its thread id: ``delete`` of the raw id misses an id holding ``|`` or ``\\``)."""
    where = "" if namespace == _DEFAULT_NAMESPACE else f", namespace={namespace!r}"
    return f"LangGraphIndexStore(store{where}).{key_deletion(session_id)}"


def _rebuild(session_id: str, namespace: tuple[str, ...]) -> str:
    """The way out of a corrupt index, for its error: the index is derived from the
    thread's messages, so deleting it lets the next turn index the thread again."""
    return (
        f" ({_deletion(session_id, namespace)} removes it; the next turn indexes the "
        "thread's messages again)"
    )


@contextmanager
def _undecodable(session_id: str, namespace: tuple[str, ...]) -> Iterator[None]:
    """Report a backend's decoding error (orjson's, json's: ``ValueError``) as
    :class:`IndexStoreError`, the error the stores document for a corrupt index."""
    try:
        yield
    except IndexStoreError:
        raise
    except ValueError as exc:
        raise IndexStoreError(
            f"the index of {key_name(session_id)} under {namespace} cannot be read: "
            f"{type(exc).__name__}: {exc}{_rebuild(session_id, namespace)}"
        ) from exc


_FIX_DATABASE = (
    "check the store's database, which may be damaged (SQLite: PRAGMA integrity_check; "
    "REINDEX rebuilds a damaged index), or restore it"
)


@contextmanager
def _unreadable(session_id: str, namespace: tuple[str, ...], doing: str = "read") -> Iterator[None]:
    """Report a call of the backend that says its data is damaged (:func:`_damaged`: a
    SQLite file "malformed", PostgreSQL's data corrupted) as :class:`IndexStoreError`,
    with what to do, for a load (``doing="read"``), a save (``"save"``) or a delete
    (``"delete"``). Every other error is raised as it is, to the failure policy: a
    transient one (a locked database, a dropped connection) is absorbed by the turn, a
    setting only the user can fix (a missing table, refused credentials) reaches them, a
    decoding error is :func:`_undecodable`'s, ``NotImplementedError`` (a sync-only
    store's async methods) reads in a thread. The policy takes both errors for the same
    kind (a failure, neither transient nor a setting), so wrapping one changes nothing
    of what a turn does with it."""
    try:
        yield
    except Exception as exc:
        if not _damaged(exc):
            raise
        if doing == "delete":  # the delete a way out would name is what failed
            way_out = f"not a passing failure: {_FIX_DATABASE}"
        else:
            way_out = (
                f"not a passing failure: {_FIX_DATABASE}; when only the index is damaged, "
                f"{_deletion(session_id, namespace)} removes it and the next turn indexes "
                "the thread's messages again"
            )
        raise IndexStoreError(
            f"the store failed to {doing} the index of {key_name(session_id)} under "
            f"{namespace}: {type(exc).__name__}: {exc} ({way_out})"
        ) from exc


def _damaged(exc: BaseException) -> bool:
    """Whether the backend says its data is damaged: SQLite's "database disk image is
    malformed" or "file is not a database" (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``),
    PostgreSQL's data or index corrupted (SQLSTATE XX001, XX002). Nothing else is read as
    damage: an error of a backend the failure policy does not know (a Redis or MongoDB
    connection dropping) is not a damaged database, and keeps the policy it had."""
    if isinstance(exc, sqlite3.DatabaseError):
        # ``sqlite_errorcode`` is the extended code: an index found inconsistent by a
        # write is SQLITE_CORRUPT_INDEX (779), whose primary code is SQLITE_CORRUPT.
        code = getattr(exc, "sqlite_errorcode", None)
        return isinstance(code, int) and (code & 0xFF) in (
            sqlite3.SQLITE_CORRUPT,
            sqlite3.SQLITE_NOTADB,
        )
    return getattr(exc, "sqlstate", None) in ("XX001", "XX002")


def _same_entries(kept: list[IndexEntry], part: list[IndexEntry]) -> bool:
    """Whether ``part`` holds the very entries of ``kept`` (this process stored them).

    A list comparison: C compares the pointers first and calls ``__eq__`` only on
    another object, which must then be equal (an equal entry stores the same value). It
    replaced ``all(map(operator.is_, ...))``, a function call per entry: at 50,000
    entries, a millisecond of every save.
    """
    return len(kept) == len(part) and (not kept or kept[0] is part[0]) and kept == part


class LangGraphIndexStore(ThreadIndexMethods):
    """Adapter from :class:`BaseIndexStore` to a LangGraph ``BaseStore``.

    Each session's index lives under ``namespace``, keyed by the session (thread) id,
    so every worker that shares the store shares the index. Saves and loads move only
    the chunks that changed (see the module docstring); indexes written by 0.1
    releases (one item per session) are read and converted on the next save.

    The Librarian keys a thread's index by
    :func:`~langgraph_librarian.stores.base.session_key` (a thread id holding ``|`` or
    ``\\`` is escaped): read and drop a thread's index with ``load_thread(thread_id)`` /
    ``delete_thread(thread_id)``, not ``load``/``delete`` of the raw thread id.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = LangGraphIndexStore(InMemoryStore())
        >>> store.save("thread-1", [])
        >>> store.load("thread-1")
        []
    """

    def __init__(self, store: BaseStore, namespace: tuple[str, ...] = _DEFAULT_NAMESPACE) -> None:
        self.store = store
        self.namespace = tuple(namespace)
        # LangGraph's stores refuse such a namespace at the first read or write (SQLite
        # and PostgreSQL; the in-memory store takes it): say so here, not as a damaged
        # index on the first turn.
        if not self.namespace or any(
            not isinstance(label, str) or not label or "." in label for label in self.namespace
        ):
            raise ValueError(
                f"namespace must be a tuple of non-empty labels without '.', got {namespace!r}"
            )
        self._cache: OrderedDict[str, Chunks] = OrderedDict()
        self._lock = threading.Lock()
        self._repairs: dict[str, dict[str, Any]] = {}
        """Manifests a settled load found to be stale: written right after that load."""
        self._stale: set[str] = set()
        """Sessions whose stored manifest names a chunk that is gone: the next save
        writes its manifest even when no chunk changed."""

    @staticmethod
    def _check(session_id: str) -> str:
        """The item key for a session id.

        Plain ids are used as they are; anything else (NUL bytes, which PostgreSQL text
        cannot hold, control characters, ids too long for a btree key) becomes a hash
        under a ``~`` prefix that a plain id can never have, so keys stay distinct.
        """
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        if _SAFE_KEY.fullmatch(session_id):
            return session_id
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        return f"~sha256:{digest}"

    # -- cache ---------------------------------------------------------------------------

    def _cached(self, key: str) -> Chunks:
        with self._lock:
            return list(self._cache.get(key, []))

    def _remember(self, key: str, chunks: Chunks) -> None:
        with self._lock:
            self._cache[key] = chunks
            self._cache.move_to_end(key)
            while len(self._cache) > _CACHE_LIMIT:
                self._cache.popitem(last=False)

    def _forget(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)

    # -- decoding ------------------------------------------------------------------------

    def _corrupt(self, session_id: str, problem: object) -> IndexStoreError:
        return IndexStoreError(
            f"corrupt index of {key_name(session_id)}: {problem}"
            f"{_rebuild(session_id, self.namespace)}"
        )

    def _newer(self, session_id: str, value: object, *, reading: bool = True) -> None:
        """Refuse a manifest written by a newer release: reading or rewriting it in this
        release's format would drop what that release stores (workers of two releases
        share a store during a rolling upgrade). A format that is not a number is a
        corrupt manifest: an error when ``reading``, else (a save) overwritten."""
        if not isinstance(value, dict) or "format" not in value:
            return
        version = value["format"]
        if type(version) is not int:
            if reading:
                raise self._corrupt(session_id, f"manifest format {version!r} is not a number")
            return
        if version > _FORMAT:
            raise IndexStoreError(
                f"the index of {key_name(session_id)} was written in format {version} by a "
                f"newer langgraph-librarian; this release reads format {_FORMAT} and does "
                "not overwrite it (upgrade langgraph-librarian on every worker)"
            )

    def _tokens(self, session_id: str, manifest: Item) -> list[str]:
        value = manifest.value
        self._newer(session_id, value)
        tokens = value.get("chunks") if isinstance(value, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise self._corrupt(session_id, "manifest without a list of chunk tokens")
        return tokens

    def _chunk(self, session_id: str, item: Item | None, token: str) -> list[IndexEntry] | None:
        """A chunk's entries, or ``None`` when it is missing or holds another token."""
        value = item.value if item is not None else None
        if not isinstance(value, dict) or value.get("token") != token:
            return None
        try:
            return entries_from_dicts(value.get("entries"))
        except (ValueError, TypeError) as exc:
            raise self._corrupt(session_id, exc) from exc

    def _legacy(self, session_id: str, item: Item | None) -> list[IndexEntry] | None:
        if item is None:
            return None
        value = item.value
        try:
            return entries_from_dicts(value.get("entries") if isinstance(value, dict) else value)
        except (ValueError, TypeError) as exc:
            raise self._corrupt(session_id, exc) from exc

    # -- operations ----------------------------------------------------------------------

    def _reads(self, key: str, tokens: list[str]) -> tuple[Chunks, list[int]]:
        """Chunks served from the cache, and the positions that must be read."""
        cached = self._cached(key)
        chunks: Chunks = []
        wanted: list[int] = []
        for n, token in enumerate(tokens):
            if n < len(cached) and cached[n][0] == token:
                chunks.append(cached[n])
            else:
                chunks.append((token, []))
                wanted.append(n)
        return chunks, wanted

    def _finish_load(
        self,
        session_id: str,
        key: str,
        chunks: Chunks,
        wanted: list[int],
        items: list[Any],
        settle: bool = False,
    ) -> list[IndexEntry] | None:
        """The index from the manifest's ``chunks`` and the ``items`` read for them.

        A chunk holding another token than the manifest names was rewritten meanwhile:
        ``None`` (the caller reads again). With ``settle`` (reading again did not help:
        two workers' saves crossed, e.g. one changed an early chunk while the other
        appended, and the manifest names a chunk version that no longer exists) each
        chunk is taken as it is stored, under its own token, and a chunk that is gone
        (another worker shrank the index) as empty; the manifest is then rewritten to
        match the store (right after the load, or by the next save when a chunk is
        gone), so every worker reads the same chunks again. A chunk whose content is not
        an index is still an error. A mixed index costs no more than re-indexing:
        reconciliation matches entries to messages by id and content hash.
        """
        settled: list[int] = []
        for n, item in zip(wanted, items, strict=True):
            token = chunks[n][0]
            entries = self._chunk(session_id, item, token)
            if entries is None:
                if not settle:
                    return None  # rewritten meanwhile: the caller reads again
                value = item.value if item is not None else None
                if item is None:
                    token, entries = "", []
                elif not isinstance(value, dict) or not isinstance(value.get("token"), str):
                    raise self._corrupt(session_id, f"chunk {n} has no token")
                else:
                    token = value["token"]
                    entries = self._chunk(session_id, item, token)
                settled.append(n)
            chunks[n] = (token, entries or [])
        self._remember(key, chunks)
        # Joined in C: a comprehension ran a bytecode loop over every entry, every turn.
        loaded = list(itertools.chain.from_iterable(entries for _, entries in chunks))
        if settled:
            # One line per load, however many chunks; the manifest is rewritten to name
            # what is stored (a worker whose own cache matches the stale manifest would
            # otherwise keep writing it), or, with a chunk gone, by this process's next
            # save (it cannot be named until it is written again).
            logger.warning(
                "index of %s: %d chunk(s) differ from the manifest or are gone; read as stored",
                key_name(session_id),
                len(settled),
            )
            with self._lock:
                if all(token for token, _ in chunks):
                    self._repairs[key] = {
                        "format": _FORMAT,
                        "count": len(loaded),
                        "chunks": [token for token, _ in chunks],
                    }
                else:
                    self._stale.add(key)
        return loaded

    def _repair(self, key: str) -> dict[str, Any] | None:
        """The manifest a settled load found, to write once (``None`` when none)."""
        with self._lock:
            return self._repairs.pop(key, None)

    def _writes(
        self, key: str, entries: list[IndexEntry], first: bool
    ) -> tuple[list[PutOp], Chunks]:
        """The puts that make the stored index ``entries`` (none when it already is)."""
        cached = self._cached(key)
        chunks: Chunks = []
        ops: list[PutOp] = []
        for n, (start, end) in enumerate(_bounds(len(entries))):
            part = entries[start:end]
            if n < len(cached) and _same_entries(cached[n][1], part):
                chunks.append(cached[n])  # the very entries this process last stored
                continue
            token = _new_token()
            value = {"token": token, "entries": _storable(entries_to_dicts(part))}
            ops.append(PutOp(self.namespace, f"{key}#{n}", value, index=False))
            chunks.append((token, part))
        for n in range(len(chunks), len(cached)):  # the index shrank
            ops.append(PutOp(self.namespace, f"{key}#{n}", None))
        with self._lock:
            stale = key in self._stale
            self._stale.discard(key)
        if not ops and not first and not stale and len(chunks) == len(cached) and chunks:
            return [], chunks  # exactly what this process last stored: nothing to write
        manifest = {"format": _FORMAT, "count": len(entries), "chunks": [t for t, _ in chunks]}
        ops.append(PutOp(self.namespace, f"{key}#m", manifest, index=False))
        if first:  # a 0.1 release may have left its one-item index: drop it
            ops.append(PutOp(self.namespace, key, None))
        return ops, chunks

    def _read(self, key: str, wanted: list[int]) -> list[Any]:
        if not wanted:  # every chunk is the one this process last read or wrote
            return []
        return self.store.batch([GetOp(self.namespace, f"{key}#{n}") for n in wanted])

    async def _aread(self, key: str, wanted: list[int]) -> list[Any]:
        if not wanted:
            return []
        return await self.store.abatch([GetOp(self.namespace, f"{key}#{n}") for n in wanted])

    def load(self, session_id: str) -> list[IndexEntry] | None:
        """The session's index, or ``None`` when it has none.

        Raises:
            IndexStoreError: the stored value is not a valid index, the backend cannot
                decode what it stored (a corrupt row), or its read failed for good (a
                damaged database file). A transient failure (a locked database, a dropped
                connection) is raised as it is.
        """
        with _undecodable(session_id, self.namespace), _unreadable(session_id, self.namespace):
            return self._load(session_id)

    def _load(self, session_id: str) -> list[IndexEntry] | None:
        key = self._check(session_id)
        for attempt in range(_READS):
            manifest = self.store.get(self.namespace, f"{key}#m")
            if manifest is None:
                return self._legacy(session_id, self.store.get(self.namespace, key))
            chunks, wanted = self._reads(key, self._tokens(session_id, manifest))
            items = self._read(key, wanted)
            settle = attempt == _READS - 1
            loaded = self._finish_load(session_id, key, chunks, wanted, items, settle)
            if loaded is not None:
                repair = self._repair(key)
                if repair is not None:
                    self.store.put(self.namespace, f"{key}#m", repair, index=False)
                return loaded
        raise AssertionError("unreachable: the last read settles")  # pragma: no cover

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        """Replace the session's index, writing only the chunks that changed.

        A manifest this release cannot read (corrupt) is overwritten, with the chunks
        it may have had; one written by a newer release is refused (``IndexStoreError``).

        Raises:
            IndexStoreError: a manifest of a newer release, or the backend says its data
                is damaged (a malformed SQLite file or index). A transient failure (a
                locked database, a dropped connection) is raised as it is.
        """
        with _unreadable(session_id, self.namespace, "save"):
            self._save(session_id, entries)

    def _save(self, session_id: str, entries: list[IndexEntry]) -> None:
        key = self._check(session_id)
        first = not self._cached(key)
        if first:
            manifest, count = self._manifest(key)
            if manifest is not None:
                self._newer(session_id, manifest.value, reading=False)
            if count is None:  # the manifest cannot say which chunks are stored
                count = self._probe(key, 0)
            self._learn_layout(key, count)
        ops, chunks = self._writes(key, list(entries), first)
        if ops:
            self.store.batch(ops)
        self._remember(key, chunks)

    def _learn_layout(self, key: str, count: int) -> None:
        # Without a cached layout a shrinking index would leave stale chunks behind:
        # learn the stored chunk count first (one small read, once per process).
        if count:
            self._remember(key, [("", []) for _ in range(count)])

    def delete(self, session_id: str) -> None:
        """Forget the session's index (no error when there is none).

        Whatever the manifest holds: the chunks it names, and the chunks stored past
        them (all of them, read in batches until a batch holds none, when the manifest
        cannot be read), are deleted with it.

        Raises:
            IndexStoreError: the backend says its data is damaged (a malformed SQLite
                file or index): the database must be checked or restored. A transient
                failure is raised as it is.
        """
        with _unreadable(session_id, self.namespace, "delete"):
            self._delete(session_id)

    def _delete(self, session_id: str) -> None:
        key = self._check(session_id)
        _, count = self._manifest(key)
        count = self._probe(key, count or 0)
        self.store.batch(self._deletes(key, count))
        self._forget(key)

    @staticmethod
    def _named(manifest: Item | None) -> int | None:
        """The number of chunks ``manifest`` names (0 when there is none), ``None`` when
        it cannot say (not a manifest this release reads: a corrupt row)."""
        if manifest is None:
            return 0
        value = manifest.value
        chunks = value.get("chunks") if isinstance(value, dict) else None
        if not isinstance(chunks, list) or not all(isinstance(t, str) for t in chunks):
            return None
        if isinstance(value, dict) and type(value.get("format", _FORMAT)) is not int:
            return None
        return len(chunks)

    def _manifest(self, key: str) -> tuple[Item | None, int | None]:
        """The stored manifest (``None`` when absent or undecodable) and the number of
        chunks it names (``None`` when it cannot say), for a save or a delete."""
        try:
            manifest = self.store.get(self.namespace, f"{key}#m")
        except _UNDECODABLE:  # the backend cannot decode the row (a corrupt SQLite value)
            return None, None
        return manifest, self._named(manifest)

    async def _amanifest(self, key: str) -> tuple[Item | None, int | None]:
        try:
            manifest = await self.store.aget(self.namespace, f"{key}#m")
        except _UNDECODABLE:
            return None, None
        return manifest, self._named(manifest)

    def _probe(self, key: str, start: int) -> int:
        """How many chunk positions to delete: past ``start`` (the chunks the manifest
        names) those stored are read in batches of :data:`_BEYOND` (a stale manifest of
        fewer chunks may have won over a longer index's; a corrupt one names none) until
        a whole batch is missing. A gap shorter than a batch is stepped over: a chunk
        gone below others (a crossed save, a row deleted by hand) left those past it
        behind when the search stopped at the first missing one. A normal index costs
        one read, as before: the batch past its last chunk holds none."""
        while start < _MOST_CHUNKS:
            ops = self._probes(key, start)
            try:
                present = [item is not None for item in self.store.batch(ops)]
            except _UNDECODABLE:  # an undecodable row is there all the same
                present = [self._present(op) for op in ops]
            found = _through_last(present)
            if not found:
                return start
            start += found
        return start

    async def _aprobe(self, key: str, start: int) -> int:
        while start < _MOST_CHUNKS:
            ops = self._probes(key, start)
            try:
                present = [item is not None for item in await self.store.abatch(ops)]
            except _UNDECODABLE:
                present = [await self._apresent(op) for op in ops]
            found = _through_last(present)
            if not found:
                return start
            start += found
        return start

    def _probes(self, key: str, start: int) -> list[GetOp]:
        return [GetOp(self.namespace, f"{key}#{n}") for n in range(start, start + _BEYOND)]

    def _present(self, op: GetOp) -> bool:
        try:
            return self.store.get(op.namespace, op.key) is not None
        except _UNDECODABLE:
            return True

    async def _apresent(self, op: GetOp) -> bool:
        try:
            return await self.store.aget(op.namespace, op.key) is not None
        except _UNDECODABLE:
            return True

    def _deletes(self, key: str, count: int) -> list[PutOp]:
        """Deletes of chunks ``0..count-1``, of the manifest and of the legacy item."""
        ops = [PutOp(self.namespace, f"{key}#{n}", None) for n in range(count)]
        return [*ops, PutOp(self.namespace, f"{key}#m", None), PutOp(self.namespace, key, None)]

    # A sync-only backend (``SqliteStore``, the store most examples start with) raises
    # NotImplementedError from its async methods, at the first call, before anything
    # is read or written: the async twins then run the sync method in a worker thread,
    # as LangGraph's own sync-over-async fallbacks do.

    async def aload(self, session_id: str) -> list[IndexEntry] | None:
        """Async twin of :meth:`load` (a sync-only store is read in a worker thread)."""
        try:
            with (
                _undecodable(session_id, self.namespace),
                _unreadable(session_id, self.namespace),
            ):
                return await self._aload(session_id)
        except NotImplementedError:
            return await off_loop(self.load, session_id, name="librarian-store")

    async def _aload(self, session_id: str) -> list[IndexEntry] | None:
        key = self._check(session_id)
        for attempt in range(_READS):
            manifest = await self.store.aget(self.namespace, f"{key}#m")
            if manifest is None:
                return self._legacy(session_id, await self.store.aget(self.namespace, key))
            chunks, wanted = self._reads(key, self._tokens(session_id, manifest))
            items = await self._aread(key, wanted)
            settle = attempt == _READS - 1
            loaded = self._finish_load(session_id, key, chunks, wanted, items, settle)
            if loaded is not None:
                repair = self._repair(key)
                if repair is not None:
                    await self.store.aput(self.namespace, f"{key}#m", repair, index=False)
                return loaded
        raise AssertionError("unreachable: the last read settles")  # pragma: no cover

    async def asave(self, session_id: str, entries: list[IndexEntry]) -> None:
        """Async twin of :meth:`save` (a sync-only store is written in a worker thread)."""
        try:
            with _unreadable(session_id, self.namespace, "save"):
                await self._asave(session_id, entries)
        except NotImplementedError:
            await off_loop(self.save, session_id, entries, name="librarian-store")

    async def _asave(self, session_id: str, entries: list[IndexEntry]) -> None:
        key = self._check(session_id)
        first = not self._cached(key)
        if first:
            manifest, count = await self._amanifest(key)
            if manifest is not None:
                self._newer(session_id, manifest.value, reading=False)
            if count is None:
                count = await self._aprobe(key, 0)
            self._learn_layout(key, count)
        ops, chunks = self._writes(key, list(entries), first)
        if ops:
            await self.store.abatch(ops)
        self._remember(key, chunks)

    async def adelete(self, session_id: str) -> None:
        """Async twin of :meth:`delete` (a sync-only store is written in a worker thread)."""
        try:
            with _unreadable(session_id, self.namespace, "delete"):
                await self._adelete(session_id)
        except NotImplementedError:
            await off_loop(self.delete, session_id, name="librarian-store")

    async def _adelete(self, session_id: str) -> None:
        key = self._check(session_id)
        _, count = await self._amanifest(key)
        count = await self._aprobe(key, count or 0)
        await self.store.abatch(self._deletes(key, count))
        self._forget(key)


def _through_last(present: list[bool]) -> int:
    """How many of ``present`` lead up to its last true one (0 when none is)."""
    return next((len(present) - n for n, there in enumerate(reversed(present)) if there), 0)
