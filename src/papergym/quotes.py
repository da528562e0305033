"""Quote checks: whether a span a judge quotes as evidence is really in the text it grades.

An LLM judge that says "met" must copy the span of the answer that meets the criterion, and
the LLM reviewer may cite the paper for a strength or weakness. A model that invents its
evidence is caught here: the quote must appear in the text once both are normalised.

Normalisation forgives what copying changes without changing words — case, runs of
whitespace and line breaks, Unicode compatibility forms (NFKC: non-breaking spaces, ligatures,
``…``), typographic quotes and dashes, Markdown emphasis marks (``*``, `````), and quotation
marks or ellipses around the quote — but never paraphrase: every word must be there, in order,
contiguous.

Everything here is a pure function of its arguments.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

QuoteProblem = Literal["quote_missing", "quote_not_found"]
"""Why a quote does not back a claim: none was given (or it holds no letter or digit), or it
is not in the text."""

QUOTE_MISSING: QuoteProblem = "quote_missing"
QUOTE_NOT_FOUND: QuoteProblem = "quote_not_found"

_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",  # ‘
        "\u2019": "'",  # ’
        "\u201a": "'",  # ‚
        "\u201b": "'",  # ‛
        "\u2032": "'",  # ′
        "\u00b4": "'",  # ´
        "\u201c": '"',  # “
        "\u201d": '"',  # ”
        "\u201e": '"',  # „
        "\u201f": '"',  # ‟
        "\u2033": '"',  # ″
        "\u00ab": '"',  # «
        "\u00bb": '"',  # »
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u2012": "-",  # figure dash
        "\u2013": "-",  # en dash
        "\u2014": "-",  # em dash
        "\u2015": "-",  # horizontal bar
        "\u2212": "-",  # minus sign
        "*": None,  # Markdown emphasis: **bold** quoted as bold
        "`": None,  # Markdown code: `x` quoted as x
        "\u00ad": None,  # soft hyphen
        "\u200b": None,  # zero-width space
    }
)
_WHITESPACE = re.compile(r"\s+")
_SPACED_DASH = re.compile(r" ?- ?")
_AROUND = " \"'.…"
"""What a judge wraps a quote in: quotation marks, and ellipses that mark an excerpt."""
_CONTENT = re.compile(r"\w")


@functools.lru_cache(maxsize=64)
def normalise(text: str) -> str:
    """``text`` as quotes are compared: NFKC, typographic quotes and dashes made plain,
    emphasis marks dropped, case folded, whitespace collapsed (also around dashes, so ``a — b``
    and ``a-b`` compare equal).

    >>> normalise("The  “Plan”\\n— uses   ﬁve SEEDS")
    'the "plan"-uses five seeds'
    """
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).casefold()
    collapsed = _WHITESPACE.sub(" ", plain).strip()
    return _SPACED_DASH.sub("-", collapsed)


def normalise_quote(quote: str) -> str:
    """``quote`` normalised (:func:`normalise`) without the quotation marks and ellipses a
    judge may wrap it in.

    >>> normalise_quote('"…we ablate the encoder..."')
    'we ablate the encoder'
    """
    return normalise(quote).strip(_AROUND)


def quote_problem(quote: str | None, text: str) -> QuoteProblem | None:
    """Why ``quote`` does not back a claim about ``text``, or ``None`` when it is in ``text``.

    >>> quote_problem("Five  random seeds", "We use five random seeds.")
    >>> quote_problem("ten seeds", "We use five random seeds.")
    'quote_not_found'
    >>> quote_problem(" ... ", "We use five random seeds.")
    'quote_missing'
    """
    wanted = normalise_quote(quote) if quote is not None else ""
    if not _CONTENT.search(wanted):
        return QUOTE_MISSING
    return None if wanted in normalise(text) else QUOTE_NOT_FOUND


class _Quoted(Protocol):
    """A verdict as any record keeps it, with its quote check."""

    @property
    def passed(self) -> bool | None: ...

    @property
    def quote(self) -> str | None: ...

    @property
    def unbacked(self) -> str | None: ...


@dataclass(frozen=True)
class QuoteTally:
    """How many "met" claims of a quoting judge were backed by their quote, and how many were
    not (and so turned to "not met"). A judge that quotes nothing (the offline judge) makes no
    checked claims: its rate is ``None``, never 0."""

    backed: int = 0
    unbacked: int = 0

    @property
    def claimed(self) -> int:
        """The checked "met" claims: backed plus unbacked."""
        return self.backed + self.unbacked

    @property
    def rate(self) -> float | None:
        """The share of checked "met" claims that were unbacked; ``None`` without any."""
        return self.unbacked / self.claimed if self.claimed else None

    def __add__(self, other: QuoteTally) -> QuoteTally:
        return QuoteTally(self.backed + other.backed, self.unbacked + other.unbacked)


def tally(verdicts: Iterable[_Quoted]) -> QuoteTally:
    """The quote tally of ``verdicts``: a met verdict with a quote is backed; one with an
    ``unbacked`` reason is not. Verdicts without either were never checked."""
    backed = unbacked = 0
    for verdict in verdicts:
        if verdict.unbacked is not None:
            unbacked += 1
        elif verdict.passed and verdict.quote is not None:
            backed += 1
    return QuoteTally(backed, unbacked)
