"""PaperGym: research papers → rubric-graded RL environments for research planning.

The public names below are imported on first use (PEP 562), so that ``import papergym`` — and
with it every ``papergym`` command's start-up — does not pay for ingestion and pydantic models
it may never touch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papergym.errors import BadInputError, PaperGymError
    from papergym.ingestion import IngestReport, ingest, ingest_sources
    from papergym.jsonl import read_jsonl, write_jsonl
    from papergym.records import Paper, PaperMeta, Section

__version__ = "0.1.0"

_HOMES = {
    "BadInputError": "papergym.errors",
    "PaperGymError": "papergym.errors",
    "IngestReport": "papergym.ingestion",
    "ingest": "papergym.ingestion",
    "ingest_sources": "papergym.ingestion",
    "read_jsonl": "papergym.jsonl",
    "write_jsonl": "papergym.jsonl",
    "Paper": "papergym.records",
    "PaperMeta": "papergym.records",
    "Section": "papergym.records",
}

__all__ = [
    "BadInputError",
    "IngestReport",
    "Paper",
    "PaperGymError",
    "PaperMeta",
    "Section",
    "__version__",
    "ingest",
    "ingest_sources",
    "read_jsonl",
    "write_jsonl",
]


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package``: a public name is imported from the
    module ``homes`` gives for it on its first use, so that a command that never touches the
    name never pays for its module (``papergym`` itself and ``papergym.fakellm`` use one)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__


__getattr__ = lazy_exports(__name__, _HOMES)
