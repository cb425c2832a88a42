"""The bench plot: evidence recall against context tokens, one marker per strategy.

Strategies often land on the same spot (``librarian`` and ``librarian-lexical`` without
embeddings, several at recall 1.0 with similar budgets). Markers that would hide each
other are spread sideways by a few pixels around their common position (the caption
says so), and every marker is labelled, each label moved up or down until it overlaps
no other label or marker. The x axis is logarithmic with a few round tick labels
("2k", "5k", "40k") and no minor labels, so they never overlap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot_recall_vs_tokens", "recall_figure"]

_MARKERS = "osD^vP*X"
_SIZE = 70.0  # marker area in points^2
_DPI = 110
_MARKER_PX = math.sqrt(_SIZE) * _DPI / 72  # marker width in pixels
_LEADER = {"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkB": 6}


def _tick_label(value: float, _position: float = 0.0) -> str:
    if value >= 1000:
        thousands = value / 1000
        return (
            f"{thousands:.0f}k"
            if thousands >= 10 or thousands.is_integer()
            else f"{thousands:.1f}k"
        )
    return f"{value:.0f}"


def _round_ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks covering [low, high], thinned to at most 7 labels."""
    ticks: list[float] = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0**exponent
            if low <= value <= high:
                ticks.append(value)
    while len(ticks) > 7:
        ticks = ticks[::2]
    return ticks


def _clusters(points: Sequence[tuple[float, float]]) -> list[list[int]]:
    """Groups of indexes whose display positions are within a marker of each other."""
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(points):
        for group in groups:
            if any(math.dist((x, y), points[j]) < _MARKER_PX for j in group):
                group.append(i)
                break
        else:
            groups.append([i])
    return groups


def _marker_box(centre: tuple[float, float]) -> Any:
    from matplotlib.transforms import Bbox

    half = _MARKER_PX / 2 + 2
    return Bbox.from_extents(centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half)


def _label(
    ax: Any, text: str, at: tuple[float, float], placed: list[Any], prefer_left: bool
) -> None:
    """Put ``text`` beside the marker at ``at`` (data), moved off anything placed."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    label = None
    for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
        for side in ("right", "left") if prefer_left else ("left", "right"):
            dx = 9 if side == "left" else -9  # "left" aligned text sits right of the marker
            label = ax.annotate(
                text,
                at,
                xytext=(dx, 11 * step),
                textcoords="offset points",
                ha=side,
                va="center",
                fontsize=8,
                zorder=10,
                annotation_clip=False,
                # A label moved off its marker's row points back at it.
                arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkB": 6}
                if step
                else None,
            )
            # The text alone: an Annotation's own extent includes its leader line.
            label.update_positions(renderer)
            box = Text.get_window_extent(label, renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1
            if inside and not any(box.overlaps(other) for other in placed):
                placed.append(box)
                return
            label.remove()
    # Nowhere free (a crowded plot): keep the label at its first spot.
    placed.append(
        ax.annotate(
            text, at, xytext=(9, 0), textcoords="offset points", va="center", fontsize=8
        ).get_window_extent(renderer)
    )


def plot_recall_vs_tokens(path: Path, dataset: str, rows: Sequence[dict[str, Any]]) -> Path:
    """Write the PNG for the ``category == "all"`` rows; needs matplotlib.

    Raises:
        ImportError: when matplotlib is not installed (the ``bench`` extra).
    """
    recall_figure(dataset, rows).savefig(path, dpi=_DPI)
    return path


def recall_figure(dataset: str, rows: Sequence[dict[str, Any]]) -> Any:
    """The matplotlib figure of :func:`plot_recall_vs_tokens` (to save or inspect).

    Built without pyplot: no global backend switch, nothing to close.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    overall = [r for r in rows if r["category"] == "all" and r.get("questions")]
    xs = [max(float(r["context_tokens"]), 1.0) for r in overall]
    ys = [float(r["evidence_recall"]) for r in overall]
    fig = Figure(figsize=(8, 4.8), dpi=_DPI)
    FigureCanvasAgg(fig)  # attaches itself: gives the figure a renderer to measure text
    ax = fig.add_subplot()
    ax.set_xscale("log")
    # Room for labels on either side of the outermost markers.
    low, high = min(xs, default=1.0) / 2.2, max(xs, default=10.0) * 2.2
    ax.set_xlim(low, high)
    ax.set_ylim(-0.07, 1.1)  # room below 0 and above 1: markers there are drawn whole
    ax.xaxis.set_major_locator(FixedLocator(_round_ticks(low, high)))
    ax.xaxis.set_major_formatter(FuncFormatter(_tick_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("context tokens per question (log scale)")
    ax.set_ylabel("evidence recall")
    ax.set_title(f"{dataset}: evidence recall vs context tokens")
    ax.grid(alpha=0.3)
    fig.tight_layout()  # before any pixel position is read: nothing moves afterwards
    to_display, to_data = ax.transData.transform, ax.transData.inverted().transform
    display = [
        (float(px), float(py))
        for px, py in (to_display((x, y)) for x, y in zip(xs, ys, strict=True))
    ]
    spread = list(display)
    prefer_left = [False] * len(display)
    dodged = False
    for group in _clusters(display):
        if len(group) > 1:
            dodged = True
            centre = sum(display[i][0] for i in group) / len(group)
            # Spread in their true left-to-right order, so the plot never swaps two.
            for rank, i in enumerate(sorted(group, key=lambda j: display[j][0])):
                spread[i] = (
                    centre + (rank - (len(group) - 1) / 2) * (_MARKER_PX + 3),
                    display[i][1],
                )
    at = [(float(x), float(y)) for x, y in (to_data(p) for p in spread)]
    placed: list[Any] = [_marker_box(p) for p in spread]
    for i, row in enumerate(overall):
        ax.scatter(
            *at[i],
            s=_SIZE,
            marker=_MARKERS[i % len(_MARKERS)],
            edgecolors="white",
            linewidths=0.8,
            zorder=3,
            clip_on=False,
        )
        _label(ax, str(row["strategy"]), at[i], placed, prefer_left[i])
    if dodged:
        fig.text(
            0.99,
            0.01,
            "markers closer than their size are spread sideways",
            ha="right",
            fontsize=7,
            color="0.4",
        )
    return fig
