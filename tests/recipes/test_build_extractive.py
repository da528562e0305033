"""The extractive builder: section routing, stage selection, instances, and the 12 real papers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.recipes.criteria import RUBRIC_SIZE
from papergym.recipes.extractive import (
    BASELINE_WARNING,
    EXPERIMENT_HINTS,
    build_instance,
    extract_stages,
)
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.recipes.sections import (
    assign_sections,
    clear_embedding_cache,
    heading_stage,
    method_terms,
    section_rule,
)
from papergym.recipes.specs import RECIPE_NAMES, recipe
from papergym.recipes.text import (
    clean_markers,
    has_numeric_result,
    numbers_in,
    prose_sentences,
    split_sentences,
)
from papergym.records import STAGE_NAMES, Drop, Instance, Paper, PaperMeta, Section, Stages

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"


def make_paper(
    sections: list[tuple[str, int, tuple[str, ...], str]]
    | list[tuple[str, int, tuple[str, ...], str, bool]],
    abstract: str = "An abstract about nothing in particular.",
    title: str = "A Test Paper",
) -> Paper:
    """A paper from (heading, level, path, text[, appendix]) rows."""
    built = tuple(
        Section(
            heading=row[0],
            level=row[1],
            path=row[2],
            text=row[3],
            appendix=bool(row[4:5] and row[4]),
        )
        for row in sections
    )
    return Paper.create(
        title=title, abstract=abstract, sections=built, meta=PaperMeta(source_path="fixture")
    )


def headings(stage_sections: list[Section]) -> list[str]:
    return [s.heading for s in stage_sections]


TEXT = "Some words for this section that say little. More words follow here."

# --- heading rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Introduction", "background"),
        ("Related Work", "background"),
        ("Background: table lookups", "background"),
        ("Institutional background", "background"),
        ("Method", "solution"),
        ("Our Approach", "solution"),
        ("Model Architecture", "solution"),
        ("Algorithm", "solution"),
        ("Theory", "solution"),
        ("Formalism", "solution"),
        ("Derivations", "solution"),
        ("Empirical strategy", "solution"),
        ("Identification", "solution"),
        ("Baseline Model", "solution"),
        ("Asymptotic results", "solution"),
        ("Data structures", "solution"),
        ("Model Search and Evaluation", "solution"),
        ("Experiments", "experiment"),
        ("Evaluation", "experiment"),
        ("Results", "experiment"),
        ("Ablation study", "experiment"),
        ("Numerical Simulations", "experiment"),
        ("Observations", "experiment"),
        ("Data", "experiment"),
        ("Calibration", "experiment"),
        ("Estimation of the Extended Model", "experiment"),
        ("Robustness checks", "experiment"),
        ("Use cases", "experiment"),
        ("Acknowledgements", "skip"),
        ("Author Contributions Statement", "skip"),
        ("Competing Interests", "skip"),
        ("Data Availability", "skip"),
        ("References", "skip"),
        ("Conclusion", "skip"),
        ("Discussion", "skip"),
        ("Gaussian processes", None),
        ("Training a network to output optimal weights", None),
    ],
)
def test_heading_stage(heading: str, expected: str | None) -> None:
    assert heading_stage(heading) == expected


def test_section_rule_inherits_and_overrides() -> None:
    def rule(heading: str, *path: str) -> str | None:
        return section_rule(Section(heading=heading, level=len(path) + 1, path=path, text=TEXT))

    assert rule("Ghana 1961", "Data") == "experiment"  # inherits
    assert rule("Model-free approaches", "Related Work") == "background"  # parent wins
    assert rule("Algorithms", "Predictive Accuracy") == "experiment"  # parent wins
    assert rule("Cost comparison", "Windowed arithmetic constructions") == "experiment"  # own wins
    assert rule("Source Code", "Acknowledgements") == "skip"
    assert rule("Acknowledgments", "Conclusions and Future Work") == "skip"
    assert rule("Sub-topic", "Unnamed part") is None


def test_assign_sections_cs_paper() -> None:
    paper = make_paper(
        [
            ("Introduction", 1, (), TEXT),
            ("Related Work", 1, (), TEXT),
            ("Model-free approaches", 2, ("Related Work",), TEXT),
            ("Method", 1, (), TEXT),
            ("Architecture", 2, ("Method",), TEXT),
            ("Routing", 2, ("Method",), TEXT),
            ("Experiments", 1, (), TEXT),
            ("Ablation", 2, ("Experiments",), TEXT),
            ("Conclusion", 1, (), TEXT),
            ("Acknowledgements", 1, (), TEXT),
            ("Proofs", 1, (), TEXT, True),
        ]
    )
    stages = assign_sections(paper)
    assert headings(stages["background"]) == [
        "Introduction",
        "Related Work",
        "Model-free approaches",
    ]
    assert headings(stages["solution"]) == ["Method", "Architecture", "Routing"]
    assert headings(stages["experiment"]) == ["Experiments", "Ablation"]
    assert headings(stages["research_goal"]) == ["Abstract", "Introduction"]


def test_assign_sections_physics_paper() -> None:
    paper = make_paper(
        [
            ("Introduction", 1, (), TEXT),
            ("Theory", 1, (), TEXT),
            ("Formalism", 2, ("Theory",), TEXT),
            ("Derivations", 1, (), TEXT),
            ("Circular binaries", 3, ("Derivations", "Orbital evolution"), TEXT),
            ("Numerical Simulations", 1, (), TEXT),
            ("Observations", 1, (), TEXT),
            ("Data", 2, ("Observations",), TEXT),
            ("Summary", 1, (), TEXT),
        ]
    )
    stages = assign_sections(paper)
    assert headings(stages["background"]) == ["Introduction"]
    assert headings(stages["solution"]) == [
        "Theory",
        "Formalism",
        "Derivations",
        "Circular binaries",
    ]
    assert headings(stages["experiment"]) == ["Numerical Simulations", "Observations", "Data"]


def test_assign_sections_economics_paper() -> None:
    paper = make_paper(
        [
            ("Introduction", 1, (), TEXT),
            ("Institutional background", 1, (), TEXT),
            ("Model", 1, (), TEXT),
            ("Equilibrium definition", 2, ("Model",), TEXT),
            ("Empirical strategy", 1, (), TEXT),
            ("Identification", 2, ("Empirical strategy",), TEXT),
            ("Data", 1, (), TEXT),
            ("Estimation sample", 2, ("Data",), TEXT),
            ("Calibration", 1, (), TEXT),
            ("Estimation", 1, (), TEXT),
            ("Results", 1, (), TEXT),
            ("Robustness", 2, ("Results",), TEXT),
            ("Data availability", 1, (), TEXT),
            ("References", 1, (), TEXT),
        ]
    )
    stages = assign_sections(paper)
    assert headings(stages["background"]) == ["Introduction", "Institutional background"]
    assert headings(stages["solution"]) == [
        "Model",
        "Equilibrium definition",
        "Empirical strategy",
        "Identification",
    ]
    assert headings(stages["experiment"]) == [
        "Data",
        "Estimation sample",
        "Calibration",
        "Estimation",
        "Results",
        "Robustness",
    ]


def test_assign_sections_uses_the_appendix_only_as_a_fallback() -> None:
    paper = make_paper(
        [
            ("Introduction", 1, (), TEXT),
            ("Method", 1, (), TEXT),
            ("Method details", 1, (), TEXT, True),
            ("Experiments", 1, (), TEXT, True),
            ("Empty heading", 1, (), ""),
        ]
    )
    stages = assign_sections(paper)
    assert headings(stages["solution"]) == ["Method"]  # the appendix "Method details" is not used
    assert headings(stages["experiment"]) == ["Experiments"]  # nothing else: the appendix fills in


def test_assign_sections_places_undecided_sections_by_similarity() -> None:
    method_text = (
        "The router splits the keys into blocks and scores each block against the query. "
        "Only the best blocks are attended, and the router is trained with a straight-through "
        "estimator."
    )
    paper = make_paper(
        [
            ("Introduction", 1, (), TEXT),
            ("Sparse block routing", 1, (), method_text),  # no rule decides this heading
            (
                "Block summaries",
                2,
                ("Sparse block routing",),
                "Each block is summarised by a mean.",
            ),
            ("Experiments", 1, (), TEXT),
        ]
    )
    stages = assign_sections(paper)
    assert headings(stages["solution"]) == ["Sparse block routing", "Block summaries"]
    assert headings(stages["experiment"]) == ["Experiments"]


# --- a fixture paper with real sentences -------------------------------------------------------

ABSTRACT = (
    "Long documents are expensive for attention models because attention compares every pair of "
    "tokens. We propose BlockRoute, a sparse router that sends each query to a few key blocks. "
    "BlockRoute is 3.1x faster than dense attention at equal perplexity."
)
INTRO = (
    "Language models read ever longer documents, from books to code repositories. "
    "Dense attention compares every query with every key, so its cost grows quadratically with "
    "the length of the input. "
    "Sparse attention patterns such as sliding windows reduce this cost but fix in advance which "
    "tokens may interact [cite]. "
    "Learned routing methods cluster tokens, yet their clustering step is itself expensive and "
    "unstable during training [cite]. "
    "However, it remains unclear how to choose the interacting tokens cheaply and adaptively "
    "without losing long-range information. "
    "Retrieval-augmented models fetch passages from an external index, which helps factual recall "
    "but not reasoning within the document [cite]. "
    "We propose BlockRoute, which routes each query to a handful of key blocks."
)
METHOD = (
    "BlockRoute splits the key sequence into contiguous blocks and summarises each block by the "
    "mean of its keys. "
    "A lightweight scorer compares each query with every block summary and keeps the best "
    "scoring blocks. "
    "Attention is then computed exactly, but only between the query and the keys of the selected "
    "blocks. "
    "The router is trained jointly with the language model through a straight-through estimator "
    "of the top-k selection. "
    "A load-balancing penalty discourages the router from sending all queries to the same "
    "popular blocks. "
    "Causal masking is applied at the block level so that no query can select a block from the "
    "future. "
    "Our kernel fuses block selection and attention into one pass over memory, avoiding the "
    "materialisation of the score matrix. "
    "Each attention head learns its own router, so different heads can specialise in local or "
    "distant context. "
    "The first block of every sequence is always kept, because early tokens act as an attention "
    "sink. "
    "Block summaries are recomputed only when the cache grows, which keeps incremental decoding "
    "cheap."
)
EXPERIMENTS = (
    "We pretrain models on a corpus of books and source code with identical data order for every "
    "method. "
    "Baselines are dense attention, sliding-window attention and a clustering-based router, all "
    "tuned with the same budget. "
    "We measure perplexity on held-out books and accuracy on a long-range retrieval benchmark. "
    "Wall-clock throughput is measured on the same accelerator with the same batch composition. "
    "An ablation removes the load-balancing penalty to test whether router collapse occurs. "
    "A second ablation replaces learned block scores with random block choices. "
    "BlockRoute reaches a perplexity of 12.4 versus 12.6 for dense attention. "
    "Throughput improves by 3.1x at a sequence length of 65536 tokens. "
    "All runs use three random seeds, and we report the spread across seeds. "
    "We release the training scripts and the evaluation harness."
)


def fixture_paper() -> Paper:
    return make_paper(
        [
            ("Introduction", 1, (), INTRO),
            ("Method", 1, (), METHOD),
            ("Experiments", 1, (), EXPERIMENTS),
            ("Conclusion", 1, (), "BlockRoute is fast and accurate. We hope it helps."),
        ],
        abstract=ABSTRACT,
        title="BlockRoute: Sparse Block Routing for Long-Context Attention",
    )


@pytest.fixture(scope="module")
def fixture_build() -> tuple[Paper, Stages, dict[str, Instance | Drop]]:
    paper = fixture_paper()
    stages = extract_stages(paper)
    return paper, stages, {name: build_instance(paper, stages, name) for name in RECIPE_NAMES}


def test_method_terms_find_the_papers_own_name() -> None:
    assert "BlockRoute" in method_terms(fixture_paper())


def test_extract_stages_selects_sentences_by_stage(
    fixture_build: tuple[Paper, Stages, dict[str, Instance | Drop]],
) -> None:
    _, stages, _ = fixture_build
    assert stages.builder == "extractive"
    assert stages.sources["solution"] == ("Method",)
    assert stages.sources["experiment"] == ("Experiments",)
    assert "quadratically" in stages.background or "remains unclear" in stages.background
    assert "BlockRoute" not in stages.research_goal + stages.background  # the name stays out
    assert "We propose" not in stages.background
    for name in STAGE_NAMES:
        text = getattr(stages, name)
        assert text, name
        assert not any(has_numeric_result(s) for s in split_sentences(text)), name
    assert "12.4" not in stages.experiment and "3.1x" not in stages.experiment
    assert 1 <= len(split_sentences(stages.research_goal)) <= 2


def test_build_instance_papergym(
    fixture_build: tuple[Paper, Stages, dict[str, Instance | Drop]],
) -> None:
    paper, stages, built = fixture_build
    instance = built["papergym"]
    assert isinstance(instance, Instance), instance
    assert instance.id == Instance.make_id("papergym", "extractive", paper.id)
    assert instance.builder == "extractive" and instance.recipe == "papergym"
    assert instance.question.endswith("whether the method succeeds.")
    for sentence in split_sentences(stages.solution) + split_sentences(stages.experiment):
        assert sentence not in instance.question
    assert numbers_in(instance.reference_answer) == set()
    assert not any(has_numeric_result(s) for s in split_sentences(instance.reference_answer))
    specific = instance.rubric.specific
    assert len(specific) == RUBRIC_SIZE and instance.rubric.note == ""
    assert [c.rank for c in specific] == list(range(1, RUBRIC_SIZE + 1))
    assert {c.dimension for c in specific} == {"method", "experiment"}
    assert all(c.origin == "extractive" and c.text.startswith("The plan") for c in specific)
    assert len({c.id for c in specific}) == RUBRIC_SIZE
    assert all(c.leakage and c.leakage[0].method == "overlap" for c in specific)
    assert not any("BlockRoute" in c.text for c in specific)
    assert instance.rubric.general == GENERAL_CRITERIA
    assert BASELINE_WARNING in instance.warnings


def test_build_instance_innov_and_design(
    fixture_build: tuple[Paper, Stages, dict[str, Instance | Drop]],
) -> None:
    _, stages, built = fixture_build
    innov, design = built["innov"], built["design"]
    assert isinstance(innov, Instance) and isinstance(design, Instance)
    assert {c.dimension for c in innov.rubric.specific} == {"method"}
    assert {c.dimension for c in design.rubric.specific} == {"experiment"}
    assert "Take the following approach as given" in design.question
    for sentence in split_sentences(stages.experiment):
        assert sentence not in design.question
    request = split_sentences(design.question)[-1]  # our template: no hint at the answer
    assert request.startswith("Design the experiments")
    for word in ("baseline", "dataset", "data set", "metric", "ablation", "outcome"):
        assert word not in request.lower()


def test_build_instance_drops_with_a_reason(
    fixture_build: tuple[Paper, Stages, dict[str, Instance | Drop]],
) -> None:
    paper, stages, _ = fixture_build
    empty = build_instance(paper, stages.model_copy(update={"experiment": ""}), "papergym")
    assert isinstance(empty, Drop) and empty.step == "stages" and "experiment" in empty.reason
    assert isinstance(
        build_instance(paper, stages.model_copy(update={"experiment": ""}), "innov"), Instance
    )
    few = stages.model_copy(update={"solution": "It works.", "experiment": "It is good."})
    dropped = build_instance(paper, few, "papergym")
    assert isinstance(dropped, Drop) and dropped.step == "rubric" and dropped.paper_id == paper.id


def test_build_is_deterministic(
    fixture_build: tuple[Paper, Stages, dict[str, Instance | Drop]],
) -> None:
    paper, stages, built = fixture_build
    clear_embedding_cache()  # recompute every vector from scratch
    again = extract_stages(paper)
    assert again == stages
    assert build_instance(paper, again, "papergym") == built["papergym"]


def test_recipes_route_stages() -> None:
    assert recipe("papergym").answer_stages == ("solution", "experiment")
    assert recipe("innov").dimensions == ("method",)
    assert recipe("design").given_stages == ("solution",)
    assert recipe("design").required_stages == STAGE_NAMES
    with pytest.raises(BadInputError, match="unknown recipe"):
        recipe("ares")


# --- the real papers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_builds() -> list[tuple[Paper, Stages, dict[str, Instance | Drop]]]:
    if not SHARED_PAPERS.is_dir():
        pytest.skip("../shared/papers is not available")
    import papergym

    builds = []
    for paper in papergym.ingest(SHARED_PAPERS):
        stages = extract_stages(paper)
        builds.append((paper, stages, {r: build_instance(paper, stages, r) for r in RECIPE_NAMES}))
    return builds


def _result_numbers(paper: Paper) -> set[str]:
    """Numbers of the result-reporting sentences of the paper's experiment sections."""
    numbers: set[str] = set()
    for section in assign_sections(paper)["experiment"]:
        for sentence in split_sentences(section.text):
            if has_numeric_result(sentence):
                numbers |= numbers_in(sentence)
    return numbers


