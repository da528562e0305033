"""Splits by date: papers dated after a month are the test split, the rest train (SPEC §2 keeps
its test papers newer than the training cut-off, so a model cannot have read them).

An instance's date is the one ingestion parsed (``Instance.date``); instances written before
that field existed fall back to the month in their arXiv id. Dates are compared by month: an
ISO day (``2024-06-15``) counts as its month.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from papergym.errors import BadInputError
from papergym.export.month import parse_month
from papergym.records import Instance
from papergym.sources.arxiv import arxiv_date

UndatedPolicy = Literal["refuse", "train", "test", "drop"]
UNDATED_POLICIES: tuple[str, ...] = ("refuse", "train", "test", "drop")

_DATE = re.compile(r"^(\d{4})-(\d{2})(?:-\d{2})?$")


def instance_month(instance: Instance) -> str | None:
    """The ``YYYY-MM`` the instance's paper is dated, or ``None`` when nothing dates it."""
    date = instance.date or (arxiv_date(instance.arxiv_id) if instance.arxiv_id else None)
    match = _DATE.match(date.strip()) if date else None
    return f"{match.group(1)}-{match.group(2)}" if match else None


@dataclass(frozen=True)
class DateSplit:
    """Test: papers dated after ``test_after`` (``YYYY-MM``); undated ones as ``undated`` says."""

    test_after: str
    undated: UndatedPolicy = "refuse"

    def __post_init__(self) -> None:
        parse_month(self.test_after)  # a rule is never built around a malformed month

    def describe(self) -> str:
        """The rule in one sentence, for the card."""
        where = {
            "refuse": "none (they are refused)",
            "train": "train",
            "test": "test",
            "drop": "neither (dropped)",
        }[self.undated]
        return (
            f"by date: papers dated after {self.test_after} are test, the rest train; "
            f"undated papers go to {where}"
        )


def split_by_date(
    instances: Sequence[Instance], rule: DateSplit, source: str | Path | None = None
) -> dict[str, list[Instance]]:
    """``{"train": [...], "test": [...]}`` by each instance's month; input order is kept.

    An undated instance under ``undated: refuse`` is the user's error: one line naming the
    file the instances came from (``source``) and the instance."""
    splits: dict[str, list[Instance]] = {"train": [], "test": []}
    for instance in instances:
        month = instance_month(instance)
        if month is None:
            if rule.undated == "refuse":
                raise BadInputError(
                    source,
                    f"instance {instance.id} (paper {instance.paper_id}"
                    f"{', ' + repr(instance.title) if instance.title else ''}) has no date; "
                    "pass --undated train|test|drop to place undated papers",
                )
            if rule.undated != "drop":
                splits[rule.undated].append(instance)
            continue
        splits["test" if month > rule.test_after else "train"].append(instance)
    return splits


def date_ranges(splits: dict[str, list[Instance]]) -> dict[str, dict[str, Any]]:
    """Per split: the first and last month, and how many instances had no date."""
    ranges: dict[str, dict[str, Any]] = {}
    for name, items in splits.items():
        months = sorted(m for m in map(instance_month, items) if m is not None)
        ranges[name] = {
            "first": months[0] if months else None,
            "last": months[-1] if months else None,
            "undated": len(items) - len(months),
        }
    return ranges


def date_rule(split_by: str, test_after: str | None, undated: UndatedPolicy) -> DateSplit | None:
    """The date rule the ``data`` settings ask for (``split_by: date``), else ``None``."""
    if split_by != "date" or test_after is None:
        return None
    return DateSplit(test_after, undated)


def split_rule_card(
    instances: Sequence[Instance],
    splits: dict[str, list[Instance]],
    test_fraction: float | None,
    date_split: DateSplit | None,
) -> dict[str, Any]:
    """What the card says about the split: the rule, and each split's date range."""
    if date_split is not None:
        rule = date_split.describe()
    elif test_fraction is not None:
        rule = f"by a stable hash of the paper id: {test_fraction:g} of papers are test"
    else:
        rule = "none: every instance is train"
    exported = sum(len(items) for items in splits.values())
    return {
        "rule": rule,
        "split_by": "date" if date_split is not None else "hash",
        "test_after": date_split.test_after if date_split is not None else None,
        "undated": date_split.undated if date_split is not None else None,
        "test_fraction": None if date_split is not None else test_fraction,
        "dropped_undated": len(instances) - exported,
        "date_ranges": date_ranges(splits),
    }
