"""The paper's code: the sentences presenting it ("our code is available at ...", removed whole:
the URL alone would leave a "Code is available at ]" stub, itself a camera-ready mark), the
sentences only a submission writes (an anonymous repository, a release upon acceptance), and its
own code URLs wherever else they appear."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from papergym.review.anonymise.sentences import STATEMENT_MAX_CHARS, Bounds
from papergym.review.anonymise.text import AFFILIATION, EMAIL, URL, mentions
from papergym.review.records import Removal

_LINKED_URL = re.compile(r"\]\(((?:https?://|www\.)[^\s()]+)\)")
_LINK = re.compile(r"\[([^\[\]\n]*)\]\(((?:https?://|www\.)[^\s()]+)\)")
_CODE_HOST = re.compile(
    r"(?:github\.com|gitlab\.com|bitbucket\.org|github\.io|codeocean\.com|huggingface\.co|"
    r"sourceforge\.net|4open\.science|anonymous|anonym)",
    re.IGNORECASE,
)
_ANONYMOUS_HOST = re.compile(r"4open\.science|anonymous|anonym", re.IGNORECASE)
_NOT_LETTER = r"(?<![^\W\d_])"
"""Like ``\b`` before a word, but a footnote number fused to it ("1Project page") counts."""
_OWN_CODE = re.compile(
    rf"{_NOT_LETTER}our\s+(?:\w+\s+){{0,3}}(?:codes?|implementations?|repositor(?:y|ies)|"
    r"project|models?|datasets?|library|package|toolkit|benchmark|website|webpage)\b|"
    rf"{_NOT_LETTER}(?:source\s+)?codes?\s*(?:\w+\s+){{0,4}}(?:is|are|will\s+be|has\s+been|"
    r"have\s+been)?\s*(?:publicly\s+|made\s+|freely\s+)?(?:available|released|provided|hosted)|"
    rf"{_NOT_LETTER}codes?\s*:|{_NOT_LETTER}code\s+at\b|"
    rf"{_NOT_LETTER}project\s+(?:page|website|webpage)\b|"
    r"\bwe\s+(?:\w+\s+)?(?:release|open[- ]source|publish|make\s+(?:\w+\s+){0,3}available)\b|"
    r"\b(?:can\s+be\s+found|is\s+available|are\s+available|available)\s+(?:at|here|on|from)\b",
    re.IGNORECASE,
)
_HOST_WORD = re.compile(r"\b(?:github|gitlab|bitbucket)\b", re.IGNORECASE)
_HOST_WORDS = ("github", "gitlab", "bitbucket")
"""Words every match of :data:`_HOST_WORD` holds: a text without any is not searched."""
_OUR_CODE = re.compile(
    r"\bour\s+(?:\w+\s+){0,3}(?:codes?|implementations?|repositor(?:y|ies)|project|library|"
    r"package|toolkit)\b|\bwe\s+(?:\w+\s+)?(?:release|open[- ]source|publish|make\s+"
    r"(?:\w+\s+){0,3}available)\b",
    re.IGNORECASE,
)
_SUBMISSION_ONLY = re.compile(
    r"\banonym\w*\W+(?:\w+\W+){0,5}?(?:codes?|repositor(?:y|ies)|repo|links?|"
    r"urls?|github|gitlab|git)\b|"
    r"\b(?:upon|after|following)\s+(?:the\s+)?(?:paper'?s?\s+)?(?:acceptance|de-?anonymi[sz]ation)\b|"
    r"\bonce\s+(?:the\s+|this\s+|our\s+)?(?:paper|work|manuscript|submission)\s+(?:is|gets|has\s+"
    r"been)\s+(?:accepted|published)\b|"
    r"\bduring\s+the\s+(?:review(?:ing)?|discussion|rebuttal)\s+(?:phase|period|stage|process)\b",
    re.IGNORECASE,
)
"""What only a submission says of its code or data: an anonymous repository or link, a release
"upon acceptance", "during the discussion phase"."""
_SUBMISSION_WORDS = ("anonym", "acceptance", "accepted", "published", "during")
"""Words every match of :data:`_SUBMISSION_ONLY` holds."""
_STATEMENT_MAX_WORDS = 60
"""A sentence presenting the paper's code is removed whole up to this length (longer, it is
mostly something else, and only the URL goes)."""
_LEAD_IN = re.compile(
    r"(?:\bURL|\b(?:available|found|released|hosted|provided)\s+(?:at|on|from|here|in)|"
    r"\b(?:link|page|code|repository)|\bat)\s*:?[\s*_\[]*$",
    re.IGNORECASE,
)
"""What introduces a URL ("available at", "URL", "Code:"): it goes with a removed URL, so no
"Code is available at ]" stub is left (a new surface mark)."""
_OWNER_PATH = re.compile(r"(?<![\w-])([\w-]{4,})/[^\s()<>\]]*")
"""An account's path without its host, ``owner/...`` (account names are letters, digits and
hyphens)."""


def _repository(url: str) -> str | None:
    """``host/owner/name`` of a code-hosting URL, to find the same repository elsewhere."""
    match = re.search(r"((?:github|gitlab)\.com|bitbucket\.org)/([\w.-]+)/([\w.-]+)", url)
    if not match:
        return None
    return f"{match.group(1)}/{match.group(2)}/{match.group(3).removesuffix('.git')}"


def _owner(url: str) -> str | None:
    """The account a code-hosting URL belongs to (``github.com/OWNER/...``, ``OWNER.github.io``),
    lowercased and letters only."""
    match = re.search(
        r"(?:github\.com|gitlab\.com|bitbucket\.org)/([\w.-]+)|([\w-]+)\.github\.io", url, re.I
    )
    if not match:
        return None
    return re.sub(r"[^a-z]", "", (match.group(1) or match.group(2)).lower()) or None


_NAME = re.compile(r"\b[A-Z][a-z]*[A-Z]?[a-z]{2,}\b")


def author_names(removed: list[Removal], body: str) -> frozenset[str]:
    """The authors' names as a code-hosting account would spell them: the capitalised words of
    4+ letters on the removed author block's lines that name no institution, and the letter
    runs of its emails' local parts, lowercased; not words the paper's text uses in lowercase."""
    block = "\n".join(r.text for r in removed if r.kind == "author-block")
    if not block:
        return frozenset()
    names: set[str] = set()
    for line in block.splitlines():
        if not AFFILIATION.search(line):  # a line of names, not "Stanford University"
            names.update(w.lower() for w in _NAME.findall(EMAIL.sub(" ", line)))
    for local in re.findall(r"(?<![\w.+-])([\w.+-]+)@|\{([^{}\n]{1,200})\}\s*@", block):
        names.update(re.findall(r"[a-z]{4,}", " ".join(local).lower()))
    lowercase_words = set(re.findall(r"\b[a-z]{4,}\b", body))
    return frozenset(n for n in names if len(n) >= 4 and n not in lowercase_words)


class _Sayings:
    """Where ``pattern`` matches in a text whose URLs are blanked out (same length), searched
    only in the ``regions`` asked about, so that whether a span says it is one binary search:
    many URLs in one long sentence stay linear, and a paper without code URLs costs nothing."""

    def __init__(
        self, blank: str, pattern: re.Pattern[str], regions: list[tuple[int, int]]
    ) -> None:
        found: list[tuple[int, int]] = []
        reach = 0
        for start, end in sorted(regions):
            if end > reach:
                found += (m.span() for m in pattern.finditer(blank, max(start, reach), end))
                reach = end
        self.starts = [start for start, _ in found]
        self.ends = [end for _, end in found]

    def within(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.starts, start)
        return index < len(self.starts) and self.ends[index] <= end


class _Links:
    """A text's URLs, found once (the URL pattern is one of the slower scans), the text with
    them blanked out (same length: what the paper says around them), and its bounds."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bounds = Bounds(text)
        self.urls = [(m.start(), m.group(0)) for m in URL.finditer(text)]
        pieces, done = [], 0
        for start, url in self.urls:
            pieces += [text[done:start], " " * len(url)]
            done = start + len(url)
        self.blank = "".join([*pieces, text[done:]])


