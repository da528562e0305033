"""The extractive builder: the LLM-free embedded default of the build (SPEC §2, DESIGN.md).

It selects sentences, it does not write them. Sections are routed to stages by heading rules
(then by embedding similarity); each stage keeps the sentences closest to the centroid of its
candidates; the goal is the sentences that state the paper's aim
(:mod:`papergym.recipes.goal`); the question is assembled from goal and background sentences
with a fixed template; the reference answer is the solution/experiment sentences; criteria are the most
central of those sentences turned into "The plan ..." statements. It is deterministic (ties go
to the earlier sentence), offline, and a baseline: every instance says so in its warnings.

Section routing and the paper's own names are in ``papergym.recipes.sections``; criterion writing,
the overlap gate, deduplication and ranking in ``papergym.recipes.criteria``. This module is the
recipe, read top to bottom: ``extract_stages`` (sentences per stage), then ``build_instance``
(question, reference answer, rubric).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from papergym.embed import cosine_matrix
from papergym.recipes.criteria import (
    ANAPHORA,
    DUPLICATE_SIMILARITY,
    REVEAL_SIMILARITY,
    Pick,
    Screen,
    centrality,
    criterion_source,
    rubric_note,
    select_criteria,
)
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.recipes.goal import is_goal_sentence, without_lead
from papergym.recipes.sections import (
    SCORE_DIGITS,
    Vectors,
    assign_sections,
    cached_vectors,
    mentions_term,
    method_terms,
)
from papergym.recipes.specs import RecipeSpec, recipe
from papergym.recipes.text import (
    clean_markers,
    has_numeric_result,
    has_result_claim,
    is_mathy,
    mentions_own_work,
    prose_sentences,
    split_sentences,
    strip_numeric_results,
    talks_about_document,
)
from papergym.records import (
    STAGE_NAMES,
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

BASELINE_WARNING = "extractive baseline: sentences selected, not written"
MIN_CRITERIA = 3
MAX_SENTENCES: dict[StageName, int] = {
    "research_goal": 2,
    "background": 6,
    "solution": 12,
    "experiment": 12,
}
# Candidates embedded per stage; longer stages are pre-ranked lexically (cost is the embedding).
MAX_CANDIDATES = 36

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


@dataclass(frozen=True)
class _Candidate:
    """One sentence that may enter a stage, with where it came from."""

    text: str
    position: int  # order in the paper, for ties and for output order
    source: str  # heading path of its section


def _heading_path(section: Section) -> str:
    return " > ".join((*section.path, section.heading)) or "(untitled)"


def _candidates(
    sections: Sequence[Section], positions: dict[int, int], keep: Callable[[str], bool]
) -> list[_Candidate]:
    seen: set[str] = set()
    found: list[_Candidate] = []
    for section in sections:
        base = positions.get(id(section), 0) * 10_000
        for offset, sentence in enumerate(prose_sentences(section.text)):
            # The rules read the sentence as written ("[ref]" marks figure talk); the stage keeps
            # it without markers, so no "[cite]"/"[ref]" reaches a question, reference or rubric.
            text = clean_markers(sentence) if keep(sentence) else None
            if text and text not in seen:
                seen.add(text)
                found.append(_Candidate(text, base + offset, _heading_path(section)))
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
            text = clean_markers(sentence) if keep(sentence) else None
            if text:
                opening.append(_Candidate(text, base + offset, _heading_path(section)))
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
        scores.append((-round(dot, SCORE_DIGITS), candidate.position, candidate))
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
    scores = centrality(vectors)
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (
            -round(scores[i] + bonus(candidates[i].text), SCORE_DIGITS),
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
        or mentions_term(sentence, terms)
    )


def _answer_bonus(cue: re.Pattern[str] | None) -> Callable[[str], float]:
    """Design wording for the experiments; self-contained sentences (they make criteria)."""

    def bonus(text: str) -> float:
        design = 0.05 if cue is not None and cue.search(text) else 0.0
        return design + (0.05 if criterion_source(text) else 0.0)

    return bonus


def _background_bonus(text: str) -> float:
    """Sentences naming a gap are what the question needs; dangling "This ..." less so."""
    return (0.1 if _GAP_CUES.search(text) else 0.0) - (0.05 if ANAPHORA.match(text) else 0.0)


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


def _opening_context(
    abstract: list[_Candidate], intro: list[_Candidate], fallback: list[_Candidate], table: _Table
) -> list[_Candidate]:
    """One or two opening context sentences: the abstract's, then the introduction's (the goal
    of a paper that states no aim in so many words)."""
    opening = [c for c in abstract if not ANAPHORA.match(c.text)]
    for candidate in intro:
        # the introduction often repeats the abstract's opening in other words
        if (
            len(opening) < 2
            and not ANAPHORA.match(candidate.text)
            and not any(
                float(table.vectors[candidate.text] @ table.vectors[c.text]) > REVEAL_SIMILARITY
                or table.duplicate(candidate, c)
                for c in opening
            )
        ):
            opening.append(candidate)
    # An abstract that opens on "This paper ...": any context sentence of it will do.
    return opening or [c for c in fallback if not ANAPHORA.match(c.text)][:2]


def _goal_candidates(sections: Sequence[Section], terms: set[str]) -> list[_Candidate]:
    """Every goal sentence of the abstract and introduction, in order."""
    found: list[_Candidate] = []
    for index, section in enumerate(sections):
        for offset, sentence in enumerate(prose_sentences(section.text)):
            text = clean_markers(sentence) if is_goal_sentence(sentence, terms) else None
            if text:
                found.append(_Candidate(text, index * 10_000 + offset, section.heading))
    return found


def _goal(
    candidates: list[_Candidate], table: _Table, hidden: list[_Candidate]
) -> list[_Candidate]:
    """Up to two goal sentences, abstract first; none that restates an answer-side sentence or
    repeats one already taken."""
    goal: list[_Candidate] = []
    for candidate in table.hide(candidates, hidden):
        if not any(table.duplicate(candidate, g) for g in goal):
            goal.append(candidate)
    return goal[: MAX_SENTENCES["research_goal"]]


def extract_stages(paper: Paper) -> Stages:
    """The four stages of ``paper`` by sentence selection (``builder="extractive"``)."""
    assigned = assign_sections(paper)
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
    abstract_pool = _opening(assigned["research_goal"][:1], {}, context)[:2]
    intro_pool = _opening(assigned["research_goal"][1:], positions, context)[:4]
    fallback_pool = _candidates(assigned["research_goal"][:1], {}, context)
    goal_pool = _goal_candidates(assigned["research_goal"], terms)
    everything = [
        c.text for pool in (*pools.values(), abstract_pool, intro_pool, fallback_pool) for c in pool
    ] + [c.text for c in goal_pool]
    table = _Table(
        dict(zip(everything, cached_vectors(everything), strict=True)) if everything else {}
    )

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
    chosen["research_goal"] = (
        _goal(goal_pool, table, hidden)
        or _opening_context(
            table.hide(abstract_pool, hidden),
            table.hide(intro_pool, hidden),
            table.hide(fallback_pool, hidden),
            table,
        )[: MAX_SENTENCES["research_goal"]]
    )
    background = [
        c
        for c in table.hide(pools["background"], hidden)
        if not any(table.duplicate(c, g) for g in chosen["research_goal"])
    ]
    picked = _select(
        background, table.stack(background), MAX_SENTENCES["background"], _background_bonus
    )
    chosen["background"] = [background[i] for i in picked]
    return _stages(paper, chosen)


def _stages(paper: Paper, chosen: dict[StageName, list[_Candidate]]) -> Stages:
    """The stages of ``paper``: each one's chosen sentences joined, with where they came from."""
    return Stages(
        paper_id=paper.id,
        builder="extractive",
        research_goal=" ".join(c.text for c in chosen["research_goal"]),
        background=" ".join(c.text for c in chosen["background"]),
        solution=" ".join(c.text for c in chosen["solution"]),
        experiment=" ".join(c.text for c in chosen["experiment"]),
        sources={
            name: tuple(dict.fromkeys(c.source for c in chosen[name])) for name in STAGE_NAMES
        },
        discipline=domain_of(f"{paper.title}. {paper.abstract}"),
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
_GOAL_LEAD = "The research goal, in its authors' words:"


def domain_of(text: str) -> str:
    """The broad discipline a text names (title and abstract), by similarity to fixed labels."""
    if not text.strip():
        return ""
    labels = list(_DOMAINS)
    scores = cached_vectors([_DOMAINS[label] for label in labels]) @ cached_vectors([text])[0]
    return labels[int(np.argmax(np.round(scores, SCORE_DIGITS)))]


_CONNECTIVE = re.compile(
    r"^(?:However|Moreover|Furthermore|In addition|Also|Additionally|Nevertheless|Thus|Hence|"
    r"Therefore|Consequently|Indeed|Likewise|Similarly),\s+(\w)"
)


def _question(spec: RecipeSpec, sentences: dict[StageName, list[str]]) -> str:
    """Goal, then background, then what is given, then the task.

    A goal stated as an aim is quoted as the authors' ("we aim to ..."); a goal that is the
    abstract's opening context (no aim sentence found) reads as context, with no lead.
    """
    goal = [without_lead(s) for s in sentences["research_goal"]]
    stated = bool(goal) and is_goal_sentence(goal[0], set())
    context = [
        s
        for name in spec.question_stages
        if name not in spec.given_stages and name != "research_goal"
        for s in sentences[name]
    ]
    # A question cannot open on "This regime ..." or "However, ..." when the antecedent was not
    # selected: a leading anaphoric sentence goes (if others remain), a connective is dropped.
    while context:
        context[0] = _CONNECTIVE.sub(lambda m: m.group(1).upper(), context[0])
        if len(context) == 1 or not ANAPHORA.match(context[0]):
            break
        context.pop(0)
    parts = [f"{_GOAL_LEAD if stated else ''} {' '.join(goal)}".strip(), " ".join(context)]
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


def _ordinary_words(paper: Paper) -> frozenset[str]:
    """Lower-cased words that are not names, so a sentence-initial one may be lower-cased.

    A word the paper writes in lower case is ordinary; so is a capitalised word the paper never
    capitalises inside a sentence ("Simpler architectures ..."), while "Gaussian" or "Python",
    capitalised mid-sentence, stay names.
    """
    lower: set[str] = set()
    capitalised: set[str] = set()
    initial: set[str] = set()
    for section in paper.sections:
        lower.update(re.findall(r"\b[a-z][a-z-]+\b", section.text))
        capitalised.update(
            w.lower() for w in re.findall(r"(?<=[a-z,;:] )[A-Z][a-z-]+\b", section.text)
        )
        initial.update(
            w.lower() for w in re.findall(r"(?:^|(?<=[.!?] ))([A-Z][a-z-]+)\b", section.text)
        )
    return frozenset(lower | (initial - capitalised))


def build_instance(paper: Paper, stages: Stages, recipe_name: RecipeName | str) -> Instance | Drop:
    """An instance of recipe ``recipe_name`` from ``stages``, or a Drop saying why not."""
    spec = recipe(recipe_name)

    def drop(step: str, reason: str) -> Drop:
        return Drop(source=paper.meta.source_path, step=step, reason=reason, paper_id=paper.id)

    texts: dict[StageName, str] = {
        "research_goal": stages.research_goal,
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
    screen = Screen()
    vocabulary = _ordinary_words(paper)
    picks = select_criteria(
        spec, sentences, question_sentences, screen, method_terms(paper), vocabulary
    )
    if len(picks) < MIN_CRITERIA:
        return drop(
            "rubric",
            f"only {len(picks)} criteria survived: " + rubric_note(len(picks), spec, screen),
        )
    instance_id = Instance.make_id(spec.name, "extractive", paper.id)
    specific = _criteria(instance_id, picks)
    warnings = [BASELINE_WARNING]
    if screen.leaked:
        warnings.append(f"{screen.leaked} candidate criteria dropped as too close to the question")
    return Instance(
        id=instance_id,
        recipe=spec.name,
        builder="extractive",
        paper_id=paper.id,
        title=paper.title,
        domain=stages.discipline or domain_of(f"{paper.title}. {paper.abstract}"),
        subfield=stages.subfield,
        arxiv_id=paper.meta.arxiv_id,
        date=paper.meta.date,
        source_path=paper.meta.source_path,
        licence=paper.meta.licence,
        question=question,
        reference_answer=reference,
        rubric=Rubric(
            specific=specific,
            general=GENERAL_CRITERIA,
            note=rubric_note(len(specific), spec, screen),
        ),
        warnings=tuple(warnings),
    )


def _criteria(instance_id: str, picks: Sequence[Pick]) -> tuple[Criterion, ...]:
    """The picked sentences as ranked criteria, each with the overlap screen's verdict."""
    return tuple(
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
