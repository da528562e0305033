"""Small SVG plots for ``papergym report``: bars with intervals, heatmaps, box plots, scatters,
stacked bars and forest plots.

Our own few hundred lines rather than matplotlib: the report must open with no network and no
external files, and inline SVG is text we control (every label is escaped, so a system name or
criterion id holding markup is drawn as text). Each function returns one ``<svg>`` element that
scales to its container's width. Nothing here reads files or knows about records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from papergym.report.svg import (
    MISSING,
    Canvas,
    RowPlot,
    colour,
    draw_legend,
    fmt,
    nice_ticks,
    row_plot,
    tick_label,
    whisker,
    with_interval,
    y_grid,
)


@dataclass(frozen=True)
class Point:
    """A value with an optional interval (None: not measured, drawn as 'n/a')."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Series:
    """One system's values, one per category."""

    name: str
    points: Sequence[Point]


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar (a share in [0, 1]) with its interval."""

    name: str
    value: float
    low: float | None = None
    high: float | None = None


def _value_range(
    values: Sequence[float], y_range: tuple[float, float] | None
) -> tuple[float, float]:
    if y_range is not None:
        return y_range
    return min([0.0, *values]), max([1e-9, *values]) * 1.1


def _bar(
    canvas: Canvas,
    y_of: Callable[[float], float],
    baseline: float,
    x: float,
    bar_w: float,
    label: str,
    point: Point,
    ink: str,
) -> None:
    """One bar from ``baseline`` to ``point`` with its interval as a whisker; 'n/a' without a
    value."""
    if point.value is None:
        canvas.text(x + bar_w / 2, baseline - 4, "n/a", anchor="middle", size=9)
        return
    y_value = y_of(point.value)
    tooltip = with_interval(f"{label}: {fmt(point.value, 3)}", point.low, point.high)
    canvas.rect(x + 1, min(y_value, baseline), bar_w - 2, abs(baseline - y_value), ink, tooltip)
    if point.low is not None and point.high is not None:
        middle = x + bar_w / 2
        canvas.line(middle, y_of(point.low), middle, y_of(point.high), stroke_width="1.5")
        for end in (point.low, point.high):
            canvas.line(middle - 4, y_of(end), middle + 4, y_of(end), stroke_width="1.5")


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    y_label: str = "",
    y_range: tuple[float, float] | None = (0.0, 1.0),
    width: int = 720,
) -> str:
    """Grouped vertical bars (one group per category, one bar per series) with interval
    whiskers; a missing value is drawn as 'n/a' instead of a bar."""
    height = 300
    legend_width = 150 if len(series) > 1 else 0
    left, right, top, bottom = 56, 16 + legend_width, 30, 58
    canvas = Canvas(width, height, title)
    canvas.text(left, 18, title, size=13, weight="bold")
    values = [
        v for s in series for p in s.points for v in (p.value, p.low, p.high) if v is not None
    ]
    y_low, y_high = _value_range(values, y_range)
    ticks = nice_ticks(y_low, y_high)
    y_low, y_high = min(y_low, ticks[0]), max(y_high, ticks[-1])
    plot_w, plot_h = width - left - right, height - top - bottom

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - y_low) / (y_high - y_low))

    y_grid(canvas, ticks, y_of, left, plot_w)
    baseline = y_of(max(y_low, min(0.0, y_high)))
    canvas.line(left, baseline, left + plot_w, baseline)
    if y_label:
        canvas.text(14, top + plot_h / 2, y_label, anchor="middle", rotate=-90)
    group_w = plot_w / max(len(categories), 1)
    bar_w = min(40.0, group_w * 0.8 / max(len(series), 1))
    for c_index, category in enumerate(categories):
        group_x = left + c_index * group_w + (group_w - bar_w * len(series)) / 2
        for s_index, one in enumerate(series):
            x = group_x + s_index * bar_w
            label = f"{one.name} · {category}"
            _bar(canvas, y_of, baseline, x, bar_w, label, one.points[c_index], colour(s_index))
        canvas.text(
            left + (c_index + 0.5) * group_w, height - bottom + 16, category, anchor="middle"
        )
    if legend_width:
        draw_legend(canvas, [s.name for s in series], width - legend_width + 4, top + 10)
    return canvas.render()


def _blend(value: float) -> str:
    """Pale grey-blue (0, still visible as a cell on white) to dark blue (1)."""
    value = max(0.0, min(1.0, value))
    r = round(0xF0 + (0x08 - 0xF0) * value)
    g = round(0xF3 + (0x45 - 0xF3) * value)
    b = round(0xF7 + (0x94 - 0xF7) * value)
    return f"#{r:02x}{g:02x}{b:02x}"


LEGEND_H = 36
"""Height of a heatmap's colour legend under its cells."""


