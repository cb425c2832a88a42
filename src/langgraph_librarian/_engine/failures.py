"""One failure policy for every step the library runs for itself.

Indexing, selection, the running summary and scoped recall all ask the same two
questions of a failure: may another attempt succeed (:func:`is_retryable`, used by the
model-call loop), and may the turn go on without this step (:func:`fails_open`)? Both
answers come from :func:`classify`, so a provider's 401 means the same thing to the
summarizer as to recall, and a new kind of error is taught here once.

The kinds:

- ``"interrupt"``: LangGraph's own control flow (``GraphBubbleUp``: interrupts,
  ``Command`` hand-offs). Never absorbed.
- ``"configuration"``: only the user can fix it (a :class:`ConfigurationError`, a
  provider answering 401/403/404, a database refusing the credentials or missing its
  tables). Never absorbed: the Librarian's own model calls (indexer, selector, gist,
  running summary) raise it out of every face, so a revoked key is noticed. Automatic
  scoped recall alone goes on without its block and reports it as ``misconfigured`` at
  ERROR (spec 04: recall is fail-open); called directly, recall raises it too. With
  ``background_indexing`` the indexer runs after the turn returned, in a worker: there
  it is logged at ERROR and the index is not saved (nothing is left to raise it to).
- ``"transient"``: timeouts, dropped connections, rate limits. Retried, then absorbed.
- ``"failure"``: anything else. Absorbed (the turn goes on without the step) and logged.

The embedding model is a step of its own (:func:`embedding_failed`): when it fails open,
selection, recall and tool search go on lexically for the rest of the turn, and the turn
says so (:func:`embedding_failures` collects what failed). Its failure is logged once per
cause while it lasts; an answer of the model (:func:`embedding_answered`) after the cause
stopped for a while ends it, so the next outage is logged again.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

from langgraph.errors import GraphBubbleUp

from langgraph_librarian.errors import ConfigurationError

__all__ = [
    "DeadlineExceeded",
    "FailureKind",
    "cause_key",
    "classify",
    "current_embedding_failures",
    "describe",
    "embedding_answered",
    "embedding_failed",
    "embedding_failures",
    "embeddings_down",
    "fails_open",
    "is_configuration_error",
    "is_retryable",
    "log_failure",
    "mark_final",
    "model_key",
    "status_code",
]

FailureKind = Literal["interrupt", "configuration", "transient", "failure"]

_CONFIGURATION_STATUS = frozenset({401, 403, 404})
"""Bad key, no access, unknown model: retrying or waiting will not help."""

_RETRY_STATUS = frozenset({408, 409, 425, 429, 502, 503, 504})
_RETRY_NAMES = frozenset(
    {
        "APITimeoutError",
        "APIConnectionError",
        "RateLimitError",
        "ConnectTimeout",
        "ReadTimeout",
        "PoolTimeout",
        "ConnectError",
        "RemoteProtocolError",
        "ServiceUnavailable",
        "ResourceExhausted",
        "DeadlineExceeded",
        # DB-API connection-level errors (psycopg, sqlite3): the server went away, the
        # database is locked. Settings problems among them are told apart first
        # (SQLSTATE classes and words below).
        "OperationalError",
        "InterfaceError",
        "PoolClosed",
    }
)

# SQLSTATE classes that mean "your settings are wrong", not "try again later":
# 28 invalid authorization, 42501 insufficient privilege, 42P01 undefined table
# (the store's setup() was never run), 42703 undefined column (its migrations were not
# run), 3D000 unknown database.
_CONFIG_SQLSTATES = ("28", "42501", "42P01", "42703", "3D000")
_CONFIG_WORDS = (
    "authentication failed",
    "permission denied",
    "access denied",
    "unauthorized",
    "forbidden",
    "no such table",
    "readonly database",
)
"""Words of a store error that only the user's settings can fix. PostgreSQL's missing table
or database come by SQLSTATE (above); a "read-only transaction" during a failover is
transient, so "read-only" alone is not one of them."""

_RETRY_SQLSTATES = frozenset({"25006"})
"""PostgreSQL's read-only transaction: a server that became a standby in a failover
(LangGraph's store writes even on a read, refreshing TTLs); the next attempt reaches the
new primary."""

_FINAL = "_librarian_final"
"""Set on an error that must not be retried although its type looks transient (a sync
attempt whose request is still running, a step deadline that ran out)."""


class DeadlineExceeded(TimeoutError):
    """The time budget of a whole step (all attempts) ran out. Never retried."""

    _librarian_final = True


def mark_final(exc: BaseException) -> BaseException:
    """Flag ``exc`` as not retryable (see :data:`_FINAL`); returns it."""
    setattr(exc, _FINAL, True)
    return exc


def status_code(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (``exc.status_code`` or its response's)."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _store_misconfigured(exc: BaseException) -> bool:
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate.startswith(_CONFIG_SQLSTATES):
        return True
    if isinstance(exc, sqlite3.Error | ConnectionError) or type(exc).__module__.startswith(
        "psycopg"
    ):
        text = str(exc).lower()
        return any(word in text for word in _CONFIG_WORDS)
    return False


def is_configuration_error(exc: BaseException) -> bool:
    """True for failures only the user can fix (see the module's kinds)."""
    return (
        isinstance(exc, ConfigurationError | PermissionError)
        or status_code(exc) in _CONFIGURATION_STATUS
        or _store_misconfigured(exc)
    )


def is_retryable(exc: BaseException) -> bool:
    """Whether another attempt may succeed.

    Timeouts, connection failures and rate limits (HTTP 408/409/425/429/502/503/504) are
    transient. Authentication (401/403), bad requests (400/404/422) and HTTP 500 are
    not: a 500 from a local server usually means "this request can never work" (for
    example a json_schema it does not support), and provider clients have already
    retried it themselves. An error marked final (:func:`mark_final`) is final.
    """
    if getattr(exc, _FINAL, False) or is_configuration_error(exc):
        return False
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if getattr(exc, "sqlstate", None) in _RETRY_SQLSTATES:
        return True
    status = status_code(exc)
    if status is not None:
        return status in _RETRY_STATUS
    return any(cls.__name__ in _RETRY_NAMES for cls in type(exc).__mro__)


def classify(exc: BaseException) -> FailureKind:
    """What ``exc`` means for the step that raised it (see the module's kinds)."""
    if isinstance(exc, GraphBubbleUp):
        return "interrupt"
    if is_configuration_error(exc):
        return "configuration"
    if is_retryable(exc):
        return "transient"
    return "failure"


def fails_open(exc: BaseException) -> bool:
    """Whether the turn may go on without the step that raised ``exc``."""
    return classify(exc) not in ("interrupt", "configuration")


def describe(exc: BaseException, limit: int = 300) -> str:
    """``"Type: message"``, cut to ``limit`` characters (for metadata and reports)."""
    return f"{type(exc).__name__}: {exc}"[:limit]


def log_failure(logger: logging.Logger, step: str, exc: BaseException) -> FailureKind:
    """Log a failure the turn absorbs: configuration problems at ERROR (someone must act),
    the rest at WARNING with the traceback. Returns its kind."""
    kind = classify(exc)
    if kind == "configuration":
        logger.error("%s: configuration problem: %s", step, describe(exc))
    else:
        logger.warning("%s failed: %s", step, describe(exc), exc_info=exc)
    return kind


# -- the embedding model ------------------------------------------------------------------

_EMBEDDING_FAILURES: ContextVar[list[str] | None] = ContextVar(
    "librarian_embedding_failures", default=None
)
"""The current turn's embedding failures (``describe`` strings). A list, not a value:
``asyncio.to_thread`` and ``contextvars.copy_context`` copy the variable, not the list, so
a failure in a worker thread of the turn is seen by the turn."""

_WARNED: dict[tuple[str, str], float] = {}
_WARNED_LOCK = threading.Lock()
_WARNED_MAX = 256
"""Causes already logged (model, cause) -> when last seen (:data:`_clock`): an embedding
server that is down fails every turn, and one warning per cause says it without flooding
the log. The oldest are forgotten past :data:`_WARNED_MAX`.

Keyed by the model's description (:func:`model_key`), not the object: an app that builds
its embeddings object per request has one model, and one outage. A model's causes are
forgotten when it answers after none of them was seen for :data:`_QUIET` seconds
(:func:`embedding_answered`): its next outage is a new one, and warned again. A model
whose answers come while the same cause keeps failing (a consumer whose texts it rejects,
another's it embeds) is not recovering: that would warn and re-arm at every turn."""

_QUIET = 60.0
"""Seconds without a failure of a cause before an answer of the model ends its outage."""

_clock = time.monotonic

_MODEL_FIELDS = (
    "model",
    "model_name",
    "model_id",
    "deployment",
    "repo_id",
    "base_url",
    "openai_api_base",
    "azure_endpoint",
    "endpoint",
    "endpoint_url",
    "host",
)
"""Attributes of LangChain's embedding classes that say which model they call, and where."""

_VOLATILE = re.compile(r"[0-9A-Fa-f]*[0-9][0-9A-Fa-f]*")


def model_key(model: object) -> str:
    """A stable description of an embedding model: its class and the settings that name
    the model and its server (``model``, ``base_url``...), not the object (two objects
    built alike call one model; an id is reused after the object is freed)."""
    if model is None:
        return ""
    kind = type(model)
    parts = [f"{kind.__module__}.{kind.__qualname__}"]
    for name in _MODEL_FIELDS:
        try:
            value = getattr(model, name, None)
        except Exception:  # a property that fails says nothing
            continue
        if isinstance(value, str | int) and not isinstance(value, bool):
            parts.append(f"{name}={str(value)[:200]}")
    return " ".join(parts)


def cause_key(exc: BaseException) -> str:
    """What a failure is, for telling one cause from another: its type, HTTP status and
    message without its numbers and hexadecimal ids (a provider puts a request id in
    every message: each would be a new cause)."""
    status = status_code(exc)
    message = _VOLATILE.sub("#", str(exc)[:300])
    return (
        f"{type(exc).__name__}[{status}]: {message}"
        if status
        else f"{type(exc).__name__}: {message}"
    )


@contextmanager
def embedding_failures() -> Iterator[list[str]]:
    """Collect the embedding failures of one turn (a list, yielded).

    Nested in another (recall inside a turn), it is the outer one's list: a model that
    failed once this turn is not asked again, and the turn reports every failure."""
    outer = _EMBEDDING_FAILURES.get()
    if outer is not None:
        yield outer
        return
    failures: list[str] = []
    token = _EMBEDDING_FAILURES.set(failures)
    try:
        yield failures
    finally:
        _EMBEDDING_FAILURES.reset(token)


def current_embedding_failures() -> list[str]:
    """The embedding failures recorded so far this turn (a copy; ``[]`` outside a turn)."""
    return list(_EMBEDDING_FAILURES.get() or ())


def embeddings_down() -> bool:
    """Whether the embedding model already failed this turn (it is not asked again:
    a server that timed out once would cost the same timeout at every call)."""
    return bool(_EMBEDDING_FAILURES.get())


def embedding_failed(logger: logging.Logger, exc: Exception, model: object = None) -> None:
    """Absorb a failure of the embedding model ``model``, or raise it again.

    The embedding model only refines a lexical ranking, so the turn goes on lexically
    (the caller uses no vectors) whatever the model's fault, unless only the user can fix
    it (a refused key, an unknown model: see the kinds above) or it is an interrupt.
    The failure is recorded for the current turn (:func:`embedding_failures`) and logged
    at WARNING once per cause (:func:`cause_key`) of the model (:func:`model_key`) until
    the model answers again (:func:`embedding_answered`).
    """
    if not fails_open(exc):
        raise exc
    text = describe(exc)
    failures = _EMBEDDING_FAILURES.get()
    if failures is not None and text not in failures:
        failures.append(text)
    cause = (model_key(model), cause_key(exc))
    now = _clock()
    with _WARNED_LOCK:
        seen = cause in _WARNED
        _WARNED.pop(cause, None)  # re-inserted last: the oldest go first
        if not seen and len(_WARNED) >= _WARNED_MAX:
            del _WARNED[next(iter(_WARNED))]
        _WARNED[cause] = now
    if seen:
        return
    logger.warning(
        "librarian: the embedding model failed (%s); lexical ranking only until it answers",
        text,
        exc_info=exc,
    )


def embedding_answered(logger: logging.Logger, model: object = None) -> None:
    """The embedding model ``model`` answered a request of its own (not a cached vector).

    Ends its outage, if one was logged and none of its causes was seen for
    :data:`_QUIET` seconds: those causes are forgotten, so the model's next failure is
    logged again (an operator sees the second outage), and the recovery is logged at
    INFO. A cause seen since is still going on (another consumer of the model keeps
    failing): it stays, and is not warned again. Cheap when nothing was warned (called
    at every answer)."""
    if not _WARNED:  # nothing ever warned: no lock on the hot path
        return
    key = model_key(model)
    quiet = _clock() - _QUIET
    with _WARNED_LOCK:
        ended = sorted(c for c, seen in _WARNED.items() if c[0] == key and seen <= quiet)
        for cause in ended:
            del _WARNED[cause]
    if ended:
        logger.info(
            "librarian: the embedding model answers again (it failed with %s)",
            "; ".join(message for _, message in ended),
        )
