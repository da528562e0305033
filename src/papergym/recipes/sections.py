"""Sections to stages, and the names a paper gives its own work (the extractive builder).

Sections are routed to the background, solution and experiment stages by heading rules, then,
for those no rule decides, by embedding similarity to fixed stage descriptions (SPEC §2,
DESIGN.md). ``method_terms`` finds the paper's own names for its contribution, which the
question and the criteria must not use. The per-process embedding cache the extractive modules
share lives here too, so that ``build_instance`` reuses the vectors ``extract_stages`` made.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from papergym.embed import embed
from papergym.recipes.text import mentions_own_work, prose_sentences, split_sentences
from papergym.records import Paper, Section, StageName

Vectors = npt.NDArray[np.float32]
Decision = StageName | Literal["skip"]

SCORE_DIGITS = 4  # scores are rounded so that float noise never reorders ties

# --- embeddings, cached per process so build_instance reuses extract_stages' vectors ----------

_CACHE: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
# Least recently used vectors go first once the cache holds this many (about 15 MiB): vectors are
# reused within a paper (and for the fixed stage descriptions), not across papers, so a bound
# around the working set of the papers in flight keeps a build's memory flat however many papers
# it reads. Clearing the whole cache at a larger bound instead let it grow with the corpus up to
# that bound, and threw away the vectors of the papers being built.
_CACHE_LIMIT = 10_000


def cached_vectors(texts: Sequence[str]) -> Vectors:
    """Unit vectors of ``texts`` (one embedding batch for those not seen before)."""
    with _CACHE_LOCK:
        missing = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if missing:
        fresh = _embed_truncated(missing)
        with _CACHE_LOCK:
            _CACHE.update(zip(missing, fresh, strict=True))
    with _CACHE_LOCK:
        rows = [_CACHE.get(t) for t in texts]
        for text in texts:
            if text in _CACHE:
                _CACHE.move_to_end(text)
        while len(_CACHE) > _CACHE_LIMIT:
            _CACHE.popitem(last=False)
    if any(r is None for r in rows):  # evicted by another thread meanwhile: embed directly
        return _embed_truncated(texts)
    return np.stack([r for r in rows if r is not None]) if rows else np.zeros((0, 384), np.float32)


def _embed_truncated(texts: Sequence[str]) -> Vectors:
    # Small batches are faster on a CPU: less padding, better cache use. The same truncation on
    # every path, so that a vector does not depend on whether it was evicted meanwhile.
    return embed([" ".join(t.split()[:64]) for t in texts], batch_size=16)


def clear_embedding_cache() -> None:
    """Forget cached sentence vectors (tests use it to check determinism from scratch)."""
    with _CACHE_LOCK:
        _CACHE.clear()


# --- sections → stages -------------------------------------------------------------------------

# The vocabulary is the standard section names of research articles, not any paper's headings:
# * back matter and required statements: Nature/Springer "Data availability", "Code
#   availability", "Author contributions", "Competing interests", "Consortia" (group-authorship
#   lists, as physics collaborations' "author list"); NeurIPS/ICML/ACL "Broader impact",
#   "Limitations", "Ethics statement", "Reproducibility statement"; Elsevier/AEA "Declaration
#   of interests", "Funding"; and "Acknowledg(e)ments", "References", "Nomenclature", "Glossary";
# * the IMRaD skeleton (Introduction, Methods, Results, Discussion) and its common variants in
#   CS ("Related work", "Preliminaries", "Architecture", "Ablations", "Benchmarks"), physics and
#   astronomy ("Formalism", "Derivation", "Observations", "Numerical simulations") and economics
#   ("Institutional background", "Identification strategy", "Empirical strategy",
#   "Calibration", "Estimation", "Robustness", "Equilibrium");
# * software papers (JOSS: "Statement of need", "Installation", "Usage", "Documentation",
#   tutorials and user guides), whose documentation sections are not the method.
# Matching is on whole words anywhere in a heading; tests check that headings of invented papers
# in each field are routed as a reader would expect.
_HEADING_RULES: tuple[tuple[str, Decision], ...] = (
    # Not the paper's science, or a restatement of its results: never used.
    (
        r"acknowledg\w*|author(?:s'?|'s)? contributions?|contributions? of (?:the )?authors|"
        r"competing (?:financial )?interests?|conflicts? of interests?|declarations?|"
        r"(?:data|code|software|materials?)(?: and (?:data|code|software|materials?))? "
        r"availability|funding|financial support|references|bibliography|consorti(?:um|a)|"
        r"author (?:list|information)|contributors|"
        r"ethics(?: statement)?|broader impacts?|impact statement|reproducibility statement|"
        r"supplementa\w+ (?:material|information|figures|tables)|additional (?:figures|tables)|"
        r"conclusions?|concluding remarks|discussions?|summary|outlook|future (?:work|directions|"
        r"research)|limitations?|closing remarks|nomenclature|glossary|extended data|"
        r"list of (?:symbols|abbreviations|notation)|(?:user'?s?|reader'?s?|quick ?start) guides?|"
        r"guides? to|tutorials?|installation|documentation|getting started",
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
        r"our (?:method|approach|model|system)|statistical (?:analys[ie]s|methods?)|study design",
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

    Appendix sections are used only for a stage the main text leaves empty. The research goal
    is read from the abstract (as a pseudo-section) and the introduction, where papers state
    their aims.
    """
    return _assign(paper, cached_vectors)


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
    goal: list[Section] = [Section(heading="Abstract", level=0, text=paper.abstract)]
    goal += [s for s in stages["background"][:1] if heading_stage(s.heading) == "background"]
    return {"research_goal": goal, **stages}


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
                choice = names[int(np.argmax(np.round(scores, SCORE_DIGITS)))]
                decisions.update(dict.fromkeys(members, choice))
    placed: dict[StageName, list[Section]] = {"background": [], "solution": [], "experiment": []}
    for i, section in enumerate(sections):
        decision = decisions[i]
        if decision in ("background", "solution", "experiment") and section.words > 0:
            placed[decision].append(section)
    return placed


# --- the paper's own names ----------------------------------------------------------------------

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


def mentions_term(sentence: str, terms: set[str]) -> bool:
    """Whether ``sentence`` uses one of ``terms`` as a word of its own."""
    return any(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", sentence) for t in terms)
