"""The writer's records: an outline, its sections as written, and what a written paper holds."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from papergym.records import Record

SectionKind = Literal[
    "introduction",
    "related_work",
    "background",
    "method",
    "experiments",
    "results",
    "discussion",
    "conclusion",
    "other",
]
SECTION_KINDS: tuple[SectionKind, ...] = get_args(SectionKind)


class OutlineSection(Record):
    """One section of an outline: what it is for and which references it builds on."""

    heading: str = Field(description="The section heading, plain text.")
    kind: SectionKind = Field(description="What the section does in the paper.")
    purpose: str = Field(description="One or two sentences: what this section establishes.")
    references: tuple[str, ...] = Field(
        description="Keys of the bibliography entries this section builds on."
    )


class Outline(Record):
    """A paper's plan: title, what the abstract will say, and the sections in order."""

    title: str
    abstract_plan: str = Field(description="What the abstract will say, in two sentences.")
    sections: tuple[OutlineSection, ...]


class SimulatedNumber(Record):
    """A number the writer made up in a results-bearing part, marked in the text as such."""

    section: str = Field(description='The section heading ("Abstract" for the abstract).')
    value: str
    context: str = Field(description="The words around the number, for finding it.")


class WrittenSection(Record):
    """One finished section, saved as soon as it is written (a rerun resumes after it)."""

    index: int = Field(description="Position in the outline; -1 for the abstract.")
    heading: str
    kind: SectionKind | Literal["abstract"]
    latex: str = Field(description="The body as written, after cite cleaning and marking.")
    results_bearing: bool = Field(
        description="Experiments/results/discussion/conclusion or the abstract: its numbers are "
        "marked simulated, or (plan-only) it must hold none."
    )
    removed_cites: tuple[str, ...] = Field(
        default=(), description="Cited keys not in the bibliography, removed from the text."
    )
    simulated: tuple[SimulatedNumber, ...] = ()


class WrittenPaper(Record):
    """``metadata.json`` of a written paper."""

    name: str = Field(description="The paper's folder name under OUT (the .bib's stem).")
    bib: str = Field(description="The .bib the paper was written from.")
    topic: str | None
    plan_only: bool
    model: str
    title: str
    references: int = Field(
        description="Usable references in the bibliography (a key and a title); the first "
        "write.max_references are offered to the model."
    )
    untitled_dropped: int = Field(description="Bibliography entries dropped for want of a title.")
    unparsed_entries: int = Field(
        default=0,
        description="Bibliography entries that could not be parsed (a missing comma, an unclosed "
        "brace, no key...), left out: the paper was written without them.",
    )
    unparsed: tuple[str, ...] = Field(
        default=(),
        description="The first of those entries, each as 'key (line N: reason)'.",
    )
    duplicate_entries: int = Field(
        default=0, description="Bibliography entries repeating an earlier key (the first is kept)."
    )
    cited: tuple[str, ...] = Field(description="Keys cited in paper.tex, each in the .bib.")
    removed_cites: tuple[str, ...] = Field(
        description="Keys the model cited that the .bib lacks, removed from the text."
    )
    sections: tuple[str, ...]
    simulated_results: bool = Field(
        description="True when numbers in results-bearing parts were generated, not measured."
    )
    simulated_numbers: tuple[SimulatedNumber, ...]
    notice: str = Field(description="The notice printed in the paper about how it was written.")


class WriteDrop(Record):
    """A paper the writer could not write, and why (e.g. its outline stayed invalid)."""

    name: str
    bib: str
    step: Literal["outline", "section_outline", "section", "abstract"]
    reason: str
