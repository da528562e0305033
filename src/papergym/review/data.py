"""Reading what ``review fit`` and ``review eval`` take: a ratings file, a folder of paper texts,
a reviewer's ``reviews.jsonl`` and an external predictions CSV. Every check runs before anything
is written; a problem is one :class:`BadInputError` naming the file (and line) and what is wrong.

The ratings file is tab-separated, one paper a line: ``paper_id``, one column per human reviewer
(empty where a paper had fewer), and ``decision`` (``Accept ...`` or ``Reject``), as the shared
ICLR 2022 set has it.
"""

from __future__ import annotations

import csv
import json
import math
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import iter_json_lines
from papergym.review.records import PaperReview, VenueScale

MAX_PAPER_BYTES = 20_000_000
_SNIFF = 8192
_CONTROL_SHARE = 0.30
_BINARY_MAGIC = (b"%PDF", b"PK\x03\x04", b"\x1f\x8b", b"\x89PNG", b"\xff\xd8\xff", b"GIF8")


@dataclass(frozen=True)
class RatedPaper:
    """One paper of a ratings file: its human reviewers' overall ratings and the decision."""

    paper_id: str
    ratings: tuple[float, ...]
    accepted: bool

    @property
    def mean_rating(self) -> float:
        return math.fsum(self.ratings) / len(self.ratings)


@dataclass(frozen=True)
class Prediction:
    """A reviewer's verdict on one paper: a score on the venue's range and a decision; both None
    when the reviewer left the paper unscored."""

    score: float | None
    decision: Literal["accept", "reject"] | None


def _looks_binary(data: bytes) -> bool:
    head = data[:_SNIFF]
    if head.startswith(_BINARY_MAGIC):
        return True
    controls = sum(1 for byte in head if byte < 0x20 and byte not in b"\t\n\r\f")
    return controls / max(1, len(head)) > _CONTROL_SHARE


