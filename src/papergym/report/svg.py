"""The SVG primitives ``papergym report``'s plots are drawn with: a canvas that escapes every
text it is given, the palette, tick values, legends, grids, and the layout of a plot of one row
per label."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"
MISSING = "#e0e0e0"


@dataclass
class Canvas:
    width: int
    height: int
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, element: str) -> None:
        self.parts.append(element)

    def text(
        self,
        x: float,
        y: float,
        content: str,
        *,
        anchor: str = "start",
        size: int = 11,
        weight: str = "normal",
        rotate: float | None = None,
        fill: str = "#222",
    ) -> None:
        transform = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
        self.add(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}" fill="{fill}"{transform}>{escape(content)}</text>'
        )

    def line(
        self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#222", **extra: str
    ) -> None:
        attributes = "".join(f' {key.replace("_", "-")}="{value}"' for key, value in extra.items())
        self.add(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}"{attributes}/>'
        )

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, tooltip: str | None = None
    ) -> None:
        inner = f"<title>{escape(tooltip)}</title>" if tooltip else ""
        self.add(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{max(h, 0.0):.1f}" '
            f'fill="{fill}">{inner}</rect>'
        )

    def render(self) -> str:
        body = "\n".join(self.parts)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" '
            f'viewBox="0 0 {self.width} {self.height}" style="{FONT};max-width:{self.width}px" '
            f'width="100%"><title>{escape(self.title)}</title>\n'
            f'<rect width="{self.width}" height="{self.height}" fill="#fff"/>\n'
            f"{body}\n</svg>"
        )


def colour(index: int) -> str:
    """The palette colour of the ``index``-th system (cycling)."""
    return PALETTE[index % len(PALETTE)]


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)  # the last tick reaches the highest value
    return [round(k * step, 10) for k in range(first, last + 1)]


def tick_label(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1e-9 else "0"


def draw_legend(canvas: Canvas, names: Sequence[str], x: float, y: float) -> None:
    for index, name in enumerate(names):
        canvas.rect(x, y + index * 16 - 9, 10, 10, colour(index))
        canvas.text(x + 15, y + index * 16, name)


def with_interval(text: str, low: float | None, high: float | None) -> str:
    """``text`` and, when there is one, the interval ``[low, high]`` (for a tooltip)."""
    if low is not None and high is not None:
        return f"{text} [{low:.3f}, {high:.3f}]"
    return text


def y_grid(
    canvas: Canvas, ticks: Sequence[float], y_of: Callable[[float], float], left: float, w: float
) -> None:
    """Horizontal grid lines across the plot (``w`` wide from ``left``), labelled on the left."""
    for tick in ticks:
        canvas.line(left, y_of(tick), left + w, y_of(tick), stroke="#e6e6e6")
        canvas.text(left - 6, y_of(tick) + 4, tick_label(tick), anchor="end", size=10)


@dataclass(frozen=True)
class RowPlot:
    """A plot of one row per label under its title, on a shared horizontal axis."""

    canvas: Canvas
    left: int
    row_h: int
    bottom: int
    top: int = 30
    right: int = 24

    @property
    def plot_w(self) -> int:
        return self.canvas.width - self.left - self.right

    @property
    def axis_y(self) -> int:
        """Where the rows end and the axis' labels begin."""
        return self.canvas.height - self.bottom

    def middle(self, index: int) -> float:
        return self.top + index * self.row_h + self.row_h / 2

    def x_of(self, value: float, low: float, high: float) -> float:
        return self.left + self.plot_w * (value - low) / (high - low)

    def grid(self, ticks: Sequence[float], x_of: Callable[[float], float]) -> None:
        """Vertical grid lines at ``ticks``, labelled under the rows."""
        for tick in ticks:
            self.canvas.line(x_of(tick), self.top, x_of(tick), self.axis_y, stroke="#e6e6e6")
            self.canvas.text(
                x_of(tick), self.axis_y + 14, tick_label(tick), anchor="middle", size=10
            )

    def x_label(self, text: str) -> None:
        if text:
            self.canvas.text(
                self.left + self.plot_w / 2, self.canvas.height - 8, text, anchor="middle"
            )


def row_plot(
    title: str, labels: Sequence[str], *, row_h: int, label_w: int, bottom: int
) -> RowPlot:
    """A 720-pixel canvas titled ``title`` with a row per label; labels get up to ``label_w``
    pixels."""
    left = 16 + min(7 * max((len(n) for n in labels), default=4), label_w)
    canvas = Canvas(720, 30 + row_h * max(len(labels), 1) + bottom, title)
    canvas.text(8, 18, title, size=13, weight="bold")
    return RowPlot(canvas, left, row_h, bottom)


def whisker(canvas: Canvas, x1: float, x2: float, y: float) -> None:
    canvas.line(x1, y, x2, y, stroke_width="1.5")
    for x in (x1, x2):
        canvas.line(x, y - 4, x, y + 4, stroke_width="1.5")
