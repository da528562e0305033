"""Plausible answers to PaperGym's own prompts, drawn from the text each prompt carries.

A schema-true but random answer ("delta result") fails the build's quality gates: criteria are
generic, questions empty of meaning, and a build yields no instance. This responder recognises
each build prompt (by its wording; the JSON schema alone does not tell the reference from its
repair) and answers from the paper text inside it, the way an extractive model would:

* extract: sentences of the excerpt sorted into research goal (the abstract's aim sentences),
  background, solution and experiment by the section heading and by cue words;
* reduce: the notes' distinct sentences; the goal's also names a discipline (by cue words) and
  a sub-field (the paper title, after any "Name:" prefix);
* question: background sentences and a request for a plan (never the method or experiments);
* reference: the method and experiment material without numbers; its repair drops numbers;
* rubric: one "The plan ..." criterion per reference sentence (R_A), task-specific checks built
  from the question's key terms (R_Q); merge: the first candidates; leakage judge: inferable when
  half a criterion's key terms are in the question (the scripted judge's rule for "met").

The rubric judge's prompts are answered first, by :mod:`papergym.fakellm.plausible_judge` (one
verdict per listed criterion, whatever the graded text quotes); the ARES, reviewer and writer
prompts by :mod:`papergym.fakellm.plausible_tasks`.
Anything else gets a schema-true answer (ids of per-item verdicts numbered 1..n) or, without a
schema, the prompt's first sentences. Answers are a pure function of the request, so caches and
resumed builds behave as with a temperature-0 model.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, cast

from papergym.fakellm.completions import JSONDict, extract_schema, user_texts
from papergym.fakellm.plausible_judge import STEM, judge_answer, key_terms, stems
from papergym.fakellm.plausible_tasks import task_answer
from papergym.fakellm.schema import sample_from_schema
from papergym.records import RUBRIC_SIZE  # the criteria the rubric prompts ask for

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_DIGIT = re.compile(r"\d")
_EXPERIMENT_CUES = re.compile(
    r"\b(evaluat\w*|experiment\w*|baselines?|datasets?|benchmarks?|metrics?|ablat\w*|compar\w*|"
    r"measur\w*|accuracy|test\w*|validat\w*|corpus|corpora|trials?|participants|held-out)\b",
    re.IGNORECASE,
)
_SOLUTION_CUES = re.compile(
    r"\b(we (propose|introduce|present|design|develop|use|learn|train|model|define|build|"
    r"compute|represent)|our (method|approach|model|system|framework|algorithm)|consists? of|"
    r"is trained|is computed|architecture|module|component|mechanism|objective|loss)\b",
    re.IGNORECASE,
)
_BACKGROUND_CUES = re.compile(
    r"\b(however|existing|prior|previous|current(ly)?|remains?|limit\w*|challeng\w*|problem\w*|"
    r"costly|expensive|suffers?|despite|gap|unclear|unsolved|difficult|bottleneck|require\w*)\b",
    re.IGNORECASE,
)
_PRIOR_WORK_CUES = re.compile(
    r"\b(existing|prior|previous|however|despite|traditional|conventional)\b", re.IGNORECASE
)
_RESULT_CUES = re.compile(
    r"\b(outperform\w*|match(es|ed)?|improv(es|ed)|achiev\w*|surpass\w*|beats?)\b", re.IGNORECASE
)
_AIM_CUES = re.compile(
    r"\b(we (aim|seek|address|study|investigate|ask)|our goal|"
    r"the goal of|in this (paper|work))\b",
    re.IGNORECASE,
)
_DISCIPLINE_CUES = (
    (re.compile(r"\b(quantum|galax\w*|stars?|particles?|cosmolog\w*|plasma|spin)\b", re.I), "physics"),
    (re.compile(r"\b(market\w*|prices?|labou?r|firms?|households?|policy|econom\w*)\b", re.I), "economics"),
)  # fmt: skip
_HEADING_STAGES = (
    (re.compile(r"intro|background|related|motivation|prior|overview", re.I), "research_background"),
    (re.compile(r"experiment|evaluat|result|setup|benchmark|ablation|analys|data", re.I), "experiment"),
    (re.compile(r"method|approach|model|architect|design|algorithm|framework|training", re.I), "solution"),
)  # fmt: skip
_STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "their",
        "there",
        "these",
        "those",
        "which",
        "while",
        "would",
        "could",
        "should",
        "where",
        "with",
        "within",
        "without",
        "between",
        "through",
        "during",
        "before",
        "being",
        "other",
        "under",
        "until",
        "using",
        "research",
        "propose",
        "proposes",
        "plan",
        "plans",
        "approach",
        "approaches",
        "method",
        "methods",
        "paper",
        "current",
        "currently",
        "remains",
        "problem",
        "problems",
        "question",
        "design",
        "designs",
        "scientist",
        "across",
        "because",
    ]
)


def responder(request: dict[str, Any]) -> str | JSONDict:
    """The answer to one chat request: plausible for PaperGym's prompts, schema-true otherwise."""
    judged = judge_answer(request)  # first: the text it grades may quote any other prompt's cue
    if judged is not None:
        return judged
    task = task_answer(request)  # ARES, review and writer prompts
    if task is not None:
        return task
    text = next(reversed(user_texts(request)), "")
    for cue, answer in _ANSWERS:
        if cue in text:
            return answer(text)
    schema = extract_schema(request)
    if schema is None:
        return " ".join(sentences(text)[:3]) or "ok"
    return _schema_answer(schema, text)


