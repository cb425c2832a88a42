"""Context quality on your own user/assistant chats, written as a small JSON file.

Run: python benchmarks/bench_chats.py chats.json [--misses] [--no-recall] [--json out.json]
     python benchmarks/bench_chats.py chats.json --check

The file holds conversations of sessions of messages, and questions asked after the whole
conversation with the messages that answer them, named by a ``key`` on those messages::

    {"conversations": [{"id": "c1",
       "sessions": [{"messages": [
           {"role": "user", "content": "I'm allergic to sesame.", "key": "allergy"},
           {"role": "assistant", "content": "Noted, I'll keep that in mind."}]}],
       "questions": [
           {"q": "Is tahini okay for me?", "evidence": ["allergy"], "type": "implicit"},
           {"q": "What's my blood type?", "evidence": [], "type": "absent"}]}]}

For each question the Librarian (``LibrarianConfig()`` defaults: the offline engine, the
packaged static model, the ``auto`` budget) curates the context, and BM25 over whole
messages and the most recent messages get the same number of tokens. Scoped recall
captures each session as its own thread of one scope and asks from a fresh thread. A
question succeeds when every evidence message is in the context in full (in the recalled
records, for recall); a question of type ``absent`` (never discussed, no evidence)
succeeds for recall when nothing is recalled. Results are printed per question type.

This is how the blind sets of docs/benchmarks.md ("Twentieth session") were run; the
sets themselves stay outside the repository.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.recall import ScopeMemory
from librarian_bench.metrics import evidence_recall
from librarian_bench.strategies import make_strategy, question_message


@dataclass
class Chat:
    id: str
    messages: list[BaseMessage]
    sessions: list[list[BaseMessage]]
    questions: list[tuple[str, list[str], str]]  # (text, evidence message ids, type)


def load(path: Path) -> list[Chat]:
    """The file's conversations; ``SystemExit`` naming the first problem in it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    chats = []
    for conv in data["conversations"]:
        cid = str(conv["id"])
        messages: list[BaseMessage] = []
        sessions: list[list[BaseMessage]] = []
        keys: dict[str, str] = {}
        for si, session in enumerate(conv["sessions"]):
            turns: list[BaseMessage] = []
            for mi, raw in enumerate(session["messages"]):
                mid = f"{cid}-s{si}m{mi}"
                cls = HumanMessage if raw["role"] == "user" else AIMessage
                message = cls(content=raw["content"], id=mid)
                messages.append(message)
                turns.append(message)
                key = raw.get("key")
                if key:
                    if key in keys:
                        raise SystemExit(f"{cid}: duplicate key {key!r}")
                    keys[key] = mid
            sessions.append(turns)
        questions = []
        for qi, q in enumerate(conv["questions"]):
            kind = str(q.get("type", "?"))
            if not q["evidence"] and kind != "absent":
                raise SystemExit(f"{cid} question {qi}: no evidence (type 'absent' if none)")
            unknown = [k for k in q["evidence"] if k not in keys]
            if unknown:
                raise SystemExit(f"{cid} question {qi}: unknown evidence keys {unknown}")
            questions.append((str(q["q"]), [keys[k] for k in q["evidence"]], kind))
        chats.append(Chat(cid, messages, sessions, questions))
    return chats


def run(chats: list[Chat], *, recall: bool, misses: bool) -> list[dict[str, Any]]:
    embeddings = default_embeddings()
    rows: list[dict[str, Any]] = []
    for chat in chats:
        librarian = make_strategy("librarian", budget="auto", embeddings=embeddings, model=None)
        librarian.prepare(chat.messages)
        memory = None
        if recall:
            memory = ScopeMemory(InMemoryStore(), config=LibrarianConfig(embeddings=embeddings))
            index = [e.to_dict() for e in librarian.entries]  # type: ignore[attr-defined]
            for si, turns in enumerate(chat.sessions):
                memory.capture(chat.id, turns, thread_id=f"{chat.id}-session-{si}", index=index)
        bm25 = make_strategy("bm25", budget=1, embeddings=None, model=None)
        bm25.prepare(chat.messages)
        for qi, (text, evidence, kind) in enumerate(chat.questions):
            history = [*chat.messages, question_message(f"{chat.id}-{qi}", text)]
            result = librarian.context(history, text)
            budget = max(result.context_tokens, 1)
            bm25.budget = budget  # type: ignore[attr-defined]
            ranked = bm25.context(history, text)
            recent = make_strategy("last-n", budget=budget, embeddings=None, model=None)
            row: dict[str, Any] = {
                "conversation": chat.id,
                "question": text,
                "type": kind,
                "librarian": evidence_recall(evidence, result.messages),
                "bm25": evidence_recall(evidence, ranked.messages),
                "recent": evidence_recall(evidence, recent.context(history, text).messages),
                "tokens": result.context_tokens,
            }
            if memory is not None:
                recalled = memory.recall(chat.id, text)
                held = {r.message_id for r in recalled.records}
                row["recall"] = (
                    sum(e in held for e in evidence) / len(evidence)
                    if evidence
                    else float(recalled.status != "recalled")
                )
            if misses and evidence and row["librarian"] < 1:
                got = {m.id for m in result.messages}
                print(f"MISS [{chat.id} {kind}] {text}")
                for e in evidence:
                    content = next(str(m.content) for m in chat.messages if m.id == e)
                    print(f"   {'ok' if e in got else '--'} {e}: {content[:150]!r}")
            rows.append(row)
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    asked = [r for r in rows if r["type"] != "absent"]
    absent = [r for r in rows if r["type"] == "absent"]
    strategies = ["librarian", "bm25", "recent"] + (["recall"] if "recall" in rows[0] else [])
    print("| type | questions | " + " | ".join(strategies) + " |")
    print("|---|---:|" + "---:|" * len(strategies))
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in asked:
        groups[row["type"]].append(row)
    for kind, group in [*sorted(groups.items()), ("all", asked)]:
        done = Counter(s for r in group for s in strategies if r[s] == 1)
        print(f"| {kind} | {len(group)} | " + " | ".join(str(done[s]) for s in strategies) + " |")
    print(f"\nmean Librarian context {statistics.fmean(r['tokens'] for r in rows):,.0f} tokens")
    if absent and "recall" in rows[0]:
        empty = sum(int(r["recall"]) for r in absent)
        print(f"never-discussed questions: recall empty for {empty} of {len(absent)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--check", action="store_true", help="only validate the file")
    parser.add_argument("--misses", action="store_true", help="list what the Librarian missed")
    parser.add_argument("--no-recall", action="store_true", help="skip scoped recall")
    parser.add_argument("--json", type=Path, help="write one row per question here")
    args = parser.parse_args()
    chats = load(args.data)
    if args.check:
        for chat in chats:
            words = sum(len(str(m.content).split()) for m in chat.messages)
            print(
                f"{chat.id}: {len(chat.sessions)} sessions, {len(chat.messages)} messages, "
                f"about {words:,} words, {len(chat.questions)} questions"
            )
        print("ok")
        return
    rows = run(chats, recall=not args.no_recall, misses=args.misses)
    if not rows:
        sys.exit("no questions")
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
