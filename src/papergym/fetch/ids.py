"""arXiv identifiers as a user types them: checked, split into id and version, made folder-safe.

New style ``2401.01234`` (four digits after the dot until 2014-12, five since 2015-01) and old
style ``hep-th/9901001``, each with an optional version (``v2``). An ``arXiv:`` prefix or an
abs/e-print URL around the id is accepted, since ids are often pasted from those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.errors import BadInputError

_NEW = re.compile(r"(?P<yymm>\d{4})\.(?P<number>\d{4,5})")
_OLD = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.[A-Z]{2})?/(?P<yymm>\d{4})(?P<number>\d{3})"
)
_VERSION = re.compile(r"(?P<base>.+?)v(?P<version>[1-9]\d*)")
_PREFIXES = re.compile(
    r"^(?:arxiv:|https?://(?:export\.)?arxiv\.org/(?:abs|e-print|src|pdf)/)", re.I
)


@dataclass(frozen=True)
class ArxivId:
    """An arXiv id without its version, and the version asked for (None: the latest)."""

    base: str
    version: int | None = None

    @property
    def text(self) -> str:
        """The id as arXiv writes it: ``2401.01234v2``."""
        return f"{self.base}v{self.version}" if self.version else self.base

    @property
    def folder(self) -> str:
        """The folder name under PAPERS/: ``hep-th/9901001`` → ``hep-th_9901001`` (no slash,
        and reversible: arXiv ids hold no underscore)."""
        return self.base.replace("/", "_")


def parse_id(text: str) -> ArxivId:
    """``text`` as an arXiv id; a :class:`BadInputError` naming it when it is none."""
    raw = _PREFIXES.sub("", text.strip())
    versioned = _VERSION.fullmatch(raw)
    base, version = (versioned["base"], int(versioned["version"])) if versioned else (raw, None)
    new = _NEW.fullmatch(base)
    if new and _valid_month(new["yymm"]) and _new_number_fits(new["yymm"], new["number"]):
        return ArxivId(base, version)
    old = _OLD.fullmatch(base)
    if old and _valid_month(old["yymm"]):
        return ArxivId(f"{old['archive']}/{old['yymm']}{old['number']}", version)
    raise BadInputError(
        None,
        f"{text!r} is not an arXiv id (expected e.g. 2401.01234, 2401.01234v2, hep-th/9901001)",
    )


def _valid_month(yymm: str) -> bool:
    return 1 <= int(yymm[2:]) <= 12


def _new_number_fits(yymm: str, number: str) -> bool:
    """Five-digit numbers began in 2015-01; before, four."""
    return len(number) == (5 if int(yymm) >= 1501 else 4)


def expand_id_arguments(arguments: Sequence[str]) -> list[str]:
    """The ids the command line names: an argument that is an existing file is a list of ids
    (one a line; blank lines and ``#`` comments skipped), any other is an id itself. Ids are
    checked later, one by one, so that a bad one does not stop the others."""
    ids: list[str] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_file():
            ids.extend(_read_ids_file(path))
        else:
            ids.append(argument)
    return ids


def _read_ids_file(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInputError(path, f"cannot read the ids file: {error}") from None
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]
