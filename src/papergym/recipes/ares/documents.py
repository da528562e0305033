"""The unit ARES works on: one document of a corpus, as the readers in :mod:`.corpus` yield it."""

from __future__ import annotations

from pydantic import Field

from papergym.records import Record

MetaValue = str | int | float | bool | None


class Document(Record):
    """One corpus document: its text and where it came from.

    Ids are unique per corpus; where the corpus has no id column the reader derives one from the
    file and the row (``corpus.jsonl:17``), so the same corpus always gives the same ids and a
    resumed run recognises the documents it has finished.
    """

    id: str = Field(description="Unique within the corpus: the id column, or file:row.")
    text: str = Field(description="The document's text.")
    url: str | None = Field(default=None, description="Where the document was crawled from.")
    source: str = Field(description="The corpus file it was read from, relative to its input.")
    meta: dict[str, MetaValue] = Field(
        default_factory=dict, description="Other scalar columns of the row, kept as they were."
    )

    @property
    def words(self) -> int:
        """Whitespace-separated words in the text."""
        return len(self.text.split())
