"""``papergym build --mix``: its errors, the seeded selection of fetched paper folders, and a
mixed build's card and instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.recipes.mix import select_mix, source_disciplines
from papergym.recipes.reading import SourceReader
from papergym.records import Instance
from recipes.synthetic_papers import ECONOMICS, EPIDEMIOLOGY, MATERIALS

runner = CliRunner()
CATEGORIES = {"cs": ["cs.LG", "stat.ML"], "ph": ["astro-ph.GA"], "ec": ["econ.EM"]}
TEXTS = {"cs": EPIDEMIOLOGY, "ph": MATERIALS, "ec": ECONOMICS}


def fetched_papers(root: Path, counts: dict[str, int], *, categorised: bool = True) -> Path:
    """Paper folders as ``papergym fetch`` leaves them: main.tex and metadata.json (each
    paper's abstract varied so that no two have the same content)."""
    for kind, count in counts.items():
        for i in range(count):
            folder = root / f"{kind}{i}"
            folder.mkdir(parents=True)
            text = TEXTS[kind].replace(r"\end{abstract}", f"Variant {i}.\n\\end{{abstract}}")
            (folder / "main.tex").write_text(text, encoding="utf-8")
            if categorised:
                meta = {
                    "id": f"2401.{i:05d}",
                    "categories": CATEGORIES[kind],
                    "primary_category": CATEGORIES[kind][0],
                    "license": "cc-by",
                }
                (folder / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--mix", "cs=0.5,physics=0.4", "--target", "2"], "sum to 0.9"),
        (["--mix", "cs=0.5,chem=0.5", "--target", "2"], "unknown discipline 'chem' (known: cs,"),
        (["--mix", "cs=1.2", "--target", "2"], "must be in (0, 1]"),
        (["--mix", "cs=1"], "needs build.target"),
        (["--target", "3"], "give --mix too"),
    ],
)
def test_a_bad_mix_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    papers = fetched_papers(tmp_path / "papers", {"cs": 1})
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", str(papers), "-o", str(out), *flags])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not out.exists()


def test_the_same_seed_selects_the_same_fetched_papers(tmp_path: Path) -> None:
    papers = fetched_papers(tmp_path / "papers", {"cs": 4, "ph": 4, "ec": 2})
    reader = SourceReader.discover([papers], tmp_path / "out")
    disciplines = source_disciplines(reader.sources)
    assert disciplines["cs0"] == "computer science" and disciplines["ec1"] == "economics"
    mix = {"cs": 0.5, "physics": 0.25, "econ": 0.25}
    first = select_mix(disciplines, mix, 4, seed=7)
    again = select_mix(source_disciplines(reader.sources), mix, 4, seed=7)
    assert first.selected == again.selected and len(first.selected) == 4
    assert sum(s.startswith("cs") for s in first.selected) == 2
    seeds = {select_mix(disciplines, mix, 4, seed=s).selected for s in range(6)}
    assert len(seeds) > 1  # the seed does choose


def test_papers_without_categories_take_the_guess_else_unknown(tmp_path: Path) -> None:
    papers = fetched_papers(tmp_path / "papers", {"ph": 1, "ec": 1}, categorised=False)
    reader = SourceReader.discover([papers], tmp_path / "out")
    assert set(source_disciplines(reader.sources).values()) == {"unknown"}
    guessed = source_disciplines(reader.sources, guess=lambda s: s.path.name[:2])
    assert guessed == {"ph0": "ph", "ec0": "ec"}


@pytest.mark.slow
def test_a_mixed_build_reports_target_and_achieved_and_refuses_another_mix(
    tmp_path: Path,
) -> None:
    papers = fetched_papers(tmp_path / "papers", {"cs": 3, "ph": 1})
    out = tmp_path / "out"
    args = ["build", str(papers), "-o", str(out), "--builder", "extractive"]
    mix = ["--mix", "cs=0.5,physics=0.5", "--target", "4", "--seed", "2"]
    result = runner.invoke(app, [*args, *mix, "--json"])
    assert result.exit_code == 0, result.output
    assert "physics has 1 paper(s), fewer than the 2" in " ".join(result.output.split())
    instances = read_jsonl(out / "instances.jsonl", Instance)
    domains = sorted(i.domain for i in instances)
    assert domains == ["computer science", "computer science", "physics"]
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    rows = {row["discipline"]: row for row in card["mix"]["achieved"]}
    assert (rows["physics"]["target_papers"], rows["physics"]["selected_papers"]) == (2, 1)
    assert rows["cs"]["instances"] == 2 and rows["cs"]["target_share"] == 0.5
    assert "## Discipline mix" in (out / "card.md").read_text(encoding="utf-8")
    again = runner.invoke(app, [*args, *mix[:-1], "3"])
    assert again.exit_code == 2 and "selection" in again.output


def test_a_mix_of_which_no_paper_is_found_is_one_line_exit_2(tmp_path: Path) -> None:
    papers = fetched_papers(tmp_path / "papers", {"cs": 2})
    out = tmp_path / "out"
    flags = ["--mix", "math=0.5,bio=0.5", "--target", "2"]
    result = runner.invoke(app, ["build", str(papers), "-o", str(out), *flags])
    assert result.exit_code == 2
    assert "no paper of the mix's disciplines (found: computer science)" in result.output
    assert not out.exists()


@pytest.mark.slow
def test_a_mixed_build_on_the_datatrove_engine_is_the_local_one(tmp_path: Path) -> None:
    """The tasks are handed the mix's selection: the same papers built, the same instances,
    nothing outside the selection read into papers/."""
    pytest.importorskip("datatrove")
    papers = fetched_papers(tmp_path / "papers", {"cs": 4, "ph": 2, "ec": 2})
    mix = ["--mix", "cs=0.5,physics=0.25,econ=0.25", "--target", "4", "--seed", "3"]
    engine = ["build.engine=datatrove", "build.tasks=3", "build.workers=2"]
    built = {}
    for name, extra in (("local", []), ("engine", engine)):
        out = tmp_path / name
        args = ["build", str(papers), "-o", str(out), "--builder", "extractive", *mix, *extra]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        built[name] = read_jsonl(out / "instances.jsonl", Instance)
        assert len(list((out / "papers").iterdir())) == 4  # the selection, no other paper
    assert built["engine"] == built["local"]
    assert sorted(i.domain for i in built["local"]).count("computer science") == 2
