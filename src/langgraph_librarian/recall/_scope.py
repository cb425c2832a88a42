"""The per-run scope: which tenant's or project's memory a run may read and write.

A scope travels in LangGraph's run context (``context=`` on ``invoke``, declared with
``context_schema=``), so the application, not the model, decides it. Scope ids of any
length and character set map to bounded store namespace labels that never collide.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from langgraph_librarian.config import thread_text
from langgraph_librarian.errors import ConfigurationError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_MAX_BYTES",
    "MAX_QUERY_CHARS",
    "MIN_MAX_BYTES",
    "SCOPE_ENV_VAR",
    "MissingScopeError",
    "RecallConfigError",
    "RecallScope",
    "check_max_bytes",
    "check_thread_id",
    "context_flag",
    "resolve_scope",
    "run_max_bytes",
    "scope_key",
]

SCOPE_ENV_VAR: Final = "LIBRARIAN_RECALL_SCOPE_ID"
"""Environment variable read when the run context names no scope."""

MIN_MAX_BYTES: Final = 512
MAX_MAX_BYTES: Final = 32_768
DEFAULT_MAX_BYTES: Final = 8_000
"""Bounds of the recalled block, in UTF-8 bytes (8,000 bytes is about 2,000 tokens)."""

MAX_QUERY_CHARS: Final = 8_192
"""The latest human message (or a tool's query) is cut to this many characters."""

# Plain ids are used as they are. "~" is outside this alphabet, so a hashed label can
# never equal a plain one; "." is excluded because LangGraph stores join labels with it.
_PLAIN_ID = re.compile(r"[A-Za-z0-9_:@+=-]{1,64}")


class RecallConfigError(ConfigurationError):
    """Scoped recall is misconfigured (a bound out of range, a scope of the wrong type)."""


class MissingScopeError(RecallConfigError):
    """No scope for this run: none in the run context and none in the environment."""


@dataclass(frozen=True)
class RecallScope:
    """Run context naming the memory scope (use as ``context_schema``).

    Derive ``scope_id`` from an authenticated tenant, user or project: the scope only
    partitions data, it proves nothing about who is asking. Any object with a
    ``scope_id`` attribute (or a dict with that key) works as context too, so your own
    context dataclass can carry it.

    Attributes:
        scope_id: The tenant / user / project whose memory this run uses.
        allow_remember: When False the ``memory_remember`` tool refuses to write.
        allow_capture: When False completed turns of this run are not copied into
            scope memory even if capture is switched on.
        max_bytes: Per-run bound of the recalled block (512 to 32,768 UTF-8 bytes);
            ``None`` uses the memory's default.

    Example:
        ```python
        agent.invoke({"messages": [...]}, context=RecallScope(scope_id="user:42"))
        ```
    """

    scope_id: str | None = None
    allow_remember: bool = True
    allow_capture: bool = True
    max_bytes: int | None = None


def _field(context: Any, name: str) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def resolve_scope(context: Any = None) -> str:
    """The scope id for a run: the run context's ``scope_id``, else ``$LIBRARIAN_RECALL_SCOPE_ID``.

    There is no shared default: with neither, :class:`MissingScopeError` is raised.

    Raises:
        MissingScopeError: when no scope is named (or the context's is empty).
        RecallConfigError: when the context's ``scope_id`` is not a string.

    Example:
        >>> resolve_scope(RecallScope(scope_id="user:42"))
        'user:42'
    """
    explicit = _field(context, "scope_id")
    if explicit is not None:
        if not isinstance(explicit, str):
            raise RecallConfigError(f"scope_id must be a string, got {type(explicit).__name__}")
        if not explicit.strip():  # blank ids would put every anonymous user in one scope
            raise MissingScopeError("the run context's scope_id is empty")
        return explicit
    from_env = os.environ.get(SCOPE_ENV_VAR, "")
    if from_env.strip():
        return from_env
    raise MissingScopeError(
        f"no memory scope for this run: pass context=RecallScope(scope_id=...) "
        f"or set {SCOPE_ENV_VAR}"
    )


_GRANTED = frozenset({"true", "1", "yes", "on"})


def context_flag(context: Any, name: str) -> bool:
    """A boolean permission from the run context (absent means allowed).

    A string (a context sent as JSON or read from a form: ``"false"``) grants only when
    it reads ``"true"``, ``"1"``, ``"yes"`` or ``"on"``: ``bool("false")`` is ``True``,
    which turned an incognito run's ``allow_capture`` into a capture.
    """
    value = _field(context, name)
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().lower() in _GRANTED
    return bool(value)


def check_max_bytes(value: Any) -> int:
    """Validate a recalled-block bound.

    Raises:
        RecallConfigError: when ``value`` is not an int between 512 and 32,768.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecallConfigError(f"max_bytes must be an int, got {type(value).__name__}")
    if not MIN_MAX_BYTES <= value <= MAX_MAX_BYTES:
        raise RecallConfigError(
            f"max_bytes must be between {MIN_MAX_BYTES} and {MAX_MAX_BYTES}, got {value}"
        )
    return value


def check_thread_id(thread_id: Any) -> str | None:
    """A thread id given to scope memory, as LangGraph reads it (``str(thread_id)``:
    ``1`` and ``"1"`` are one thread, a ``uuid.UUID`` is its text), or ``None`` for no
    thread (a run without a checkpointer).

    An empty id is refused rather than read as "no thread": it and ``None`` would share
    one capture cursor and one key per message, two conversations made one. (A run's
    ``configurable["thread_id"] = ""`` is no thread id, as everywhere in the library:
    the middleware passes ``None``.)

    Raises:
        RecallConfigError: for ``""`` (or a value whose text is empty).
    """
    if thread_id is None:
        return None
    text = thread_text(thread_id)
    if text is None:
        raise RecallConfigError(
            f"thread_id must be a non-empty id or None (no thread), got {thread_id!r:.60}"
        )
    return text


def run_max_bytes(context: Any, default: int) -> int:
    """The bound in force for a run: the context's ``max_bytes`` when set, else ``default``."""
    value = _field(context, "max_bytes")
    return default if value is None else check_max_bytes(value)


def scope_key(scope_id: str) -> str:
    """A store namespace label for ``scope_id``: bounded, safe, collision-free.

    Ids of 1-64 characters from ``[A-Za-z0-9_:@+=-]`` are used unchanged (readable in
    the database). Anything else (``/``, ``..``, NUL, which PostgreSQL text cannot
    hold, lone surrogates, 10,000 characters) becomes ``"~"`` plus the SHA-256 of its
    UTF-8 bytes: 65 characters. ``"~"`` never occurs in a plain id, so a hashed label
    cannot equal a plain one, and distinct ids give distinct labels.

    Example:
        >>> scope_key("user:42")
        'user:42'
        >>> len(scope_key("x" * 10_000))
        65
    """
    if not isinstance(scope_id, str) or not scope_id:
        raise RecallConfigError("scope_id must be a non-empty string")
    if _PLAIN_ID.fullmatch(scope_id):
        return scope_id
    digest = hashlib.sha256(scope_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"~{digest}"
