"""Tool-librarian scale benchmark: search latency and memory from 50 to 50,000 tools.

Run: python benchmarks/bench_tools.py [--sizes 50 500 5000 50000] [--embeddings NAME]
                                     [--no-embeddings]

Uses the generated catalog of ``librarian bench --dataset tools``; the index is semantic
with the default embedding model (or the one named by ``--embeddings``, see
``langgraph_librarian.embeddings.EMBEDDING_MODELS``), lexical with ``--no-embeddings``.
Latency is reported for the search itself (matrix product, thresholds, domain
expansion) and, separately, for embedding the query. Results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse

from langgraph_librarian.embeddings import EMBEDDING_MODELS, default_embeddings, load_embeddings
from langgraph_librarian.evals.tool_bench import format_tool_table, run_tool_bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--embeddings", choices=EMBEDDING_MODELS, help="default: the default")
    parser.add_argument("--no-embeddings", action="store_true")
    args = parser.parse_args()
    if args.no_embeddings:
        embeddings = None
    else:
        embeddings = load_embeddings(args.embeddings) if args.embeddings else default_embeddings()
    print(
        format_tool_table(run_tool_bench(args.sizes, n_queries=args.queries, embeddings=embeddings))
    )


if __name__ == "__main__":
    main()