# -- the build's prompts ------------------------------------------------------------------------


def _extract(text: str) -> JSONDict:
    title = _field(text, "Paper title")
    excerpt = text.split('"""', 2)[1] if text.count('"""') >= 2 else text
    where = _field(text, "Excerpt (", end=")")
    buckets: dict[str, list[str]] = {"research_background": [], "solution": [], "experiment": []}
    for heading, block in _blocks(excerpt, where):
        by_heading = _stage_of_heading(heading)
        for sentence in sentences(block):
            stage = by_heading or _stage_of_sentence(sentence)
            if stage is not None:
                buckets[stage].append(sentence)
    goal = ""
    if where == "abstract":
        aims = [s for s in sentences(excerpt) if _AIM_CUES.search(s) and not _DIGIT.search(s)]
        fallback = f"The paper sets out to advance {title.rstrip('.')}." if title else ""
        goal = " ".join(aims[:2]) or fallback
    return {"research_goal": goal, **{k: " ".join(v[:6]) for k, v in buckets.items()}}


def _reduce(text: str) -> JSONDict:
    notes = re.findall(r"^- (.+)$", _section(text, "Notes"), flags=re.MULTILINE)
    if "all about its research goal" in text:
        title = _field(text, "Paper title")
        found = (d for cue, d in _DISCIPLINE_CUES if cue.search(f"{title} {' '.join(notes)}"))
        return {
            "text": notes[0] if notes else "",
            "discipline": next(found, "computer science"),
            "subfield": title.split(":")[-1].strip(),
        }
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in (s for note in notes for s in sentences(note)):
        key = _normalised(sentence)
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return {"text": " ".join(kept[:8])}


def _question(text: str) -> JSONDict:
    given = re.findall(r'gave away part of the answer \("(.+?)"\)', text)
    background = [
        s
        for s in sentences(_section(text, "Background"))
        if not _DIGIT.search(s) and not any(_normalised(s) == _normalised(g) for g in given)
    ]
    method = sentences(_section(text, "Method (given)"))
    parts = background[:3]
    if method:
        parts.append(f"The approach to validate is given: {_impersonal(_lower_first(method[0]))}")
        parts.append("Propose a plan of experiments that would validate it.")
    else:
        parts.append("How could this gap be closed? Propose a research plan.")
    return {"question": " ".join(parts)}


def _reference(text: str) -> JSONDict:
    material = [_section(text, name) for name in ("Solution", "Experiment")]
    kept = [s for part in material for s in sentences(part) if not _DIGIT.search(s)]
    return {"reference_answer": " ".join(kept)}


def _repair_numbers(text: str) -> JSONDict:
    kept = [s for s in sentences(_section(text, "Text")) if not _DIGIT.search(s)]
    return {"reference_answer": " ".join(kept)}


def _rubric_from_answer(text: str) -> JSONDict:
    only = _only_dimension(text)
    sources = sentences(_section(text, "Reference answer")) or sentences(_section(text, "Task"))
    criteria = [{"text": _criterion(s), "dimension": only or _dimension_of(s)} for s in sources][
        :RUBRIC_SIZE
    ]
    if only is None and len({c["dimension"] for c in criteria}) == 1 and len(criteria) > 1:
        criteria[-1]["dimension"] = (
            "experiment" if criteria[0]["dimension"] == "method" else "method"
        )
    return {"criteria": _padded(criteria, _key_terms(_section(text, "Reference answer")), only)}


def _rubric_from_question(text: str) -> JSONDict:
    return {"criteria": _padded([], _key_terms(_section(text, "Task")), _only_dimension(text))}


def _merge(text: str) -> JSONDict:
    count = int(re.search(r"Select the (\d+)", text).group(1))  # type: ignore[union-attr]
    listed = text.split("Candidates:", 1)[1]
    candidates = re.findall(r"^(\d+)\. ", listed, flags=re.MULTILINE)
    return {"selected": [int(c) for c in candidates[:count]]}


