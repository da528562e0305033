"""Text rules of English scientific prose shared by the build, the reward and the audit.

Sentence splitting, running-prose detection, content words and the numeric-result rule live
here, below every package that reads text (``papergym.recipes``, ``papergym.reward``): the offline
judge splits answers and counts content words with the same rules the builder used to write the
criteria it grades, without importing the builder.

The numeric rule (SPEC §2: no numeric results in the experiment stage or the reference answer,
no hyper-parameter numbers in the solution stage) is deliberately conservative, because an
extractive builder cannot tell a reported result from a setting reliably ("10 training points"
vs "81.2 on 10 datasets"). **A sentence counts as numeric when it contains a number that is not**

* a year (1800–2099, also "1990s"), unless a counting noun follows it ("2000 iterations");
* a reference: "Figure 3", "Fig. 2b", "Table A.1", "Section 4.1", "Eqs. (3)–(5)", "Algorithm 1",
  "Theorem 2", "Columns (1), (3) and (5)", "Step 2", "Model 2", "version 1.2" ...;
* an equation index or enumerator: "(3)", "[12]", a leading "1." / "1)";
* part of a name: glued to a preceding letter ("L2", "F1", "H200", "Qwen3", "x86", "CO2"),
  hyphen-joined to a word with a capital or a digit ("GPT-2", "ResNet-50", "Qwen3-8B",
  "COVID-19"), a dimension ("3D", "2-D"), an ordinal ("1st", "20th"), an exponent or subscript
  ("N^3", "x_1", "R^2"), or a dotted version ("1.2.3");

and also when it states a multiplier in words ("twice as fast", "an order of magnitude faster",
"three-fold increase"). Everything else counts, settings included: "batch size 32", "p < 0.05",
"81.2%", "R^2 = 0.93", "3x faster", "7B", "10 ms", "2-layer". Precision about leakage is
preferred over keeping every setting sentence.
"""

from __future__ import annotations

import re


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Tokens before a "." that do not end a sentence (compared lower-cased, without the final dot).
_ABBREVIATIONS = _word_set(
    """e.g i.e al fig figs eq eqs sec secs ref refs no nos vs cf approx resp dr mr mrs ms prof
    st tab app thm prop def lem cor alg ch pp vol ed eds inc ltd co corp jr sr col cols viz
    ca est dept univ sect eqn eqns"""
)
# Candidate sentence ends: terminal punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+)")
_STARTS_SENTENCE = re.compile(r"\s+(?:\[|[\"'“‘(]?[A-Z0-9\u0391-\u03a9\u00c0-\u00de])")
# "e.g", "i.e", "U.S"; a lone capital is not an initial here: papers end sentences with "matrix A."
_INITIALS = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_BULLET = re.compile(r"^\s*(?:[*•·–-]|\d{1,2}[.)]|\([a-z0-9]{1,3}\))\s+")
_CAPTION = re.compile(r"^\s*(?:Figure|Table|Algorithm|Listing)\s*:")

