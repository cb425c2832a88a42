"""The file a :class:`~langgraph_librarian.tools.ToolIndex` saves its vectors to.

Layout (no pickle, nothing executable, every size checked against the file's own size):

- 8 bytes: the magic ``LGLTOOLS``;
- 4 bytes: the header's length in bytes (unsigned, little-endian);
- the header: a UTF-8 JSON object ``{"format": 1, "model": <model id or null>,
  "dim": <int>, "tools": [[<name>, <fingerprint>], ...]}``;
- the vectors: ``len(tools) x dim`` float32, little-endian, row by row, one row per
  tool in the header's order.

The fingerprint is a SHA-256 hex digest of what the vector was computed from (see
``ToolIndex._fingerprint``); the index only ever reuses a vector whose tool has the
same fingerprint now, under the same model id.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from langgraph_librarian.errors import IndexStoreError

__all__: list[str] = []

MAGIC = b"LGLTOOLS"
FORMAT_VERSION = 1
MAX_DIM = 65_536
"""Widest vector a file may hold (the widest common embedding models use 3,072)."""
_LENGTH = struct.Struct("<I")
_PREFIX = len(MAGIC) + _LENGTH.size
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


@dataclass
class SavedVectors:
    """What a tool index file holds: the model id (``None``: a lexical index), each
    tool's name and fingerprint, and one unit vector per tool (``dim`` 0 without)."""

    model: str | None
    tools: list[tuple[str, str]]
    vectors: np.ndarray


def write_tool_vectors(
    path: str | os.PathLike[str],
    model: str | None,
    tools: list[tuple[str, str]],
    vectors: np.ndarray,
) -> None:
    """Write the file atomically: a temporary file in the same directory, flushed to
    disk, then renamed over ``path`` (a crash leaves the old file or the new one)."""
    target = Path(path)
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    if matrix.ndim != 2 or matrix.shape[0] != len(tools):
        raise ValueError(f"{len(tools)} tools but vectors of shape {matrix.shape}")
    header = json.dumps(
        {"format": FORMAT_VERSION, "model": model, "dim": matrix.shape[1], "tools": tools},
        ensure_ascii=True,  # lone surrogates in odd names survive as \\udxxx escapes
    ).encode("ascii")
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise IndexStoreError(f"cannot write tool index file {target}: {exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(MAGIC + _LENGTH.pack(len(header)) + header)
            handle.write(matrix.tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise IndexStoreError(f"cannot write tool index file {target}: {exc}") from exc
        raise


def read_tool_vectors(path: str | os.PathLike[str]) -> SavedVectors:
    """The file's contents, checked; :class:`IndexStoreError` naming ``path`` for a
    file that is missing, unreadable, truncated, or not a tool index file."""
    source = Path(path)

    def corrupt(problem: str) -> IndexStoreError:
        return IndexStoreError(f"corrupt tool index file {source}: {problem}")

    try:
        with open(source, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            prefix = handle.read(_PREFIX)
            if len(prefix) < _PREFIX or not prefix.startswith(MAGIC):
                raise corrupt("not a tool index file (no LGLTOOLS header)")
            (length,) = _LENGTH.unpack(prefix[len(MAGIC) :])
            if length > size - _PREFIX:
                raise corrupt(f"header of {length:,} bytes in a file of {size:,}")
            raw = handle.read(length)
            model, tools, dim = _header(raw, corrupt)
            expected = len(tools) * dim * 4
            if size - _PREFIX - length != expected:
                raise corrupt(
                    f"{len(tools):,} vectors of {dim} floats need {expected:,} bytes, "
                    f"the file holds {size - _PREFIX - length:,}"
                )
            data = handle.read(expected)
    except FileNotFoundError as exc:
        raise IndexStoreError(f"no tool index file {source}") from exc
    except OSError as exc:
        raise IndexStoreError(f"cannot read tool index file {source}: {exc}") from exc
    if len(data) != expected:  # the file shrank while it was read
        raise corrupt("truncated")
    vectors = np.frombuffer(data, dtype="<f4").astype(np.float32).reshape(len(tools), dim)
    if not np.isfinite(vectors).all():
        raise corrupt("vectors that are not finite numbers")
    if dim:
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    return SavedVectors(model, tools, vectors)


def _header(
    raw: bytes, corrupt: Callable[[str], IndexStoreError]
) -> tuple[str | None, list[tuple[str, str]], int]:
    """(model, tools, dim) from the header's bytes, every field's type checked."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise corrupt("header is not UTF-8") from None
    except RecursionError:
        raise corrupt("header nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError
        raise corrupt(f"header is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise corrupt("header is not a JSON object")
    version = data.get("format")
    if type(version) is not int or version != FORMAT_VERSION:
        raise corrupt(
            f"format {version!r}; this release reads format {FORMAT_VERSION} "
            "(save the index again with this release)"
        )
    model, dim, tools = data.get("model"), data.get("dim"), data.get("tools")
    if model is not None and not isinstance(model, str):
        raise corrupt("'model' is neither a string nor null")
    if not isinstance(tools, list):
        raise corrupt("'tools' is not a list")
    # An index saved without tools has no vector, so no width (0), whatever its model.
    if (
        type(dim) is not int
        or not 0 <= dim <= MAX_DIM
        or (model is not None and dim == 0 < len(tools))
    ):
        raise corrupt(f"'dim' is {dim!r}, not a vector width")
    pairs: list[tuple[str, str]] = []
    for item in tools:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or not isinstance(item[1], str)
            or not _FINGERPRINT.fullmatch(item[1])
        ):
            raise corrupt(f"a tool entry is not [name, fingerprint]: {str(item)[:80]}")
        pairs.append((item[0], item[1]))
    if len({name for name, _ in pairs}) != len(pairs):
        raise corrupt("a tool name is listed twice")
    return model, pairs, dim
