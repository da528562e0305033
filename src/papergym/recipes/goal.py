"""The research goal as the extractive builder reads it: the sentences that state an aim.

Abstracts and introductions say what a paper sets out to do in recognisable words: "we aim
to", "our goal is", "in this paper we study/address/investigate", "this work asks whether".
Such sentences are the goal stage (SPEC §2 step 3: what the paper sets out to achieve and why).
"We propose/introduce/present ..." states the solution rather than the aim, and the question is
written from the goal, so such a sentence is never a goal (not even with "in this paper" before
it); nor is a sentence with numbers, notation, findings, layout talk, or the paper's own names.
A paper that states no aim in those words gets its opening context as the goal (the builder's
fallback).

These are pure rules on one sentence; choosing among candidates is the builder's
(:func:`papergym.recipes.extractive.extract_stages`).
"""

from __future__ import annotations

import re

from papergym.recipes.sections import mentions_term
from papergym.recipes.text import has_numeric_result, has_result_claim, is_mathy

_SELF = (
    r"(?:we|this (?:paper|work|article|study|thesis|letter|note)|the present (?:paper|work|study))"
)
_AIM = re.compile(
    r"\b(?:aim(?:s|ed)? (?:to|at)|seeks? to|sets? out to|(?:our|the) (?:main |primary |central )?"
    r"(?:goal|aim|objective|purpose)s? (?:is|are|of|here)|the question (?:of|we)|"
    rf"{_SELF} (?:\w+ )?(?:address(?:es)?|tackles?|investigates?|stud(?:y|ies)|explores?|asks?|"
    r"examines?|focus(?:es)? on|consider(?:s)? the problem|characteri[sz]es?|quantif(?:y|ies)|"
    r"determines?|answers?|tests? whether|ask whether))\b",
    re.IGNORECASE,
)
_PROPOSAL = re.compile(
    rf"\b(?:propos(?:e|es|ed)|introduc(?:e|es|ed))\b|\b(?:{_SELF}|and) (?:\w+ )?"
    r"(?:present|presents|develop|develops)\b",
    re.IGNORECASE,
)
_LAYOUT = re.compile(
    r"\b(?:sections?|chapters?|appendix|the (?:remainder|rest) of)\b|\[ref\]", re.IGNORECASE
)
_LEAD = re.compile(
    r"^(?:(?:In (?:this|the present) (?:paper|work|article|study|thesis|letter|note)|Therefore|"
    r"Thus|Hence|To this end|In particular),|Here,?)\s+",
    re.IGNORECASE,
)


def is_goal_sentence(sentence: str, terms: set[str]) -> bool:
    """Whether ``sentence`` states the paper's aim without giving its solution away.

    ``terms`` are the names the paper gives its own contribution: a sentence naming one states
    the solution, which the question (written from the goal) must not see.
    """
    return bool(_AIM.search(sentence)) and not (
        _PROPOSAL.search(sentence)
        or has_numeric_result(sentence)
        or is_mathy(sentence)
        or has_result_claim(sentence)
        or _LAYOUT.search(sentence)
        or mentions_term(sentence, terms)
    )


def without_lead(sentence: str) -> str:
    """``sentence`` without an opening "In this paper," or "Here,", capitalised again."""
    rest = _LEAD.sub("", sentence, count=1)
    return rest[:1].upper() + rest[1:] if rest != sentence else sentence