# --- the numeric rule -------------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# Words that introduce a reference by number. The strong ones take any number; the weak ones
# are also ordinary nouns ("models 10 times faster"), so they take only a one- or two-digit index.
_STRONG_REF_WORDS = (
    r"figures?|figs?\.?|tables?|tabs?\.?|sections?|secs?\.?|§|equations?|eqns?\.?|eqs?\.?|"
    r"appendix|appendices|app\.|algorithms?|alg\.|theorems?|thm\.|lemmas?|propositions?|"
    r"prop\.|corollar(?:y|ies)|definitions?|def\.|assumptions?|remarks?|chapters?|ch\.|"
    r"refs?\.?|references?|footnotes?|listings?|versions?|v\.?|releases?"
)
_WEAK_REF_WORDS = (
    r"examples?|steps?|stages?|phases?|cases?|parts?|columns?|cols?\.?|rows?|panels?|lines?|"
    r"experiments?|models?|specifications?|hypothes[ie]s|claims?|propert(?:y|ies)|conditions?|"
    r"waves?|rounds?"
)
# One index: "3", "(3)", "2b", "A.1", "4.1"; never a multiplier or a percentage ("3x", "5%").
_NOT_A_QUANTITY = r"(?!\s*(?:%|×|x\b|times\b|percent|per\s+cent))"
_STRONG_ITEM = rf"[(\[]?(?:[A-Z]\.?)?\d+(?:\.\d+)*[a-wyz]?[)\]]?{_NOT_A_QUANTITY}"
_WEAK_ITEM = rf"[(\[]?\d{{1,2}}[a-wyz]?[)\]]?(?![\d.,]){_NOT_A_QUANTITY}"
_LIST_SEPARATOR = r"\s*(?:,\s*and|,\s*or|,|and|or|to|through|–|—|-|&)\s*"
_REF_SPAN = re.compile(
    rf"(?<![\w])(?:(?:{_STRONG_REF_WORDS})[\s~]*{_STRONG_ITEM}(?:{_LIST_SEPARATOR}{_STRONG_ITEM})*"
    rf"|(?:{_WEAK_REF_WORDS})[\s~]*{_WEAK_ITEM}(?:{_LIST_SEPARATOR}{_WEAK_ITEM})*)",
    re.IGNORECASE,
)
_COUNT_NOUNS = _word_set(
    """iterations steps epochs samples points data images examples observations individuals
    respondents firms households units parameters weights tokens trials simulations draws runs
    seeds nodes cores gpus hours seconds minutes times replications bootstrap cases words
    documents papers sentences features dimensions particles stars galaxies sources"""
)
_ORDINAL = re.compile(r"(?:st|nd|rd|th)(?![A-Za-z])")
_DIMENSION = re.compile(r"-?[Dd](?![A-Za-z])")
_TIMES_WORD = (
    r"(?:twice|thrice|(?:two|three|four|five|six|seven|eight|nine|ten|a hundred|hundred|"
    r"a thousand|thousand)[- ]times|(?:two|three|four|five|six|seven|eight|nine|ten|hundred|"
    r"thousand|many|several)-?fold|(?:an?|one|two|three|several)\s+orders?\s+of\s+magnitude|"
    r"(?:by\s+)?a\s+factor\s+of\s+(?:two|three|four|five|six|seven|eight|nine|ten|"
    r"a hundred|a thousand))"
)
# A multiplier counts as a result when a comparison follows it ("twice as fast") or a change
# precedes it ("increased three-fold"); "our contribution is twofold" is not a result.
_MULTIPLIER_WORDS = re.compile(
    rf"\b{_TIMES_WORD}(?:\s+\w+)?\s+(?:as|faster|slower|more|less|larger|smaller|higher|"
    r"lower|better|worse|fewer|cheaper|greater|speed-?ups?|improvements?|reductions?|"
    r"increases?|decreases?|gains?)\b"
    r"|\b(?:increas|decreas|reduc|improv|grow|grew|rais|cut|accelerat|speed)\w*"
    rf"(?:\s+\w+){{0,2}}?\s+{_TIMES_WORD}",
    re.IGNORECASE,
)


def _blocks(text: str) -> list[tuple[str, str]]:
    """Paragraphs of ``text`` as (marker, body): bullets and captions become blocks of their own.

    Single newlines inside a paragraph are soft line breaks (LaTeX source keeps them), so they
    are joined with a space; a line that starts with a bullet or a caption label starts a block.
    """
    blocks: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        marker, lines = "", list[str]()
        for line in paragraph.splitlines():
            bullet = _BULLET.match(line)
            if (bullet or _CAPTION.match(line)) and lines:
                blocks.append((marker, " ".join(lines)))
                marker, lines = "", []
            if bullet and not lines:
                marker, line = bullet.group(0).strip(), line[bullet.end() :]
            if line.strip():
                lines.append(line.strip())
        if lines:
            blocks.append((marker, " ".join(lines)))
    return blocks


def _ends_with_abbreviation(head: str) -> bool:
    """Whether the text before a "." ends with an abbreviation or an initial ("et al", "J")."""
    token = head.rsplit(None, 1)[-1] if head.strip() else ""
    token = token.lstrip("([\"'“‘")
    return token.lower() in _ABBREVIATIONS or bool(_INITIALS.match(token))


