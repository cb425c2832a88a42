"""One turn of the Librarian, shared by the graph nodes, the middleware and the hook.

``plan_turn`` reads the state (messages, query, index), decides whether selection is
skipped and prepares the candidates; ``finish_turn`` hydrates a selection and reports
metadata; ``index_update_result`` turns an indexing pass into a state update.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages

from langgraph_librarian._messages import latest_human_text
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.hydrate import hydrate, recent_turns_start
from langgraph_librarian.index.pipeline import IndexUpdate, provisional_entries
from langgraph_librarian.index.reconcile import reconcile_index
from langgraph_librarian.select.llm import LLMSelector
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.result import Selection
from langgraph_librarian.tokens import count_tokens

__all__ = [
    "StateUpdate",
    "TurnPlan",
    "finish_turn",
    "index_update_result",
    "make_selector",
    "plan_turn",
    "read_messages",
    "state_entries",
]

StateUpdate = dict[str, Any]


def read_messages(state: dict[str, Any]) -> list[BaseMessage]:
    raw = state.get("messages") or []
    if not isinstance(raw, list | tuple):
        raise ValueError("state['messages'] must be a list of messages")
    if all(isinstance(m, BaseMessage) for m in raw):
        return list(raw)
    return list(convert_to_messages(raw))


def state_entries(state: dict[str, Any]) -> list[IndexEntry]:
    return entries_from_dicts(state.get("index") or [])


def make_selector(config: LibrarianConfig) -> LocalSelector | LLMSelector:
    """The selector the config asks for (the LLM one always wraps a local fallback)."""
    local = LocalSelector(max_selected=config.max_selected, embeddings=resolve_embeddings(config))
    if config.uses_local_selector:
        return local
    return LLMSelector(
        config.get_selector_model(),
        local=local,
        prompt_template=config.selection_prompt,
        token_budget=config.selector_token_budget,
        timeout=config.model_timeout,
        max_retries=config.max_retries,
        retry_backoff=config.retry_backoff,
        token_counter=config.token_counter,
    )


@dataclass
class TurnPlan:
    """Everything selection needs, or the update to return when it is skipped."""

    config: LibrarianConfig
    messages: list[BaseMessage]
    query: str
    candidates: list[IndexEntry]
    exclude: set[int]
    started: float
    index_size: int
    unindexed: int
    original_tokens: int = 0
    skip: StateUpdate | None = None


def _skipped(
    messages: list[BaseMessage],
    config: LibrarianConfig,
    reason: str,
    started: float,
    extra: dict[str, Any] | None = None,
) -> StateUpdate:
    metadata = {
        "selection_skipped": True,
        "reason": reason,
        "selected_ids": [],
        "selection_reasoning": "",
        "original_count": len(messages),
        "original_tokens": count_tokens(messages, config.token_counter),
        "curated_count": len(messages),
        "token_reduction_pct": 0.0,
        **(extra or {}),
    }
    metadata["curated_tokens"] = metadata["original_tokens"]
    metadata["selection_latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return {"curated_messages": list(messages), "selected_ids": [], "librarian_metadata": metadata}


def plan_turn(
    state: dict[str, Any], config: LibrarianConfig, stored: list[IndexEntry] | None, started: float
) -> TurnPlan:
    messages = read_messages(state)
    explicit = state.get("query")
    query = (
        explicit if isinstance(explicit, str) and explicit.strip() else latest_human_text(messages)
    )
    entries = stored if stored is not None else state_entries(state)
    plan = TurnPlan(config, messages, query, [], set(), started, len(entries), 0)
    if not messages:
        plan.skip = _skipped(messages, config, "no messages", started)
        return plan
    if not query.strip():
        plan.skip = _skipped(messages, config, "no query", started)
        return plan
    recent_start = recent_turns_start(messages, config.always_include_recent_turns)
    if recent_start == 0 or not any(m.type != "system" for m in messages[:recent_start]):
        plan.skip = _skipped(messages, config, "no earlier messages to select from", started)
        return plan
    if not entries:
        too_big = (
            config.context_token_budget is not None
            and count_tokens(messages, config.token_counter) > config.context_token_budget
        )
        if not too_big:
            plan.skip = _skipped(messages, config, "no index", started)
            return plan
    rec = reconcile_index(messages, entries)
    plan.unindexed = sum(1 for p in rec.missing if p < recent_start)
    complete = (
        provisional_entries(messages, rec, config, recent_start) if rec.missing else rec.complete()
    )
    # Token counts were taken at index time: only recent unindexed messages are counted now.
    unindexed_recent = [messages[p] for p in rec.missing if p >= recent_start]
    plan.original_tokens = sum(e.original_tokens for e in complete) + count_tokens(
        unindexed_recent, config.token_counter
    )
    plan.exclude = set(range(recent_start, len(messages)))
    plan.candidates = [
        e for e in complete if e.id < recent_start and messages[e.id].type != "system"
    ]
    return plan


def finish_turn(plan: TurnPlan, selection: Selection) -> StateUpdate:
    config, messages = plan.config, plan.messages
    hydrated = hydrate(
        messages,
        selection.ids,
        recent_turns=config.always_include_recent_turns,
        token_budget=config.context_token_budget,
        token_counter=config.token_counter,
    )
    metadata: dict[str, Any] = {
        "original_count": len(messages),
        "original_tokens": plan.original_tokens,
    }
    curated_tokens = count_tokens(hydrated.messages, config.token_counter)
    original = plan.original_tokens
    metadata.update(
        {
            "selection_skipped": False,
            "selected_ids": hydrated.selected,
            "selection_reasoning": selection.reasoning,
            "selection_strategy": selection.strategy,
            "selection_fallback": selection.strategy == "local_fallback",
            "curated_count": len(hydrated.messages),
            "curated_tokens": curated_tokens,
            "token_reduction_pct": round(100.0 * (1 - curated_tokens / original), 2)
            if original
            else 0.0,
            "query": plan.query[:500],
            "index_size": plan.index_size,
            "unindexed_count": plan.unindexed,
            "candidate_count": len(plan.candidates),
            "selector_shortlisted": selection.shortlisted,
            "selector_prompt_tokens": selection.prompt_tokens,
            "expanded_ids": [p for p in selection.expanded_ids if p in hydrated.selected],
            "dropped_for_budget": hydrated.dropped_for_budget,
        }
    )
    if selection.fallback_reason:
        metadata["fallback_reason"] = selection.fallback_reason
    metadata["selection_latency_ms"] = round((time.perf_counter() - plan.started) * 1000, 3)
    return {
        "curated_messages": hydrated.messages,
        "selected_ids": hydrated.selected,
        "librarian_metadata": metadata,
    }


def index_update_result(
    state: dict[str, Any], update: IndexUpdate, *, in_state: bool = True
) -> StateUpdate:
    """State update for an indexing pass.

    With ``in_state=False`` (an external store holds the index) the index is left out
    of the update, so checkpoints do not carry a second copy of it.
    """
    metadata: dict[str, Any] = {
        "indexing_new_count": update.new_count,
        "indexing_total_count": len(update.entries),
        "indexing_latency_ms": update.latency_ms,
        "indexing_failed_count": update.failed_count,
        "indexing_dropped_count": update.dropped_count,
        "indexing_reused_count": update.reused_count,
    }
    if update.errors:
        metadata["indexing_errors"] = update.errors[:10]
    result: StateUpdate = {"librarian_metadata": metadata}
    if in_state:
        result["index"] = entries_to_dicts(update.entries)
    if state.get("query"):
        result["query"] = ""  # consumed: the next turn must not reuse it
    return result
