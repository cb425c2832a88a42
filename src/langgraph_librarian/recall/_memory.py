"""Scope memory in a LangGraph ``BaseStore``: write, read, forget, recall (sync and async)."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from langgraph_librarian._engine.concurrency import off_loop
from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._kit.bounded import IN_FLIGHT
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian.config import (
    ConfigLike,
    LibrarianConfig,
    as_config,
)
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.errors import LibrarianError
from langgraph_librarian.index.pipeline import aupdate_index, update_index
from langgraph_librarian.recall import _select
from langgraph_librarian.recall._capture import (
    CapturePlan,
    capture_records,
    known_entries,
    plan_capture,
    reconcile,
)
from langgraph_librarian.recall._records import (
    MemoryRecord,
    clean_text,
    joined_key,
    legacy_ambiguous,
    now_iso,
    record_from_value,
    stable_key,
    time_order,
)
from langgraph_librarian.recall._render import render_evidence
from langgraph_librarian.recall._result import RecallResult
from langgraph_librarian.recall._scope import (
    DEFAULT_MAX_BYTES,
    MAX_QUERY_CHARS,
    RecallConfigError,
    check_max_bytes,
    check_thread_id,
    scope_key,
)
from langgraph_librarian.recall._store import (
    DELETE_PAGE,
    SEARCH_PAGE,
    abatch,
    batch,
    check_namespace,
    get_op,
    items_in,
    newest,
    orders_newest_first,
    put_op,
    search_op,
    updated,
)
from langgraph_librarian.stores.base import (
    BaseIndexStore,
    adelete_index,
    thread_id_text,
    thread_keys,
)
from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore

__all__ = ["MAX_REMEMBER_CHARS", "ScopeMemory", "check_memory"]

logger = logging.getLogger("langgraph_librarian.recall")

MAX_REMEMBER_CHARS = 4_000
"""Longest text one explicit ``remember`` accepts."""
_MEMORY, _THREADS = "memory", "threads"
_SCOPES_PAGE = 500
"""Scopes listed per store call when a thread's scopes are looked for."""


DEFAULT_TIMEOUT = 15.0
"""Seconds a turn waits for scope memory (the store and the selector) before it goes on
without recall (``unavailable``), and for capture before it gives up."""


def _without(
    records: list[MemoryRecord],
    message_ids: Collection[str],
    content_hashes: Collection[str] = (),
    thread_id: str | None = None,
) -> list[MemoryRecord]:
    """``records`` less the copies of the given messages and the given thread's records."""
    if not message_ids and not content_hashes and thread_id is None:
        return records
    # Records read back with their exact ids (see _records.needs_exact): compared as
    # they are, "a\x00b" and its look-alike "a\ufffdb" are two threads, not one.
    ids, hashes = set(message_ids), set(content_hashes)
    return [
        r
        for r in records
        if not (
            (r.message_id is not None and r.message_id in ids)
            or (r.content_hash and r.content_hash in hashes)
            or (thread_id is not None and r.thread_id == thread_id)
        )
    ]


def _owned(record: MemoryRecord, item: Any, thread_id: str | None) -> bool:
    """Whether ``record`` (read from ``item``) was captured from ``thread_id``.

    A record written before exact ids were kept holds its thread id cleaned: "a\\ufffdb"
    is thread "a\\ufffdb"'s or thread "a\\x00b"'s. Its key tells which (the hash of the
    exact thread id and the message's identity); a record whose key cannot be checked
    (a message without id, or whose id was cleaned too) goes, as it did, to both.
    """
    if not legacy_ambiguous(item.value):
        return record.thread_id == thread_id
    if thread_id is None or clean_text(thread_id) != record.thread_id:
        return False
    message_id = record.message_id
    if message_id is None or "\ufffd" in message_id:
        return True
    identity = f"id:{message_id}"  # (keyed before or after stable_key's change)
    return record.key in (
        stable_key("turn", thread_id, identity),
        joined_key("turn", thread_id, identity),
    )


_UNORDERED_PAGE = 50_000
"""Records per search on a store whose search has no order (read whole)."""

_THREAD_PAGE = 50_000
"""Records per search when one thread's records are read (:meth:`ScopeMemory.thread_records`).
LangGraph's SQL stores order a search by ``updated_at`` alone, and the records of one
capture share it (one transaction in PostgreSQL, one second in SQLite): two LIMIT/OFFSET
pages over such ties are not two halves of one order (a record comes twice, another not
at all), so a thread is read in one search. Past this many, pages again, and deleting
goes on until a read finds nothing (:meth:`ScopeMemory._forget_in`).

A store may answer fewer than asked although it holds more (a search capped at 100 or
1,000 records): a page whose size is a whole multiple of :data:`_CAP_STEP` is taken for
such a cap, and the next page asked for (one search more, empty when the thread had
exactly that many)."""

_CAP_STEP = 100

_DELETE_ROUNDS = 3
"""Times a record of the thread may be found again after it was deleted (a capture of
the thread running meanwhile writes it anew) before deleting stops and says so."""


