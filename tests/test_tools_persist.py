"""ToolIndex.save and ToolIndex.load: vectors reused for unchanged tools, hostile files refused."""

from __future__ import annotations

import json
import os
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_librarian.embeddings import embedding_model_id, load_embeddings
from langgraph_librarian.errors import IndexStoreError, LibrarianError
from langgraph_librarian.tools import ToolIndex
from librarian_bench.datasets.tool_phrasings import phrasing_catalog

STATIC = load_embeddings("static")
QUERIES = ["send an email to Ann", "what's the weather tomorrow", "book a table for two"]


class Counting(Embeddings):
    """The packaged static model, counting the documents it embeds."""

    def __init__(self, model_id: str | None = None) -> None:
        assert STATIC is not None
        self.model_id = model_id or embedding_model_id(STATIC)
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        assert STATIC is not None
        self.documents += texts
        return STATIC.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        assert STATIC is not None
        return STATIC.embed_query(text)


def _name(schema: dict[str, Any]) -> str:
    return str(schema.get("function", schema)["name"])


def _catalog() -> list[dict[str, Any]]:
    return json.loads(json.dumps(phrasing_catalog()))  # a deep copy the test may change


def _describe(schema: dict[str, Any], text: str) -> None:
    schema.get("function", schema)["description"] = text


def _saved(tmp_path: Path, catalog: list[dict[str, Any]], **options: Any) -> Path:
    path = tmp_path / "tools.lgl"
    index = ToolIndex(catalog, embeddings=options.pop("embeddings", Counting()), **options)
    index.save(path)
    return path


def _cosines(index: ToolIndex, query: str) -> dict[str, float]:
    cosine, _ = index.score_parts(query)
    return dict(zip(index.row_names(), cosine.tolist(), strict=True))


def test_load_reuses_every_vector_and_answers_like_a_fresh_build(tmp_path):
    catalog = _catalog()
    path = _saved(tmp_path, catalog)
    counting = Counting()
    loaded = ToolIndex.load(path, catalog, embeddings=counting)
    built = ToolIndex(catalog, embeddings=Counting())
    # One tool embedded as a check that the model still makes the saved vectors; every
    # other vector came from the file.
    assert len(counting.documents) == 1 and loaded._reused == len(catalog) - 1
    assert len(loaded) == len(built) == len(catalog)
    for query in QUERIES:
        assert loaded.search(query).names == built.search(query).names
        fresh, reused = _cosines(built, query), _cosines(loaded, query)
        assert reused.keys() == fresh.keys()
        assert all(abs(reused[n] - fresh[n]) < 1e-5 for n in fresh)


def test_changed_and_new_tools_are_embedded_and_removed_ones_dropped(tmp_path):
    catalog = _catalog()
    path = _saved(tmp_path, catalog)
    changed = catalog[0]
    _describe(changed, "Print a shipping label for a parcel.")
    removed = _name(catalog.pop(1))
    new = {"name": "garden_water", "description": "Water the garden plants.", "parameters": {}}
    counting = Counting()
    loaded = ToolIndex.load(path, [*catalog, new], embeddings=counting)
    # The changed and the new tool, and the first unchanged one (the check).
    assert len(counting.documents) == 3 and loaded._reused == len(catalog) - 2
    assert counting.documents[0].startswith(f"{_name(changed).replace('_', ' ')}: Print a shipping")
    assert counting.documents[1].startswith(_name(catalog[1]).replace("_", " "))
    assert counting.documents[2].startswith("garden water: Water the garden")
    assert removed not in loaded and removed not in loaded.row_names()
    # Never a stale vector: the changed tool scores as in a fresh build of the new catalog.
    built = ToolIndex([*catalog, new], embeddings=Counting())
    fresh, reused = (
        _cosines(built, "print a parcel label"),
        _cosines(loaded, "print a parcel label"),
    )
    assert abs(reused[_name(changed)] - fresh[_name(changed)]) < 1e-5
    assert loaded.search("print a shipping label").names[:1] == [_name(changed)]


