"""A month written ``YYYY-MM``: the cut-off of a split by date (kept apart from the split itself
so the configuration can check it without importing the records)."""

from __future__ import annotations

import re

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def parse_month(text: str) -> str:
    """``text`` if it is a month written ``YYYY-MM`` (01–12); else a ``ValueError`` saying so."""
    match = _MONTH.match(text.strip())
    if match is None or not 1 <= int(match.group(2)) <= 12:
        raise ValueError(f"expected a month as YYYY-MM (e.g. 2024-06), got {text!r}")
    return text.strip()