class _ScopeSweep:
    """Deleting one scope's items: searches of the scope's prefix and deletes of what
    they return of the scope, until a search that reads to the end finds none.

    A prefix search may return items that are not the scope's, which stay: another
    memory's, rooted below the scope (``namespace=(..., "team")`` beside scope
    ``"team"``), and on LangGraph's SQL stores before langgraph PR 8478, whose prefix
    search was ``LIKE '<labels>%'``, other scopes (scope "user" found "user2"; "USER"
    and "u_er" found "user"). Deleting whatever the search returned deleted them too.
    Every search starts at the first item (pages at an offset are not two halves of
    one order where ``updated_at`` ties, see ``_THREAD_PAGE``) and reads past the items
    passed over so far: twice as many more, so a scope among many others' items is
    read in a few searches.
    """

    def __init__(self, prefix: tuple[str, ...]) -> None:
        self.label = prefix[-1]
        self.prefix = prefix
        self.own = {(*prefix, _MEMORY), (*prefix, _THREADS)}
        self.seen: set[tuple[tuple[str, ...], str]] = set()
        """The scope's items deleted."""
        self.passed: set[tuple[tuple[str, ...], str]] = set()
        """Items found that are not the scope's."""
        self.done = False

    def next_search(self) -> SearchOp | None:
        """The next search, or ``None`` when the scope is gone."""
        if self.done:
            return None
        return search_op(self.prefix, DELETE_PAGE + 2 * len(self.passed))

    def deletes(self, result: Any, limit: int) -> list[PutOp]:
        """Deletes of the scope's items in ``result`` (a search for ``limit`` items)."""
        before = len(self.passed)
        ops = []
        for item in result or []:
            namespace = tuple(item.namespace)
            ident = (namespace, str(item.key))
            if namespace not in self.own:
                self.passed.add(ident)
                continue
            if ident in self.seen:  # a store that ignores deletes must not loop forever
                raise LibrarianError(f"store did not delete {item.key!r}; stopping")
            self.seen.add(ident)
            ops.append(put_op(namespace, item.key, None))
        # Done when a search read to the end and found none of the scope's, or brought
        # nothing new (a store that ignores the limit must not loop forever).
        self.done = not ops and (len(result or []) < limit or len(self.passed) == before)
        return ops