def _colour_legend(canvas: Canvas, x: float, y: float, steps: int = 10) -> None:
    """The heatmap's scale: its colours from 0 to 1 in steps (no gradient: a gradient needs
    an id, unique on a page with several heatmaps), labelled, and the grey of 'n/a'."""
    step_w = 16
    canvas.text(x, y + 10, "rate", size=10)
    left = x + 30
    for index in range(steps):
        low = index / steps
        high = (index + 1) / steps
        canvas.rect(
            left + index * step_w, y, step_w, 12, _blend((low + high) / 2), f"{low:.1f}–{high:.1f}"
        )
    for value in (0.0, 0.5, 1.0):
        canvas.text(left + value * steps * step_w, y + 24, f"{value:g}", anchor="middle", size=9)
    missing_x = left + steps * step_w + 16
    canvas.rect(missing_x, y, 16, 12, MISSING, "not measured")
    canvas.text(missing_x + 20, y + 10, "n/a", size=10)


def heatmap(
    title: str,
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    tooltips: Sequence[Sequence[str]] | None = None,
) -> str:
    """A table of rates in [0, 1] as coloured cells with the value written in each; None is a
    grey 'n/a' cell."""
    cell_w, cell_h = 54, 26
    left = min(16 + 7 * max((len(r) for r in rows), default=4), 220)
    longest = min(max((len(c) for c in columns), default=2), 24)
    slanted = longest > 4  # short labels (ranks) fit upright over their column
    # slanted labels are written at 45°: each reaches about 4.6 px up and right per character
    top = 34 + round(4.6 * longest) if slanted else 40
    reach = round(4.6 * longest) if slanted else 0
    width = max(left + cell_w * len(columns) + reach + 8, 16 + 7 * len(title), 300)
    height = top + cell_h * len(rows) + 12 + LEGEND_H
    canvas = Canvas(width, height, title)
    _colour_legend(canvas, 16, height - LEGEND_H + 8)
    canvas.text(8, 18, title, size=13, weight="bold")
    for c_index, column in enumerate(columns):
        x = left + (c_index + 0.5) * cell_w
        if slanted:
            canvas.text(x + 4, top - 6, column[:24], rotate=-45, size=10)
        else:
            canvas.text(x, top - 6, column, anchor="middle", size=10)
    for r_index, row in enumerate(rows):
        y = top + r_index * cell_h
        canvas.text(left - 6, y + cell_h / 2 + 4, row[:30], anchor="end")
        for c_index, value in enumerate(values[r_index]):
            x = left + c_index * cell_w
            tooltip = tooltips[r_index][c_index] if tooltips else f"{row} · {columns[c_index]}"
            fill = MISSING if value is None else _blend(value)
            canvas.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, fill, tooltip)
            ink = "#fff" if value is not None and value > 0.55 else "#222"
            canvas.text(
                x + cell_w / 2, y + cell_h / 2 + 4, fmt(value), anchor="middle", size=10, fill=ink
            )
    return canvas.render()


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * (position - below)


def _box(
    rows: RowPlot, x_of: Callable[[float], float], index: int, name: str, raw: Sequence[float]
) -> None:
    """One group's box: quartiles, median, whiskers to 1.5 IQR and outliers."""
    canvas, middle = rows.canvas, rows.middle(index)
    canvas.text(rows.left - 6, middle + 4, name[:30], anchor="end")
    values = sorted(raw)
    if not values:
        canvas.text(rows.left + 4, middle + 4, "no answers", size=10)
        return
    q1, median, q3 = (_quantile(values, q) for q in (0.25, 0.5, 0.75))
    reach = 1.5 * (q3 - q1)
    inside = [v for v in values if q1 - reach <= v <= q3 + reach]
    low, high_whisker = inside[0], inside[-1]
    ink = colour(index)
    canvas.line(x_of(low), middle, x_of(high_whisker), middle, stroke=ink)
    for end in (low, high_whisker):
        canvas.line(x_of(end), middle - 6, x_of(end), middle + 6, stroke=ink)
    canvas.rect(
        x_of(q1),
        middle - 10,
        x_of(q3) - x_of(q1),
        20,
        ink,
        f"{name}: median {median:g}, quartiles {q1:g}–{q3:g}, n {len(values)}",
    )
    # white on the box; in the group's colour when the box has no width (equal quartiles)
    median_ink = "#fff" if x_of(q3) - x_of(q1) > 4 else ink
    canvas.line(
        x_of(median), middle - 10, x_of(median), middle + 10, stroke=median_ink, stroke_width="2"
    )
    for outlier in (v for v in values if v < low or v > high_whisker):
        canvas.add(
            f'<circle cx="{x_of(outlier):.1f}" cy="{middle:.1f}" r="2.5" fill="none" '
            f'stroke="{ink}"/>'
        )


