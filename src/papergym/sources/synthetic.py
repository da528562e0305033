"""Synthetic LaTeX papers for scale tests and benchmarks (fixtures, not data).

:func:`write_corpus` writes ``count`` paper folders, each drawn from word and phrase banks with
a generator seeded by the paper's own seed, so papers differ from one another and the same seed
always gives the same bytes. A paper has what arXiv sources carry and the build must cope with:
a title and abstract, 5–8 sections with subsections (some in separate files pulled in by
``\\input``), inline and displayed equations, ``\\cite`` commands with a ``.bib``, figures that
name images not shipped, and comments. Method and experiment sections use the vocabulary the
extractive builder looks for, so the offline build makes instances from them. Every fifth paper
sits in a folder named like an arXiv e-print with a ``metadata.json`` as ``papergym fetch`` writes it (id, submission date, categories).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

METADATA_EVERY = 5
"""Every how many papers one carries an arXiv-like id and ``metadata.json``."""

_DOMAINS: dict[str, tuple[str, ...]] = {
    "cs.LG": ("graph", "sequence", "token", "policy", "image", "embedding", "gradient"),
    "physics.comp-ph": ("lattice", "particle", "field", "spin", "plasma", "crystal", "wave"),
    "econ.EM": ("household", "market", "price", "wage", "firm", "auction", "consumer"),
}
_ADJECTIVES = (
    "adaptive", "sparse", "robust", "hierarchical", "stochastic", "local", "incremental",
    "contrastive", "variational", "low-rank", "asynchronous", "calibrated", "modular", "coupled",
)  # fmt: skip
_OBJECTS = (
    "estimator", "solver", "encoder", "sampler", "scheduler", "regulariser", "decomposition",
    "operator", "filter", "predictor", "relaxation", "allocation rule", "kernel", "router",
)  # fmt: skip
_VERBS = (
    "reduces", "bounds", "stabilises", "approximates", "reweights", "partitions", "smooths",
    "aggregates", "prunes", "projects", "refines", "propagates", "corrects", "normalises",
)  # fmt: skip
_QUANTITIES = (
    "variance", "error", "cost", "bias", "latency", "memory", "drift", "noise", "imbalance",
    "residual", "curvature", "overlap", "delay", "dispersion",
)  # fmt: skip
_DATASETS = (
    "a held-out benchmark", "three public corpora", "a synthetic suite", "administrative records",
    "a simulated ensemble", "a panel of survey waves", "two laboratory datasets",
)  # fmt: skip
_METRICS = ("accuracy", "mean squared error", "wall-clock time", "coverage", "log-likelihood")
_BASELINES = ("a dense baseline", "the standard estimator", "a tuned heuristic", "prior solvers")
_LEADS = ("Moreover, ", "In addition, ", "Concretely, ", "", "", "", "Finally, ", "In practice, ")

_BACKGROUND = (
    "Existing {adj} methods for {noun} problems assume that the {qty} is known in advance.",
    "Prior work on {noun} {obj}s often ignores the {qty} that accumulates over long horizons \\cite{{{cite}}}.",
    "The {qty} of current {noun} models limits their use at scale \\cite{{{cite}}}.",
    "A common remedy is a {adj2} {obj}, but it trades {qty} for {qty2}.",
    "Little is known about how the {qty} of a {noun} {obj} behaves when the data shift.",
    "Recent studies report that {adj} {noun} {obj}s fail when the {qty2} grows \\cite{{{cite}}}.",
)  # fmt: skip
_METHOD = (
    "We propose a {adj} {obj} that {verb} the {qty} of each {noun} block before the update.",
    "Our {obj} {verb} the {noun} representation with a {adj2} correction term $c_{{{i}}} = \\lambda_{{{i}}} x_{{{i}}}$.",
    "The {obj} keeps a running estimate of the {qty} and {verb} it once per {noun} batch.",
    "We train the {adj} {obj} jointly with the {noun} model using a {adj2} objective.",
    "Each {noun} unit is assigned to a partition whose {qty} the {obj} {verb} independently.",
    "The {adj2} variant {verb} the {qty2} by sharing one {obj} across all {noun} layers.",
    "A warm-up schedule lets the {obj} start {adj} and become {adj2} as training proceeds.",
    "We derive the update of the {obj} from a {adj} bound on the {noun} {qty}.",
)  # fmt: skip
_EXPERIMENT = (
    "We evaluate the {obj} on {data} and report {metric} against {base}.",
    "We compare the {adj} {obj} with {base} on {data}, measuring {metric} over five seeds.",
    "An ablation removes the {adj2} term of the {obj} and measures the change in {metric}.",
    "We vary the {noun} size from small to large and record the {qty} of each method on {data}.",
    "Hyperparameters of the {obj} are tuned on a validation split of {data}.",
    "We test whether the {obj} still {verb} the {qty} when the {noun} distribution shifts.",
)  # fmt: skip
_RESULT = (
    "The {adj} {obj} lowers the {qty} by {pct}\\% relative to {base}.",
    "On {data} the {obj} improves {metric} in every setting we tried.",
    "The gain of the {obj} grows with the {noun} size, as the analysis predicts.",
)  # fmt: skip
_SECTION_PLANS = (
    ("Introduction", "Related Work", "Method", "Experiments", "Results", "Conclusion"),
    (
        "Introduction",
        "Background",
        "Proposed Approach",
        "Experimental Setup",
        "Results",
        "Discussion",
        "Conclusion",
    ),
    (
        "Introduction",
        "Related Work",
        "Preliminaries",
        "Method",
        "Theoretical Analysis",
        "Experiments",
        "Limitations",
        "Conclusion",
    ),
    ("Introduction", "Model", "Estimation", "Data", "Conclusion"),
)
_ARTICLE = re.compile(r"\b([Aa]) ([aeiou])")  # "a adaptive" → "an adaptive"
_INPUT_SECTIONS = frozenset({"Method", "Proposed Approach", "Experiments", "Model", "Data"})


@dataclass(frozen=True)
class _Paper:
    """One paper's draws, shared by the functions writing its parts."""

    rng: random.Random
    category: str
    nouns: tuple[str, ...]
    name: str
    cites: tuple[str, ...]