def _leakage(text: str) -> JSONDict:
    """Inferable when at least half of a criterion's key terms are in the question: the rule
    the scripted rubric judge uses for "met", so exactly the criteria a plan that restates the
    question would meet are the ones flagged (the build's remove/replace is then testable)."""
    count = int(re.search(r"Criteria \((\d+)\)", text).group(1))  # type: ignore[union-attr]
    question = re.search(r"Question:\n<<<\n(.*?)\n>>>", text, flags=re.DOTALL)
    terms = stems(question.group(1)) if question else set()
    listed = dict(re.findall(r"^(\d+)\. (.*)$", text.split(f"Criteria ({count}):", 1)[1], re.M))
    verdicts = []
    for number in range(1, count + 1):
        wanted = key_terms(listed.get(str(number), ""))
        present = [t for t in wanted if t[:STEM] in terms]
        inferable = bool(wanted) and 2 * len(present) >= len(wanted)
        reason = (
            f"The question already names {', '.join(present[:4])}."
            if inferable
            else "The question states the problem, not this element of the solution."
        )
        verdicts.append({"criterion_id": number, "reason": reason, "inferable": inferable})
    return {"verdicts": verdicts}


def _echo(_text: str) -> JSONDict:
    return {"ok": True, "words": ["plan", "the", "experiment"], "language": "English"}


_ANSWERS = (
    ("Sort what this excerpt says", _extract),
    ("Merge them into one coherent text", _reduce),
    ("Write a research task", _question),
    ("Rewrite the text below so that it reports no numeric results", _repair_numbers),
    ("Write a reference answer", _reference),
    ("exactly 10 criteria for grading research plans written in response to the task below.\n"
     "Base them on the reference answer", _rubric_from_answer),
    ("exactly 10 criteria", _rubric_from_question),
    ("Select the", _merge),
    ("criterion leakage", _leakage),
    ("'plan the experiment'", _echo),
)  # fmt: skip


# -- criteria -----------------------------------------------------------------------------------

_METHOD_CHECKS = (
    "The plan describes a concrete mechanism that addresses {term} directly.",
    "The plan explains how the proposed components handle {term} during training.",
    "The plan states which design choice about {term} is new compared with prior work.",
    "The plan specifies how {term} is represented inside the proposed model.",
    "The plan motivates its treatment of {term} with an explicit argument.",
)
_EXPERIMENT_CHECKS = (
    "The plan includes an ablation that isolates the effect of {term}.",
    "The plan compares against an existing approach that also targets {term}.",
    "The plan measures the cost of its handling of {term} as well as its quality.",
    "The plan tests whether the gains on {term} hold at a larger input scale.",
    "The plan evaluates {term} on data held out from every design decision.",
)


def _criterion(sentence: str) -> str:
    """A reference sentence as a binary statement about a plan."""
    body = sentence.rstrip(" .;:")
    subject = re.match(
        r"^(?:We|The authors|Our (?:method|approach|model|system)|The (?:method|approach|model))"
        r"\s+(?:(also|then|further|finally|first|next|additionally)\s+)?(\w+)\s+(.+)$",
        body,
    )
    if subject:
        adverb, verb, rest = subject.groups()
        adverb = f"{adverb} " if adverb else ""
        return f"The plan {adverb}{_third_person(verb)} {_impersonal(rest)}."
    return f"The plan specifies that {_impersonal(_lower_first(body))}."