def box_plot(
    title: str, groups: Sequence[tuple[str, Sequence[float]]], *, x_label: str = ""
) -> str:
    """Horizontal box plots (quartiles, median, whiskers to 1.5 IQR, outliers as dots), one per
    group, on a shared axis."""
    rows = row_plot(title, [name for name, _ in groups], row_h=34, label_w=180, bottom=40)
    everything = [v for _, values in groups for v in values]
    high = max(everything, default=1.0)
    ticks = nice_ticks(0.0, high if high > 0 else 1.0)

    def x_of(value: float) -> float:
        return rows.x_of(value, 0.0, ticks[-1])

    rows.grid(ticks, x_of)
    rows.x_label(x_label)
    for index, (name, raw) in enumerate(groups):
        _box(rows, x_of, index, name, raw)
    return rows.canvas.render()


def scatter(
    title: str,
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    x_label: str = "",
    y_label: str = "",
    legend: Sequence[str] | None = None,
    y_range: tuple[float, float] = (0.0, 1.0),
) -> str:
    """Points of several series on shared axes; ``legend`` gives each series' legend line (for
    example its name with a correlation)."""
    width, height = 720, 340
    legend_width = 230
    left, right, top, bottom = 56, 16 + legend_width, 30, 44
    canvas = Canvas(width, height, title)
    canvas.text(left, 18, title, size=13, weight="bold")
    xs = [x for _, points in series for x, _ in points]
    x_ticks = nice_ticks(0.0, max(xs, default=1.0) or 1.0)
    y_ticks = nice_ticks(*y_range)
    x_high = x_ticks[-1]
    y_low, y_high = y_ticks[0], y_ticks[-1]
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return left + plot_w * value / x_high

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - y_low) / (y_high - y_low))

    y_grid(canvas, y_ticks, y_of, left, plot_w)
    for tick in x_ticks:
        canvas.text(x_of(tick), top + plot_h + 14, tick_label(tick), anchor="middle", size=10)
    canvas.line(left, top + plot_h, left + plot_w, top + plot_h)
    canvas.line(left, top, left, top + plot_h)
    if x_label:
        canvas.text(left + plot_w / 2, height - 8, x_label, anchor="middle")
    if y_label:
        canvas.text(14, top + plot_h / 2, y_label, anchor="middle", rotate=-90)
    for index, (_, points) in enumerate(series):
        for x, y in points:
            canvas.add(
                f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="3" fill="{colour(index)}" '
                'fill-opacity="0.6"/>'
            )
    draw_legend(
        canvas, list(legend or [name for name, _ in series]), width - legend_width + 4, top + 10
    )
    return canvas.render()


def _stack(
    rows: RowPlot,
    x_of: Callable[[float], float],
    index: int,
    label: str,
    segments: Sequence[Segment],
    colours: Sequence[str],
) -> None:
    """One row's bar: its segments side by side, each share written on it when it fits, and
    each segment's interval in a lane of its own under the bar."""
    canvas, middle = rows.canvas, rows.middle(index)
    canvas.text(rows.left - 6, middle + 4, label[:32], anchor="end")
    start = 0.0
    for s_index, segment in enumerate(segments):
        tooltip = f"{label} · {segment.name}: {segment.value:.3f}"
        canvas.rect(
            x_of(start),
            middle - 17,
            x_of(start + segment.value) - x_of(start),
            20,
            colours[s_index % len(colours)],
            with_interval(tooltip, segment.low, segment.high),
        )
        if segment.value >= 0.06:
            canvas.text(
                x_of(start + segment.value / 2),
                middle - 3,
                f"{segment.value:.0%}",
                anchor="middle",
                size=10,
                fill="#fff" if s_index != 1 else "#222",
            )
        start += segment.value
    _segment_intervals(canvas, x_of, middle, segments, colours)


