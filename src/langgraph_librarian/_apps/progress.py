"""Progress bars on stderr for long runs (``librarian demo``, ``librarian bench``)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressPrinter"]


class ProgressPrinter:
    """Progress on stderr: a bar redrawn in place on a terminal, full lines in logs.

    When the stream is not a terminal (CI logs, ``2> file``), a line is printed when a
    bar starts, each time it passes a quarter, at most every ``every_seconds`` in
    between, and when it completes, so a log never holds one endless ``\\r`` line.

    Args:
        stream: Where to write (default: ``sys.stderr`` at call time).
        tty: Force terminal (``True``) or log (``False``) style; default: ask the stream.
        every_seconds: In log style, the longest silence while a bar moves.

    Example:
        >>> import io
        >>> log = io.StringIO()
        >>> show = ProgressPrinter(log, tty=False)
        >>> for done in range(5):
        ...     show("vector: index c1", done, 4)
        >>> print(log.getvalue().splitlines()[-1])
        vector: index c1  4/4 (100%)
    """

    def __init__(
        self, stream: TextIO | None = None, *, tty: bool | None = None, every_seconds: float = 30.0
    ) -> None:
        self._stream = stream
        self._tty = tty
        self.every_seconds = every_seconds
        self._open = False  # a terminal bar is drawn and not yet ended by a newline
        self._label = ""
        self._quarter = -1
        self._last_line = 0.0
        self._started = 0.0

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def tty(self) -> bool:
        if self._tty is not None:
            return self._tty
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def note(self, text: str) -> None:
        """One line of text (ends a bar being drawn first)."""
        self._end_line()
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, label: str, done: int, total: int) -> None:
        if total <= 0:  # nothing slow to do (e.g. an index with no embeddings)
            return
        now = time.monotonic()
        if label != self._label:
            self._end_line()
            self._label, self._quarter, self._last_line, self._started = label, -1, 0.0, now
        if self.tty:
            self._draw(label, done, total)
            return
        quarter = 4 * done // max(total, 1)
        if quarter != self._quarter or done >= total or now - self._last_line >= self.every_seconds:
            elapsed = f", {now - self._started:.0f} s" if now - self._started >= 1 else ""
            pct = 100 * done // max(total, 1)
            self.stream.write(f"{label}  {done}/{total} ({pct}%{elapsed})\n")
            self.stream.flush()
            self._quarter, self._last_line = quarter, now

    def _draw(self, label: str, done: int, total: int) -> None:
        width = 28
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{label:<34} [{bar}] {done}/{total}")
        self._open = True
        if done >= total:
            self._end_line()
        self.stream.flush()

    def _end_line(self) -> None:
        if self._open:
            self.stream.write("\n")
            self._open = False
