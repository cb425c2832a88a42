"""``librarian demo``: a long conversation, indexed and queried through the real graph.

For each question the demo shows the evidence: the selected messages with the passage
that matched the question (its best-scoring BM25 passage, the signal the offline
selector ranks by), a mark on the messages the question needs and on the older values a
change superseded, the needed messages the selection missed, and whether embeddings
took part. By default it shows one question of each kind and the summary table;
``verbose=True`` (``librarian demo --verbose``) shows every question and every pick.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any, TextIO

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_librarian._apps.demo_conversation import DemoQuestion, generate_conversation
from langgraph_librarian._apps.progress import ProgressPrinter
from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.text import content_terms, one_line
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.graph import create_librarian_graph
from langgraph_librarian.hydrate import COMPACT_MARK
from langgraph_librarian.index.pipeline import update_index
from langgraph_librarian.select.lexical import BM25Index
from langgraph_librarian.tokens import count_tokens

__all__: list[str] = []

_BATCH = 20
_MARK = 10  # width of the mark column: "SUPERSEDED"
_EXCERPT = 190
_WORD = re.compile(r"\w+")


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


def _excerpt(passage: str, query: str) -> str:
    """The passage, cut around its first query word when it is long."""
    text = " ".join(passage.split())
    if len(text) <= _EXCERPT:
        return text
    wanted = set(content_terms(query))
    start = 0
    for match in _WORD.finditer(text):
        if set(content_terms(match.group(0))) & wanted:
            start = max(0, match.start() - 40)
            break
    start = min(start, len(text) - _EXCERPT)
    cut = text[start : start + _EXCERPT]
    return ("..." if start else "") + cut + ("..." if start + _EXCERPT < len(text) else "")


class _Evidence:
    """Why each message matched a question: its best BM25 passage over the conversation."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.index = BM25Index()

    def sync(self, messages: Sequence[BaseMessage]) -> None:
        """Add the messages the thread gained (the demo's own questions and replies)."""
        for message in messages[len(self.texts) :]:
            self.texts.append(message_text(message))
            self.index.add(str(len(self.texts) - 1), self.texts[-1])

    def passages(self, query: str, positions: Sequence[int]) -> dict[int, str | None]:
        _, best = self.index.score_passages(query)
        found: dict[int, str | None] = {}
        for position in positions:
            pid = int(best[position]) if position < len(best) else -1
            found[position] = _excerpt(self.index.passage_text(pid), query) if pid >= 0 else None
        return found


def _evidence_recall(evidence: Sequence[str], context: Sequence[BaseMessage]) -> float:
    """Share of the needed messages in ``context`` in full (a shortened one does not count)."""
    present = {m.id for m in context if not m.additional_kwargs.get(COMPACT_MARK)}
    return sum(1 for e in evidence if e in present) / len(evidence) if evidence else 1.0


def _embeddings_line(
    config: LibrarianConfig, model: BaseChatModel | None
) -> tuple[str, str | None]:
    embeddings = resolve_embeddings(config)
    name = type(embeddings).__name__ if embeddings is not None else None
    engine = f"model {type(model).__name__}" if model else "offline engine"
    if name:
        return f"Engine: {engine}; embeddings: {name} (fused with passage-level BM25).", name
    return (
        f"Engine: {engine}; embeddings: none, lexical only (turned off; the packaged "
        "model needs no install: unset LIBRARIAN_EMBEDDINGS to use it).",
        None,
    )


