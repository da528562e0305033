"""The card's "Discipline mix" section: target against achieved, for builds made with
``build --mix`` (:mod:`papergym.recipes.mix` computes the numbers; this only renders them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_COLUMNS = (
    ("discipline", "discipline"),
    ("target share", "target_share"),
    ("target papers", "target_papers"),
    ("available", "available_papers"),
    ("selected", "selected_papers"),
    ("selected share", "selected_share"),
    ("instances", "instances"),
    ("instance share", "instance_share"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if isinstance(value, float) else str(value)


def mix_lines(mix: Mapping[str, Any] | None) -> list[str]:
    """The section's Markdown lines (none for a build without a mix)."""
    if not mix:
        return []
    lines = [
        "## Discipline mix",
        "",
        f"Sampled {mix['target']} paper(s) to the mix with seed {mix['seed']}; a discipline "
        "with too few papers gave all it had and was not topped up from others. Shares of "
        "instances are after drops.",
        "",
        "| " + " | ".join(title for title, _ in _COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    for row in mix.get("achieved", []):
        lines.append("| " + " | ".join(_cell(row.get(key)) for _, key in _COLUMNS) + " |")
    short = [r for r in mix.get("rows", []) if r["available"] < r["wanted"]]
    lines.append("")
    if short:
        names = ", ".join(f"{r['key']} ({r['available']} of {r['wanted']})" for r in short)
        lines += [f"Short of papers: {names}.", ""]
    return lines
