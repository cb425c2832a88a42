"""Compact storage of embedding vectors inside index entries, and unit-length rows."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["appended", "decode_vector", "dot_rows", "encode_vector", "unit_rows", "unit_vectors"]


def unit_rows(vectors: Sequence[Sequence[float]], count: int) -> np.ndarray:
    """``count`` vectors as float32 rows of unit length (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32).reshape(count, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1.0)
    return matrix


def dot_rows(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` by numpy's own loop (``einsum``), on the calling thread.

    Through BLAS, a matrix-vector product wakes its worker threads: on a two-core machine
    with other work running (a server answering several threads) they wait for each
    other, and 20,000 x 256 took 8 ms where one thread takes 1-2 ms (1 ms through
    single-threaded BLAS on an idle machine). A product of one vector streams the matrix
    once; threads buy nothing there.
    """
    product: np.ndarray = np.einsum("ij,j->i", matrix, vector)
    return product


def unit_vectors(embeddings: Embeddings, texts: list[str]) -> np.ndarray:
    """``texts`` embedded by ``embeddings`` as float32 rows of unit length.

    A model that returns one float32 array (``embed_documents_array``: the packaged
    static model) skips the round trip through lists of Python floats; the values are
    the same.
    """
    as_array = getattr(embeddings, "embed_documents_array", None)
    vectors = as_array(texts) if as_array is not None else embeddings.embed_documents(texts)
    return unit_rows(vectors, len(texts))


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


def appended(cached: np.ndarray | None, tail: np.ndarray) -> np.ndarray:
    """``cached`` followed by ``tail``, as a read-only array.

    For arrays that only grow (a value per passage, a posting list): ``cached`` is a
    view of a buffer with room to spare, and ``tail`` is written into that room, so a
    turn's few new values cost what they are, not a copy of the whole array (eleven
    such copies a turn at 50,000 messages). The first array is exactly its size (most
    never grow: a rare term's postings); one that grows gets a buffer twice its length.

    Safe without a lock for values that never change once appended: a view handed out
    covers only places written before it, and two threads filling the same places of a
    buffer write the same values; each returns a view of the buffer it wrote. ``cached``
    must be the array this function last returned for the same sequence: a slice of it
    given to another sequence (a prefix that then grows differently) must be a copy, or
    its values would be written over the first sequence's.
    """
    if cached is None:  # exactly its size: most arrays never grow (a rare term's postings)
        array = np.array(tail)
        array.flags.writeable = False
        return array
    done = len(cached)
    total = done + len(tail)
    buffer = cached.base
    if (
        not isinstance(buffer, np.ndarray)
        or buffer.dtype != tail.dtype
        or len(buffer) < total
        or not buffer.flags.writeable
        or cached.ctypes.data != buffer.ctypes.data
    ):
        buffer = np.empty(2 * total, dtype=tail.dtype)  # room for as much again
        buffer[:done] = cached
    buffer[done:total] = tail
    array = buffer[:total]
    array.flags.writeable = False
    return array