def _fill(paper: _Paper, template: str) -> str:
    rng = paper.rng
    adj, adj2 = rng.sample(_ADJECTIVES, 2)
    qty, qty2 = rng.sample(_QUANTITIES, 2)
    return template.format(
        adj=adj,
        adj2=adj2,
        qty=qty,
        qty2=qty2,
        noun=rng.choice(paper.nouns),
        obj=rng.choice(_OBJECTS),
        verb=rng.choice(_VERBS),
        data=rng.choice(_DATASETS),
        metric=rng.choice(_METRICS),
        base=rng.choice(_BASELINES),
        cite=rng.choice(paper.cites),
        pct=rng.randint(3, 40),
        i=rng.choice("ijkt"),
    )


def _sentence(paper: _Paper, template: str) -> str:
    text = _fill(paper, template)
    lead = paper.rng.choice(_LEADS)
    if lead:
        text = lead + text[0].lower() + text[1:]
    return _ARTICLE.sub(r"\1n \2", text)


def _paragraph(paper: _Paper, bank: tuple[str, ...], sentences: int) -> str:
    return "\n".join(_sentence(paper, paper.rng.choice(bank)) for _ in range(sentences))


def _bank_for(heading: str) -> tuple[str, ...]:
    if heading in {"Method", "Proposed Approach", "Model", "Estimation", "Theoretical Analysis"}:
        return _METHOD
    if heading in {"Experiments", "Experimental Setup", "Data"}:
        return _EXPERIMENT
    if heading in {"Results", "Discussion", "Conclusion", "Limitations"}:
        return _RESULT + _BACKGROUND[:2]
    return _BACKGROUND


def _equation(paper: _Paper, label: str) -> str:
    sym = paper.rng.choice(("\\theta", "w", "\\beta", "u"))
    return (
        f"\\begin{{equation}}\\label{{eq:{label}}}\n"
        f"  {sym}_{{t+1}} = {sym}_t - \\eta \\nabla \\mathcal{{L}}({sym}_t)"
        f" + \\gamma \\sum_{{k=1}}^{{K}} r_k\n\\end{{equation}}\n"
        f"where ${sym}_t$ is the estimate at step $t$, $\\eta$ the step size and $\\gamma$ the "
        "weight of the correction terms $r_k$.\n"
    )


def _figure(paper: _Paper, label: str) -> str:
    caption = _fill(paper, "The {qty} of the {adj} {obj} as the {noun} size grows.")
    return (
        "\\begin{figure}[t]\n  \\centering\n"
        f"  \\includegraphics[width=0.8\\linewidth]{{figures/{label}.pdf}}\n"
        f"  \\caption{{{caption}}}\n  \\label{{fig:{label}}}\n\\end{{figure}}\n"
    )


def _section(paper: _Paper, heading: str, index: int) -> str:
    rng = paper.rng
    bank = _bank_for(heading)
    label = f"s{index}"
    parts = [f"\\section{{{heading}}}\n\\label{{sec:{label}}}\n"]
    parts.append(_paragraph(paper, bank, rng.randint(3, 6)) + "\n")
    for sub in range(rng.randint(1, 3)):
        title = _fill(paper, "{adj} {noun} {obj}").title()
        parts.append(f"\\subsection{{{title}}}\n")
        if rng.random() < 0.3:
            parts.append(f"% TODO: {_fill(paper, 'check the {qty} claim')} before submission\n")
        parts.append(_paragraph(paper, bank, rng.randint(3, 7)) + "\n")
        if bank is _METHOD and sub == 0:
            parts.append(_equation(paper, f"{label}-{sub}"))
            parts.append(_paragraph(paper, bank, 2) + "\n")
    if bank is _EXPERIMENT:
        parts.append(_figure(paper, f"{label}-plot"))
    return "\n".join(parts)


