"""Scoped recall for LangChain ``create_agent``: ephemeral evidence before each model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AnyMessage
from langgraph.runtime import Runtime

from langgraph_librarian._kit.run import current_run_config, run_context, thread_id
from langgraph_librarian.recall._memory import ScopeMemory, check_memory
from langgraph_librarian.recall._records import clean_text
from langgraph_librarian.recall._result import RecallResult
from langgraph_librarian.recall._turn import (
    acapture_turn,
    arecall_for_turn,
    capture_turn,
    recall_for_turn,
)

__all__ = ["RecallMiddleware", "RecallMiddlewareState", "recall_report"]

_REPORT_TEXT_CHARS = 2_000


class RecallMiddlewareState(AgentState[Any]):
    """Agent state plus, with ``report=True``, the last turn's recall report."""

    librarian_recall: NotRequired[dict[str, Any]]


def recall_report(result: RecallResult) -> dict[str, Any]:
    """A recall as JSON-safe data: status, reason, scope, selector and the records.

    ``model_picks`` and ``kept_local`` say, for a selector model, how many records it
    picked itself and how many are offline picks kept next to its own (``None`` / 0
    with the offline selector).

    Each record has its ``text`` (cut at 2,000 characters), ``thread_id``,
    ``message_id``, ``role``, ``name`` (the speaker's, when the message had one),
    ``kind`` and ``created_at``: where it came from. ``embedding_error`` is there when
    the embedding model failed and the records were ranked by their words alone.
    """
    report: dict[str, Any] = {
        "status": result.status,
        "reason": result.reason,
        "scope": result.scope,
        "strategy": result.strategy,
        "model_picks": result.model_picks,
        "kept_local": result.kept_local,
        "records": [
            {
                "text": r.text[:_REPORT_TEXT_CHARS],
                "thread_id": None if r.thread_id is None else clean_text(r.thread_id),
                "message_id": None if r.message_id is None else clean_text(r.message_id),
                "role": r.role,
                "name": r.name,
                "kind": r.kind,
                "created_at": r.created_at,
            }
            for r in result.records
        ],
    }
    if result.embedding_error:
        report["embedding_error"] = result.embedding_error
    return report


class RecallMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Hands the model the scope's recalled memory, never writing it to state.

    Before each model call (``wrap_model_call``) the turn's recall (prepared once per
    user turn, cached by scope and latest human message) is put in front of the
    request's messages as one ``SystemMessage`` worded as untrusted evidence, via
    ``request.override(messages=...)``: nothing recalled reaches ``messages`` or the
    checkpoint. An empty result or any failure passes the messages unchanged and is
    logged (configuration and authentication problems at ERROR, outages at WARNING).

    With ``capture_turns=True``, ``after_agent`` copies the completed turn into scope
    memory (with its summaries), so later threads of the same scope can recall it.

    The scope comes from the run context: declare ``context_schema=RecallScope`` (or
    any context with a ``scope_id``) and pass ``context=RecallScope(scope_id=...)``.
    With :class:`~langgraph_librarian.LibrarianMiddleware`, list the Librarian first:
    it curates the thread, then this middleware adds scope evidence outside the
    Librarian's token budget.

    With ``report=True``, ``after_agent`` writes what the turn recalled to
    ``state["librarian_recall"]`` (:func:`recall_report`: status, scope, and each
    record with its text and the thread it came from), the way the Librarian writes
    ``librarian_metadata``. The recalled text then is in the checkpoint too (only the
    last turn's: the key is overwritten each turn); it never enters ``messages``.

    Args:
        memory: The scope memory to recall from (and capture into).
        capture_turns: Copy completed turns into scope memory (opt-in).
        report: Keep the last turn's recall in ``state["librarian_recall"]`` (opt-in).

    Example:
        ```python
        agent = create_agent(
            model,
            middleware=[LibrarianMiddleware(), RecallMiddleware(memory, capture_turns=True)],
            context_schema=RecallScope,
            checkpointer=checkpointer,
        )
        agent.invoke({"messages": [...]}, config, context=RecallScope(scope_id="user:42"))
        ```
    """

    # Typed on AgentState, not on its own schema: AgentMiddleware is invariant in its state
    # parameter, so a list mixing middleware of different schemas failed to type-check in
    # users' create_agent calls. LangChain reads the schema from ``state_schema``.
    state_schema = RecallMiddlewareState

    def __init__(
        self, memory: ScopeMemory, *, capture_turns: bool = False, report: bool = False
    ) -> None:
        super().__init__()
        self.memory = check_memory(memory, "RecallMiddleware")
        for name, flag in (("capture_turns", capture_turns), ("report", report)):
            if not isinstance(flag, bool):
                raise TypeError(f"RecallMiddleware: {name} must be True or False, got {flag!r}")
        self.capture_turns = capture_turns
        self.report = report

    @staticmethod
    def _apply(request: ModelRequest[Any], result: RecallResult) -> ModelRequest[Any]:
        if result.message() is None:
            return request
        return request.override(messages=cast(list[AnyMessage], result.apply(request.messages)))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        result = recall_for_turn(
            self.memory,
            run_context(request.runtime),
            request.messages,
            current_run_config(),
            # The model may get a curated part (the Librarian first): nothing of the
            # whole thread is recalled to it.
            history=self._messages(request.state),
        )
        return handler(self._apply(request, result))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        result = await arecall_for_turn(
            self.memory,
            run_context(request.runtime),
            request.messages,
            current_run_config(),
            history=self._messages(request.state),
        )
        return await handler(self._apply(request, result))

    def _messages(self, state: Any) -> list[AnyMessage]:
        return list(state.get("messages") or []) if isinstance(state, dict) else []

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        update = None
        if self.report:  # the turn's cached result: no second store or selector call
            messages = self._messages(state)
            result = recall_for_turn(
                self.memory, run_context(runtime), messages, current_run_config(), log=False
            )
            update = {"librarian_recall": recall_report(result)}
        if self.capture_turns:
            capture_turn(self.memory, run_context(runtime), state, thread_id(runtime=runtime))
        return update

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        update = None
        if self.report:
            messages = self._messages(state)
            context = run_context(runtime)
            result = await arecall_for_turn(
                self.memory, context, messages, current_run_config(), log=False
            )
            update = {"librarian_recall": recall_report(result)}
        if self.capture_turns:
            await acapture_turn(
                self.memory, run_context(runtime), state, thread_id(runtime=runtime)
            )
        return update
