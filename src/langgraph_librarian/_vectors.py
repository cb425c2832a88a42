"""Compact storage of embedding vectors inside index entries, and cached matrices."""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

__all__ = ["decode_vector", "encode_vector", "unit_rows", "vector_matrix"]


def unit_rows(vectors: Sequence[Sequence[float]], count: int) -> np.ndarray:
    """``count`` vectors as float32 rows of unit length (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32).reshape(count, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1.0)
    return matrix


def encode_vector(values: Sequence[float]) -> str:
    """Unit-normalize and pack as base64 float16 (2 bytes per dimension)."""
    array = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    if norm > 0:
        array = array / norm
    return base64.b64encode(array.astype(np.float16).tobytes()).decode("ascii")


def decode_vector(data: str) -> np.ndarray:
    """Inverse of :func:`encode_vector` (float32)."""
    return np.frombuffer(base64.b64decode(data), dtype=np.float16).astype(np.float32)


_CACHE: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
_LOCK = threading.Lock()


def vector_matrix(keys: Sequence[str], encoded: Sequence[str]) -> np.ndarray:
    """Stack encoded vectors into one matrix, cached across turns.

    ``keys`` identify the rows (short strings, e.g. content hash plus the start of the
    vector, which tells embedding models apart): hashing them is cheap where hashing
    the kilobyte-long vectors themselves would cost milliseconds per turn. When a
    cached matrix covers a prefix of ``keys`` (last turn's history), only the new rows
    are decoded.
    """
    key = tuple(keys)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
        base: np.ndarray | None = None
        for cached_key, matrix in reversed(_CACHE.items()):
            m = len(cached_key)
            if m <= len(key) and cached_key == key[:m]:
                base = matrix
                break
    start = 0 if base is None else base.shape[0]
    rows = [decode_vector(v) for v in encoded[start:]]
    if base is not None and rows:
        matrix = np.vstack([base, np.stack(rows)])
    elif base is not None:
        matrix = base
    elif rows:
        matrix = np.stack(rows)
    else:
        matrix = np.zeros((0, 0), dtype=np.float32)
    with _LOCK:
        _CACHE[key] = matrix
        while len(_CACHE) > 16:
            _CACHE.popitem(last=False)
    return matrix
