"""``librarian demo``: a long conversation, indexed and queried through the real graph."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver

from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.evals.datasets.synthetic import generate_conversation
from langgraph_librarian.evals.metrics import evidence_recall
from langgraph_librarian.graph import create_librarian_graph
from langgraph_librarian.index.pipeline import update_index
from langgraph_librarian.tokens import count_tokens

__all__ = ["run_demo"]

_BATCH = 20


def _offline_agent(state: dict[str, Any]) -> dict[str, Any]:
    curated = state.get("curated_messages") or state["messages"]
    return {
        "messages": [
            AIMessage(
                content=f"(offline demo: no answering model; "
                f"{len(curated)} curated messages were ready)"
            )
        ]
    }


def _model_agent(model: BaseChatModel) -> Any:
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(list(state["curated_messages"]))]}

    return agent


def run_demo(
    *,
    seed: int = 11,
    n_messages: int = 240,
    n_facts: int = 12,
    noise: str = "medium",
    model: BaseChatModel | None = None,
    as_json: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> dict[str, Any]:
    """Build, index and query a synthetic conversation; print a report; return the data."""
    conv = generate_conversation(
        seed, n_messages=n_messages, noise=noise, n_facts=n_facts, conv_id="demo"
    )
    config = LibrarianConfig(indexer_model=model, selector_model=model)

    def say(*parts: object) -> None:
        if not as_json:
            print(*parts, file=out)

    total_tokens = count_tokens(conv.messages)
    say(
        f"Conversation: {len(conv.messages)} messages, {total_tokens:,} tokens, "
        f"{len(conv.questions)} questions (seed {seed}, noise {noise})."
    )

    # Index in batches, as turns would arrive, with a progress bar.
    entries: list[IndexEntry] = []
    start = time.perf_counter()
    for end in range(_BATCH, len(conv.messages) + _BATCH, _BATCH):
        entries = update_index(conv.messages[:end], entries, config).entries
        if not as_json:
            done = min(end, len(conv.messages))
            bar = "#" * (28 * done // len(conv.messages))
            err.write(f"\rindexing [{bar:<28}] {done}/{len(conv.messages)}")
            err.flush()
    index_seconds = time.perf_counter() - start
    if not as_json:
        err.write("\n")
    say(
        f"Indexed in {index_seconds:.2f} s ({len(conv.messages) / index_seconds:,.0f} messages/s, "
        f"{'model ' + type(model).__name__ if model else 'offline engine'}).\n"
    )

    graph = create_librarian_graph(
        _model_agent(model) if model else _offline_agent, config, checkpointer=MemorySaver()
    )
    cfg: RunnableConfig = {"configurable": {"thread_id": f"demo-{seed}"}}
    graph.update_state(cfg, {"messages": conv.messages, "index": [e.to_dict() for e in entries]})
    rows: list[dict[str, Any]] = []
    for question in conv.questions:
        start = time.perf_counter()
        result = graph.invoke({"messages": [HumanMessage(question.text)]}, cfg)
        elapsed = (time.perf_counter() - start) * 1000
        meta = result["librarian_metadata"]
        curated = result["curated_messages"]
        recall = evidence_recall(question.evidence, curated)
        by_pos = {e.id: e for e in entries}
        selected = [(i, by_pos[i].summary) for i in meta["selected_ids"] if i in by_pos]
        row = {
            "question": question.text,
            "category": question.category,
            "answer": question.answer,
            "selected_ids": meta["selected_ids"],
            "needed_present": recall == 1.0,
            "evidence_recall": recall,
            "context_tokens": meta["curated_tokens"],
            "full_tokens": meta["original_tokens"],
            "latency_ms": round(elapsed, 1),
            "strategy": meta.get("selection_strategy"),
            "reply": str(result["messages"][-1].content)[:300],
        }
        rows.append(row)
        say(f"Q: {question.text}   [{question.category}; gold: {question.answer}]")
        for position, line in selected[:6]:
            say(f"   #{position:<4} {line[:110]}")
        if len(selected) > 6:
            say(f"   ... and {len(selected) - 6} more")
        mark = "yes" if recall == 1.0 else f"NO (recall {recall:.2f})"
        say(
            f"   needed messages present: {mark}; context {meta['curated_tokens']:,} of "
            f"{meta['original_tokens']:,} tokens ({meta['token_reduction_pct']:.1f}% saved); "
            f"{elapsed:.0f} ms\n"
        )
        if model is not None:
            say(f"   reply: {row['reply']}\n")
    present = sum(r["needed_present"] for r in rows)
    summary: dict[str, Any] = {
        "messages": len(conv.messages),
        "questions": len(rows),
        "needed_present": present,
        "context_success": present / max(len(rows), 1),
        "mean_context_tokens": sum(r["context_tokens"] for r in rows) / max(len(rows), 1),
        "mean_full_tokens": sum(r["full_tokens"] for r in rows) / max(len(rows), 1),
        "indexing_seconds": round(index_seconds, 3),
    }
    summary["token_share"] = summary["mean_context_tokens"] / max(summary["mean_full_tokens"], 1)
    if as_json:
        print(json.dumps({"summary": summary, "questions": rows}, indent=2), file=out)
        return {"summary": summary, "questions": rows}
    say("| category | questions | needed messages present | mean context tokens |")
    say("|---|---:|---:|---:|")
    for category in sorted({r["category"] for r in rows}):
        mine = [r for r in rows if r["category"] == category]
        say(
            f"| {category} | {len(mine)} | {sum(r['needed_present'] for r in mine)}/{len(mine)} | "
            f"{sum(r['context_tokens'] for r in mine) / len(mine):,.0f} |"
        )
    say(
        f"| all | {len(rows)} | {present}/{len(rows)} ({summary['context_success']:.0%}) | "
        f"{summary['mean_context_tokens']:,.0f} "
        f"(vs {summary['mean_full_tokens']:,.0f} brute force, "
        f"{summary['token_share']:.1%}) |"
    )
    return {"summary": summary, "questions": rows}
