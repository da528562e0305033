"""Scripted answers to the ARES prompts, for a loopback server in tests, benchmarks and dry runs.

:class:`AresScript` is a :data:`papergym.fakellm.Responder`: given a chat request it recognises
which ARES prompt it is (by the prompt's wording) and answers what the schema asks, drawn from the
document in the prompt, so a build against it keeps well-formed documents and drops the rest for
the reasons a real model would give. ``faults`` makes it misbehave the way models do, one fault
per name:

* ``reject`` — the classifier calls every document unsuitable;
* ``garbage`` — every answer is prose, not JSON (the LLM layer's repairs fail too);
* ``leak`` — the criteria restate the question;
* ``duplicate`` — the criteria say the same thing five times;
* ``no_pitfalls`` — the rubric has no pitfall;
* ``unfaithful`` / ``giveaway`` / ``not_self_contained`` — the QA verifier says so;
* ``low_coverage`` — the coverage check finds most key points uncovered.

Answers are a pure function of the request, so caches and reruns see the same ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

JSONDict = dict[str, Any]
FAULTS = frozenset(
    {
        "reject",
        "garbage",
        "leak",
        "duplicate",
        "no_pitfalls",
        "unfaithful",
        "giveaway",
        "not_self_contained",
        "low_coverage",
    }
)
MIN_SENTENCES = 5
"""Fewer sentences of 8-45 words than this and the classifier calls a document unsuitable."""

_BLOCK = re.compile(r'{name}:\n"""\n(.*?)\n"""', re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[a-z]{4,}")


def block(text: str, name: str) -> str:
    """The text between ``NAME:\\n\"\"\"`` and the closing quotes in a prompt."""
    found = re.search(_BLOCK.pattern.format(name=re.escape(name)), text, re.DOTALL)
    return found.group(1).strip() if found else ""


def sentences(text: str) -> list[str]:
    """Prose sentences of 8-45 words, in order, each once."""
    seen: set[str] = set()
    found: list[str] = []
    for line in text.splitlines():
        for part in _SENTENCE.split(line.strip()):
            part = " ".join(part.split())
            if 8 <= len(part.split()) <= 45 and part.endswith((".", "!", "?")) and part not in seen:
                seen.add(part)
                found.append(part)
    return found


def topic(document: str) -> str:
    """A short topic: the heading when the document starts with one, else its first words."""
    first = next((line.strip("# ").strip() for line in document.splitlines() if line.strip()), "")
    if first and len(first.split()) <= 12 and not first.endswith("."):
        return first
    return " ".join(first.split()[:6]).rstrip(".,;:") or "this subject"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


@dataclass(frozen=True)
class AresScript:
    """The responder; ``faults`` names the misbehaviours to show (see the module docstring)."""

    faults: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        unknown = set(self.faults) - FAULTS
        if unknown:
            raise ValueError(f"unknown fault(s) {sorted(unknown)}; known: {sorted(FAULTS)}")

    def __call__(self, request: JSONDict) -> str | JSONDict:
        text = _prompt(request)
        if "garbage" in self.faults:
            return "I am sorry, I cannot produce JSON today."
        for cue, answer in (
            ("You screen documents", self.classify),
            ("Assign the document below to exactly one domain", self.domain),
            ("You write one training item", self.cogenerate),
            ("You check one question-answer pair", self.verify_qa),
            ("You check whether a grading rubric covers", self.coverage),
        ):
            if cue in text:
                return answer(text)
        return {"answer": "not an ARES prompt"}

    def classify(self, text: str) -> JSONDict:
        found = len(sentences(block(text, "Document")))
        if "reject" in self.faults:
            return {"reason": "Scripted rejection.", "suitable": False}
        if found < MIN_SENTENCES:
            return {
                "reason": f"Only {found} explanatory sentences: too little context for a question.",
                "suitable": False,
            }
        return {"reason": f"{found} explanatory sentences about one subject.", "suitable": True}

    def domain(self, text: str) -> JSONDict:
        document = set(_WORD.findall(block(text, "Document").lower()))
        best: tuple[int, str, str] | None = None
        for line in text.splitlines():
            listed = re.match(r"- (\S+): (.*) \(personas: ([^,)]+)", line)
            if listed is None:
                continue
            name, description, persona = listed.groups()
            overlap = len(document & set(_WORD.findall(description.lower())))
            if best is None or overlap > best[0]:
                best = (overlap, name, persona)
        assert best is not None, "the domain prompt lists no domains"
        return {"reason": "Matched by vocabulary.", "domain": best[1], "persona": best[2]}

    def cogenerate(self, text: str) -> JSONDict:
        document = block(text, "Document")
        persona = re.search(r"that a (.+?) might ask", text)
        who = persona.group(1) if persona else "reader"
        subject = topic(document)
        found = sentences(document)
        question = (
            f"As a {who}, what should I understand about {subject}, and what mistakes should I "
            "avoid?"
        )
        criteria = [
            {"text": "States that " + _lower_first(_first_half(s)), "weight": w}
            for s, w in zip(found[1:6], (5, 4, 3, 2, 2), strict=False)
        ]
        if "leak" in self.faults:
            criteria = [
                {"text": f"Explains what a {who} should understand about {subject}.", "weight": 5},
                {"text": f"Says which mistakes a {who} should avoid about {subject}.", "weight": 4},
                *criteria[:1],
            ]
        if "duplicate" in self.faults and found:
            base = "States that " + _lower_first(found[0])
            criteria = [{"text": base, "weight": 5}] + [
                {"text": base.rstrip(".") + suffix, "weight": 3}
                for suffix in (" too.", " as well.", ", indeed.", " again.")
            ]
        pitfalls = [
            {
                "text": f"Invents figures, names or dates about {subject} that the facts do not "
                "support.",
                "weight": -3,
            },
            {
                "text": "Gives a confident recommendation without the caveats or warnings a "
                "careful expert would add.",
                "weight": -2,
            },
        ]
        return {
            "question": question,
            "reference_answer": " ".join(found[:6]),
            "criteria": criteria,
            "pitfalls": [] if "no_pitfalls" in self.faults else pitfalls,
        }

    def verify_qa(self, text: str) -> JSONDict:
        question = block(text, "Question").lower()
        contained = "not_self_contained" not in self.faults and not any(
            cue in question for cue in ("the document", "the text", "the article", "the passage")
        )
        return {
            "reason": "Scripted verification.",
            "self_contained": contained,
            "faithful": "unfaithful" not in self.faults,
            "gives_away_answer": "giveaway" in self.faults,
        }

    def coverage(self, text: str) -> JSONDict:
        points = sentences(block(text, "Reference answer"))[:15] or ["The reference as a whole."]
        listed = text.split("Criteria:", 1)[-1].lower()
        low = "low_coverage" in self.faults
        return {
            "key_points": [
                {"point": p, "covered": not low and " ".join(p.lower().split()[:5]) in listed}
                for p in points
            ]
        }


def _first_half(sentence: str) -> str:
    """A sentence's first half (five words at least): a criterion its sentence meets and says
    more than, as a real writer's would; one copied whole is the form a judge cannot tell from
    a restated rubric."""
    words = sentence.rstrip(".").split()
    return " ".join(words[: max(5, (len(words) + 1) // 2)]) + "."


def _prompt(request: JSONDict) -> str:
    """The first user message: the step's prompt (later ones are the LLM layer's repairs)."""
    messages = request.get("messages") or []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[0].get("content") if users else ""
    return content if isinstance(content, str) else ""