def _bib(paper: _Paper) -> str:
    entries = []
    for key in paper.cites:
        title = _fill(paper, "On {adj} {noun} {obj}s").capitalize()
        year = paper.rng.randint(1998, 2024)
        entries.append(
            f"@article{{{key},\n  title = {{{title}}},\n  author = {{Author, A. and Other, B.}},"
            f"\n  journal = {{Journal of {paper.nouns[0].title()} Studies}},\n  year = {{{year}}}\n}}\n"
        )
    return "\n".join(entries)


def _main_tex(paper: _Paper, headings: tuple[str, ...], inputs: dict[str, str]) -> str:
    title = _ARTICLE.sub(
        r"\1n \2", _fill(paper, f"{paper.name}: A {{adj}} {{obj}} for {{noun}} {{qty}}")
    )
    abstract = _paragraph(paper, _BACKGROUND, 2) + "\n" + _paragraph(paper, _METHOD[:1], 1)
    body = []
    for index, heading in enumerate(headings):
        name = inputs.get(heading)
        body.append(f"\\input{{sections/{name}}}" if name else _section(paper, heading, index))
    return (
        "\\documentclass[11pt]{article}\n\\usepackage{amsmath,graphicx}\n"
        f"% Synthetic paper generated by papergym.sources.synthetic ({paper.category}).\n"
        f"\\title{{{title}}}\n\\author{{A. Synthetic \\and B. Generated}}\n"
        "\\begin{document}\n\\maketitle\n"
        f"\\begin{{abstract}}\n{abstract}\n\\end{{abstract}}\n\n"
        + "\n\n".join(body)
        + "\n\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
    )


def write_paper(folder: Path, seed: int) -> Path:
    """Write one synthetic paper (main.tex, sections/, refs.bib) into ``folder``; returns it."""
    rng = random.Random(seed)
    category = rng.choice(sorted(_DOMAINS))
    nouns = tuple(rng.sample(_DOMAINS[category], 4))
    name = "".join(rng.choice("BCDFGKLMPRSTVZ") + rng.choice("aeiou") for _ in range(3))
    cites = tuple(f"ref{seed}x{k}" for k in range(rng.randint(4, 9)))
    paper = _Paper(rng, category, nouns, name.capitalize(), cites)
    headings = rng.choice(_SECTION_PLANS)
    inputs = {h: h.lower().replace(" ", "_") for h in headings if h in _INPUT_SECTIONS}
    (folder / "sections").mkdir(parents=True, exist_ok=True)
    for index, heading in enumerate(headings):
        if heading in inputs:
            text = _section(paper, heading, index)
            (folder / "sections" / f"{inputs[heading]}.tex").write_text(text, encoding="utf-8")
    (folder / "main.tex").write_text(_main_tex(paper, headings, inputs), encoding="utf-8")
    (folder / "refs.bib").write_text(_bib(paper), encoding="utf-8")
    return folder


def paper_folder_name(index: int, seed: int) -> str:
    """The folder name of paper ``index``: an arXiv-like id for every
    :data:`METADATA_EVERY`-th paper, else ``synth-NNNNN``."""
    if index % METADATA_EVERY == 0:
        month = 1 + (seed + index) % 12
        return f"24{month:02d}.{10000 + index:05d}"
    return f"synth-{index:05d}"


def write_corpus(out: Path, count: int, seed: int = 0) -> list[Path]:
    """Write ``count`` synthetic papers under ``out`` (one folder each); their folders in order.

    Paper ``i`` is drawn from seed ``seed * 1_000_003 + i``: the same arguments give the same
    files, and a larger ``count`` extends a smaller one's corpus without changing it.
    """
    folders = []
    for index in range(count):
        paper_seed = seed * 1_000_003 + index
        folder = write_paper(out / paper_folder_name(index, seed), paper_seed)
        if index % METADATA_EVERY == 0:
            category = random.Random(paper_seed).choice(sorted(_DOMAINS))
            metadata = {  # the record `papergym fetch` writes (sources/fetched.py)
                "id": folder.name,
                "submitted": f"20{folder.name[:2]}-{folder.name[2:4]}-15",
                "categories": [category],
                "primary_category": category,
            }
            (folder / "metadata.json").write_text(json.dumps(metadata, indent=2), encoding="utf-8")
        folders.append(folder)
    return folders