def _split_block(block: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(block):
        end = match.end()
        if not _STARTS_SENTENCE.match(block, end):
            continue  # a lower-case word follows: "e.g. the", "3.2 vs. four", "al. showed"
        punct_at = match.start()
        if block[punct_at] == "." and _ends_with_abbreviation(block[start:punct_at]):
            continue
        sentences.append(block[start:end].strip())
        start = end
    sentences.append(block[start:].strip())
    return [" ".join(s.split()) for s in sentences if s.strip()]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` with whitespace collapsed, in order.

    A boundary is terminal punctuation followed by a capital, a digit, a quote or a bracket, and
    not preceded by an abbreviation ("e.g.", "et al.", "Fig.", "Eq.", initials). Decimals never
    split (no space after the point), nor does "et al. [cite]". Paragraphs, bullet items and
    figure/table captions never run into each other.
    """
    sentences: list[str] = []
    for _, body in _blocks(text):
        sentences.extend(_split_block(body))
    return sentences


def is_caption(sentence: str) -> bool:
    """A figure/table/algorithm caption as ingestion writes it ("Figure: ...")."""
    return bool(_CAPTION.match(sentence))


def prose_sentences(text: str) -> list[str]:
    """Sentences of running prose only: captions, displayed maths and fragments are left out."""
    sentences: list[str] = []
    for _, body in _blocks(text):
        if not is_caption(body):
            sentences.extend(s for s in _split_block(body) if is_prose(s))
    return sentences


def is_prose(sentence: str) -> bool:
    """A whole sentence of words: starts like a sentence, ends with punctuation, mostly words.

    Displayed equations, table rows, fragments after an equation ("where x is ...") and URLs
    are not prose; they make poor stage text and worse criteria.
    """
    words = sentence.split()
    if not 6 <= len(words) <= 90 or is_caption(sentence) or "http" in sentence or "# " in sentence:
        return False
    if not re.match(r"[\"'“(\[]?[A-Z\[]", sentence):
        return False
    if not re.search(r"[.!?][\"'”’)\]]*$", sentence):
        return False
    wordy = sum(1 for w in words if re.fullmatch(r"[(\"'“]?[A-Za-z][A-Za-z'’-]*[.,;:)\"”’]*", w))
    return wordy >= 0.6 * len(words)


def _is_year(sentence: str, start: int, end: int) -> bool:
    digits = sentence[start:end]
    if not (len(digits) == 4 and digits.isdigit() and 1800 <= int(digits) <= 2099):
        return False
    rest = sentence[end:]
    if re.match(r"s(?![A-Za-z])", rest):
        return True  # "1990s"
    if re.match(r"\s*(?:%|x\b|×|[.,]\d)", rest):
        return False
    following = re.match(r"\s+([A-Za-z]+)", rest)
    return not (following and following.group(1).lower() in _COUNT_NOUNS)


def _exempt(sentence: str, start: int, end: int) -> bool:
    """Whether the number at ``sentence[start:end]`` is a year, a reference or part of a name."""
    before = sentence[start - 1] if start > 0 else ""
    before2 = sentence[start - 2] if start > 1 else ""
    after = sentence[end:]
    if before in ("^", "_") or (before in ("-", "{") and before2 in ("^", "_")):
        return True  # exponent or subscript: N^3, x_1, R^2, 10^-5's "5"
    if before.isalpha():
        return True  # glued to a name: L2, F1, H200, Qwen3, x86, CO2, v1
    if before == "-" and before2.isalnum():
        left = re.search(r"[\w.]*$", sentence[: start - 1])
        segment = left.group(0) if left else ""
        if any(c.isupper() or c.isdigit() for c in segment):
            return True  # GPT-2, ResNet-50, Qwen3-8B, COVID-19
    if _is_year(sentence, start, end):
        return True
    if _ORDINAL.match(after) or _DIMENSION.match(after):
        return True  # 1st, 20th, 3D, 2-D
    if sentence[start:end].count(".") >= 2:
        return True  # a version: 1.2.3
    if (before, after[:1]) in {("(", ")"), ("[", "]")} and len(sentence[start:end]) <= 3:
        return True  # equation index or numeric citation: (3), [12]
    return start == 0 and bool(re.match(r"[.)]\s", after))  # enumerator: "1. ", "2) "


def _numeric_tokens(text: str) -> list[str]:
    """The numbers of ``text`` that the numeric rule counts, normalised ("7,850" → "7850")."""
    masked = _REF_SPAN.sub(lambda m: "#" * len(m.group(0)), text)
    tokens: list[str] = []
    for match in _NUMBER.finditer(masked):
        if not _exempt(masked, match.start(), match.end()):
            tokens.append(_normalise_number(match.group(0)))
    return tokens


def _normalise_number(token: str) -> str:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
        return token.replace(",", "")
    return token


def has_numeric_result(sentence: str) -> bool:
    """Whether ``sentence`` carries a number under the module's rule (results and settings)."""
    return bool(_numeric_tokens(sentence)) or bool(_MULTIPLIER_WORDS.search(sentence))


def numbers_in(text: str) -> set[str]:
    """The counted numbers of ``text`` (see the module rule), to test that none leak elsewhere."""
    return set(_numeric_tokens(text))


def strip_numeric_results(text: str) -> str:
    """``text`` without its numeric sentences; paragraphs and bullet items keep their shape."""
    paragraphs: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for marker, body in _blocks(paragraph):
            kept = [s for s in _split_block(body) if not has_numeric_result(s)]
            if kept:
                lines.append(f"{marker} {' '.join(kept)}" if marker else " ".join(kept))
        if lines:
            paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more that are not stop words (for overlap checks)."""
    return {w for w in re.findall(r"[a-z][a-z-]{2,}", text.lower()) if w not in _STOP_WORDS}


_STOP_WORDS = _word_set(
    """the and for are but not you all any can had her was one our out has him his how man new
    now old see two way who boy did its let put say she too use that with have this will your
    from they know want been good much some time very when come here just like long make many
    more only over such take than them well were what which their there these those into also
    each other then most both being between through where while about after before under
    would could should may might must does done using used based given thus hence however
    within without whether either since upon via per across among than cite ref"""
)