def test_a_changed_argument_schema_is_embedded_again(tmp_path):
    tool = {
        "name": "parcel_track",
        "description": "Track a parcel.",
        "parameters": {"properties": {"code": {"type": "string"}}},
    }
    path = _saved(tmp_path, [tool])
    tool["parameters"]["properties"]["code"]["description"] = "The carrier's tracking code."
    counting = Counting()
    ToolIndex.load(path, [tool], embeddings=counting)
    assert len(counting.documents) == 1  # a tool changed, not the check


def test_function_tools_round_trip(tmp_path):
    def email_send(to: str, body: str) -> str:
        """Send an email."""
        return "sent"

    def weather_now(city: str) -> str:
        """The weather in a city now."""
        return "sunny"

    path = _saved(tmp_path, [email_send, weather_now])
    counting = Counting()
    loaded = ToolIndex.load(path, [email_send, weather_now], embeddings=counting)
    assert len(counting.documents) == 1 and loaded._reused == 1
    assert loaded.search("send an email to Ann").names[:1] == ["email_send"]
    assert [t.name for t in loaded.tools(["email_send"])] == ["email_send"]


def test_another_model_embeds_every_tool_again(tmp_path):
    catalog = _catalog()[:10]
    path = _saved(tmp_path, catalog, embeddings=Counting(model_id="some-other-model"))
    counting = Counting()
    loaded = ToolIndex.load(path, catalog, embeddings=counting)
    assert len(counting.documents) == len(catalog)
    lexical = _saved(tmp_path, catalog, embeddings=None)
    counting = Counting()
    ToolIndex.load(lexical, catalog, embeddings=counting)
    assert len(counting.documents) == len(catalog)
    assert loaded.search("send an email").names


class Shifted(Counting):
    """The static model's id with other vectors (a model changed under the same id), or
    vectors of another width."""

    def __init__(self, width: int | None = None) -> None:
        super().__init__()
        self.width = width

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = np.asarray(super().embed_documents(texts))
        if self.width is not None:
            return vectors[:, : self.width].tolist()
        return np.roll(vectors, 1, axis=1).tolist()

    def embed_query(self, text: str) -> list[float]:
        vector = np.asarray(super().embed_query(text))
        if self.width is not None:
            return vector[: self.width].tolist()
        return np.roll(vector, 1).tolist()


@pytest.mark.parametrize("width", [None, 64])
def test_saved_vectors_the_model_no_longer_makes_are_all_replaced(tmp_path, width):
    catalog = _catalog()
    path = _saved(tmp_path, catalog)
    shifted = Shifted(width)
    loaded = ToolIndex.load(path, catalog, embeddings=shifted)
    assert len(shifted.documents) == 1 + len(catalog) and loaded._reused == 0
    built = ToolIndex(catalog, embeddings=Shifted(width))
    for query in QUERIES:
        fresh, reused = _cosines(built, query), _cosines(loaded, query)
        assert all(abs(reused[n] - fresh[n]) < 1e-5 for n in fresh)


def test_a_lexical_index_saves_and_loads(tmp_path):
    catalog = _catalog()
    path = _saved(tmp_path, catalog, embeddings=None)
    loaded = ToolIndex.load(path, catalog, embeddings=None)
    built = ToolIndex(catalog, embeddings=None)
    for query in QUERIES:
        assert loaded.search(query).names == built.search(query).names


def test_an_empty_index_saves_a_file_that_loads(tmp_path):
    """An index saved before any tool was added (an application's first start, with no
    tool server connected yet) wrote a file its own load refused ("'dim' is 0")."""
    path = tmp_path / "tools.lgl"
    ToolIndex([], embeddings=Counting()).save(path)
    catalog = _catalog()[:5]
    loaded = ToolIndex.load(path, catalog, embeddings=Counting())
    assert loaded.search("send an email to Ann").names == (
        ToolIndex(catalog, embeddings=Counting()).search("send an email to Ann").names
    )
    assert len(ToolIndex.load(path, embeddings=Counting())) == 0