class ScopeMemory:
    """A tenant's or project's long-term memory, kept in a LangGraph ``BaseStore``.

    Records live under ``(*namespace, scope_key(scope_id), "memory")``: explicit memories
    (:meth:`remember`) and, when capture is on, the messages of completed turns of
    every thread in the scope with their index summaries. Recall selects from them
    with the Librarian's selector and renders a bounded, fenced block of evidence.

    Args:
        store: Any ``BaseStore``: ``InMemoryStore``, ``SqliteStore``, ``PostgresStore``
            (and their async variants). Sync-only stores also work from async code.
        config: Summaries at write time and the selector at recall time
            (``None``: the offline engine).
        namespace: Root namespace of all scopes.
        max_bytes: Default bound of a recalled block, 512 to 32,768 UTF-8 bytes.
        max_candidates: Records of a scope a recall selects from: the most recently
            updated ones, on every store (SQLite and PostgreSQL give them first; other
            stores, ``InMemoryStore`` among them, are read whole and the newest kept).
        capture_roles: Message types copied from completed turns.
        cache_size: Per-turn recall results kept in memory.
        timeout: Seconds a turn waits for scope memory (store and selector) before it
            goes on without recall (status ``unavailable``), and for capture; ``None``
            waits for ever.
        mirror_threads: Captured records follow their thread: a message deleted from
            the thread (``RemoveMessage``, a summarization that replaces old
            messages) is forgotten at the thread's next capture, and an edited one
            (same id, new text) is rewritten. ``False``: capture only ever adds (the
            scope keeps what a thread no longer holds). Captures without a
            ``thread_id`` only ever add.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        memory = ScopeMemory(InMemoryStore())
        memory.remember("user:42", "Allergic to peanuts.")
        print(memory.recall("user:42", "Any allergies?").status)  # recalled
        ```
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        config: ConfigLike = None,
        namespace: Sequence[str] = ("librarian_recall",),
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_candidates: int = 2_000,
        capture_roles: Collection[str] = ("human", "ai"),
        cache_size: int = 1_024,
        timeout: float | None = DEFAULT_TIMEOUT,
        mirror_threads: bool = True,
    ) -> None:
        if not isinstance(store, BaseStore):
            raise RecallConfigError(f"store must be a LangGraph BaseStore, got {type(store)}")
        if max_candidates < 1:
            raise RecallConfigError("max_candidates must be >= 1")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise RecallConfigError(f"timeout must be a positive number or None, got {timeout!r}")
        self.timeout = timeout
        self.mirror_threads = bool(mirror_threads)
        self.store = store
        self.config = as_config(config, "ScopeMemory(config)") or LibrarianConfig()
        self.namespace = check_namespace(namespace)
        self.max_bytes = check_max_bytes(max_bytes)
        self.max_candidates = max_candidates
        self.capture_roles = frozenset(capture_roles) - {"system"}
        self.cache: BoundedCache[tuple[str, str, int], RecallResult] = BoundedCache(cache_size)
        self._failed_at: BoundedCache[tuple[str, str, int], tuple[float, int]] = BoundedCache(
            cache_size
        )
        """When each cached failed recall failed (``time.monotonic()``) and how long its
        conversation was then (see ``_turn``)."""
        self._in_flight = threading.BoundedSemaphore(IN_FLIGHT)
        """Turns' store calls running on their own threads (see ``IN_FLIGHT``)."""

    # -- namespaces ---------------------------------------------------------------------

    def scope_namespace(self, scope_id: str) -> tuple[str, ...]:
        """The namespace prefix holding everything of ``scope_id``."""
        return (*self.namespace, scope_key(scope_id))

    def _ns(self, scope_id: str, kind: str) -> tuple[str, ...]:
        return (*self.scope_namespace(scope_id), kind)

    # -- explicit memories --------------------------------------------------------------

    def _explicit(self, text: str, thread_id: str | None) -> tuple[str, HumanMessage]:
        check_thread_id(thread_id)
        if not isinstance(text, str) or not text.strip():
            raise RecallConfigError("nothing to remember: the text is empty")
        if len(text) > MAX_REMEMBER_CHARS:
            raise RecallConfigError(f"memory text is longer than {MAX_REMEMBER_CHARS} characters")
        key = uuid.uuid4().hex
        return key, HumanMessage(content=clean_text(text.strip()), id=key)

    def _explicit_record(
        self, key: str, message: HumanMessage, entry: IndexEntry, thread_id: str | None
    ) -> MemoryRecord:
        return MemoryRecord.from_entry(
            entry,
            message_text(message),
            key=key,
            kind="explicit",
            role="memory",
            thread_id=thread_id,
            message_id=None,
            created_at=now_iso(),
        )

    def remember(self, scope_id: str, text: str, *, thread_id: str | None = None) -> MemoryRecord:
        """Store one explicit memory in the scope and return it.

        Raises:
            RecallConfigError: for empty text or text over 4,000 characters, or a
                ``thread_id`` of ``""`` (``None``: no thread; another value is read as
                ``str(thread_id)``, as LangGraph reads it).
        """
        ns = self._ns(scope_id, _MEMORY)
        thread_id = check_thread_id(thread_id)
        key, message = self._explicit(text, thread_id)
        entry = update_index([message], [], self.config).entries[0]
        record = self._explicit_record(key, message, entry, thread_id)
        batch(self.store, [put_op(ns, key, record.to_value())])
        return record

    async def aremember(
        self, scope_id: str, text: str, *, thread_id: str | None = None
    ) -> MemoryRecord:
        """Async twin of :meth:`remember`."""
        ns = self._ns(scope_id, _MEMORY)
        thread_id = check_thread_id(thread_id)
        key, message = self._explicit(text, thread_id)
        entry = (await aupdate_index([message], [], self.config)).entries[0]
        record = self._explicit_record(key, message, entry, thread_id)
        await abatch(self.store, [put_op(ns, key, record.to_value())])
        return record

    # -- capture of completed turns -----------------------------------------------------

    def _capture_ops(
        self,
        scope_id: str,
        thread_id: str | None,
        plan: CapturePlan,
        entries: Sequence[IndexEntry],
        cursor: str,
    ) -> list[Any]:
        ns = self._ns(scope_id, _MEMORY)
        ops = [put_op(ns, key, None) for key in plan.deletes]
        ops += [put_op(ns, r.key, r.to_value()) for r in capture_records(plan, thread_id, entries)]
        ops.append(put_op(self._ns(scope_id, _THREADS), cursor, plan.cursor()))
        return ops

    def _thread_page(
        self, scope_id: str, thread_id: str | None, offset: int, *, label: str | None = None
    ) -> tuple[tuple[str, ...], Any]:
        # ``label``: the scope's store label itself (a scope found in the store, whose
        # id a hashed label no longer tells), in place of ``scope_id``.
        check_thread_id(thread_id)
        ns = (*self.namespace, label, _MEMORY) if label else self._ns(scope_id, _MEMORY)
        # A JSON null is not filterable on every store: a thread without id reads all.
        # Stores hold the thread id cleaned (NUL and lone surrogates made U+FFFD): the
        # search finds the thread's look-alikes too, and _of_thread keeps its own.
        where = (
            {"kind": "turn"}
            if thread_id is None
            else {"kind": "turn", "thread_id": clean_text(thread_id)}
        )
        return ns, search_op(ns, _THREAD_PAGE, offset, where)

    @staticmethod
    def _of_thread(
        items: Sequence[Any], thread_id: str | None, into: dict[str, MemoryRecord]
    ) -> None:
        # By key: a record a later page repeats (ties, see _THREAD_PAGE) counts once.
        for item in items:
            record = record_from_value(str(item.key), item.value)
            if record is not None and record.kind == "turn" and _owned(record, item, thread_id):
                into[record.key] = record

    @staticmethod
    def _thread_read_on(result: Any, limit: int, seen: set[str]) -> bool:
        """Whether a thread's read goes on after a page (see :data:`_THREAD_PAGE`): it
        was full, or as large as a store's cap may be, and brought a record not seen
        (a store that ignores the offset must not loop forever)."""
        keys = {str(item.key) for item in result or []}
        new = bool(keys - seen)
        seen |= keys
        n = len(result or [])
        return new and (n >= limit or n % _CAP_STEP == 0)

    def thread_records(
        self, scope_id: str, thread_id: str | None, *, label: str | None = None
    ) -> list[MemoryRecord]:
        """The records captured from one thread of the scope (every one: not bounded by
        ``max_candidates``), in the thread's order."""
        thread_id = check_thread_id(thread_id)
        found: dict[str, MemoryRecord] = {}
        seen: set[str] = set()
        offset = 0
        while True:
            ns, op = self._thread_page(scope_id, thread_id, offset, label=label)
            (result,) = batch(self.store, [op])
            self._of_thread(items_in(result, ns), thread_id, found)
            if not self._thread_read_on(result, op.limit, seen):
                return sorted(found.values(), key=lambda r: (r.seq, r.key))
            offset += len(result)

    async def athread_records(
        self, scope_id: str, thread_id: str | None, *, label: str | None = None
    ) -> list[MemoryRecord]:
        """Async twin of :meth:`thread_records`."""
        thread_id = check_thread_id(thread_id)
        found: dict[str, MemoryRecord] = {}
        seen: set[str] = set()
        offset = 0
        while True:
            ns, op = self._thread_page(scope_id, thread_id, offset, label=label)
            (result,) = await abatch(self.store, [op])
            self._of_thread(items_in(result, ns), thread_id, found)
            if not self._thread_read_on(result, op.limit, seen):
                return sorted(found.values(), key=lambda r: (r.seq, r.key))
            offset += len(result)

    def _plan(
        self, messages: Sequence[BaseMessage], cursor: Any, thread_id: str | None
    ) -> CapturePlan:
        # Without a thread id, captures of unrelated conversations share one cursor:
        # there is no thread to follow, so they only ever add.
        mirror = self.mirror_threads and thread_id is not None
        value = getattr(cursor, "value", None)
        return plan_capture(messages, value, self.capture_roles, mirror=mirror)

    def _drop_cached(self, scope_id: str) -> None:
        scope = scope_key(scope_id)
        self.cache.drop(lambda key: key[0] == scope)

    def _forget_cached(self, scope_id: str, plan: CapturePlan) -> None:
        # A turn's cached recall must not bring back a record just removed or rewritten.
        if plan.deletes or plan.messages:
            self._drop_cached(scope_id)

    def capture(
        self,
        scope_id: str,
        messages: Sequence[BaseMessage],
        *,
        thread_id: str | None = None,
        index: Any = None,
    ) -> int:
        """Copy a thread's messages since the last capture into scope memory.

        Each copied message becomes a record with its index summary (entries in
        ``index``, e.g. the Librarian's ``state["index"]``, are reused by message id and
        content) and its provenance. Writes are idempotent: a message captured twice
        keeps one record. Returns how many records were written.

        With ``mirror_threads`` (the default) the scope follows the thread: when the
        history before the last captured message is not what was captured (a fingerprint
        kept with the thread's cursor differs), the thread's records are read back and
        reconciled: records of deleted messages are removed, edited ones rewritten.
        The check costs one hash over the history's message keys per capture; the
        reconciliation, which runs after a deletion or an edit and, against other
        writers, once a quarter more records were captured (at least 16), one read of
        the thread's records.

        Raises:
            RecallConfigError: for a ``thread_id`` of ``""`` (``None``: no thread;
                another value is read as ``str(thread_id)``: see ``check_thread_id``).
        """
        thread_id = check_thread_id(thread_id)
        cursor_key = stable_key("thread", thread_id)
        (cursor,) = batch(self.store, [get_op(self._ns(scope_id, _THREADS), cursor_key)])
        plan = self._plan(messages, cursor, thread_id)
        if plan.reconcile:
            plan = reconcile(plan, thread_id, self.thread_records(scope_id, thread_id))
            self._forget_cached(scope_id, plan)
        known = known_entries(index)
        entries = update_index(plan.messages, known, self.config).entries if plan.messages else []
        batch(self.store, self._capture_ops(scope_id, thread_id, plan, entries, cursor_key))
        return len(plan.messages)

    async def acapture(
        self,
        scope_id: str,
        messages: Sequence[BaseMessage],
        *,
        thread_id: str | None = None,
        index: Any = None,
    ) -> int:
        """Async twin of :meth:`capture`."""
        thread_id = check_thread_id(thread_id)
        cursor_key = stable_key("thread", thread_id)
        (cursor,) = await abatch(self.store, [get_op(self._ns(scope_id, _THREADS), cursor_key)])
        plan = self._plan(messages, cursor, thread_id)
        if plan.reconcile:
            plan = reconcile(plan, thread_id, await self.athread_records(scope_id, thread_id))
            self._forget_cached(scope_id, plan)
        known = known_entries(index)
        entries = (
            (await aupdate_index(plan.messages, known, self.config)).entries
            if plan.messages
            else []
        )
        await abatch(self.store, self._capture_ops(scope_id, thread_id, plan, entries, cursor_key))
        return len(plan.messages)

    # -- reading and forgetting ---------------------------------------------------------

    def _page(self, scope_id: str, offset: int) -> tuple[tuple[str, ...], Any]:
        ns = self._ns(scope_id, _MEMORY)
        if not self._ordered:
            # The whole scope, in as few searches as possible: a store such as
            # InMemoryStore filters every record for each page it is asked for.
            limit = max(_UNORDERED_PAGE, self.max_candidates)
        elif offset < self.max_candidates:
            limit = min(SEARCH_PAGE, self.max_candidates - offset)
        else:  # the ties at the end: pages as large as the records kept
            limit = max(SEARCH_PAGE, self.max_candidates)
        return ns, search_op(ns, limit, offset)

    @property
    def _ordered(self) -> bool:
        """Whether the store's search gives the newest records first (SQLite,
        PostgreSQL): then reading ``max_candidates`` of them is enough."""
        return orders_newest_first(self.store)

    @staticmethod
    def _parse(items: Sequence[Any], into: list[MemoryRecord]) -> None:
        for item in items:
            record = record_from_value(str(item.key), item.value)
            if record is not None:
                into.append(record)

    @staticmethod
    def _in_time_order(records: list[MemoryRecord]) -> list[MemoryRecord]:
        records.sort(key=time_order)
        return records

    def _read_on(self, offset: int, result: Any, limit: int, kept: Sequence[Any]) -> bool:
        """Whether another page is to be read after ``result``: on a store without order
        until the end; on one giving the newest first, up to ``max_candidates`` and on while
        the page ends with records written when the oldest kept one was (SQLite keeps
        whole seconds: the newest of them may come on the next page)."""
        if len(result or []) < limit:
            return False
        if not self._ordered or len(kept) < self.max_candidates:
            return True
        return updated(result[-1]) >= min(updated(item) for item in kept)

    def records(self, scope_id: str) -> list[MemoryRecord]:
        """The scope's ``max_candidates`` most recently updated records, oldest first.

        A store whose search gives the newest first (SQLite, PostgreSQL) is read up to
        ``max_candidates`` (and the records written in the same second as the last of
        them); any other (``InMemoryStore`` gives the oldest first) is read whole, page by
        page, keeping the newest.
        """
        kept: list[Any] = []
        offset = 0
        while True:
            ns, op = self._page(scope_id, offset)
            (result,) = batch(self.store, [op])
            kept = newest(kept, items_in(result, ns), self.max_candidates)
            if not self._read_on(offset, result, op.limit, kept):
                break
            offset += op.limit
        found: list[MemoryRecord] = []
        self._parse(kept, found)
        return self._in_time_order(found)

    async def arecords(self, scope_id: str) -> list[MemoryRecord]:
        """Async twin of :meth:`records`."""
        kept: list[Any] = []
        offset = 0
        while True:
            ns, op = self._page(scope_id, offset)
            (result,) = await abatch(self.store, [op])
            kept = newest(kept, items_in(result, ns), self.max_candidates)
            if not self._read_on(offset, result, op.limit, kept):
                break
            offset += op.limit
        found: list[MemoryRecord] = []
        # Parsing the records (cleaning and checking each one) off the event loop.
        await asyncio.to_thread(self._parse, kept, found)
        return await asyncio.to_thread(self._in_time_order, found)

    def delete_scope(self, scope_id: str) -> int:
        """Forget everything of ``scope_id`` (memories, captured turns, cursors).

        Returns the number of items deleted. Cached recalls of the scope are dropped.
        Only the scope's own items are deleted (its memories and cursors), whatever
        else the store's prefix search returns.
        """
        sweep = _ScopeSweep(self.scope_namespace(scope_id))
        self.cache.drop(lambda key: key[0] == sweep.label)
        while (op := sweep.next_search()) is not None:
            (result,) = batch(self.store, [op])
            batch(self.store, sweep.deletes(result, op.limit))
        return len(sweep.seen)

    async def adelete_scope(self, scope_id: str) -> int:
        """Async twin of :meth:`delete_scope`."""
        sweep = _ScopeSweep(self.scope_namespace(scope_id))
        self.cache.drop(lambda key: key[0] == sweep.label)
        while (op := sweep.next_search()) is not None:
            (result,) = await abatch(self.store, [op])
            await abatch(self.store, sweep.deletes(result, op.limit))
        return len(sweep.seen)

    def _thread_deletes(
        self, label: str, thread_id: str | None, held: Sequence[MemoryRecord]
    ) -> list[Any]:
        """Deletes of ``held`` and of the thread's cursor in the scope labelled ``label``."""
        self.cache.drop(lambda key: key[0] == label)
        ns = (*self.namespace, label, _MEMORY)
        ops = [put_op(ns, r.key, None) for r in held]
        ops.append(
            put_op((*self.namespace, label, _THREADS), stable_key("thread", thread_id), None)
        )
        return ops

    @staticmethod
    def _deleting(held: Sequence[MemoryRecord], deleted: dict[str, int]) -> bool:
        """Whether another round of deletes is due (``held`` read after ``deleted``, the
        keys deleted so far -> how many times)."""
        for record in held:
            deleted[record.key] = deleted.get(record.key, 0) + 1
        back = sorted(r.key for r in held if deleted[r.key] > _DELETE_ROUNDS)
        if back:  # a store that ignores deletes must not loop forever
            raise LibrarianError(
                f"record {back[0]!r} of the thread is still in the store after being "
                f"deleted {_DELETE_ROUNDS} times: the store does not delete, or a capture "
                "of this thread is running and writes it again (delete the thread when "
                "no turn of it runs); stopping"
            )
        return bool(held)

    def _forget_in(self, label: str, thread_id: str | None) -> int:
        """Delete the thread's records (and cursor) in the scope labelled ``label``, read
        and deleted again until a read finds none: a read in pages over records that
        share their ``updated_at`` may miss some (see :data:`_THREAD_PAGE`), and a
        deleted record must not stay readable. Returns the records deleted."""
        deleted: dict[str, int] = {}
        while True:
            held = self.thread_records("", thread_id, label=label)
            batch(self.store, self._thread_deletes(label, thread_id, held))
            if not self._deleting(held, deleted):
                return len(deleted)

    async def _aforget_in(self, label: str, thread_id: str | None) -> int:
        """Async twin of :meth:`_forget_in`."""
        deleted: dict[str, int] = {}
        while True:
            held = await self.athread_records("", thread_id, label=label)
            await abatch(self.store, self._thread_deletes(label, thread_id, held))
            if not self._deleting(held, deleted):
                return len(deleted)

    def forget_thread(self, scope_id: str, thread_id: str | None) -> int:
        """Forget what was captured from one thread of ``scope_id`` (and its cursor).

        Explicit memories (:meth:`remember`) stay, even those made in that thread.
        Returns the number of records deleted; cached recalls of the scope are dropped.
        If the thread goes on, its next capture copies it whole again: delete its
        checkpoints too (or turn capture off for it) to forget it for good.
        """
        return self._forget_in(scope_key(scope_id), check_thread_id(thread_id))

    async def aforget_thread(self, scope_id: str, thread_id: str | None) -> int:
        """Async twin of :meth:`forget_thread`."""
        return await self._aforget_in(scope_key(scope_id), check_thread_id(thread_id))

    # -- deleting a thread everywhere ---------------------------------------------------

    def _scopes_page(self, offset: int) -> ListNamespacesOp:
        # Every scope's cursor namespace, ``(*namespace, <label>, "threads")``.
        return ListNamespacesOp(
            match_conditions=(
                MatchCondition("prefix", self.namespace),
                MatchCondition("suffix", (_THREADS,)),
            ),
            max_depth=len(self.namespace) + 2,
            limit=_SCOPES_PAGE,
            offset=offset,
        )

    def _cursor_gets(self, thread_id: str, found: Sequence[Any]) -> tuple[list[str], list[Any]]:
        labels = [
            str(ns[len(self.namespace)])
            for ns in found or []
            if len(ns) == len(self.namespace) + 2
            and tuple(ns[: len(self.namespace)]) == self.namespace
        ]
        key = stable_key("thread", thread_id)
        return labels, [get_op((*self.namespace, label, _THREADS), key) for label in labels]

    def _thread_scopes(self, thread_id: str) -> list[str]:
        """Labels of the scopes ``thread_id`` was captured into (its cursor is there)."""
        labels: list[str] = []
        offset = 0
        while True:
            (found,) = batch(self.store, [self._scopes_page(offset)])
            page, gets = self._cursor_gets(thread_id, found)
            cursors = batch(self.store, gets)
            labels += [label for label, item in zip(page, cursors, strict=True) if item is not None]
            if len(found or []) < _SCOPES_PAGE:
                return labels
            offset += _SCOPES_PAGE

    async def _athread_scopes(self, thread_id: str) -> list[str]:
        labels: list[str] = []
        offset = 0
        while True:
            (found,) = await abatch(self.store, [self._scopes_page(offset)])
            page, gets = self._cursor_gets(thread_id, found)
            cursors = await abatch(self.store, gets)
            labels += [label for label, item in zip(page, cursors, strict=True) if item is not None]
            if len(found or []) < _SCOPES_PAGE:
                return labels
            offset += _SCOPES_PAGE

    def _forget_everywhere(self, thread_id: str, scopes: Iterable[str] | None) -> int:
        """Forget what was captured from ``thread_id`` in ``scopes`` (scope ids), or in
        every scope it was captured into (``None``: found by its cursors, one listing of
        the store's scopes). Returns the records deleted. Explicit memories stay.
        """
        labels = (
            self._thread_scopes(thread_id) if scopes is None else [scope_key(s) for s in scopes]
        )
        return sum(self._forget_in(label, thread_id) for label in dict.fromkeys(labels))

    async def _aforget_everywhere(self, thread_id: str, scopes: Iterable[str] | None) -> int:
        """Async twin of :meth:`_forget_everywhere`."""
        labels = (
            await self._athread_scopes(thread_id)
            if scopes is None
            else [scope_key(s) for s in scopes]
        )
        deleted = 0
        for label in dict.fromkeys(labels):
            deleted += await self._aforget_in(label, thread_id)
        return deleted

    def delete_thread(
        self,
        thread_id: str,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        index_store: BaseIndexStore | BaseStore | None = None,
        scopes: Iterable[str] | None = None,
        subgraphs: Sequence[str] = (),
    ) -> int:
        """Erase ``thread_id`` everywhere the library wrote it: what scoped recall
        captured from it, its Librarian index and (with ``checkpointer``) its checkpoints.

        One call for a "delete this conversation" button: deleting the checkpoints alone
        leaves the thread's text readable from other threads of its scope (recall) and
        in the store (the index). Explicit memories (:meth:`remember`) stay, even those
        made in the thread: they belong to the scope (:meth:`delete_scope` erases them).

        Args:
            thread_id: The thread (``configurable["thread_id"]``).
            checkpointer: The graph's checkpointer; its ``delete_thread`` runs last, so
                a failure before it leaves the thread listed (and the call can be
                repeated: every step is idempotent).
            index_store: Where the Librarian keeps the index (``LibrarianConfig.store``;
                a ``BaseStore`` is read as ``LangGraphIndexStore(store)``). ``None``: the
                index lives in the checkpoint (the default) and goes with it.
            scopes: The scope ids the thread was captured into. ``None`` finds them in
                the store (every scope's cursor of the thread: one listing of the
                scopes, in pages of 500); pass them when the store holds many scopes.
            subgraphs: Graph namespaces of Librarians running in subgraphs of the
                thread (``"agent"``, ``"team|agent"``), whose indexes are kept apart
                (``"<thread>|<subgraph>"``).

        Returns:
            The number of captured records deleted.
        """
        return erase_thread(
            thread_id,
            memory=self,
            checkpointer=checkpointer,
            index_store=index_store,
            scopes=scopes,
            subgraphs=subgraphs,
        )

    async def adelete_thread(
        self,
        thread_id: str,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        index_store: BaseIndexStore | BaseStore | None = None,
        scopes: Iterable[str] | None = None,
        subgraphs: Sequence[str] = (),
    ) -> int:
        """Async twin of :meth:`delete_thread` (a sync-only store or checkpointer runs
        in a worker thread)."""
        return await aerase_thread(
            thread_id,
            memory=self,
            checkpointer=checkpointer,
            index_store=index_store,
            scopes=scopes,
            subgraphs=subgraphs,
        )

    # -- search and recall --------------------------------------------------------------

    def search(self, scope_id: str, query: str, *, limit: int = 5) -> list[MemoryRecord]:
        """The ``limit`` records most relevant to ``query`` (local ranking, no model call)."""
        return _select.rank(self.records(scope_id), query[:MAX_QUERY_CHARS], self.config, limit)

    async def asearch(self, scope_id: str, query: str, *, limit: int = 5) -> list[MemoryRecord]:
        """Async twin of :meth:`search`."""
        records = await self.arecords(scope_id)
        return await _select.arank(records, query[:MAX_QUERY_CHARS], self.config, limit)

    def _finish(
        self,
        scope_id: str,
        ranked: _select.Ranked,
        total: int,
        max_bytes: int,
        held: int,
        query: str = "",
    ) -> RecallResult:
        key = scope_key(scope_id)
        if not held:
            return RecallResult("empty", scope=key, reason="the scope holds no memory")
        if not total:
            return RecallResult(
                "empty", scope=key, reason="the scope holds only what this thread already has"
            )
        if ranked.strategy == "floor":
            return RecallResult(
                "empty",
                scope=key,
                reason=(
                    f"nothing in the scope bears on the question (best relevance "
                    f"{ranked.relevance:.2f}, needed {ranked.floor:.2f}, or a record "
                    "sharing a rare word of the question and another of its words)"
                ),
                strategy="local",
                relevance=ranked.relevance,
                embedding_error=ranked.embedding_error,
            )
        text, kept = render_evidence(ranked.records, max_bytes, query)
        picked = None if ranked.model_picks is None else {r.key for r in ranked.model_picks}
        kept_local = 0 if picked is None else sum(r.key not in picked for r in kept)
        model_picks = None if picked is None else len(kept) - kept_local
        if not kept:
            reason = "no matching memory"
            if picked is not None and not picked:
                reason = (
                    "the selector model found nothing that applies, and no offline pick "
                    "bears on the question by itself"
                )
            return RecallResult(
                "empty",
                scope=key,
                reason=reason,
                strategy=ranked.strategy,
                relevance=ranked.relevance,
                model_picks=model_picks,
                embedding_error=ranked.embedding_error,
            )
        reason = ""
        if picked is not None and not picked:
            reason = (
                f"the selector model found nothing that applies; kept {kept_local} offline "
                "pick(s) that bear on the question by themselves (selector_keeps_local)"
            )
        return RecallResult(
            "recalled",
            text,
            kept,
            key,
            reason,
            strategy=ranked.strategy,
            relevance=ranked.relevance,
            model_picks=model_picks,
            kept_local=kept_local,
            embedding_error=ranked.embedding_error,
        )

    def recall(
        self,
        scope_id: str,
        query: str,
        *,
        max_bytes: int | None = None,
        parent: RunnableConfig | None = None,
        exclude_message_ids: Collection[str] = (),
        exclude_content_hashes: Collection[str] = (),
        exclude_thread_id: str | None = None,
    ) -> RecallResult:
        """Select and render the scope's evidence for ``query`` (uncached; may raise).

        ``parent`` is the run config the selector's model call inherits. Records copied
        from a message in ``exclude_message_ids`` (the messages the model already gets),
        with a content hash in ``exclude_content_hashes`` (the same messages re-sent
        without their ids) or from the thread ``exclude_thread_id`` (the asking thread)
        are left out, so a thread's own turns are not repeated to it.
        """
        bound = self.max_bytes if max_bytes is None else check_max_bytes(max_bytes)
        exclude_thread_id = check_thread_id(exclude_thread_id)
        excluded = (exclude_message_ids, exclude_content_hashes, exclude_thread_id)
        return self._ranked(scope_id, self.records(scope_id), query, bound, parent, excluded)

    def _ranked(
        self,
        scope_id: str,
        found: list[MemoryRecord],
        query: str,
        bound: int,
        parent: RunnableConfig | None,
        excluded: tuple[Collection[str], Collection[str], str | None],
    ) -> RecallResult:
        """Rank the scope's records (but the excluded ones) and render the evidence."""
        records = _without(found, *excluded)
        query = query[:MAX_QUERY_CHARS]
        ranked = _select.select_ranked(records, query, self._selection_config(), parent)
        return self._finish(scope_id, ranked, len(records), bound, len(found), query)

    def _selection_config(self) -> LibrarianConfig:
        """The config recall selects with: a selector model gets at most half of
        ``timeout``. The turn waits ``timeout`` for the store and the selector together,
        so a model allowed longer (``selection_timeout``, 60 s by default) made a slow
        provider cost the whole recall (``unavailable``) instead of the offline
        selection standing in, as it does when the model fails."""
        config = self.config
        if self.timeout is None or config.uses_local_selector:
            return config
        share = self.timeout * _SELECTOR_SHARE
        if config.selection_timeout is not None and config.selection_timeout <= share:
            return config
        return replace(config, selection_timeout=share)

    async def arecall(
        self,
        scope_id: str,
        query: str,
        *,
        max_bytes: int | None = None,
        parent: RunnableConfig | None = None,
        exclude_message_ids: Collection[str] = (),
        exclude_content_hashes: Collection[str] = (),
        exclude_thread_id: str | None = None,
    ) -> RecallResult:
        """Async twin of :meth:`recall`.

        Ranking and rendering thousands of records is CPU work (hundreds of
        milliseconds): with the offline selector all of it runs in a worker thread, not
        on the event loop; a selector model's call is awaited on the loop.
        """
        bound = self.max_bytes if max_bytes is None else check_max_bytes(max_bytes)
        exclude_thread_id = check_thread_id(exclude_thread_id)
        found = await self.arecords(scope_id)
        excluded = (exclude_message_ids, exclude_content_hashes, exclude_thread_id)
        if _select.held_to_floor(self.config):
            ranking = (scope_id, found, query, bound, parent, excluded)
            return await asyncio.to_thread(self._ranked, *ranking)
        records = _without(found, *excluded)
        query = query[:MAX_QUERY_CHARS]
        ranked = await _select.aselect_ranked(records, query, self._selection_config(), parent)
        return self._finish(scope_id, ranked, len(records), bound, len(found), query)


