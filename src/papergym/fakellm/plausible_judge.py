"""Plausible answers to the rubric judge's prompts (:mod:`papergym.reward.judge`).

The judge lists a chunk's criteria as ``1. ...`` to ``n. ...`` and must answer exactly one
verdict per id 1..n. A schema-true answer alone does not do: the request's JSON schema does not
bound the ids (only the judge's own check does), it is absent when a backend sends none
(``structured_output: none``), and a cue of another prompt quoted in the answer being graded
("Select the ...", "You are reviewing a paper submitted to ...") sent the request to that
prompt's answer. So a rubric-judge prompt is recognised by its opening, before any other, and
answered from the criteria it lists: criterion ``k`` is met when the graded text contains at
least half of the criterion's key terms (words of five letters or more, compared by their first
five letters), the reason names what was found or missed, and a met verdict quotes the first
sentence of the graded text holding one of those terms, copied as it is (the judge's quote
check finds it there). A pitfall (``[PITFALL] ...``) is
read the same way: "met" means the text makes the mistake it describes.

A graded prompt (``prompts/*_graded.md``, it asks for ``"grade": <0|1|2>``) is answered by the
share of key terms found: 2 from three quarters, 1 from a third, else 0. The holistic judge's
prompt (``prompts/holistic.md``) gets 0–10 points: ten times the share of the reference
answer's key terms the answer holds, rounded.

Like every answer of :mod:`papergym.fakellm.plausible`, this is a pure function of the request.
"""

from __future__ import annotations

import re
from typing import Any

from papergym.fakellm.completions import JSONDict, user_texts

JUDGE_OPENINGS = (
    "You are grading a research plan against",  # prompts/specific.md, general.md
    "You are grading an answer against",  # prompts/*_document.md
)
"""How the rubric judge's prompts open (``papergym/reward/prompts``)."""

PITFALL_TAG = "[PITFALL] "  # papergym.reward.judge.PITFALL_TAG, as the criteria list shows it
STEM = 5  # letters compared: "partition" and "partitioned" are one term
_COUNT = re.compile(r"exactly (\d+) verdicts, one for each criterion_id")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
_SPAN = re.compile(r"[^.!?\n]+[.!?]?")  # a sentence, or a line without a full stop
_GENERIC = frozenset(
    (
        "about", "above", "after", "again", "against", "answer", "answers", "approach", "before",
        "being", "between", "clearly", "contains", "could", "describes", "during", "every",
        "explains", "explicitly", "gives", "includes", "itself", "makes", "mentions", "other",
        "plans", "proposes", "should", "specifies", "states", "their", "there", "these", "those",
        "through", "under", "using", "which", "while", "whether", "within", "without", "would",
    )
)  # fmt: skip


HOLISTIC_OPENING = "You are grading an answer as a whole."  # prompts/holistic.md
GRADED_CUE = '"grade": <0|1|2>'  # prompts/*_graded.md
_BLOCK = r"{label}:\n<<<\n(.*?)\n>>>"


def judge_answer(request: dict[str, Any]) -> JSONDict | None:
    """The verdicts for a rubric-judge request (or the holistic judge's score); ``None`` for
    any other prompt."""
    # the judge's prompt: the first user message (later ones are the LLM layer's repairs)
    prompt = next(iter(user_texts(request)), "")
    if prompt.startswith(HOLISTIC_OPENING):
        return holistic_answer(prompt)
    if not prompt.startswith(JUDGE_OPENINGS):
        return None
    if GRADED_CUE in prompt:
        return graded_answer(prompt)
    found = _COUNT.search(prompt)
    count = int(found.group(1)) if found else 0
    criteria, graded = listed_criteria(prompt, count)
    noun = "plan" if prompt.startswith(JUDGE_OPENINGS[0]) else "answer"
    terms = stems(graded)
    return {
        "verdicts": [
            _quoted(_verdict(number, criteria.get(number, ""), terms, noun), criteria, graded)
            for number in range(1, count + 1)
        ]
    }


def holistic_answer(prompt: str) -> JSONDict:
    """0–10 points: the share of the reference's key terms the graded answer holds."""
    reference = re.search(_BLOCK.format(label="Reference answer"), prompt, re.DOTALL)
    answer = re.search(_BLOCK.format(label="Answer to grade") + r"\s*\Z", prompt, re.DOTALL)
    wanted = key_terms(reference.group(1)) if reference else []
    found = stems(answer.group(1)) if answer else set()
    share = sum(t[:STEM] in found for t in wanted) / len(wanted) if wanted else 0.0
    return {
        "reason": f"The answer holds {share:.0%} of the reference's key terms.",
        "score": round(10 * share),
    }