def read_paper_text(path: Path) -> str:
    """A paper's text file, decoded (UTF-8, else cp1252, else latin-1).

    PDF-to-text extractions carry stray control bytes (NULs among them: 85 of the shared ICLR
    texts have some), so a file is binary only when it starts like a PDF, archive or image, or
    when control bytes are over 30% of its first 8 KB; the stray ones are dropped from the text.
    Empty and whitespace-only files are refused.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise BadInputError(path, "not a regular file")
            data = handle.read(MAX_PAPER_BYTES + 1)
    except FileNotFoundError:
        raise BadInputError(path, "no such file") from None
    except OSError as error:
        raise BadInputError(path, f"cannot read: {error.strerror or error}") from None
    if len(data) > MAX_PAPER_BYTES:
        raise BadInputError(path, f"file too large (over {MAX_PAPER_BYTES} bytes)")
    if _looks_binary(data):
        raise BadInputError(path, "binary file, not a paper's text")
    for encoding in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    text = "".join(ch for ch in text if ch >= " " or ch in "\t\n\r\f")
    if not text.strip():
        raise BadInputError(path, "empty file: no paper text")
    return text


def _rating(value: str, scale: VenueScale, where: str) -> float:
    try:
        rating = float(value)
    except ValueError:
        raise BadInputError(None, f"{where}: rating {value!r} is not a number") from None
    if not math.isfinite(rating) or rating not in scale.ratings:
        raise BadInputError(
            None,
            f"{where}: rating {value!r} is not on the {scale.name} scale "
            f"{', '.join(map(str, scale.ratings))}",
        )
    return rating


def _decision(value: str, where: str) -> bool:
    word = value.strip().lower()
    if word.startswith("accept"):
        return True
    if word.startswith("reject"):
        return False
    raise BadInputError(None, f"{where}: decision {value!r} is neither Accept... nor Reject")


def read_ratings(path: Path, scale: VenueScale) -> list[RatedPaper]:
    """The papers of a ratings TSV, in file order; every paper needs two or more ratings (the
    proxy errors compare a rating with the mean of the others)."""
    try:
        # utf-8-sig: a spreadsheet's "UTF-8" export starts with a byte-order mark
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))
    except FileNotFoundError:
        raise BadInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInputError(path, f"cannot read: {error}") from None
    if not rows or not rows[0] or rows[0][0] != "paper_id" or rows[0][-1] != "decision":
        raise BadInputError(path, "not a ratings file: the header must be paper_id, ..., decision")
    papers: list[RatedPaper] = []
    seen: set[str] = set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path} line {number}"
        if len(row) != len(rows[0]):
            raise BadInputError(None, f"{where}: {len(row)} columns, the header has {len(rows[0])}")
        paper_id = row[0].strip()
        if not paper_id or paper_id in seen:
            raise BadInputError(None, f"{where}: empty or repeated paper id {paper_id!r}")
        seen.add(paper_id)
        ratings = tuple(_rating(cell, scale, where) for cell in row[1:-1] if cell.strip())
        if len(ratings) < 2:
            raise BadInputError(None, f"{where}: {len(ratings)} rating(s); at least 2 are needed")
        papers.append(RatedPaper(paper_id, ratings, _decision(row[-1], where)))
    if not papers:
        raise BadInputError(path, "no papers")
    return papers


def paper_path(folder: Path, paper_id: str) -> Path | None:
    """The text file of ``paper_id`` in ``folder`` (``ID.txt``, ``ID.md`` or ``ID``)."""
    for name in (f"{paper_id}.txt", f"{paper_id}.md", f"{paper_id}.markdown", paper_id):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def read_papers(folder: Path, papers: list[RatedPaper], ratings: Path) -> dict[str, str]:
    """The text of every rated paper; a rated paper with no file in ``folder`` is bad input."""
    if not folder.is_dir():
        raise BadInputError(folder, "no such folder of papers")
    texts: dict[str, str] = {}
    for paper in papers:
        path = paper_path(folder, paper.paper_id)
        if path is None:
            raise BadInputError(
                ratings, f"paper id {paper.paper_id!r} has no text in {folder} (ID.txt or ID.md)"
            )
        texts[paper.paper_id] = read_paper_text(path)
    return texts


@dataclass(frozen=True)
class ReviewsFile:
    """A ``papergym review`` reviews.jsonl read for evaluation: each paper's prediction, and who
    made them (the reviewer models named in the records, and whether every record is the
    offline baseline's, so that the evaluation can call it a baseline)."""

    predictions: dict[str, Prediction]
    reviewer_models: tuple[str, ...]
    baseline: bool
    plan: dict[str, Any] | None = None
    """The run's settings (``review.json`` beside the file), when it is there and readable: for
    the offline baseline, which baseline file wrote the records."""


def read_reviews(path: Path, scale: VenueScale) -> dict[str, Prediction]:
    """Each paper's score and decision from a ``papergym review`` reviews.jsonl (the last
    record of a paper wins, as a resumed run appends). A score that is not a number on the
    venue's range (NaN, infinite, 1e9, -5) is bad input, as it is in a predictions CSV."""
    return read_reviews_file(path, scale).predictions


def _checked_score(score: float | None, scale: VenueScale, where: str) -> float | None:
    if score is not None and not (math.isfinite(score) and scale.low <= score <= scale.high):
        raise BadInputError(
            None,
            f"{where}: score {score!r} is not on the {scale.name} rating range "
            f"{scale.low}..{scale.high}",
        )
    return score


def read_reviews_file(path: Path, scale: VenueScale) -> ReviewsFile:
    """:func:`read_reviews` with the reviewers that wrote the records."""
    predictions: dict[str, Prediction] = {}
    models: dict[str, None] = {}  # in order of appearance
    baseline = True
    try:
        for number, payload in iter_json_lines(path):
            try:
                record = PaperReview.model_validate(payload)
            except ValidationError as error:
                first = error.errors()[0]
                raise BadInputError(
                    None, f"{path} line {number}: not a review record ({first['msg']})"
                ) from None
            score = _checked_score(record.score, scale, f"{path} line {number}")
            predictions[record.paper_id] = Prediction(score, record.decision)
            models[record.reviewer_model] = None
            baseline = baseline and record.baseline
    except FileNotFoundError:
        raise BadInputError(path, "no such file") from None
    return ReviewsFile(
        predictions, tuple(models), baseline and bool(predictions), _plan(path.parent / PLAN_FILE)
    )


PLAN_FILE = "review.json"
"""What ``papergym review`` writes beside its reviews.jsonl: the settings of the run."""


def _plan(path: Path) -> dict[str, Any] | None:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


@dataclass(frozen=True)
class LinearScale:
    """An explicit mapping of an external score's range onto the venue's: ``low:high`` maps
    linearly to ``scale.low:scale.high``."""

    low: float
    high: float

    @classmethod
    def parse(cls, text: str) -> LinearScale:
        parts = text.split(":")
        try:
            low, high = (float(p) for p in parts)
        except ValueError:
            raise BadInputError(None, f"--scale {text!r}: expected LOW:HIGH, e.g. 1:10") from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise BadInputError(None, f"--scale {text!r}: LOW must be below HIGH")
        return cls(low, high)

    def to_venue(self, value: float, scale: VenueScale) -> float:
        share = (value - self.low) / (self.high - self.low)
        return scale.low + share * (scale.high - scale.low)

    def describe(self, scale: VenueScale) -> str:
        return f"linear {self.low:g}..{self.high:g} -> {scale.name} {scale.low}..{scale.high}"


def read_predictions(
    path: Path,
    *,
    id_column: str,
    score_column: str,
    decision_column: str | None,
    mapping: LinearScale,
    scale: VenueScale,
) -> dict[str, Prediction]:
    """Scores (and decisions) of an external reviewer from a CSV. A row whose score is empty is
    the reviewer's unscored paper; a score outside the declared range is bad input."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # review texts are long
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = list(reader.fieldnames or [])
            wanted = [id_column, score_column, *([decision_column] if decision_column else [])]
            missing = [c for c in wanted if c not in columns]
            if missing:
                raise BadInputError(
                    path,
                    f"no column {', '.join(map(repr, missing))} (columns: {', '.join(columns)})",
                )
            rows = list(reader)
    except FileNotFoundError:
        raise BadInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise BadInputError(path, f"cannot read as CSV: {error}") from None
    predictions: dict[str, Prediction] = {}
    first_row: dict[str, int] = {}
    for number, row in enumerate(rows, start=2):
        where = f"{path} row {number}"
        paper_id = (row.get(id_column) or "").strip()
        if not paper_id:
            raise BadInputError(None, f"{where}: empty {id_column}")
        if paper_id in first_row:  # which of two verdicts counts would be a silent guess
            raise BadInputError(
                None, f"{where}: paper {paper_id!r} again (first at row {first_row[paper_id]})"
            )
        first_row[paper_id] = number
        raw = (row.get(score_column) or "").strip()
        if not raw:
            predictions[paper_id] = Prediction(None, None)
            continue
        try:
            value = float(raw)
        except ValueError:
            raise BadInputError(None, f"{where}: {score_column} {raw!r} is not a number") from None
        if not (mapping.low <= value <= mapping.high):
            raise BadInputError(
                None,
                f"{where}: {score_column} {raw!r} is outside --scale {mapping.low:g}:{mapping.high:g}",
            )
        decision: Literal["accept", "reject"] | None = None
        if decision_column:
            decision = "accept" if _decision(row.get(decision_column) or "", where) else "reject"
        predictions[paper_id] = Prediction(mapping.to_venue(value, scale), decision)
    return predictions