_SELECTOR_SHARE = 0.5
"""Share of ``ScopeMemory(timeout=)`` a selector model may spend on one recall."""


def check_memory(memory: Any, where: str) -> ScopeMemory:
    """``memory`` when it is a :class:`ScopeMemory`, else a ``TypeError`` naming ``where``
    (a store or a scope id passed by mistake would fail only at the first turn)."""
    if not isinstance(memory, ScopeMemory):
        raise TypeError(
            f"{where} takes a ScopeMemory (ScopeMemory(store)) as memory, got "
            f"{type(memory).__name__} {memory!r:.60}"
        )
    return memory


# -- erasing a thread everywhere ---------------------------------------------------------
#
# A thread's text lives in up to three places: its checkpoints (messages, and the index
# unless the Librarian keeps it in a store), the Librarian's index store (summaries of
# every message, keyed by thread), and the scopes scoped recall copied it into (records
# other threads recall). Deleting the checkpoints alone leaves the other two readable.
# ScopeMemory.delete_thread and the web chat's delete share this one path. Order: recall
# records first (what other threads can read), then the index, then the checkpoints, so
# a failure part-way leaves the thread still listed by the application and the call can
# be repeated (every step is idempotent).


def _index_store(store: BaseIndexStore | BaseStore | None) -> BaseIndexStore | None:
    # A bare BaseStore is what LibrarianConfig(store=...) accepts and wraps the same way.
    return LangGraphIndexStore(store) if isinstance(store, BaseStore) else store