def _padded(
    criteria: list[dict[str, str]], terms: list[str], only: str | None
) -> list[dict[str, str]]:
    """Exactly ``RUBRIC_SIZE`` distinct criteria: checks built from key terms fill the rest."""
    dimensions = [only] if only else ["method", "experiment"]
    seen = {_normalised(c["text"]) for c in criteria}
    terms = terms or ["the gap the task names"]
    index = 0
    while len(criteria) < RUBRIC_SIZE:
        dimension = dimensions[index % len(dimensions)]
        checks = _METHOD_CHECKS if dimension == "method" else _EXPERIMENT_CHECKS
        term = terms[(index // len(dimensions)) % len(terms)]
        text = checks[(index // len(dimensions)) % len(checks)].format(term=term)
        if _normalised(text) not in seen or index > 10 * RUBRIC_SIZE:
            seen.add(_normalised(text))
            criteria.append({"text": text, "dimension": dimension})
        index += 1
    return criteria


def _key_terms(text: str) -> list[str]:
    """The text's longer content words, most frequent first (ties in order of appearance)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{5,}", text)]
    counts: dict[str, int] = {}
    for word in words:
        if word not in _STOPWORDS:
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], words.index(w)))
    return [f"the {word}" if not word.endswith("s") else word for word in ranked[:8]]


def _only_dimension(text: str) -> str | None:
    found = re.search(r'Use only the dimension "(method|experiment)"', text)
    return found.group(1) if found else None


def _dimension_of(sentence: str) -> str:
    return "experiment" if _EXPERIMENT_CUES.search(sentence) else "method"


def _third_person(verb: str) -> str:
    lowered = verb.lower()
    if lowered.endswith("s") and not lowered.endswith("ss"):
        return lowered  # "Our method uses"
    if lowered.endswith(("ss", "sh", "ch", "x", "z", "o")):
        return lowered + "es"
    if lowered.endswith("y") and lowered[-2:-1] not in "aeiou":
        return lowered[:-1] + "ies"
    return lowered + "s"


def _impersonal(text: str) -> str:
    text = re.sub(r"\bwe\b", "the authors", text)
    text = re.sub(r"\bour\b", "the proposed", text)
    return re.sub(r"\bus\b", "the authors", text)


# -- text helpers -------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """The text's sentences of 5 to 80 words, without bracketed headings or citation marks."""
    flat = " ".join(re.sub(r"^\[[^\]\n]*\]$", " ", text, flags=re.MULTILINE).split())
    flat = re.sub(r"\s*\[(?:cite|ref|citation)\]", "", flat, flags=re.IGNORECASE)
    parts = [p.strip() for p in _SENTENCE_END.split(flat)]
    return [p for p in parts if 5 <= len(p.split()) <= 80 and p[-1:] in ".!?"]


def _section(text: str, name: str) -> str:
    """The block after a ``Name:`` line, up to the next such label or the answer format."""
    pattern = rf"^{re.escape(name)}:\n(.*?)(?=\n\n[A-Z][\w ()]*:\n|\n\nAnswer with JSON|\Z)"
    found = re.search(pattern, text, flags=re.MULTILINE | re.DOTALL)
    return found.group(1).strip() if found else ""


def _field(text: str, name: str, end: str = "\n") -> str:
    found = re.search(rf"^{re.escape(name)}(?:: )?(.*?){re.escape(end)}", text, re.MULTILINE)
    return found.group(1).strip() if found else ""


def _blocks(excerpt: str, where: str) -> list[tuple[str, str]]:
    """(heading, text) parts of an excerpt: batched sections start with ``[heading]`` lines."""
    parts = re.split(r"^\[([^\]\n]+)\]$", excerpt, flags=re.MULTILINE)
    if len(parts) == 1:
        heading = re.sub(r"^sections?: |\(part \d+\)$", "", where).strip()
        return [("" if where == "abstract" else heading, excerpt)]
    blocks = [("", parts[0])] if parts[0].strip() else []
    blocks += [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    return blocks


def _stage_of_heading(heading: str) -> str | None:
    for pattern, stage in _HEADING_STAGES:
        if pattern.search(heading.split(">")[-1]):
            return stage
    return None


def _stage_of_sentence(sentence: str) -> str | None:
    """The stage a sentence's cue words point to; results belong to none (the reference has none)."""
    if _RESULT_CUES.search(sentence):
        return None
    if _PRIOR_WORK_CUES.search(sentence):
        return "research_background"
    if _EXPERIMENT_CUES.search(sentence):
        return "experiment"
    if _SOLUTION_CUES.search(sentence):
        return "solution"
    if _BACKGROUND_CUES.search(sentence):
        return "research_background"
    return None


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def _lower_first(text: str) -> str:
    keep = len(text) > 1 and text[1].isupper()  # an acronym ("BERT ...") keeps its case
    return text if keep or not text else text[0].lower() + text[1:]


# -- other prompts ------------------------------------------------------------------------------


def _schema_answer(schema: Any, text: str) -> str | JSONDict:
    """A schema-true answer whose per-item ids run 1..n, as a judge's verdicts must."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    value = sample_from_schema(schema, seed)
    _number_items(value)
    return cast(JSONDict, value) if isinstance(value, dict) else json.dumps(value)


def _number_items(value: Any) -> None:
    """Renumber ``*_id``/``id`` integers of list items 1..n, in place, at any depth."""
    if isinstance(value, dict):
        for child in value.values():
            _number_items(child)
    elif isinstance(value, list):
        for position, item in enumerate(value, start=1):
            if isinstance(item, dict):
                for key in item:
                    if (key == "id" or key.endswith("_id")) and isinstance(item[key], int):
                        item[key] = position
            _number_items(item)
