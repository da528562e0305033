"""Plausible answers to the prompts of ARES, the simulated reviewer and the paper writer.

:mod:`papergym.fakellm.plausible` answers the build's prompts; this module adds the others
that ``papergym fake-llm --answers plausible`` is asked in the README's demos:

* ARES (``papergym build CORPUS --recipe ares``): the scripted responder the ARES tests use,
  :class:`papergym.recipes.ares.scripted.AresScript`, without faults;
* review (``papergym review``): a review drawn from the paper's sentences, whose rating is on the
  venue's scale (the schema's enum) and varies by reviewer, and a meta-review built from the
  reviews it is shown;
* write (``papergym write``): an outline that cites keys listed in the prompt (every section has
  at least one, the experiments section is planned), and section and abstract text citing the
  section's keys.

Every answer is a pure function of the request, as in :mod:`~papergym.fakellm.plausible`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from papergym.fakellm.completions import JSONDict, extract_schema

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")

ARES_CUES: tuple[str, ...] = (
    "You screen documents",
    "Assign the document below to exactly one domain",
    "You write one training item",
    "You check one question-answer pair",
    "You check whether a grading rubric covers",
)
"""Opening wording of the ARES prompts (``recipes/ares/prompts``), as AresScript tells them."""

REVIEW_CUE = "You are reviewing a paper submitted to"
META_REVIEW_CUE = "Write a meta-review"
OUTLINE_CUE = "Plan a research paper that builds on the references below."
SECTION_CUE = "You are writing the paper outlined below, one section at a time."
ABSTRACT_CUE = "Write its abstract: one paragraph"


def task_answer(request: dict[str, Any]) -> str | JSONDict | None:
    """The answer to an ARES, review or writer request; ``None`` for any other prompt."""
    first = _user_messages(request)[:1]
    prompt = first[0] if first else ""
    if any(cue in prompt for cue in ARES_CUES):
        from papergym.recipes.ares.scripted import AresScript

        return AresScript()(request)
    for cue, answer in _ANSWERS:
        if cue in prompt:
            return answer(prompt, request)
    return None


# -- review --------------------------------------------------------------------------------------


def _review(prompt: str, request: dict[str, Any]) -> JSONDict:
    paper = _between(prompt, "Paper:\n<<<\n", "\n>>>")
    found = sentences(paper)
    profile = _match(r"You are (.+?)\.\n", prompt) or "a reviewer"
    ratings = _ratings(request, prompt)
    # Mid-scale ratings that differ by reviewer, so the panel disagrees as real ones do.
    seed = _seed(profile + paper[:2000])
    middle = len(ratings) // 2
    window = ratings[max(0, middle - 1) : middle + 1] or ratings
    rating = window[seed % len(window)] if window else 5
    return {
        "summary": " ".join(found[:2]) or "The paper proposes a method and evaluates it.",
        # each point quotes the paper's sentence it rests on, as the reviewer prompt asks
        "strengths": [
            {"point": f"A clear contribution: {_lower_first(s)}", "quote": s} for s in found[2:4]
        ]
        or [{"point": "The problem is clearly motivated.", "quote": None}],
        "weaknesses": [
            {"point": f"The evidence for this claim is thin: {_lower_first(s)}", "quote": s}
            for s in found[4:6]
        ]
        or [{"point": "The evaluation is too small to support the claims.", "quote": None}],
        "questions": ["How sensitive are the results to the main hyperparameters?"],
        "soundness": 2 + seed % 2,
        "presentation": 2 + (seed // 2) % 2,
        "contribution": 2 + (seed // 4) % 2,
        "rating": rating,
        "confidence": 3,
    }


def _ratings(request: dict[str, Any], prompt: str) -> list[int]:
    """The venue's ratings: the schema's enum, else the prompt's "one of 1, 3, 5" list."""
    schema = extract_schema(request)
    if isinstance(schema, dict):
        rating = schema.get("properties", {}).get("rating", {})
        enum = rating.get("enum") if isinstance(rating, dict) else None
        if isinstance(enum, list) and all(isinstance(r, int) for r in enum):
            return sorted(enum)
    listed = _match(r"one of ([\d, ]+), where", prompt)
    return sorted(int(r) for r in re.findall(r"\d+", listed)) if listed else []


def _meta_review(prompt: str, _request: dict[str, Any]) -> str:
    strengths = re.findall(r"^\+ (.+)$", prompt, flags=re.MULTILINE)
    weaknesses = re.findall(r"^- (.+)$", _between(prompt, "Reviews:\n", None), flags=re.MULTILINE)
    count = _match(r"(\d+) reviewers reviewed it", prompt) or "The"
    lines = [
        f"{count} reviewers assessed the paper. They agree on its main strength: "
        f"{_lower_first(strengths[0]) if strengths else 'a clearly motivated problem.'}",
        "Their main concern, and the first thing the authors should fix: "
        f"{_lower_first(weaknesses[0]) if weaknesses else 'the evaluation is too small.'}",
    ]
    return " ".join(lines)


