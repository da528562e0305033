"""Plots of the report's train, review and build sections: lines over an x axis (with an
interval band, or as dots; curves over steps, ROC, reliability, scatter) and horizontal count
bars (histograms, drops, domains). Drawn with the same :mod:`papergym.report.svg` canvas as
the eval plots: inline SVG, every label escaped, no script.

Each plot carries a ``chart-NAME`` class beside ``plot``, so a test (or a reader's style sheet)
can find a chart by what it shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

from papergym.report.svg import (
    Canvas,
    colour,
    nice_ticks,
    row_plot,
    tick_label,
    y_grid,
)

XY = tuple[float, float]


@dataclass(frozen=True)
class Curve:
    """One series of an :func:`xy_plot`: points joined by a line (``dots``: drawn apart), with
    an optional band of (x, low, high); ``colour_index`` picks its palette colour, and
    ``legend`` False leaves it out of the legend (a second stage of the same run)."""

    name: str
    points: Sequence[XY]
    colour_index: int
    band: Sequence[tuple[float, float, float]] = ()
    dots: bool = False
    legend: bool = True


@dataclass(frozen=True)
class Axes:
    """What an :func:`xy_plot` shows around its curves."""

    x_label: str = ""
    y_label: str = ""
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None
    diagonal: bool = False
    """A dashed y = x line (chance on a ROC, perfect calibration on a reliability curve)."""
    marks: Sequence[tuple[float, str]] = field(default_factory=tuple)
    """Dashed vertical lines at x, labelled (where a training stage begins)."""


def finite(value: object) -> float | None:
    """``value`` as a float when it is a finite number, else None (NaN, None, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def tagged(svg: str, name: str) -> str:
    """``svg`` with the class ``chart-NAME`` beside ``plot``."""
    return svg.replace('class="plot"', f'class="plot chart-{escape(name)}"', 1)


def _span(values: Sequence[float], given: tuple[float, float] | None) -> list[float]:
    if given is not None:
        return nice_ticks(*given)
    low, high = min(values, default=0.0), max(values, default=1.0)
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    return nice_ticks(low, high)


def xy_plot(title: str, curves: Sequence[Curve], axes: Axes) -> str:
    """Curves on shared axes, with a legend of the curves that ask for one."""
    width, height, left, right, top, bottom = 720, 320, 60, 190, 30, 46
    canvas = Canvas(width, height, title)
    canvas.text(left, 18, title, size=13, weight="bold")
    xs = [x for c in curves for x, _ in c.points] + [x for c in curves for x, _, _ in c.band]
    ys = [y for c in curves for _, y in c.points]
    ys += [v for c in curves for _, low, high in c.band for v in (low, high)]
    x_ticks, y_ticks = _span(xs, axes.x_range), _span(ys, axes.y_range)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return left + plot_w * (value - x_ticks[0]) / (x_ticks[-1] - x_ticks[0])

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]))

    y_grid(canvas, y_ticks, y_of, left, plot_w)
    for tick in x_ticks:
        canvas.text(x_of(tick), top + plot_h + 14, tick_label(tick), anchor="middle", size=10)
    canvas.line(left, top + plot_h, left + plot_w, top + plot_h)
    canvas.line(left, top, left, top + plot_h)
    if axes.diagonal:
        low, high = max(x_ticks[0], y_ticks[0]), min(x_ticks[-1], y_ticks[-1])
        canvas.line(x_of(low), y_of(low), x_of(high), y_of(high), stroke="#888", **_DASHED)
    for x, label in axes.marks:
        canvas.line(x_of(x), top, x_of(x), top + plot_h, stroke="#aaa", **_DASHED)
        canvas.text(x_of(x) + 3, top + 10, label, size=9, fill="#666")
    canvas.text(left + plot_w / 2, height - 8, axes.x_label, anchor="middle")
    canvas.text(14, top + plot_h / 2, axes.y_label, anchor="middle", rotate=-90)
    for curve in curves:
        _draw_curve(canvas, curve, x_of, y_of)
    shown = [c for c in curves if c.legend]
    for index, curve in enumerate(shown):
        y = top + 10 + index * 16
        canvas.rect(width - right + 12, y - 9, 10, 10, colour(curve.colour_index))
        canvas.text(width - right + 27, y, curve.name[:30])
    return canvas.render()


_DASHED = {"stroke_dasharray": "4 3"}


def _draw_curve(
    canvas: Canvas, curve: Curve, x_of: Callable[[float], float], y_of: Callable[[float], float]
) -> None:
    ink = colour(curve.colour_index)
    if curve.band:
        upper = " ".join(f"{x_of(x):.1f},{y_of(h):.1f}" for x, _, h in curve.band)
        lower = " ".join(f"{x_of(x):.1f},{y_of(lo):.1f}" for x, lo, _ in reversed(curve.band))
        canvas.add(
            f'<polygon class="band" points="{upper} {lower}" fill="{ink}" fill-opacity="0.18">'
            f"<title>{escape(curve.name)}: interval</title></polygon>"
        )
    if curve.dots or len(curve.points) == 1:
        for x, y in curve.points:
            canvas.add(
                f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="3" fill="{ink}" '
                f'fill-opacity="0.7"><title>{escape(curve.name)}: {x:g}, {y:.3g}</title></circle>'
            )
        return
    joined = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in curve.points)
    canvas.add(
        f'<polyline points="{joined}" fill="none" stroke="{ink}" stroke-width="1.8">'
        f"<title>{escape(curve.name)}</title></polyline>"
    )


def count_bars(title: str, rows: Sequence[tuple[str, float]], *, x_label: str = "") -> str:
    """One horizontal bar per row (a count or a mean), its value written beside it."""
    plot = row_plot(
        title, [label for label, _ in rows] or ["none"], row_h=22, label_w=220, bottom=40
    )
    ticks = nice_ticks(0.0, max([value for _, value in rows if value > 0] or [1.0]))

    def x_of(value: float) -> float:
        return plot.x_of(value, 0.0, ticks[-1])

    plot.grid(ticks, x_of)
    plot.x_label(x_label)
    if not rows:
        plot.canvas.text(plot.left + 4, plot.middle(0) + 4, "none", size=10)
    for index, (label, value) in enumerate(rows):
        middle = plot.middle(index)
        plot.canvas.text(plot.left - 6, middle + 4, label[:34], anchor="end")
        plot.canvas.rect(
            plot.left, middle - 7, x_of(value) - plot.left, 14, colour(0), f"{label}: {value:g}"
        )
        plot.canvas.text(x_of(value) + 4, middle + 4, f"{value:,.4g}", size=10)
    return plot.canvas.render()
