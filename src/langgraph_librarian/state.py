"""Graph state for the Librarian, with reducers that keep the index safe."""

from __future__ import annotations

import operator
from itertools import compress
from typing import Annotated, Any, Required

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langgraph_librarian.entry import IndexEntry

__all__ = ["LibrarianState", "merge_index", "merge_metadata"]

TURN_START_KEY = "selection_skipped"
"""Every select_and_hydrate metadata update carries this key; it starts a new record."""


_CLEARED_KEY = "librarian_index_cleared"


def cleared_index() -> list[dict[str, Any]]:
    """What the index node writes when the conversation is gone (every message removed):
    an update ``merge_index`` reads as "now empty" (a plain ``[]`` leaves the index)."""
    return [{_CLEARED_KEY: True}]


def is_cleared_index(value: object) -> bool:
    """True for :func:`cleared_index`'s update."""
    return (
        isinstance(value, list | tuple)
        and len(value) == 1
        and isinstance(value[0], dict)
        and value[0].get(_CLEARED_KEY) is True
    )


def merge_index(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Replace the index, except that an empty list leaves it as it is.

    The spec's examples send ``"index": []`` with every call; with a plain
    last-value channel that would wipe the persisted index each turn. When every
    message of the thread is removed (``RemoveMessage(id=REMOVE_ALL_MESSAGES)``), the
    index node writes a marker that empties it: the index of a forgotten conversation
    does not outlive it.
    """
    if is_cleared_index(right):
        return []
    if right is not None and not isinstance(right, list | tuple):
        raise ValueError(
            "state['index'] must be a list of index entries (IndexEntry.to_dict() dicts), "
            f"got {type(right).__name__}; send [] or leave it out to keep the thread's index"
        )
    if not right:
        return list(left or [])
    _check_new_entries(left or [], right)
    return list(right)


def _check_new_entries(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> None:
    """Raise ``ValueError`` for an invalid entry ``right`` brings in, before it is stored.

    A malformed ``"index"`` in a graph's input would otherwise be checkpointed and make
    every later turn of the thread fail; raising here rejects that input and leaves the
    thread as it was. Only entries that are not last value's own dict objects at the
    same position are parsed (the index node hands those back unchanged), so a turn
    that appends a few entries checks a few.
    """
    shared = min(len(left), len(right))
    first_new = next(compress(range(shared), map(operator.is_not, left, right)), shared)
    for item in right[first_new:]:
        if not isinstance(item, IndexEntry):
            IndexEntry.from_dict(item)


def merge_metadata(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge within a turn; start afresh when selection reports a new turn.

    ``select_and_hydrate`` always writes ``selection_skipped``, which replaces the
    previous turn's record; ``index_messages`` then adds its keys to it. So the
    metadata after a turn describes that turn only.
    """
    if right is None:
        return dict(left or {})
    if TURN_START_KEY in right:
        return dict(right)
    return {**(left or {}), **right}


class LibrarianState(TypedDict, total=False):
    """State schema of the Librarian graph; extend it with your own fields.

    Attributes:
        messages: Full conversation history (``add_messages`` reducer).
        query: Current user query; when absent, the latest human message is used.
            It is consumed at the end of the turn so it is never reused.
        index: Summary index as JSON-safe dicts (``IndexEntry.to_dict()``); an
            input of ``[]`` never wipes it.
        selected_ids: Positions selected this turn.
        curated_messages: Selected + recent messages: give these to your model.
            Checkpointed (replaced each turn, never accumulated), so an agent node that
            calls ``interrupt()``, or is retried after an error, gets the same context
            when it runs again.
        librarian_metadata: Metrics and debug info for the current turn.
        librarian_summary: The running summary of older messages (the gist), when
            ``LibrarianConfig(running_summary_tokens=...)`` is set.
    """

    messages: Required[Annotated[list[AnyMessage], add_messages]]
    query: str
    index: Annotated[list[dict[str, Any]], merge_index]
    selected_ids: list[int]
    curated_messages: list[AnyMessage]
    librarian_metadata: Annotated[dict[str, Any], merge_metadata]
    librarian_summary: dict[str, Any]
