"""The extractive builder: the LLM-free embedded default of the build (SPEC §2, DESIGN.md).

It selects sentences, it does not write them. Sections are routed to stages by heading rules
(then by embedding similarity); each stage keeps the sentences closest to the centroid of its
candidates; the question is assembled from field and background sentences with a fixed
template; the reference answer is the solution/experiment sentences; criteria are the most
central of those sentences turned into "The plan ..." statements. It is deterministic (ties go
to the earlier sentence), offline, and a baseline: every instance says so in its warnings.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from papergym.build.general import GENERAL_CRITERIA
from papergym.build.recipes import STAGE_DIMENSION, RecipeSpec, recipe
from papergym.build.text import (
    as_plan_criterion,
    content_words,
    has_numeric_result,
    has_result_claim,
    is_mathy,
    mentions_own_work,
    prose_sentences,
    split_sentences,
    strip_numeric_results,
    talks_about_document,
    without_lead_in,
)
from papergym.embed import cosine_matrix, embed
from papergym.records import (
    Criterion,
    Drop,
    Instance,
    LeakageVerdict,
    Paper,
    RecipeName,
    Rubric,
    Section,
    StageName,
    Stages,
    content_hash,
)

Vectors = npt.NDArray[np.float32]
Decision = StageName | Literal["skip"]

BASELINE_WARNING = "extractive baseline: sentences selected, not written"
RUBRIC_SIZE = 10
MIN_CRITERIA = 3
MAX_SENTENCES: dict[StageName, int] = {
    "field": 3,
    "background": 6,
    "solution": 12,
    "experiment": 12,
}
# Candidates embedded per stage; longer stages are pre-ranked lexically (cost is the embedding).
MAX_CANDIDATES = 36
# MiniLM cosine: paraphrases score about 0.8 and above, near-duplicates above 0.85.
DUPLICATE_SIMILARITY = 0.85
QUESTION_SIMILARITY = 0.8
QUESTION_OVERLAP = 0.7
REVEAL_SIMILARITY = 0.8
_SCORE_DIGITS = 4  # scores are rounded so that float noise never reorders ties

# --- embeddings, cached per process so build_instance reuses extract_stages' vectors ----------

_CACHE: dict[str, npt.NDArray[np.float32]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_LIMIT = 50_000


def _vectors(texts: Sequence[str]) -> Vectors:
    """Unit vectors of ``texts`` (one embedding batch for those not seen before)."""
    with _CACHE_LOCK:
        missing = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if missing:
        # Small batches are faster on a CPU: less padding, better cache use.
        fresh = embed([" ".join(t.split()[:64]) for t in missing], batch_size=16)
        with _CACHE_LOCK:
            if len(_CACHE) + len(missing) > _CACHE_LIMIT:
                _CACHE.clear()
            _CACHE.update(zip(missing, fresh, strict=True))
    with _CACHE_LOCK:
        rows = [_CACHE.get(t) for t in texts]
    if any(r is None for r in rows):  # evicted by another thread meanwhile: embed directly
        return embed(list(texts), batch_size=16)
    return np.stack([r for r in rows if r is not None]) if rows else np.zeros((0, 384), np.float32)


def clear_embedding_cache() -> None:
    """Forget cached sentence vectors (tests use it to check determinism from scratch)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _centrality(vectors: Vectors) -> list[float]:
    """Cosine of each row to the normalised centroid of all rows, rounded."""
    if len(vectors) == 0:
        return []
    centroid = vectors.mean(axis=0)
    centroid = centroid / (float(np.linalg.norm(centroid)) or 1.0)
    return [round(float(x), _SCORE_DIGITS) for x in vectors @ centroid]


# --- sections → stages -------------------------------------------------------------------------

