"""PaperGym: research papers → rubric-graded RL environments for research planning."""

from papergym.errors import BadInputError, PaperGymError
from papergym.ingestion import IngestReport, ingest, ingest_sources
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.records import Paper, PaperMeta, Section

__version__ = "0.1.0"

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
