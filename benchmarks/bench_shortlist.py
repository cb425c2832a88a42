"""What an LLM selector can be shown: evidence recall of its shortlist on LoCoMo.

Run:
    python benchmarks/bench_shortlist.py --data ../shared/data/locomo/locomo10.json
        [--budget 8000]

When the index of a conversation does not fit ``selector_token_budget`` (8,000 tokens by
default; a LoCoMo conversation's index is 18-30k), the LLM selector shows the model a
shortlist ranked by the local selector. Whatever the model, it can only pick what it is
shown: the shortlist's evidence recall is the ceiling of its selection. Two rankings
side by side, on each half (conversations 0-4 and 5-9): words only (a selector without
an embedding model, and what the LLM selector's shortlist used before 0.2.0) and the
hybrid ranking with the packaged static model (what it uses now). No model is called:
the shortlist is built before the call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LLMSelector, LocalSelector
from librarian_bench.datasets.locomo import load_locomo


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the LoCoMo JSON file")
    parser.add_argument("--budget", type=int, default=8000, help="selector_token_budget")
    args = parser.parse_args(argv)
    embeddings = default_embeddings()
    conversations = load_locomo(args.data, categories={1, 2, 3, 4})
    print("| half | ranking | shortlist evidence recall | entries shown (of the history) |")
    print("|---|---|---:|---:|")
    for half, convs in (("0-4", conversations[:5]), ("5-9", conversations[5:])):
        config = LibrarianConfig(embeddings=embeddings)
        indexed = [(conv, update_index(conv.messages, [], config).entries) for conv in convs]
        for label, model in (("words only", None), ("hybrid (static model)", embeddings)):
            recalls: list[float] = []
            shown_counts: list[int] = []
            for conv, entries in indexed:
                ids = [m.id for m in conv.messages]
                selector = LLMSelector(
                    FakeListChatModel(responses=["unused"]),
                    local=LocalSelector(embeddings=model),
                    token_budget=args.budget,
                )
                for question in conv.questions:
                    shown, _ = selector.shortlist(question.text, conv.messages, entries, ())
                    present = {ids[e.id] for e in shown}
                    hits = sum(e in present for e in question.evidence)
                    recalls.append(hits / len(question.evidence))
                    shown_counts.append(len(shown))
            history = statistics.fmean(len(conv.messages) for conv in convs)
            print(
                f"| {half} | {label} | {statistics.fmean(recalls):.3f} | "
                f"{statistics.fmean(shown_counts):.0f} ({history:.0f}) |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
