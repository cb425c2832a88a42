"""The index entry: one short summary per message, keyed by message identity."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

EntryStatus = Literal["summarized", "verbatim", "extractive", "fallback", "pending"]
_STATUSES = frozenset(get_args(EntryStatus))

__all__ = ["IndexEntry"]


@dataclass(slots=True)
class IndexEntry:
    """A single message summary in the index.

    ``id`` is the zero-based position of the message in the *current* history; it is
    recomputed every turn by reconciliation. The entry's identity is ``message_id``
    plus ``content_hash``: a deleted message drops out, an edited one is re-summarized.

    Attributes:
        id: Zero-based position in the current message list.
        role: Message role (``"human"``, ``"ai"``, ``"tool"``, ``"system"``...).
        summary: At most three sentences describing the message.
        original_tokens: Estimated token count of the original message.
        indexing_latency_ms: Time spent producing this summary.
        message_id: The ``BaseMessage.id`` this entry belongs to.
        content_hash: Hash of the message content the summary was made from.
        name: Tool name for tool messages (or the message ``name``), if any.
        status: How the summary was produced: ``"summarized"`` (a model),
            ``"verbatim"`` (short message), ``"extractive"`` (offline engine),
            ``"fallback"`` (the model failed or answered unusably; extractive instead),
            ``"pending"`` (provisional, made at selection time, never saved).
        vector: An embedding of the message's summary (base64 float16), written by
            releases before 0.2 and kept when read back. Nothing writes or reads it now:
            the local selector embeds each message's passages itself and caches them
            per process, so an entry in a checkpoint is a third of its former size.
        vector_model: Id of the model that made ``vector``.
    """

    id: int
    role: str
    summary: str
    original_tokens: int = 0
    indexing_latency_ms: float = 0.0
    message_id: str | None = None
    content_hash: str = ""
    name: str | None = None
    status: EntryStatus = "summarized"
    vector: str | None = None
    vector_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict, the form kept in graph state and stores."""
        # Built by hand: dataclasses.asdict deep-copies every value and was most of the
        # cost of saving a 5,000-entry index.
        return {
            "id": self.id,
            "role": self.role,
            "summary": self.summary,
            "original_tokens": self.original_tokens,
            "indexing_latency_ms": self.indexing_latency_ms,
            "message_id": self.message_id,
            "content_hash": self.content_hash,
            "name": self.name,
            "status": self.status,
            "vector": self.vector,
            "vector_model": self.vector_model,
        }

    @classmethod
    def from_dict(cls, data: Any) -> IndexEntry:
        """Build an entry from a dict (or pass an entry through), validating types.

        Unknown keys (such as ``keywords`` written by 0.1 releases) are ignored.

        Raises:
            ValueError: when a required field is missing or a field has the wrong type.
        """
        if isinstance(data, IndexEntry):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"index entry must be a dict, got {type(data).__name__}")
        try:
            entry = cls(**data)  # fast path: a dict we wrote ourselves
        except TypeError:
            try:
                entry = cls(**{k: v for k, v in data.items() if k in _FIELD_NAMES})
            except TypeError as exc:
                raise ValueError(f"invalid index entry: {exc}") from None
        problem = _type_problem(entry)
        if problem:
            where = f"message_id={data.get('message_id')!r}"
            raise ValueError(f"invalid index entry ({where}): {problem}")
        return entry


_INT_LIMIT = 2**63
"""Above this an int cannot be checkpointed (msgpack: "Integer exceeds 64-bit range")."""


def _type_problem(entry: IndexEntry) -> str | None:
    """What is wrong with a deserialized entry's field types, if anything."""
    if type(entry.id) is not int or not 0 <= entry.id < _INT_LIMIT:
        return f"id must be a non-negative int, got {entry.id!r}"
    if type(entry.role) is not str or type(entry.summary) is not str:
        return "role and summary must be strings"
    if type(entry.original_tokens) is not int or not 0 <= entry.original_tokens < _INT_LIMIT:
        return f"original_tokens must be a non-negative int, got {entry.original_tokens!r}"
    if type(entry.indexing_latency_ms) not in (float, int):
        return "indexing_latency_ms must be a number"
    if type(entry.status) is not str or entry.status not in _STATUSES:
        return f"unknown status {entry.status!r}"
    for name in ("message_id", "name", "vector", "vector_model"):
        value = getattr(entry, name)
        if value is not None and type(value) is not str:
            return f"{name} must be a string or null"
    if type(entry.content_hash) is not str:
        return "content_hash must be a string"
    return None


_FIELD_NAMES = frozenset(f.name for f in fields(IndexEntry))


def entries_from_dicts(items: Any) -> list[IndexEntry]:
    """Coerce a stored index (dicts or entries) into ``IndexEntry`` objects.

    Raises:
        ValueError: when ``items`` is not a list or an entry is invalid.
    """
    if items is None:
        return []
    if not isinstance(items, list | tuple):
        raise ValueError(f"index must be a list, got {type(items).__name__}")
    return [IndexEntry.from_dict(item) for item in items]


def entries_to_dicts(entries: list[IndexEntry]) -> list[dict[str, Any]]:
    """Serialize entries for state or a store."""
    return [entry.to_dict() for entry in entries]