def _own_code_urls(links: _Links, names: frozenset[str]) -> set[str]:
    """Code-hosting URLs the paper presents as its own (a sentence or footnote saying "our code
    is available at ..."), those of an account named after an author, and every
    anonymous-repository link."""
    contexts: list[tuple[str, tuple[int, int]]] = []
    for start, found in links.urls:
        url = found.rstrip(".,;:")
        if _CODE_HOST.search(url):
            begin, end = links.bounds.sentence(start, start + len(found))
            line_start, _ = links.bounds.line(start, start + len(found))
            contexts.append((url, (min(begin, line_start), end)))
    if not contexts:
        return set()
    saying = _Sayings(links.blank, _OWN_CODE, [span for _, span in contexts])
    own: set[str] = set()
    for url, span in contexts:
        owner = _owner(url)
        authored = owner is not None and any(name in owner for name in names)
        if _ANONYMOUS_HOST.search(url) or saying.within(*span) or authored:
            own.add(url)
    return own


def _code_statements(links: _Links, own: set[str]) -> list[tuple[int, int]]:
    """Sentences (within their paragraph) that present the paper's code: one holding its own
    or an anonymous repository's URL, or naming a code host, and saying "our code is
    available" or the like; and every sentence only a submission writes (an anonymous link, a
    release upon acceptance). Short ones only (:data:`_STATEMENT_MAX_WORDS`)."""
    bounds, blank = links.bounds, links.blank
    anonymous: list[tuple[int, int]] = []
    by_url: list[tuple[int, int]] = []
    by_word: list[tuple[int, int]] = []
    for start, found in links.urls:
        url = found.rstrip(".,;:")
        if url in own:
            span = bounds.statement(start, start + len(url))
            (anonymous if _ANONYMOUS_HOST.search(url) else by_url).append(span)
    if mentions(blank, _HOST_WORDS):
        for match in _HOST_WORD.finditer(blank):  # "on GitHub": "our" code only
            by_word.append(bounds.statement(match.start(), match.end()))
    own_code, our_code = _Sayings(blank, _OWN_CODE, by_url), _Sayings(blank, _OUR_CODE, by_word)
    spans = anonymous + [s for s in by_url if own_code.within(*s)]
    spans += [s for s in by_word if our_code.within(*s)]
    if mentions(links.text, _SUBMISSION_WORDS):
        spans += (bounds.statement(*m.span()) for m in _SUBMISSION_ONLY.finditer(links.text))
    short: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if end - start > STATEMENT_MAX_CHARS or len(blank[start:end].split()) > (
            _STATEMENT_MAX_WORDS
        ):
            continue
        if short and start < short[-1][1]:
            short[-1] = (short[-1][0], max(end, short[-1][1]))
        else:
            short.append((start, end))
    return short