def _check_instance(instance: Instance, paper: Paper, stages: Stages) -> None:
    spec = recipe(instance.recipe)
    hidden = [s for name in spec.answer_stages for s in split_sentences(getattr(stages, name))]
    assert not [s for s in hidden if s in instance.question], instance.title
    assert not numbers_in(instance.reference_answer) & _result_numbers(paper), instance.title
    assert numbers_in(instance.reference_answer) == set()
    specific = instance.rubric.specific
    assert 3 <= len(specific) <= RUBRIC_SIZE
    assert len(specific) == RUBRIC_SIZE or instance.rubric.note
    assert [c.rank for c in specific] == list(range(1, len(specific) + 1))
    assert all(c.dimension in spec.dimensions and c.origin == "extractive" for c in specific)
    assert instance.rubric.general == GENERAL_CRITERIA
    assert BASELINE_WARNING in instance.warnings
    assert instance.domain


def test_real_papers_papergym_recipe(
    real_builds: list[tuple[Paper, Stages, dict[str, Instance | Drop]]],
) -> None:
    assert len(real_builds) == 12
    for paper, stages, built in real_builds:
        instance = built["papergym"]
        assert isinstance(instance, Instance), (paper.title, instance)
        _check_instance(instance, paper, stages)
        assert len(instance.rubric.specific) == RUBRIC_SIZE, paper.title
        for sentence in prose_sentences(paper.abstract):
            if "we propose" in sentence.lower() or "we present" in sentence.lower():
                assert sentence not in instance.question