def graded_answer(prompt: str) -> JSONDict:
    """Graded verdicts (0/1/2 by the share of each criterion's key terms found), quoted."""
    found = _COUNT.search(prompt)
    count = int(found.group(1)) if found else 0
    criteria, graded = listed_criteria(prompt, count)
    terms = stems(graded)
    verdicts = []
    for number in range(1, count + 1):
        criterion = criteria.get(number, "")
        wanted = key_terms(criterion.removeprefix(PITFALL_TAG))
        share = sum(t[:STEM] in terms for t in wanted) / len(wanted) if wanted else 0.0
        grade = 2 if share >= 0.75 else 1 if share >= 1 / 3 else 0
        quote = _quote(criterion, graded) if grade else None
        verdicts.append(
            {
                "criterion_id": number,
                "reason": f"The text holds {share:.0%} of the criterion's key terms.",
                "quote": quote,
                "grade": grade if quote is not None else 0,
            }
        )
    return {"verdicts": verdicts}


def graded_text(request: dict[str, Any]) -> str:
    """The text a rubric-judge request grades, as its prompt shows it; empty for any other
    request."""
    prompt = next(iter(user_texts(request)), "")
    found = _COUNT.search(prompt)
    if not prompt.startswith(JUDGE_OPENINGS) or found is None:
        return ""
    return listed_criteria(prompt, int(found.group(1)))[1]


def first_span(request: dict[str, Any]) -> str | None:
    """The first sentence (or line) of the text a rubric-judge request grades, copied as it
    is: a quote that backs any "met" a scripted judge gives (``None`` when there is no text)."""
    spans = [m.group().strip() for m in _SPAN.finditer(graded_text(request)) if m.group().strip()]
    return spans[0] if spans else None


def listed_criteria(prompt: str, count: int) -> tuple[dict[int, str], str]:
    """(criterion number → its text, the text to grade) of a judge prompt listing ``count``
    criteria; empty when the list is not there as the judge writes it."""
    block = re.compile(
        rf"^Criteria \({count}\):\n((?:\d+\. [^\n]*\n){{{count}}})\n"
        r"(?:Plan|Answer) to grade:\n<<<\n(.*)\n>>>\s*\Z",
        re.MULTILINE | re.DOTALL,
    )
    for found in block.finditer(prompt):
        lines = found.group(1).splitlines()
        numbered = [re.match(r"(\d+)\. (.*)", line) for line in lines]
        texts = {int(m.group(1)): m.group(2) for m in numbered if m is not None}
        if sorted(texts) == list(range(1, count + 1)):
            return texts, found.group(2)
    return {}, ""


def _verdict(number: int, criterion: str, graded: set[str], noun: str) -> JSONDict:
    wanted = key_terms(criterion.removeprefix(PITFALL_TAG))
    present = [t for t in wanted if t[:STEM] in graded]
    missing = [t for t in wanted if t[:STEM] not in graded]
    met = bool(wanted) and 2 * len(present) >= len(wanted)
    if met:
        reason = f"The {noun} covers {', '.join(present[:4])}."
    elif wanted:
        reason = f"The {noun} does not address {', '.join(missing[:4])}."
    else:
        reason = f"The {noun} gives nothing this criterion could be checked against."
    return {"criterion_id": number, "reason": reason, "verdict": int(met)}


def _quoted(verdict: JSONDict, criteria: dict[int, str], graded: str) -> JSONDict:
    """``verdict`` with its quote (reason, quote, verdict: the order the judge asks for)."""
    met = verdict["verdict"] == 1
    quote = _quote(criteria.get(verdict["criterion_id"], ""), graded) if met else None
    return {
        "criterion_id": verdict["criterion_id"],
        "reason": verdict["reason"],
        "quote": quote,
        "verdict": verdict["verdict"],
    }


def _quote(criterion: str, graded: str) -> str | None:
    """The first sentence (or line) of ``graded`` holding a key term of ``criterion``, copied
    as it is: the span a met verdict quotes; ``None`` when none holds one (then the verdict
    is not met either)."""
    wanted = {t[:STEM] for t in key_terms(criterion.removeprefix(PITFALL_TAG))}
    for found in _SPAN.finditer(graded):
        if wanted & stems(found.group()):
            return found.group().strip()
    return None


def key_terms(text: str) -> list[str]:
    """The words of ``text`` that carry its content, in order, each once."""
    words = [w.lower().strip("-") for w in _WORD.findall(text)]
    kept = [w for w in words if len(w) >= STEM and w not in _GENERIC]
    return list(dict.fromkeys(kept))


def stems(text: str) -> set[str]:
    """The word stems of ``text`` the scripted judges compare key terms with."""
    return {w.lower()[:STEM] for w in _WORD.findall(text) if len(w) >= STEM}