def test_save_writes_atomically_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    catalog = _catalog()[:5]
    path = _saved(tmp_path, catalog)
    before = path.read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(IndexStoreError, match="disk full") as caught:
        ToolIndex(_catalog()[:7], embeddings=Counting()).save(path)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_save_into_a_missing_directory_names_the_path(tmp_path):
    path = tmp_path / "nowhere" / "tools.lgl"
    with pytest.raises(IndexStoreError, match="cannot write") as caught:
        ToolIndex(_catalog()[:2], embeddings=Counting()).save(path)
    assert str(path) in str(caught.value)


# -- files that are not what they claim ------------------------------------------------


def _file(header: Any, body: bytes = b"", *, raw_header: bytes | None = None) -> bytes:
    encoded = raw_header if raw_header is not None else json.dumps(header).encode()
    return b"LGLTOOLS" + struct.pack("<I", len(encoded)) + encoded + body


def _header(**changes: Any) -> dict[str, Any]:
    header: dict[str, Any] = {
        "format": 1,
        "model": embedding_model_id(Counting()),
        "dim": 2,
        "tools": [["a_b", "0" * 64]],
    }
    header.update(changes)
    return header


class _Exploit:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch pwned-by-tool-index",))


def _hostile(tmp_path: Path) -> dict[str, bytes]:
    valid = (tmp_path / "valid.lgl").read_bytes()
    vector = np.ones(2, dtype="<f4").tobytes()
    buffer = tmp_path / "npz"
    np.savez(buffer, vectors=np.ones((1, 2), dtype=np.float32))
    return {
        "empty": b"",
        "truncated": valid[: len(valid) - 7],
        "truncated header": valid[:20],
        "pickle": pickle.dumps(_Exploit()),
        "npz": buffer.with_suffix(".npz").read_bytes(),
        "huge header length": b"LGLTOOLS" + struct.pack("<I", 2**32 - 1) + b"{}",
        "not json": _file(None, raw_header=b"{not json"),
        "not utf-8": _file(None, raw_header=b'{"a": "\xff"}'),
        "deep": _file(None, raw_header=b"[" * 100_000 + b"]" * 100_000),
        "a list": _file([1, 2]),
        "future format": _file(_header(format=2), vector),
        "model not a string": _file(_header(model=7), vector),
        "negative dim": _file(_header(dim=-1), vector),
        "huge dim": _file(_header(dim=10**12), vector),
        "dim a string": _file(_header(dim="2"), vector),
        "tools a dict": _file(_header(tools={"a_b": "0" * 64}), vector),
        "bad fingerprint": _file(_header(tools=[["a_b", "x"]]), vector),
        "name not a string": _file(_header(tools=[[1, "0" * 64]]), vector),
        "a name twice": _file(_header(tools=[["a_b", "0" * 64]] * 2), vector * 2),
        "huge row count": _file(_header(tools=[[f"t{i}", "0" * 64] for i in range(3)]), vector),
        "extra bytes": _file(_header(), vector + b"\0\0\0\0"),
        "not finite": _file(_header(), np.array([np.nan, 1], dtype="<f4").tobytes()),
    }


def test_corrupt_truncated_or_hostile_files_raise_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ToolIndex([{"name": "a_b", "description": "x"}], embeddings=Counting()).save(
        tmp_path / "valid.lgl"
    )
    for label, content in _hostile(tmp_path).items():
        path = tmp_path / f"{label.replace(' ', '-')}.lgl"
        path.write_bytes(content)
        with pytest.raises(IndexStoreError) as caught:
            ToolIndex.load(path, [{"name": "a_b", "description": "x"}], embeddings=Counting())
        assert isinstance(caught.value, LibrarianError), label
        assert str(path) in str(caught.value), label
    assert not (tmp_path / "pwned-by-tool-index").exists()


def test_a_missing_file_raises_the_same_error(tmp_path):
    with pytest.raises(IndexStoreError, match="no tool index file"):
        ToolIndex.load(tmp_path / "absent.lgl", [], embeddings=Counting())