_HEADING_RULES: tuple[tuple[str, Decision], ...] = (
    # Not the paper's science, or a restatement of its results: never used.
    (
        r"acknowledg\w*|author(?:s'?|'s)? contributions?|contributions? of (?:the )?authors|"
        r"competing (?:financial )?interests?|conflicts? of interests?|declarations?|"
        r"(?:data|code|software|materials?)(?: and (?:data|code|software|materials?))? "
        r"availability|funding|financial support|references|bibliography|consortium|contributors|"
        r"ethics(?: statement)?|broader impacts?|impact statement|reproducibility statement|"
        r"supplementa\w+ (?:material|information|figures|tables)|additional (?:figures|tables)|"
        r"conclusions?|concluding remarks|discussions?|summary|outlook|future (?:work|directions|"
        r"research)|limitations?|closing remarks|guide to|nomenclature|glossary|extended data|"
        r"list of (?:symbols|abbreviations|notation)",
        "skip",
    ),
    (
        r"introduction|related (?:work|literature|research)|prior (?:work|art|literature)|"
        r"previous (?:work|studies|literature)|literature(?: review)?|background|preliminar\w+|"
        r"motivation|problem (?:statement|setting)|state of the art|historical \w+|"
        r"institutional (?:background|setting|context|details|framework)|"
        r"policy (?:background|context)",
        "background",
    ),
    (
        r"methods?|methodology|approach(?:es)?|proposed|models?|modell?ing|baseline model|"
        r"architectures?|algorithms?|framework|theory|theoretical|formalism|formulation|"
        r"derivations?|estimators?|identification(?: strategy)?|empirical (?:strategy|design|"
        r"approach|framework|specification|model)|research design|econometric \w+|design|"
        r"asymptotic\w*|constructions?|implementations?|software|(?:package|system|library|tool) "
        r"overview|api|interfaces?|equilibri\w+|proofs?|contributions?|data structures?|"
        r"our (?:method|approach|model|system)",
        "solution",
    ),
    (
        r"experiments?|experimental(?: (?:setup|set-up|design|results|evaluation))?|evaluations?|"
        r"results?|ablations?|benchmarks?|empirical(?: (?:results|evaluation|analysis|application|"
        r"illustration|evidence|findings))?|simulations?|numerical (?:experiments|results|"
        r"simulations|tests|examples)|observations?|data|data ?sets?|samples?|calibration|"
        r"estimation|robustness|validation|applications?|use cases?|case stud(?:y|ies)|examples?|"
        r"comparisons?|performance|setup|set-up|baselines?|metrics?|protocol|accuracy|findings|"
        r"illustrations?|tests?|testing|throughput|implementation details|training details|"
        r"hyperparameter settings|measurements?|demonstrations?",
        "experiment",
    ),
)
_COMPILED_RULES = tuple(
    (re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE), decision)
    for pattern, decision in _HEADING_RULES
)
# Sections no rule decides are compared with these (MiniLM cosine to the section's sentences).
STAGE_DESCRIPTIONS: dict[StageName, str] = {
    "background": "The state of the field: prior work, existing approaches, their limitations "
    "and the open problem that remains unsolved.",
    "solution": "The proposed method: its model, algorithm, derivation, architecture and key "
    "technical components, and how they work.",
    "experiment": "The evaluation: data sets, baselines, metrics, simulations, experimental "
    "setup, estimation and robustness checks, and the empirical results.",
}
_SECTION_SAMPLE = 5  # sentences per undecided section used to place it


def heading_stage(heading: str) -> Decision | None:
    """The stage a heading names by itself: the earliest (then longest) keyword decides.

    "Model Search and Evaluation" → solution ("model" comes first); "Estimation of the Extended
    Model" → experiment; "Empirical strategy" → solution (longer than "empirical").
    """
    best: tuple[int, int, Decision] | None = None
    for pattern, decision in _COMPILED_RULES:
        for match in pattern.finditer(heading):
            key = (match.start(), -(match.end() - match.start()), decision)
            if best is None or key[:2] < best[:2]:
                best = key
    return best[2] if best else None


def section_rule(section: Section) -> Decision | None:
    """The stage heading rules give a section, using its whole heading path.

    A section's own heading decides, else the nearest ancestor that decides. Under background
    and experiment sections the parent wins over the child's own words (a related-work topic
    "Model-free approaches", a setup's "Algorithms" compared), except for skipped headings;
    under method sections the child's words win ("Cost comparison" inside a method section).
    """
    own = heading_stage(section.heading)
    ancestors = [heading_stage(h) for h in reversed(section.path)]
    inherited = next((d for d in ancestors if d is not None), None)
    if "skip" in ancestors or own == "skip":
        return "skip"
    if inherited in ("background", "experiment"):
        return inherited
    return own or inherited


def _position_prior(index: int, decisions: dict[int, Decision | None]) -> npt.NDArray[np.float32]:
    """A nudge from where an undecided section sits: papers go background → method → results.

    Before the first experiment section (and after the introduction) it leans to the method;
    after it, to the experiments. Weights: background, solution, experiment.
    """
    background = [i for i, d in decisions.items() if d == "background"]
    experiment = [i for i, d in decisions.items() if d == "experiment"]
    if index > min(experiment, default=len(decisions)):
        return np.array([0.0, 0.0, 0.1], np.float32)
    if index > min(background, default=-1):
        return np.array([0.0, 0.1, 0.0], np.float32)
    return np.zeros(3, np.float32)


def assign_sections(paper: Paper) -> dict[StageName, list[Section]]:
    """Sections per stage: heading rules first, embedding similarity for the rest.

    Appendix sections are used only for a stage the main text leaves empty. The field stage is
    the abstract (as a pseudo-section) and the introduction, whose opening states the field.
    """
    return _assign(paper, _vectors)


def _assign(
    paper: Paper, vectors: Callable[[Sequence[str]], Vectors]
) -> dict[StageName, list[Section]]:
    main = [s for s in paper.sections if not s.appendix]
    stages = _place(main, vectors)
    empty = [name for name, found in stages.items() if not found]
    if empty:
        appendix = _place([s for s in paper.sections if s.appendix], vectors)
        for name in empty:
            stages[name] = appendix[name]
    field: list[Section] = [Section(heading="Abstract", level=0, text=paper.abstract)]
    field += [s for s in stages["background"][:1] if heading_stage(s.heading) == "background"]
    return {"field": field, **stages}


