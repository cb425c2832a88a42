"""The index entry: one short summary per message, keyed by message identity."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

EntryStatus = Literal["summarized", "verbatim", "extractive", "fallback", "pending"]
_STATUSES = frozenset({"summarized", "verbatim", "extractive", "fallback", "pending"})

__all__ = ["EntryStatus", "IndexEntry", "entries_from_dicts", "entries_to_dicts"]


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
        status: How the summary was produced; ``"fallback"`` marks a model failure.
        keywords: Salient terms (names, numbers, rare words) used by the local selector.
        vector: Embedding of the message (base64 float16, unit length) when the
            local selector has an embedding model; computed once at index time.
        vector_model: Id of the model that made ``vector``
            (:func:`~langgraph_librarian.embeddings.embedding_model_id`); a query
            embedded by another model is never compared with it. ``None`` for
            vectors stored before models were recorded.
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
    keywords: list[str] = field(default_factory=list)
    vector: str | None = None
    vector_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict, the form kept in graph state and stores."""
        data = asdict(self)
        data["keywords"] = list(self.keywords)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> IndexEntry:
        """Build an entry from a dict (or pass an entry through), validating types.

        Raises:
            ValueError: when required fields are missing or have the wrong type.
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
                raise ValueError(f"invalid index entry {data!r}: {exc}") from None
        if isinstance(entry.id, bool) or not isinstance(entry.id, int):
            raise ValueError(f"index entry id must be an int, got {entry.id!r}")
        if not isinstance(entry.role, str) or not isinstance(entry.summary, str):
            raise ValueError(f"index entry role/summary must be strings: {data!r}")
        if entry.status not in _STATUSES:
            raise ValueError(f"unknown index entry status {entry.status!r}")
        if entry.message_id is not None and not isinstance(entry.message_id, str):
            entry.message_id = str(entry.message_id)
        if not isinstance(entry.keywords, list) or not all(
            isinstance(k, str) for k in entry.keywords
        ):
            entry.keywords = [str(k) for k in (entry.keywords or [])]
        if entry.vector is not None and not isinstance(entry.vector, str):
            raise ValueError("index entry vector must be a base64 string")
        if entry.vector_model is not None and not isinstance(entry.vector_model, str):
            entry.vector_model = str(entry.vector_model)
        return entry


_FIELD_NAMES = frozenset(f.name for f in fields(IndexEntry))


def entries_from_dicts(items: Any) -> list[IndexEntry]:
    """Coerce a stored index (dicts or entries) into ``IndexEntry`` objects."""
    if items is None:
        return []
    if not isinstance(items, list | tuple):
        raise ValueError(f"index must be a list, got {type(items).__name__}")
    return [IndexEntry.from_dict(item) for item in items]


def entries_to_dicts(entries: list[IndexEntry]) -> list[dict[str, Any]]:
    """Serialize entries for state or a store."""
    return [entry.to_dict() for entry in entries]