def test_real_papers_innov_and_design_recipes(
    real_builds: list[tuple[Paper, Stages, dict[str, Instance | Drop]]],
) -> None:
    for name in ("innov", "design"):
        built = [(paper, stages, b[name]) for paper, stages, b in real_builds]
        instances = [(p, s, i) for p, s, i in built if isinstance(i, Instance)]
        assert len(instances) >= 10, [(p.title, i) for p, _, i in built if isinstance(i, Drop)]
        for paper, stages, instance in instances:
            _check_instance(instance, paper, stages)
            if name == "design":
                given = instance.question.split("authors' words:")[1].rsplit("Design the", 1)[0]
                assert not EXPERIMENT_HINTS.search(given), (paper.title, given)


def test_real_papers_stage_text_round_trips(
    real_builds: list[tuple[Paper, Stages, dict[str, Instance | Drop]]],
) -> None:
    """Stage text is joined sentences; splitting it again must give the same sentences back."""
    for paper, stages, _ in real_builds:
        # stages keep sentences without their [cite]/[ref] markers (build.text.clean_markers)
        raw = set(prose_sentences(paper.abstract))
        for section in paper.sections:
            raw.update(prose_sentences(section.text))
        cleaned = {c for c in map(clean_markers, raw) if c}
        # a tidied sentence may end a footnote's bracket differently and split in two
        known = raw | cleaned | {part for c in cleaned for part in split_sentences(c)}
        for name in STAGE_NAMES:
            assert set(split_sentences(getattr(stages, name))) <= known, (paper.title, name)


def test_requirement_form_names_rare_terms_not_the_sentence() -> None:
    from collections import Counter

    from papergym.recipes.criteria import requirement_form
    from papergym.reward.offline import criterion_core, key_words

    sentence = "We parallelize linear recurrences over the sequence length with a parallel scan."
    frequency = Counter({"parallel": 3, "scan": 2, "linear": 2, "recurrences": 2, "sequence": 9})
    written = requirement_form(sentence, frequency, {"GILR"})
    assert written is not None and written.startswith("The plan covers: ")
    named = key_words(criterion_core(written))
    assert 2 <= len(named) <= -(-len(key_words(sentence)) // 2)  # half, rounded up
    assert requirement_form("We do GILR.", frequency, {"GILR"}) is None