def _question_rows(
    question: DemoQuestion,
    meta: dict[str, Any],
    ids: dict[int, str],
    evidence: _Evidence,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(selected messages, needed messages that were not selected), with their passages."""
    needed_ids = set(question.evidence)
    older_ids = set(question.superseded)
    # A selection sent as its summary (too long for the budget) is not sent in full.
    shortened = set(meta.get("shortened_selected_ids") or [])
    selected: list[int] = [p for p in meta["selected_ids"] if p not in shortened]
    expanded = set(meta.get("expanded_ids") or [])
    needed = [p for p, mid in ids.items() if mid in needed_ids]
    missed = [p for p in needed if p not in selected]
    passages = evidence.passages(question.text, [*selected, *missed])
    current = [p for p in needed if p in selected]
    picked = [
        {
            "position": p,
            "needed": ids.get(p) in needed_ids,
            "superseded": ids.get(p) in older_ids,
            "replaced_by": current if ids.get(p) in older_ids else [],
            "expanded": p in expanded,
            "passage": passages[p],
            "opening": one_line(evidence.texts[p], 90) if p < len(evidence.texts) else "",
        }
        for p in selected
    ]
    missing = [
        {"position": p, "needed": True, "passage": passages[p], "shortened": p in shortened}
        for p in missed
    ]
    return picked, missing


def _print_question(
    say: Any,
    picked: list[dict[str, Any]],
    missing: list[dict[str, Any]],
    embedded: bool,
    verbose: bool = True,
) -> None:
    key = [r for r in picked if r["needed"] or r["superseded"]]
    # The short report keeps only the messages that decide the answer; --verbose lists
    # every pick, as its help says.
    shown = picked if verbose else key
    for row in shown:
        mark = (
            "NEEDED"
            if row["needed"]
            else "SUPERSEDED"
            if row["superseded"]
            else ("added" if row["expanded"] else "")
        )
        passage = row["passage"]
        if passage is None:
            passage = (
                "(no shared words: picked by embedding similarity)"
                if embedded and not row["expanded"]
                else "(no shared words: brought in by dependency expansion)"
            )
            if row.get("opening"):
                passage = f'{passage} "{row["opening"]}"'
        else:
            passage = f'"{passage}"'
        if row["superseded"] and row["replaced_by"]:
            later = ", ".join(f"#{p}" for p in row["replaced_by"])
            passage = f"{passage} (old value, replaced by {later})"
        say(f"   #{row['position']:<4} {mark:<{_MARK}} {passage}")
    if len(picked) > len(shown):
        more = "" if verbose else " (--verbose lists them)"
        say(f"   ... and {len(picked) - len(shown)} more picked{more}")
    for row in missing:
        passage = f'"{row["passage"]}"' if row["passage"] else "(no passage matches)"
        note = " (only its summary fit the budget)" if row.get("shortened") else ""
        say(f"   #{row['position']:<4} {'MISSED':<{_MARK}} {passage}{note}")


def run_demo(
    *,
    seed: int = 11,
    n_messages: int = 240,
    n_facts: int = 12,
    noise: str = "medium",
    model: BaseChatModel | None = None,
    as_json: bool = False,
    verbose: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> dict[str, Any]:
    """Build, index and query the demo conversation; print a report; return the data.

    The printed report shows one question of each kind (``verbose=True``: every question
    with every pick) and a table over all of them; the returned data has everything.

    Example:
        >>> import io
        >>> report = run_demo(n_messages=40, as_json=True, out=io.StringIO())
        >>> report["summary"]["questions"] > 0
        True
    """
    out = out if out is not None else sys.stdout  # at call time: stdout may be replaced
    err = err if err is not None else sys.stderr
    conv = generate_conversation(
        seed, n_messages=n_messages, noise=noise, n_facts=n_facts, conv_id="demo"
    )
    config = LibrarianConfig(indexer_model=model, selector_model=model)

    def say(*parts: object, sep: str = " ") -> None:
        if not as_json:
            print(*parts, sep=sep, file=out)

    total_tokens = count_tokens(conv.messages)
    engine_line, embeddings_name = _embeddings_line(config, model)
    say(
        f"Conversation: {len(conv.messages)} messages, {total_tokens:,} tokens, "
        f"{len(conv.questions)} questions (seed {seed}, noise {noise})."
    )
    say(engine_line)

    # Index in batches, as turns would arrive.
    entries: list[IndexEntry] = []
    progress = None if as_json else ProgressPrinter(err)
    start = time.perf_counter()
    for end in range(_BATCH, len(conv.messages) + _BATCH, _BATCH):
        entries = update_index(conv.messages[:end], entries, config).entries
        if progress is not None:
            progress("indexing messages", min(end, len(conv.messages)), len(conv.messages))
    index_seconds = time.perf_counter() - start
    say(f"Indexed in {index_seconds:.2f} s ({len(conv.messages) / index_seconds:,.0f} messages/s).")
    say(
        *textwrap.wrap(
            "Per question: the messages picked (#position in the conversation), best first, "
            "each with its passage closest to the question. NEEDED marks the gold evidence, "
            "SUPERSEDED an older value that a later message changed (sent together with the "
            "change, so the model sees both), MISSED a needed message not picked, added a "
            "message brought in with a pick rather than matched itself (a later change of it "
            "or the statement it changes, the message it replies to or its answer, its "
            "neighbours). A long message is indexed in passages, so the same #number can "
            "show a different passage under another question; the same sentence at "
            "different numbers is chatter the conversation repeats.",
            100,
        ),
        "",
        sep="\n",
    )

    graph = create_librarian_graph(
        _model_agent(model) if model else _offline_agent, config, checkpointer=InMemorySaver()
    )
    cfg: RunnableConfig = {"configurable": {"thread_id": f"demo-{seed}"}}
    graph.update_state(cfg, {"messages": conv.messages, "index": [e.to_dict() for e in entries]})
    # Every question is asked of the same conversation: a fork of its checkpoint (the
    # questions before it, and the offline agent's placeholder replies, are not part of
    # what the next one is asked about).
    base: RunnableConfig = graph.get_state(cfg).config
    evidence = _Evidence()
    ids = {n: str(m.id) for n, m in enumerate(conv.messages)}
    rows: list[dict[str, Any]] = []
    shown_kinds: set[str] = set()
    for question in conv.questions:
        start = time.perf_counter()
        result = graph.invoke({"messages": [HumanMessage(question.text)]}, base)
        elapsed = (time.perf_counter() - start) * 1000
        meta = result["librarian_metadata"]
        recall = _evidence_recall(question.evidence, result["curated_messages"])
        evidence.sync(result["messages"])
        picked, missing = _question_rows(question, meta, ids, evidence)
        row = {
            "question": question.text,
            "category": question.category,
            "answer": question.answer,
            "selected_ids": meta["selected_ids"],
            "evidence_positions": sorted(
                [r["position"] for r in picked if r["needed"]] + [r["position"] for r in missing]
            ),
            "selected": picked,
            "missed": missing,
            "needed_present": recall == 1.0,
            "evidence_recall": recall,
            "context_tokens": meta["curated_tokens"],
            "full_tokens": meta["original_tokens"],
            "latency_ms": round(elapsed, 1),
            "strategy": meta.get("selection_strategy"),
            "reply": str(result["messages"][-1].content)[:300],
        }
        rows.append(row)
        if not verbose and question.category in shown_kinds:
            continue  # the short report: one question of each kind
        shown_kinds.add(question.category)
        say(f"Q: {question.text}   [{question.category}; gold: {question.answer}]")
        _print_question(say, picked, missing, embeddings_name is not None, verbose)
        mark = "yes" if recall == 1.0 else f"NO (recall {recall:.2f})"
        say(
            f"   needed messages present: {mark}; {len(picked)} picked; context "
            f"{meta['curated_tokens']:,} of {meta['original_tokens']:,} tokens "
            f"({meta['token_reduction_pct']:.1f}% saved); {elapsed:.0f} ms\n"
        )
        if model is not None:
            say(f"   reply: {row['reply']}\n")
    summary = _summary(rows, len(conv.messages), index_seconds, embeddings_name)
    if as_json:
        print(json.dumps({"summary": summary, "questions": rows}, indent=2), file=out)
        return {"summary": summary, "questions": rows}
    if not verbose and len(rows) > len(shown_kinds):
        say(
            f"({len(rows) - len(shown_kinds)} more questions were asked; the table counts "
            "them all. librarian demo --verbose shows each one with every pick.)\n"
        )
    _print_table(say, rows, summary)
    return {"summary": summary, "questions": rows}


def _summary(
    rows: list[dict[str, Any]], n_messages: int, index_seconds: float, embeddings: str | None
) -> dict[str, Any]:
    present = sum(r["needed_present"] for r in rows)
    summary: dict[str, Any] = {
        "messages": n_messages,
        "questions": len(rows),
        "needed_present": present,
        "context_success": present / max(len(rows), 1),
        "mean_context_tokens": sum(r["context_tokens"] for r in rows) / max(len(rows), 1),
        "mean_full_tokens": sum(r["full_tokens"] for r in rows) / max(len(rows), 1),
        "indexing_seconds": round(index_seconds, 3),
        "embeddings": embeddings,
    }
    summary["token_share"] = summary["mean_context_tokens"] / max(summary["mean_full_tokens"], 1)
    return summary


def _print_table(say: Any, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    say("| category | questions | needed messages present | mean context tokens |")
    say("|---|---:|---:|---:|")
    for category in sorted({r["category"] for r in rows}):
        mine = [r for r in rows if r["category"] == category]
        say(
            f"| {category} | {len(mine)} | {sum(r['needed_present'] for r in mine)}/{len(mine)} | "
            f"{sum(r['context_tokens'] for r in mine) / len(mine):,.0f} |"
        )
    say(
        f"| all | {len(rows)} | {summary['needed_present']}/{len(rows)} "
        f"({summary['context_success']:.0%}) | {summary['mean_context_tokens']:,.0f} "
        f"(vs {summary['mean_full_tokens']:,.0f} brute force, {summary['token_share']:.1%}) |"
    )