LANE_GAP = 5
"""Pixels between the interval lanes under a stacked bar: one lane per segment."""


def _segment_intervals(
    canvas: Canvas,
    x_of: Callable[[float], float],
    middle: float,
    segments: Sequence[Segment],
    colours: Sequence[str],
) -> None:
    """Each segment's interval in its own lane under the bar, in the segment's colour, so no
    two ever overlap: the first segment's around its right edge, the last one's around its
    left edge (it ends at 1), a middle one's from where it starts."""
    start = 0.0
    for s_index, segment in enumerate(segments):
        if segment.low is not None and segment.high is not None:
            if s_index == 0:
                low, high = segment.low, segment.high
            elif s_index == len(segments) - 1:
                low, high = 1 - segment.high, 1 - segment.low
            else:
                low, high = start + segment.low, start + segment.high
            y = middle + 4 + LANE_GAP * (s_index + 1)
            ink = colours[s_index % len(colours)]
            canvas.line(x_of(low), y, x_of(high), y, stroke=ink, stroke_width="2")
            for end in (low, high):
                canvas.line(x_of(end), y - 2, x_of(end), y + 2, stroke=ink, stroke_width="1.5")
        start += segment.value


def stacked_bars(
    title: str,
    rows: Sequence[tuple[str, Sequence[Segment]]],
    *,
    colours: Sequence[str] = ("#009E73", "#BBBBBB", "#D55E00"),
) -> str:
    """Horizontal bars of shares (win / tie / loss) summing to at most 1, one per row, with
    each segment's interval in its own lane under the bar (never overlapping): around the
    first segment's right edge, the last one's left edge, a middle one's from its start."""
    plot = row_plot(title, [label for label, _ in rows], row_h=44, label_w=200, bottom=50)

    def x_of(value: float) -> float:
        return plot.x_of(max(0.0, min(1.0, value)), 0.0, 1.0)

    plot.grid((0.0, 0.25, 0.5, 0.75, 1.0), x_of)
    for index, (label, segments) in enumerate(rows):
        _stack(plot, x_of, index, label, segments, colours)
    names = list(dict.fromkeys(segment.name for _, segments in rows for segment in segments))
    for s_index, name in enumerate(names):
        x = plot.left + s_index * 110
        plot.canvas.rect(x, plot.canvas.height - 22, 10, 10, colours[s_index % len(colours)])
        plot.canvas.text(x + 15, plot.canvas.height - 13, name)
    return plot.canvas.render()


def forest_plot(
    title: str,
    rows: Sequence[tuple[str, Point]],
    *,
    reference: float = 0.0,
    x_range: tuple[float, float] | None = None,
    x_label: str = "",
) -> str:
    """One estimate per row as a dot with its interval, against a dashed reference line (0
    for differences, chance for a position-bias rate)."""
    plot = row_plot(title, [label for label, _ in rows], row_h=28, label_w=260, bottom=44)
    canvas = plot.canvas
    ends = [v for _, p in rows for v in (p.value, p.low, p.high) if v is not None]
    if x_range is None:
        reach = max([abs(v - reference) for v in ends] + [0.05]) * 1.1
        x_range = (reference - reach, reference + reach)
    ticks = nice_ticks(*x_range)

    def x_of(value: float) -> float:
        return plot.x_of(value, ticks[0], ticks[-1])

    plot.grid(ticks, x_of)
    canvas.line(
        x_of(reference),
        plot.top,
        x_of(reference),
        plot.axis_y,
        stroke="#888",
        stroke_dasharray="4 3",
    )
    plot.x_label(x_label)
    for index, (label, point) in enumerate(rows):
        middle = plot.middle(index)
        canvas.text(plot.left - 6, middle + 4, label[:40], anchor="end")
        if point.value is None:
            canvas.text(plot.left + 4, middle + 4, "n/a", size=10)
            continue
        if point.low is not None and point.high is not None:
            whisker(canvas, x_of(point.low), x_of(point.high), middle)
        canvas.add(
            f'<circle cx="{x_of(point.value):.1f}" cy="{middle:.1f}" r="4.5" fill="{colour(0)}">'
            f"<title>{escape(label)}: {fmt(point.value, 3)}</title></circle>"
        )
    return canvas.render()