def _undecided_groups(
    sections: Sequence[Section], decisions: dict[int, Decision | None]
) -> dict[int, list[int]]:
    """Undecided sections grouped under their topmost undecided ancestor (the group's key).

    A subsection inherits its parent's stage, including one the parent got by similarity, so a
    whole undecided subtree is placed at once, from the sentences of all its sections.
    """
    root: dict[int, int] = {}
    stack: list[int] = []  # enclosing sections of the current one, outermost first
    for i, section in enumerate(sections):
        while stack and sections[stack[-1]].level >= section.level:
            stack.pop()
        if decisions[i] is None:
            parent = stack[-1] if stack else None
            root[i] = root[parent] if parent is not None and parent in root else i
        stack.append(i)
    groups: dict[int, list[int]] = {}
    for i, key in root.items():
        groups.setdefault(key, []).append(i)
    return groups


def _place(
    sections: Sequence[Section], vectors: Callable[[Sequence[str]], Vectors]
) -> dict[StageName, list[Section]]:
    decisions: dict[int, Decision | None] = {i: section_rule(s) for i, s in enumerate(sections)}
    groups = _undecided_groups(sections, decisions)
    samples = {
        key: [t for i in members for t in prose_sentences(sections[i].text)[:_SECTION_SAMPLE]][
            : 3 * _SECTION_SAMPLE
        ]
        for key, members in groups.items()
    }
    texts = [t for sample in samples.values() for t in sample]
    if texts:
        names: list[StageName] = ["background", "solution", "experiment"]
        described = vectors([STAGE_DESCRIPTIONS[n] for n in names])
        sentence_vectors = dict(zip(texts, vectors(texts), strict=True))
        ruled = dict(decisions)  # the prior looks at rule decisions only
        for key, members in groups.items():
            if samples[key]:
                mean = np.mean([sentence_vectors[t] for t in samples[key]], axis=0)
                scores = described @ mean + _position_prior(key, ruled)
                choice = names[int(np.argmax(np.round(scores, _SCORE_DIGITS)))]
                decisions.update(dict.fromkeys(members, choice))
    placed: dict[StageName, list[Section]] = {"background": [], "solution": [], "experiment": []}
    for i, section in enumerate(sections):
        decision = decisions[i]
        if decision in ("background", "solution", "experiment") and section.words > 0:
            placed[decision].append(section)
    return placed


# --- stage extraction ----------------------------------------------------------------------------

