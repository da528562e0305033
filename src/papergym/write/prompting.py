"""The writer's prompts (``prompts/*.md``) and the schemas its answers are checked against.

The outline's schema is built per bibliography: a reference key is an enum of the bibliography's
keys, so a server with structured decoding cannot cite a key that does not exist, and a model
without it gets the validation error back from the LLM layer's repair loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from papergym.sources.bib import Reference
from papergym.write.marking import has_top_heading, numbers_in_plan, tidy_body
from papergym.write.paper_text import render_outline, results_bearing
from papergym.write.records import Outline, OutlineSection, SectionKind


def template(name: str) -> Template:
    text = resources.files("papergym.write").joinpath("prompts", f"{name}.md").read_text("utf-8")
    return Template(text)


def fill(name: str, **values: object) -> str:
    return template(name).substitute({k: str(v) for k, v in values.items()}).strip()


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" ..." if len(words) > limit else "")


def reference_line(reference: Reference, abstract_words: int) -> str:
    """One reference as the writer sees it: key, title, authors, year, venue, abstract."""
    authors = ", ".join(reference.authors[:4]) + (" et al." if len(reference.authors) > 4 else "")
    parts = (authors, reference.year, reference.venue)
    details = ". ".join(p.rstrip(".") for p in parts if p and p.rstrip("."))
    line = f"[{reference.key}] {reference.title}." + (f" {details}." if details else "")
    if reference.abstract and abstract_words > 0:
        line += f"\n    Abstract: {_words(reference.abstract, abstract_words)}"
    return line


def bibliography_block(references: Sequence[Reference], abstract_words: int) -> str:
    return "\n".join(reference_line(r, abstract_words) for r in references)


def topic_line(topic: str | None) -> str:
    return f"The paper's topic: {topic.strip()}\n" if topic and topic.strip() else ""


# --- schemas ----------------------------------------------------------------------------------


class OutlineSectionOut(BaseModel):
    heading: str = Field(min_length=1, max_length=160)
    kind: SectionKind
    purpose: str = Field(min_length=1)
    references: list[str]


class OutlineOut(BaseModel):
    title: str = Field(min_length=1, max_length=300)
    abstract_plan: str = Field(min_length=1)
    sections: list[OutlineSectionOut]

    def to_outline(self) -> Outline:
        return Outline(
            title=self.title.strip(),
            abstract_plan=self.abstract_plan.strip(),
            sections=tuple(
                OutlineSection(
                    heading=s.heading.strip(),
                    kind=s.kind,
                    purpose=s.purpose.strip(),
                    references=tuple(dict.fromkeys(s.references)),
                )
                for s in self.sections
            ),
        )


def outline_schema(
    keys: Sequence[str], min_sections: int, max_sections: int, min_references: int
) -> type[OutlineOut]:
    """:class:`OutlineOut` whose reference keys must be ``keys``, with the outline rules."""
    key_type: Any = Literal[tuple(keys)]  # an enum in the JSON schema sent
    section = create_model(
        "OutlineSectionOut",
        __base__=OutlineSectionOut,
        references=(list[key_type], ...),
    )
    needed = min(min_references, len(keys))

    def check(outline: OutlineOut) -> OutlineOut:
        headings = [s.heading.strip().lower() for s in outline.sections]
        if len(set(headings)) != len(headings):
            raise ValueError("two sections have the same heading")
        converted = outline.to_outline()
        if not any(results_bearing(s) for s in converted.sections):
            raise ValueError("the outline needs an experiments or results section")
        used = {k for s in outline.sections for k in s.references}
        if len(used) < needed:
            raise ValueError(
                f"the outline builds on {len(used)} reference(s); it must build on at least "
                f"{needed} different ones from the list"
            )
        return outline

    limits = Field(min_length=min_sections, max_length=max_sections)
    sections: Any = Annotated[list[section], limits]
    validators: dict[str, Any] = {"outline_rules": model_validator(mode="after")(check)}
    return create_model(
        "OutlineOut", __base__=OutlineOut, __validators__=validators, sections=(sections, ...)
    )


class SectionPlanOut(BaseModel):
    """A section's outline in alternating mode: its purpose now, and the references it uses."""

    purpose: str = Field(min_length=1)
    references: list[str]


def section_plan_schema(keys: Sequence[str]) -> type[SectionPlanOut]:
    """:class:`SectionPlanOut` whose reference keys must be ``keys``."""
    key_type: Any = Literal[tuple(keys)]
    return create_model("SectionPlanOut", __base__=SectionPlanOut, references=(list[key_type], ...))


def section_plan_prompt(
    outline: Outline,
    index: int,
    written: Sequence[tuple[str, str]],
    references: Sequence[Reference],
) -> str:
    """The alternating mode's outline step for section ``index``: the bodies so far in view."""
    section = outline.sections[index]
    return fill(
        "section_outline",
        outline=render_outline(outline),
        written=_written_block(written),
        number=index + 1,
        heading=section.heading,
        kind=section.kind,
        purpose=section.purpose,
        bibliography="\n".join(f"[{r.key}] {r.title}" for r in references),
    )


def _written_block(written: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"\\section{{{h}}}\n{body}" for h, body in written) or "(none yet)"


class SectionOut(BaseModel):
    latex: str = Field(min_length=1)

    @field_validator("latex")
    @classmethod
    def _body_only(cls, value: str) -> str:
        value = tidy_body(value)
        if "\\begin{document}" in value or "\\documentclass" in value:
            raise ValueError("write the section's body only: no preamble or \\begin{document}")
        if has_top_heading(value):
            raise ValueError("write this one section only: no \\section{} (use \\subsection{})")
        if not value:
            raise ValueError("the section is empty")
        return value


class PlanSectionOut(SectionOut):
    """A section of a --plan-only paper that would otherwise report results: no numbers."""

    @field_validator("latex")
    @classmethod
    def _no_numbers(cls, value: str) -> str:
        found = numbers_in_plan(value)
        if found:
            shown = ", ".join(found[:5])
            raise ValueError(
                f"an experiment plan must hold no numerals (found {shown}); write counts in "
                "words and report no results"
            )
        return value


def section_prompt(
    outline: Outline,
    index: int,
    written: Sequence[tuple[str, str]],
    references: dict[str, Reference],
    rule: str,
    words: int,
) -> str:
    section = outline.sections[index]
    so_far = _written_block(written)
    cited = "\n".join(f"[{k}] {references[k].title}" for k in section.references if k in references)
    return fill(
        "section",
        outline=render_outline(outline),
        written=so_far,
        number=index + 1,
        heading=section.heading,
        kind=section.kind,
        purpose=section.purpose,
        references=cited or "(none in particular)",
        rule=rule,
        words=words,
    )