def strip_code_urls(text: str, removed: list[Removal]) -> str:
    """The paper's code statements (:func:`_code_statements`), then its own code URLs wherever
    else they appear (a footnote, a reference), with the words that introduce them."""
    links = _Links(text)
    own = _own_code_urls(links, author_names(removed, text))
    pieces, done = [], 0
    for start, end in _code_statements(links, own):
        removed.append(Removal(kind="code-statement", text=" ".join(text[start:end].split())))
        pieces.append(text[done:start])
        done = end
    text = "".join([*pieces, text[done:]])
    repositories = {r for r in map(_repository, own) if r}
    prefixes = sorted(own | repositories, key=len, reverse=True)
    if not prefixes:
        return text
    owners = {r.split("/")[1] for r in repositories if len(r.split("/")[1]) >= 4}
    bare_prefixes = [re.sub(r"^(?:https?://)?(?:www\.)?", "", p).lower() for p in prefixes]

    def is_own(url: str) -> bool:
        bare = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.rstrip(".,;:")).lower()
        return any(bare.startswith(p) for p in bare_prefixes)

    def unwrap(match: re.Match[str]) -> str:
        """A link to an own URL becomes its text (whose URLs go next)."""
        if not is_own(match.group(2)):
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(2)))
        return match.group(1)

    def drop(match: re.Match[str]) -> str:
        if not is_own(match.group(1)):
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(1)))
        return "]"

    def rest(match: re.Match[str]) -> str:
        """The rest of a URL the PDF broke over two lines ("https://github.com/" then
        "owner/repo")."""
        if match.group(1) not in owners:
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(0)))
        return ""

    text = _LINK.sub(unwrap, text)
    text = _LINKED_URL.sub(drop, text)
    text = _drop_urls(text, is_own, removed)
    return _OWNER_PATH.sub(rest, text) if owners else text


def _drop_urls(text: str, is_own: Callable[[str], bool], removed: list[Removal]) -> str:
    """Every URL ``is_own`` names removed, with the words introducing it on its line."""
    pieces, done = [], 0
    for match in URL.finditer(text):
        if not is_own(match.group(0)):
            continue
        removed.append(Removal(kind="code-url", text=match.group(0)))
        line_start = text.rfind("\n", done, match.start()) + 1 or done
        lead = _LEAD_IN.search(text, max(done, line_start, match.start() - 40), match.start())
        pieces.append(text[done : lead.start() if lead else match.start()])
        done = match.end()
    return "".join([*pieces, text[done:]])