_GAP_CUES = re.compile(
    r"\b(?:however|but|remains?|remained|limited|limitations?|challeng\w*|difficult\w*|"
    r"open (?:problem|question)s?|lacks?|lacking|little (?:work|is known|attention)|less "
    r"(?:well )?understood|unclear|unknown|expensive|costly|prohibitive\w*|bottleneck|fails?|"
    r"cannot|not yet|gap|problem|issue|restrict\w*|impractical|infeasible|scal\w+)\b",
    re.IGNORECASE,
)
_DESIGN_CUES = re.compile(
    r"\b(?:data ?sets?|data|baselines?|metrics?|benchmarks?|compar\w+|evaluat\w+|simulat\w+|"
    r"samples?|tests?|measur\w+|estimat\w+|specifications?|controls?|robustness|calibrat\w+|"
    r"cross-validation|protocol|split|held-out|validation|trained|training)\b",
    re.IGNORECASE,
)
# Sentences that narrate a figure or table: they report what a plot shows, i.e. results.
_FIGURE_TALK = re.compile(
    r"\b(?:Fig(?:ure)?s?|Tables?|Panels?)\.?\s*(?:\[ref\]|\d)|\((?:top|middle|bottom|left|"
    r"right|upper|lower)\)|\b(?:solid|dashed|dotted|orange|blue|red|green|black|gr[ae]y|purple) "
    r"(?:lines?|curves?|points|dots|regions?|shading|histograms?)\b",
    re.IGNORECASE,
)
_ANAPHORA = re.compile(
    r"^(?:It|Its|This|These|They|Their|Such|Thus|Hence|Therefore|Here|He|She)\b", re.IGNORECASE
)
# Asides and imperatives ("We note ...", "Consider the GILR ...") are not statements about a plan.
_COMMENTARY = re.compile(
    r"^(?:We (?:note|remark|emphasi[sz]e|stress|mention|recall|refer)|Now|Consider|Note|Recall|"
    r"Suppose|Let|Assume|Observe|Imagine)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Candidate:
    """One sentence that may enter a stage, with where it came from."""

    text: str
    position: int  # order in the paper, for ties and for output order
    source: str  # heading path of its section


def _heading_path(section: Section) -> str:
    return " > ".join((*section.path, section.heading)) or "(untitled)"


_NAME_LIKE = re.compile(r"\b[A-Za-z]*[a-z][A-Z][\w.]*|\b[A-Z]{3,}[\w.]*")
_MIXED_CASE = re.compile(r"[A-Za-z]*[a-z][A-Z][\w.]*")
_INTRODUCED = re.compile(
    r"\b(?:we|this paper)\s+(?:present|introduce|propose|call|name|dub)\w*\s+"
    r"(?:it\s+|a\s+|an\s+|the\s+)?[\"'“]?([A-Za-z][\w.-]+)([^.]{0,80}?\(([A-Z][\w-]*[A-Z])\))?",
    re.IGNORECASE,
)


def method_terms(paper: Paper) -> set[str]:
    """Names the paper gives its own contribution (kept out of the question and the criteria).

    The title's "Name:" prefix ("LEGWORK"); a name the paper introduces ("we present LEGWORK",
    "we call ... (ABCD)"); mixed-case names of the title ("PySR", "SciPy"); and all-capital names
    of the title or of method headings ("TECCE") that the background never uses on its own, so
    that acronyms of the field ("OLG", "SNR") stay.
    """
    terms: set[str] = set()
    prefix = re.match(r"^\s*([^:—–]{2,30})[:—–]", paper.title)
    if prefix and len(prefix.group(1).split()) <= 3:
        terms.add(prefix.group(1).strip())
    opening = " ".join(s.text for s in paper.sections[:2])
    for match in _INTRODUCED.finditer(f"{paper.abstract} {opening}"):
        if _NAME_LIKE.fullmatch(match.group(1).rstrip(".")):
            terms.add(match.group(1).rstrip("."))
        if match.group(3):
            terms.add(match.group(3))
    terms.update(m.group(0).rstrip(".") for m in _MIXED_CASE.finditer(paper.title))
    background = " ".join(
        sentence
        for section in paper.sections
        if section_rule(section) == "background"
        for sentence in split_sentences(section.text)
        if not mentions_own_work(sentence)
    )
    method_headings = [s.heading for s in paper.sections if section_rule(s) == "solution"]
    for text in [paper.title, *method_headings]:
        for match in re.finditer(r"\b[A-Z]{4,}s?\b|\b[A-Za-z]*[a-z][A-Z][\w.]*", text):
            name = match.group(0).rstrip(".")
            stem = name[:-1] if re.fullmatch(r"[A-Z]+s", name) else name
            if not re.search(rf"(?<![\w-]){re.escape(stem)}", background):
                terms.add(name)
    return {t for t in terms if len(t) >= 3}


def _mentions(sentence: str, terms: set[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", sentence) for t in terms)


def _candidates(
    sections: Sequence[Section], positions: dict[int, int], keep: Callable[[str], bool]
) -> list[_Candidate]:
    seen: set[str] = set()
    found: list[_Candidate] = []
    for section in sections:
        base = positions.get(id(section), 0) * 10_000
        for offset, sentence in enumerate(prose_sentences(section.text)):
            if sentence not in seen and keep(sentence):
                seen.add(sentence)
                found.append(_Candidate(sentence, base + offset, _heading_path(section)))
    return found


def _opening(
    sections: Sequence[Section], positions: dict[int, int], keep: Callable[[str], bool]
) -> list[_Candidate]:
    """The context sentences that open a text, up to its first sentence about the paper itself.

    Abstracts and introductions state the field first and then turn to "we propose"; what comes
    after that turn describes the paper's own work even when it does not say "we".
    """
    opening: list[_Candidate] = []
    for section in sections[:1]:
        base = positions.get(id(section), 0) * 10_000
        for offset, sentence in enumerate(prose_sentences(section.text)):
            if mentions_own_work(sentence):
                break
            if keep(sentence):
                opening.append(_Candidate(sentence, base + offset, _heading_path(section)))
    return opening


def _lexical_preselect(candidates: list[_Candidate], limit: int) -> list[_Candidate]:
    """Keep the ``limit`` candidates closest to the word-count centroid (cheap, no embedding)."""
    if len(candidates) <= limit:
        return candidates
    bags = [Counter(w for w in re.findall(r"[a-z]{3,}", c.text.lower())) for c in candidates]
    centroid: dict[str, float] = {}
    for bag in bags:
        norm = math.sqrt(sum(v * v for v in bag.values())) or 1.0
        for word, count in bag.items():
            centroid[word] = centroid.get(word, 0.0) + count / norm
    scores = []
    for candidate, bag in zip(candidates, bags, strict=True):
        norm = math.sqrt(sum(v * v for v in bag.values())) or 1.0
        dot = sum(count * centroid[word] for word, count in bag.items()) / norm
        scores.append((-round(dot, _SCORE_DIGITS), candidate.position, candidate))
    kept = sorted(scores, key=lambda s: (s[0], s[1]))[:limit]
    return sorted((s[2] for s in kept), key=lambda c: c.position)


def _near_duplicate(
    a: str, b: str, va: npt.NDArray[np.float32], vb: npt.NDArray[np.float32]
) -> bool:
    """Same meaning (cosine), or the same opening words (a sentence repeated with a new ending)."""
    return float(va @ vb) > DUPLICATE_SIMILARITY or a.lower().split()[:6] == b.lower().split()[:6]


def _select(
    candidates: list[_Candidate], vectors: Vectors, limit: int, bonus: Callable[[str], float]
) -> list[int]:
    """Indices of the ``limit`` best candidates (centrality + bonus), in paper order.

    Greedy by score; a candidate nearly identical to one already taken (an abstract sentence
    the introduction repeats) is skipped.
    """
    scores = _centrality(vectors)
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (
            -round(scores[i] + bonus(candidates[i].text), _SCORE_DIGITS),
            candidates[i].position,
        ),
    )
    taken: list[int] = []
    for i in ranked:
        if len(taken) >= limit:
            break
        if not any(
            _near_duplicate(candidates[i].text, candidates[j].text, vectors[i], vectors[j])
            for j in taken
        ):
            taken.append(i)
    return sorted(taken, key=lambda i: candidates[i].position)


def _is_method_sentence(sentence: str) -> bool:
    """Solution-stage material: no numbers (hyper-parameters included), no figure narration."""
    return not (
        has_numeric_result(sentence)
        or _FIGURE_TALK.search(sentence)
        or talks_about_document(sentence)
    )


def _is_design_sentence(sentence: str) -> bool:
    """Experiment-stage material: as for the method, and no findings in words either."""
    return _is_method_sentence(sentence) and not has_result_claim(sentence)


def _is_context_sentence(sentence: str, terms: set[str]) -> bool:
    """Question material: says nothing of the paper's own work, its names, numbers or maths."""
    return not (
        "[ref]" in sentence
        or sentence.endswith("?")
        or has_numeric_result(sentence)
        or is_mathy(sentence)
        or mentions_own_work(sentence)
        or has_result_claim(sentence)
        or _FIGURE_TALK.search(sentence)
        or talks_about_document(sentence)
        or _mentions(sentence, terms)
    )


def _answer_bonus(cue: re.Pattern[str] | None) -> Callable[[str], float]:
    """Design wording for the experiments; self-contained sentences (they make criteria)."""

    def bonus(text: str) -> float:
        design = 0.05 if cue is not None and cue.search(text) else 0.0
        return design + (0.05 if _criterion_source(text) else 0.0)

    return bonus


def _background_bonus(text: str) -> float:
    """Sentences naming a gap are what the question needs; dangling "This ..." less so."""
    return (0.1 if _GAP_CUES.search(text) else 0.0) - (0.05 if _ANAPHORA.match(text) else 0.0)


@dataclass(frozen=True)
class _Table:
    """Each candidate sentence's vector, embedded in one batch."""

    vectors: dict[str, npt.NDArray[np.float32]]

    def stack(self, pool: Sequence[_Candidate]) -> Vectors:
        if not pool:
            return np.zeros((0, 384), np.float32)
        return np.stack([self.vectors[c.text] for c in pool])

    def duplicate(self, a: _Candidate, b: _Candidate) -> bool:
        return _near_duplicate(a.text, b.text, self.vectors[a.text], self.vectors[b.text])

    def hide(self, pool: Sequence[_Candidate], hidden: Sequence[_Candidate]) -> list[_Candidate]:
        """``pool`` without sentences that restate (or are) an answer-side sentence."""
        if not pool or not hidden:
            return list(pool)
        similarity = cosine_matrix(self.stack(pool), self.stack(hidden)).max(axis=1)
        texts = {c.text for c in hidden}
        return [
            c
            for c, s in zip(pool, similarity, strict=True)
            if s <= REVEAL_SIMILARITY and c.text not in texts
        ]


def _field(
    abstract: list[_Candidate], intro: list[_Candidate], fallback: list[_Candidate], table: _Table
) -> list[_Candidate]:
    """One or two opening context sentences: the abstract's, then the introduction's."""
    field = [c for c in abstract if not _ANAPHORA.match(c.text)]
    for candidate in intro:
        # the introduction often repeats the abstract's opening in other words
        if (
            len(field) < 2
            and not _ANAPHORA.match(candidate.text)
            and not any(
                float(table.vectors[candidate.text] @ table.vectors[c.text]) > REVEAL_SIMILARITY
                or table.duplicate(candidate, c)
                for c in field
            )
        ):
            field.append(candidate)
    # An abstract that opens on "This paper ...": any context sentence of it will do.
    return field or [c for c in fallback if not _ANAPHORA.match(c.text)][:2]


def extract_stages(paper: Paper) -> Stages:
    """The four stages of ``paper`` by sentence selection (``builder="extractive"``)."""
    assigned = _assign(paper, _vectors)
    positions = {id(s): i + 1 for i, s in enumerate(paper.sections)}
    terms = method_terms(paper)

    def context(sentence: str) -> bool:
        return _is_context_sentence(sentence, terms)

    pools: dict[StageName, list[_Candidate]] = {
        "solution": _candidates(assigned["solution"], positions, _is_method_sentence),
        "experiment": _candidates(assigned["experiment"], positions, _is_design_sentence),
        "background": _candidates(assigned["background"], positions, context),
    }
    pools = {name: _lexical_preselect(pool, MAX_CANDIDATES) for name, pool in pools.items()}
    abstract_pool = _opening(assigned["field"][:1], {}, context)[:2]
    intro_pool = _opening(assigned["field"][1:], positions, context)[:4]
    fallback_pool = _candidates(assigned["field"][:1], {}, context)
    everything = [
        c.text for pool in (*pools.values(), abstract_pool, intro_pool, fallback_pool) for c in pool
    ]
    table = _Table(dict(zip(everything, _vectors(everything), strict=True)) if everything else {})

    chosen: dict[StageName, list[_Candidate]] = {}
    answer_cues: tuple[tuple[StageName, re.Pattern[str] | None], ...] = (
        ("solution", None),
        ("experiment", _DESIGN_CUES),
    )
    for name, cue in answer_cues:
        pool = pools[name]
        picked = _select(pool, table.stack(pool), MAX_SENTENCES[name], _answer_bonus(cue))
        chosen[name] = [pool[i] for i in picked]
    # Question-side stages must not reveal what the answer-side stages say.
    hidden = chosen["solution"] + chosen["experiment"]
    chosen["field"] = _field(
        table.hide(abstract_pool, hidden),
        table.hide(intro_pool, hidden),
        table.hide(fallback_pool, hidden),
        table,
    )[: MAX_SENTENCES["field"]]
    background = [
        c
        for c in table.hide(pools["background"], hidden)
        if not any(table.duplicate(c, f) for f in chosen["field"])
    ]
    picked = _select(
        background, table.stack(background), MAX_SENTENCES["background"], _background_bonus
    )
    chosen["background"] = [background[i] for i in picked]
    return Stages(
        paper_id=paper.id,
        builder="extractive",
        field=" ".join(c.text for c in chosen["field"]),
        background=" ".join(c.text for c in chosen["background"]),
        solution=" ".join(c.text for c in chosen["solution"]),
        experiment=" ".join(c.text for c in chosen["experiment"]),
        sources={
            name: tuple(dict.fromkeys(c.source for c in chosen[name]))
            for name in ("field", "background", "solution", "experiment")
        },
    )


# --- instance: question, reference answer, rubric ---------------------------------------------

_DOMAINS: dict[str, str] = {
    "computer science": "computer science: machine learning, neural networks, algorithms, "
    "software libraries, programming and computing systems",
    "physics": "physics and astronomy: astrophysics, stars, light curves, astronomical surveys, "
    "gravitational waves, cosmology, particles, quantum mechanics, qubits and quantum circuits",
    "economics": "economics and econometrics: markets, firms, households, labor, education "
    "policy, treatment effects, macroeconomic models and finance",
    "mathematics": "pure mathematics: theorems, proofs, algebra, geometry and analysis",
    "statistics": "statistics: statistical inference, Bayesian modelling, regression and "
    "probabilistic models of data",
    "biology": "biology and medicine: cells, genes, organisms, patients and disease",
    "chemistry": "chemistry and materials science: molecules, reactions and materials",
    "engineering": "engineering: circuits, control, signals, mechanical and electrical systems",
    "earth science": "earth and climate science: climate, oceans, geology and the atmosphere",
}
_QUESTION_ENDINGS: dict[RecipeName, str] = {
    "papergym": "Propose a research plan that addresses the open problem described above: "
    "describe the method you would develop and its key components, explain why they should "
    "work, and describe the experiments that would show whether the method succeeds.",
    "innov": "Propose a new method that addresses the open problem described above: describe "
    "its core idea and its key components, and explain why they should work.",
    "design": "Design the experiments that would validate this approach: describe what you "
    "would test, how you would set the experiments up, and why the design would convince a "
    "careful reader.",
}
# Words that would tell a design task how the method was tested.
EXPERIMENT_HINTS = re.compile(
    r"\b(?:baselines?|data ?sets?|benchmarks?|metrics?|ablations?|evaluat\w*|experiment\w*|"
    r"accuracy|outperform\w*|test set|held-out|cross-validation|simulation\w*)\b",
    re.IGNORECASE,
)
_GIVEN_LEAD = "Take the following approach as given, described in its authors' words:"


def domain_of(field_text: str) -> str:
    """The broad discipline a text names (title and field stage), by similarity to fixed labels."""
    if not field_text.strip():
        return ""
    labels = list(_DOMAINS)
    scores = _vectors([_DOMAINS[label] for label in labels]) @ _vectors([field_text])[0]
    return labels[int(np.argmax(np.round(scores, _SCORE_DIGITS)))]


_CONNECTIVE = re.compile(
    r"^(?:However|Moreover|Furthermore|In addition|Also|Additionally|Nevertheless|Thus|Hence|"
    r"Therefore|Consequently|Indeed|Likewise|Similarly),\s+(\w)"
)


def _question(spec: RecipeSpec, sentences: dict[StageName, list[str]]) -> str:
    context = [
        s for name in spec.question_stages if name not in spec.given_stages for s in sentences[name]
    ]
    if context:  # a question cannot open on "However, ..." when its antecedent was not selected
        context[0] = _CONNECTIVE.sub(lambda m: m.group(1).upper(), context[0])
    parts = [" ".join(context)]
    for name in spec.given_stages:
        # The design task must not hint at how the method was tested (SPEC §2, Design).
        given = [t for t in sentences[name] if not EXPERIMENT_HINTS.search(t)]
        parts.append(f"{_GIVEN_LEAD} {' '.join(given)}")
    parts.append(_QUESTION_ENDINGS[spec.name])
    return " ".join(p for p in parts if p)


def _reference(spec: RecipeSpec, sentences: dict[StageName, list[str]]) -> str:
    """One paragraph per answer stage, numeric sentences removed (a second guard)."""
    paragraphs = [strip_numeric_results(" ".join(sentences[name])) for name in spec.answer_stages]
    return "\n\n".join(p for p in paragraphs if p)


@dataclass(frozen=True)
class _Pick:
    text: str  # the criterion as written
    source: str  # the paper sentence it came from
    dimension: Literal["method", "experiment"]
    score: float
    position: int
    similarity: float  # to the closest question sentence
    overlap: float  # share of its content words found in the question's sentences


@dataclass
class _Screen:
    """What the criteria selection threw away, for the rubric note."""

    usable: int = 0
    duplicates: int = 0
    leaked: int = 0


def _criterion_source(sentence: str) -> bool:
    """A stage sentence fit to become a criterion: self-contained, about design, no numbers."""
    opening = without_lead_in(sentence)
    return (
        not has_numeric_result(sentence)
        and not has_result_claim(sentence)
        and "[ref]" not in sentence
        and not sentence.endswith("?")
        and not is_mathy(sentence)
        and not _ANAPHORA.match(opening)
        and not _COMMENTARY.match(opening)
        and not talks_about_document(sentence)
        and len(content_words(sentence)) >= 5
    )


def _quotas(spec: RecipeSpec) -> dict[str, int]:
    """Method-heavy split when both dimensions are wanted (the paper reports about 64/36)."""
    if len(spec.dimensions) == 1:
        return {spec.dimensions[0]: RUBRIC_SIZE}
    return {"method": 6, "experiment": 4}


_PRODUCT_NOUNS = (
    r"(?:library|package|model|method|code|codes|kernel|estimator|framework|software|features?|"
    r"project|api|implementation|developers|community|ecosystem|users|functions?|algorithm|"
    r"process|term|terms|approach|system)\b"
)


def _unnamed(text: str, terms: set[str]) -> str:
    """``text`` with the paper's own names replaced: a plan cannot be expected to use them."""
    for term in sorted(terms, key=len, reverse=True):
        name = re.escape(term)
        # "the main SciPy library" → "the main library"; "using LEGWORK," → "using the method,"
        text = re.sub(rf"(?<![\w-]){name}\s+(?={_PRODUCT_NOUNS})", "", text)
        text = re.sub(rf"(?<![\w-])(?:[Tt]he\s+)?{name}(?![\w-])", "the method", text)
    return text[:1].upper() + text[1:]


def _criterion_candidates(
    spec: RecipeSpec,
    sentences: dict[StageName, list[str]],
    question_sentences: list[str],
    terms: set[str],
    vocabulary: frozenset[str],
) -> list[_Pick]:
    """Every answer-stage sentence fit to be a criterion, scored, best first."""
    question_words = content_words(" ".join(question_sentences))
    question_vectors = _vectors(question_sentences)
    pool: list[_Pick] = []
    for stage in spec.answer_stages:
        stage_sentences = sentences[stage]
        if not stage_sentences:
            continue
        vectors = _vectors(stage_sentences)
        scores = _centrality(vectors)
        closest = (
            cosine_matrix(vectors, question_vectors).max(axis=1)
            if question_sentences
            else np.zeros(len(stage_sentences), np.float32)
        )
        for index, sentence in enumerate(stage_sentences):
            if not _criterion_source(sentence):
                continue
            words = content_words(sentence)
            pool.append(
                _Pick(
                    text=_unnamed(as_plan_criterion(sentence, vocabulary), terms),
                    source=sentence,
                    dimension=STAGE_DIMENSION[stage],
                    score=scores[index],
                    position=index,
                    similarity=round(float(closest[index]), _SCORE_DIGITS),
                    overlap=round(len(words & question_words) / len(words), _SCORE_DIGITS),
                )
            )
    return sorted(pool, key=lambda p: (-p.score, p.dimension != "method", p.position))


def _criteria(
    spec: RecipeSpec,
    sentences: dict[StageName, list[str]],
    question_sentences: list[str],
    screen: _Screen,
    terms: set[str],
    vocabulary: frozenset[str],
) -> list[_Pick]:
    """Up to 10 criteria: screened against the question, deduplicated, quota per dimension."""
    pool = _criterion_candidates(spec, sentences, question_sentences, terms, vocabulary)
    screen.usable = len(pool)
    # The overlap screen: a criterion the question already states would reward restating it.
    leaked = [
        p for p in pool if p.similarity > QUESTION_SIMILARITY or p.overlap >= QUESTION_OVERLAP
    ]
    screen.leaked = len(leaked)
    quotas = _quotas(spec)
    kept: list[_Pick] = []
    duplicates: set[str] = set()
    # First pass fills each dimension's quota; the second fills what is left from either.
    for respect_quota in (True, False):
        for pick in pool:
            if len(kept) >= RUBRIC_SIZE:
                break
            if pick in kept or pick in leaked or pick.source in duplicates:
                continue
            if respect_quota and [k.dimension for k in kept].count(pick.dimension) >= quotas.get(
                pick.dimension, 0
            ):
                continue
            vector = _vectors([pick.source])[0]
            if any(float(vector @ _vectors([k.source])[0]) > DUPLICATE_SIMILARITY for k in kept):
                duplicates.add(pick.source)
                continue
            kept.append(pick)
    screen.duplicates = len(duplicates)
    return sorted(kept, key=lambda p: (-p.score, p.dimension != "method", p.position))


def _note(count: int, spec: RecipeSpec, screen: _Screen) -> str:
    if count >= RUBRIC_SIZE:
        return ""
    stages = " and ".join(spec.answer_stages)
    return (
        f"{count} criteria instead of {RUBRIC_SIZE}: the {stages} stage(s) gave "
        f"{screen.usable} usable sentences (numeric, result, anaphoric and short ones excluded); "
        f"{screen.duplicates} near-duplicates and {screen.leaked} too close to the question "
        "were dropped."
    )


def build_instance(paper: Paper, stages: Stages, recipe_name: RecipeName | str) -> Instance | Drop:
    """An instance of recipe ``recipe_name`` from ``stages``, or a Drop saying why not."""
    spec = recipe(recipe_name)

    def drop(step: str, reason: str) -> Drop:
        return Drop(source=paper.meta.source_path, step=step, reason=reason, paper_id=paper.id)

    texts: dict[StageName, str] = {
        "field": stages.field,
        "background": stages.background,
        "solution": stages.solution,
        "experiment": stages.experiment,
    }
    empty = [name for name in spec.required_stages if not texts[name].strip()]
    if empty:
        return drop("stages", f"empty {', '.join(empty)} stage for recipe {spec.name}")
    sentences = {name: split_sentences(text) for name, text in texts.items()}
    question = _question(spec, sentences)
    reference = _reference(spec, sentences)
    if not reference:
        return drop("reference", "every answer-stage sentence carries a number")
    question_sentences = [s for name in spec.question_stages for s in sentences[name]]
    screen = _Screen()
    # Words the paper writes in lower case: a sentence-initial one is not a name.
    vocabulary = frozenset(
        w for section in paper.sections for w in re.findall(r"\b[a-z][a-z-]+\b", section.text)
    )
    picks = _criteria(spec, sentences, question_sentences, screen, method_terms(paper), vocabulary)
    if len(picks) < MIN_CRITERIA:
        return drop(
            "rubric", f"only {len(picks)} criteria survived: " + _note(len(picks), spec, screen)
        )
    instance_id = Instance.make_id(spec.name, "extractive", paper.id)
    specific = tuple(
        Criterion(
            id=content_hash({"instance": instance_id, "criterion": pick.text}),
            text=pick.text,
            dimension=pick.dimension,
            origin="extractive",
            rank=rank,
            leakage=(
                LeakageVerdict(
                    method="overlap",
                    leaked=False,
                    score=round(max(pick.similarity, pick.overlap), 2),
                    reason=f"closest question sentence cosine {pick.similarity:.2f}; "
                    f"content-word overlap {pick.overlap:.2f}",
                ),
            ),
        )
        for rank, pick in enumerate(picks, start=1)
    )
    warnings = [BASELINE_WARNING]
    if screen.leaked:
        warnings.append(f"{screen.leaked} candidate criteria dropped as too close to the question")
    return Instance(
        id=instance_id,
        recipe=spec.name,
        builder="extractive",
        paper_id=paper.id,
        title=paper.title,
        domain=domain_of(f"{paper.title}. {stages.field}"),
        arxiv_id=paper.meta.arxiv_id,
        source_path=paper.meta.source_path,
        question=question,
        reference_answer=reference,
        rubric=Rubric(
            specific=specific, general=GENERAL_CRITERIA, note=_note(len(specific), spec, screen)
        ),
        warnings=tuple(warnings),
    )
