"""Tool-librarian scale benchmark: search latency and memory from 50 to 50,000 tools.

Run: python benchmarks/bench_tools.py [--sizes 50 500 5000 50000] [--no-embeddings]

Uses the generated catalog of ``librarian bench --dataset tools``; with the packaged
MiniLM model installed the index is semantic, otherwise lexical. Latency is reported
for the search itself (matrix product, thresholds, domain expansion) and, separately,
for embedding the query. Results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse

from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.evals.tool_bench import format_tool_table, run_tool_bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--no-embeddings", action="store_true")
    args = parser.parse_args()
    embeddings = None if args.no_embeddings else default_embeddings()
    print(
        format_tool_table(run_tool_bench(args.sizes, n_queries=args.queries, embeddings=embeddings))
    )


if __name__ == "__main__":
    main()
