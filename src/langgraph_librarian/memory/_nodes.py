"""The graph nodes that shorten the history: summarize-and-delete, and plain delete.

Both cut where :func:`~langgraph_librarian.memory.plan_summary_cut` says (whole turns,
whole tool exchanges, system messages never) and delete with one ``RemoveMessage``
per id read from state, so ``add_messages`` never meets an id it does not hold.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.failures import fails_open
from langgraph_librarian._kit.node import LibrarianNode
from langgraph_librarian._kit.state import missing_state_keys, read_messages
from langgraph_librarian.errors import ConfigurationError
from langgraph_librarian.memory._cut import SummaryCut, plan_summary_cut
from langgraph_librarian.memory._graph import SummarizerLike, resolve_summarizer
from langgraph_librarian.memory._result import checked_count
from langgraph_librarian.memory._summarizer import SummaryResult
from langgraph_librarian.tokens import TokenCounter

__all__ = [
    "create_delete_messages_node",
    "create_summarize_node",
    "failure_metadata",
    "waiting_after_failure",
]

logger = logging.getLogger("langgraph_librarian.memory")

StateUpdate = dict[str, Any]

_RETRY_AFTER_MESSAGES = 4
"""After a failed summary, wait for this many more messages before trying again..."""
_MAX_RETRY_AFTER_MESSAGES = 64
"""...doubling after each further failure, up to this many."""


# -- failing open, and not hammering a provider that is down --------------------------------


def failure_metadata(
    exc: BaseException, message_count: int, previous: Any = None
) -> dict[str, Any]:
    """``summary_metadata`` after a failure, with when to try again.

    Without a cool-down a provider that is down would cost a timeout on every later
    turn (nothing was removed, so the threshold stays passed): the next attempt waits
    for a few more messages, twice as many after each further failure.
    """
    failures = _failures(previous) + 1 if isinstance(previous, Mapping) else 1
    wait = _wait(failures)
    return {
        "summarized_count": 0,
        "removed_count": 0,
        "summary_error": f"{type(exc).__name__}: {exc}"[:500],
        "summary_failures": failures,
        "summary_retry_at": message_count + wait,
    }


def waiting_after_failure(metadata: Any, message_count: int) -> bool:
    """True while a failed summary's cool-down (``summary_retry_at``) is running.

    A history shorter than at the failure (cleared, or trimmed by another node) ends
    it: the count it waits for was counted on messages that are gone.
    """
    if not isinstance(metadata, Mapping):
        return False
    retry_at = metadata.get("summary_retry_at")
    if not isinstance(retry_at, int):
        return False
    failed_at = retry_at - _wait(max(1, _failures(metadata)))
    return failed_at <= message_count < retry_at


def _failures(metadata: Mapping[str, Any]) -> int:
    failures = metadata.get("summary_failures")
    return int(failures) if isinstance(failures, int) and not isinstance(failures, bool) else 0


def _wait(failures: int) -> int:
    """Messages to wait for after the ``failures``-th failure in a row."""
    return min(_MAX_RETRY_AFTER_MESSAGES, _RETRY_AFTER_MESSAGES << min(failures - 1, 8))


# -- the summarize node --------------------------------------------------------------------


@dataclass
class _Plan:
    """What one summarize step works on: the history, the cut, the previous summary."""

    messages: list[BaseMessage]
    cut: SummaryCut
    previous: str

    @property
    def old(self) -> list[BaseMessage]:
        return [self.messages[p] for p in self.cut.summarize]

    def removals(self) -> list[RemoveMessage]:
        # Each id once, and only ids present in the state this step read.
        return [RemoveMessage(id=i) for i in dict.fromkeys(str(m.id) for m in self.old)]


def _skipped(reason: str, **extra: Any) -> StateUpdate:
    return {"summary_metadata": {"summarized_count": 0, "summary_skipped": reason, **extra}}


_NO_SUMMARY_FIELD = (
    "create_summarize_node: the graph's state has no 'summary' field, so the summary of "
    "the messages it deletes would be dropped by LangGraph (an update to a key the state "
    "lacks is ignored) and those messages lost. Add the running-summary fields to the "
    "state (class State(MessagesState, SummaryFields), or use SummaryState), or delete "
    "without a summary with create_delete_messages_node."
)


def _plan(
    state: Mapping[str, Any], keep_last: int, config: RunnableConfig | None = None
) -> _Plan | StateUpdate:
    if missing_state_keys(config, ["summary"]):
        raise ConfigurationError(_NO_SUMMARY_FIELD)
    messages = read_messages(state)
    metadata = state.get("summary_metadata")
    if waiting_after_failure(metadata, len(messages)):
        assert isinstance(metadata, Mapping)
        return {"summary_metadata": {**metadata, "summary_skipped": "waiting after a failure"}}
    previous = state.get("summary") or ""
    if not isinstance(previous, str):
        # Bad state loses nothing: no summary is written, no message deleted.
        problem = f"state['summary'] must be a string, not {type(previous).__name__}"
        logger.warning("running summary skipped: %s", problem)
        return {"summary_metadata": {"summarized_count": 0, "summary_error": problem}}
    cut = plan_summary_cut(messages, keep_last)
    if not cut.summarize:
        return _skipped("nothing old enough")
    missing = [p for p in cut.summarize if not messages[p].id]
    if missing:
        # RemoveMessage needs an id; inside a graph add_messages gives every message one.
        logger.warning("running summary skipped: messages without ids at %s", missing[:10])
        return _skipped(f"{len(missing)} message(s) without ids")
    return _Plan(messages, cut, previous)


def _applied(plan: _Plan, result: SummaryResult) -> StateUpdate:
    removals = plan.removals()
    metadata = {
        **result.to_metadata(),
        "removed_count": len(removals),
        "kept_count": len(plan.cut.keep),
        "turn_aligned": plan.cut.turn_aligned,
    }
    return {"summary": result.summary, "messages": removals, "summary_metadata": metadata}


def _failed(exc: Exception, plan: _Plan, state: Mapping[str, Any]) -> StateUpdate:
    logger.warning("running summary failed; messages and summary left as they were", exc_info=True)
    metadata = failure_metadata(exc, len(plan.messages), state.get("summary_metadata"))
    return {"summary_metadata": metadata}


def create_summarize_node(
    summarizer: SummarizerLike = None,
    *,
    keep_last: int = 2,
    token_counter: TokenCounter | None = None,
) -> LibrarianNode:
    """A node that folds old messages into ``summary`` and deletes them.

    Everything except the last ``keep_last`` messages (moved back to a user-turn
    boundary; see :func:`~langgraph_librarian.memory.plan_summary_cut`) is added to
    the previous summary, then removed with one ``RemoveMessage`` per id. If the
    summarizer fails or times out nothing is saved or deleted,
    ``summary_metadata["summary_error"]`` says why, and the next attempt waits for a
    few more messages (more after each further failure); the turn's answer is
    unaffected. A summary model that cannot be created raises.

    Args:
        summarizer: A :class:`RunningSummarizer`, a chat model or ``"provider:model"``
            string (LLM summaries), or ``None`` for the offline extractive summary.
        keep_last: Messages that always stay in ``messages``.
        token_counter: Counts the summary's budget (pass your model's counter for CJK
            text); a ``RunningSummarizer`` with its own counter keeps it.

    Raises:
        ConfigurationError: when run in a graph whose state has no ``summary`` field
            (mix in :class:`SummaryFields`): LangGraph would drop the summary while the
            messages it holds are deleted. Nothing is deleted.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> node = create_summarize_node(keep_last=2)
        >>> update = node({"messages": [HumanMessage("I'm allergic to nuts.", id="1"),
        ...                             AIMessage("Noted.", id="2"),
        ...                             HumanMessage("Lunch?", id="3"),
        ...                             AIMessage("Soup.", id="4")]})
        >>> print(update["summary"])
        - User: I'm allergic to nuts.
        - Assistant: Noted.
        >>> [m.id for m in update["messages"]]
        ['1', '2']
    """
    keep_last = checked_count("keep_last", keep_last, 0)
    engine = resolve_summarizer(summarizer, token_counter)

    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        plan = _plan(state, keep_last, config)
        if not isinstance(plan, _Plan):
            return plan
        try:
            result = engine.summarize(plan.old, plan.previous, config=config)
        except Exception as exc:
            if not fails_open(exc):
                raise
            return _failed(exc, plan, state)
        return _applied(plan, result)

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        plan = _plan(state, keep_last, config)
        if not isinstance(plan, _Plan):
            return plan
        try:
            result = await engine.asummarize(plan.old, plan.previous, config=config)
        except Exception as exc:
            if not fails_open(exc):
                raise
            return _failed(exc, plan, state)
        return _applied(plan, result)

    return LibrarianNode(run, afunc=arun, name="summarize_conversation")


# -- spec 05: delete old messages, no summary --------------------------------------------------


def create_delete_messages_node(keep_last: int = 3) -> LibrarianNode:
    """Spec 05's "delete old messages" node, cutting where the history stays valid.

    Removes every message before the last ``keep_last`` (moved back to a user-turn
    boundary, never splitting a tool exchange, never a system message: see
    :func:`~langgraph_librarian.memory.plan_summary_cut`) with one ``RemoveMessage``
    per id. Nothing is kept of them: use :func:`create_summarize_node` for that. Works
    with any state whose ``messages`` uses ``add_messages``; route to it with
    ``create_summary_router(summarize_node="delete_messages")``.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> node = create_delete_messages_node(keep_last=2)
        >>> history = [HumanMessage("a", id="1"), AIMessage("b", id="2"),
        ...            HumanMessage("c", id="3"), AIMessage("d", id="4")]
        >>> [m.id for m in node({"messages": history})["messages"]]
        ['1', '2']
    """
    keep_last = checked_count("keep_last", keep_last, 0)

    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        messages = read_messages(state)
        cut = plan_summary_cut(messages, keep_last)
        old = [messages[p] for p in cut.summarize]
        if any(not m.id for m in old):
            logger.warning("delete_messages skipped: messages without ids cannot be removed")
            return {}
        return {"messages": [RemoveMessage(id=i) for i in dict.fromkeys(str(m.id) for m in old)]}

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return run(state, config)

    return LibrarianNode(run, afunc=arun, name="delete_messages")