def erase_thread(
    thread_id: str,
    *,
    memory: ScopeMemory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    index_store: BaseIndexStore | BaseStore | None = None,
    scopes: Iterable[str] | None = None,
    subgraphs: Sequence[str] = (),
) -> int:
    """Erase ``thread_id`` from ``memory`` (every scope, or ``scopes``), ``index_store``
    and ``checkpointer``; the number of recall records deleted."""
    thread_id = thread_id_text(thread_id)
    sessions = thread_keys(thread_id, subgraphs)
    deleted = memory._forget_everywhere(thread_id, scopes) if memory is not None else 0
    store = _index_store(index_store)
    if store is not None:
        for session in sessions:
            store.delete(session)
    if checkpointer is not None:
        checkpointer.delete_thread(thread_id)
    return deleted


async def aerase_thread(
    thread_id: str,
    *,
    memory: ScopeMemory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    index_store: BaseIndexStore | BaseStore | None = None,
    scopes: Iterable[str] | None = None,
    subgraphs: Sequence[str] = (),
) -> int:
    """Async twin of :func:`erase_thread`."""
    thread_id = thread_id_text(thread_id)
    sessions = thread_keys(thread_id, subgraphs)
    deleted = await memory._aforget_everywhere(thread_id, scopes) if memory is not None else 0
    store = _index_store(index_store)
    if store is not None:
        for session in sessions:
            await adelete_index(store, session)
    if checkpointer is not None:
        try:
            await checkpointer.adelete_thread(thread_id)
        except NotImplementedError:  # a sync-only saver (SqliteSaver)
            await off_loop(checkpointer.delete_thread, thread_id, name="librarian-recall")
    return deleted