# -- write ---------------------------------------------------------------------------------------

_OUTLINE_KINDS = (
    ("Introduction", "introduction", "States the problem and the paper's contribution."),
    ("Related Work", "related_work", "Places the approach among the references it builds on."),
    ("Method", "method", "Describes the proposed approach and why it should work."),
    ("Experiments", "experiments", "Plans the experiments that would test the approach."),
    ("Conclusion", "conclusion", "Summarises the contribution and its limits."),
)


def _outline(prompt: str, _request: dict[str, Any]) -> JSONDict:
    keys = re.findall(r"^\[([^\]\n]+)\] ", _between(prompt, "References (", None), re.MULTILINE)
    titles = re.findall(r"^\[[^\]\n]+\] (.+?)\.(?: |$)", prompt, flags=re.MULTILINE)
    low = int(_match(r"between\s+(\d+)\s+and\s+\d+\s+sections", prompt) or 3)
    high = int(_match(r"between\s+\d+\s+and\s+(\d+)\s+sections", prompt) or 8)
    count = min(max(low, len(_OUTLINE_KINDS)), high)
    chosen = list(_OUTLINE_KINDS[:count])
    if not any(kind == "experiments" for _, kind, _ in chosen):  # the outline rule
        chosen[-1] = _OUTLINE_KINDS[3]
    while len(chosen) < count:
        chosen.append((f"Discussion {len(chosen)}", "discussion", "Discusses the findings."))
    sections = [
        {
            "heading": heading,
            "kind": kind,
            "purpose": purpose,
            # keys spread over sections, every key used once and every section citing one
            "references": [k for n, k in enumerate(keys) if n % len(chosen) == index]
            or ([keys[index % len(keys)]] if keys else []),
        }
        for index, (heading, kind, purpose) in enumerate(chosen)
    ]
    topic = _match(r"The paper's topic: (.+)", prompt) or (
        f"Building on {titles[0]}" if titles else "A study of the references"
    )
    return {
        "title": topic.rstrip("."),
        "abstract_plan": "The paper states the problem the references leave open. It proposes "
        "an approach and plans how to test it.",
        "sections": sections,
    }


def _section(prompt: str, _request: dict[str, Any]) -> JSONDict:
    purpose = _match(r"Its purpose: (.+)", prompt) or "develops the paper's argument."
    block = _between(prompt, "References it builds on:\n", "\n\n")
    keys = re.findall(r"^\[([^\]\n]+)\]", block, flags=re.MULTILINE)
    cite = f" \\cite{{{', '.join(keys)}}}" if keys else ""
    if "Write this part as an experiment plan" in prompt:
        body = (
            f"We will test the approach against the baselines of the references{cite}, over "
            "five seeds on three public datasets, and report the main metric with confidence "
            "intervals. The approach is supported if it beats the strongest baseline on most "
            "datasets, and refuted otherwise."
        )
    else:
        body = (
            f"This section {_lower_first(purpose)} It builds on prior work{cite} and states "
            "what the paper adds to it."
        )
    return {"latex": body}


def _abstract(prompt: str, _request: dict[str, Any]) -> JSONDict:
    plan = _between(prompt, "following this plan:\n", "\n\n") or "The paper proposes an approach."
    return {"latex": f"{plan.strip()} We describe the approach and plan its evaluation."}


_ANSWERS: tuple[tuple[str, Callable[[str, dict[str, Any]], str | JSONDict]], ...] = (
    (REVIEW_CUE, _review),
    (META_REVIEW_CUE, _meta_review),
    (OUTLINE_CUE, _outline),
    (SECTION_CUE, _section),
    (ABSTRACT_CUE, _abstract),
)


# -- helpers -------------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """Prose sentences of 6 to 60 words, line by line (headings skipped), without LaTeX commands
    or citation marks."""
    found: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        flat = re.sub(r"\\[a-zA-Z]+\*?(\{[^}]*\})?|\s*\[cite\]", " ", line)
        parts = [" ".join(p.split()) for p in _SENTENCE_END.split(flat)]
        found += [p for p in parts if 6 <= len(p.split()) <= 60 and p[-1:] in ".!?"]
    return found


def _user_messages(request: dict[str, Any]) -> list[str]:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return []
    return [
        str(m.get("content") or "")
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)
    ]


def _between(text: str, start: str, end: str | None) -> str:
    if start not in text:
        return ""
    rest = text.split(start, 1)[1]
    return rest.split(end, 1)[0] if end is not None and end in rest else rest


def _match(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    return found.group(1).strip() if found else ""


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def _lower_first(text: str) -> str:
    keep = len(text) > 1 and text[1].isupper()
    return text if keep or not text else text[0].lower() + text[1:]
