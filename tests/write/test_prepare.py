"""``papergym write prepare``: a paper's own bibliography as the input, its outline and sections
as the target, the leakage rule, the DATA layout and :func:`load_write_data`."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.sources.discover import discover
from papergym.write.data import chat, load_write_data
from papergym.write.paper_text import parse_paper
from papergym.write.prepare import prepare_papers
from papergym.write.settings import WriteSection
from support.papers import SHARED_PAPERS, write_paper

runner = CliRunner()

COPIED = "we route every query to a small number of key blocks chosen by a learned scorer"
MAIN = rf"""\documentclass{{article}}
\title{{Routing Attention to Key Blocks}}
\begin{{document}}
\begin{{abstract}}
Attention is expensive on long documents; {COPIED}, and we measure the cost.
\end{{abstract}}
\section{{Introduction}}
Long documents make attention costly \cite{{vaswani2017}}. Earlier work pruned heads
\cite{{prune2019, sparse2019}} or used residual stacks \citep{{he2016}}. Our own earlier
version \cite{{self2021}} is extended here.
\subsection{{Contributions}}
We propose block routing and study it with optimisers \cite{{adam2014}}.
\section{{Experiments}}
On two benchmarks routing keeps 97.1 percent of the accuracy \cite{{sparse2019}}.
\section{{Conclusion}}
Routing is cheap and accurate.
\appendix
\section{{Proofs}}
An appendix the target leaves out.
\bibliography{{refs}}
\end{{document}}
"""
REFS = rf"""
@article{{vaswani2017, title={{Attention Is All You Need}}, author={{Vaswani, A.}}, year={{2017}},
  abstract={{Sequence transduction models based on attention alone.}}}}
@article{{prune2019, title={{Are Sixteen Heads Really Better than One?}}, author={{Michel, P.}},
  year={{2019}}}}
@article{{sparse2019, title={{Generating Long Sequences with Sparse Transformers}}, year={{2019}},
  abstract={{In this paper {COPIED} which is what we copied.}}}}
@article{{he2016, title={{Deep Residual Learning}}, author={{He, K.}}, year={{2016}}}}
@article{{adam2014, title={{Adam: A Method for Stochastic Optimization}}, year={{2014}}}}
@article{{self2021, title={{Routing Attention to Key Blocks}}, author={{Us, We}}, year={{2021}}}}
@article{{uncited, title={{Never Cited Here}}, year={{2000}}}}
"""


def own_ngrams(text: str, n: int = 8) -> set[str]:
    """An independent n-gram reading for the check: lower-cased words, joined by spaces."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def paper(tmp_path: Path, name: str = "routing", refs: str = REFS) -> Path:
    return write_paper(tmp_path / "papers" / name, {"main.tex": MAIN, "refs.bib": refs})


def prepare(*args: str) -> object:
    return runner.invoke(app, ["write", "prepare", *args])


def test_prepare_writes_rows_that_hold_nothing_of_the_paper(tmp_path: Path) -> None:
    source = paper(tmp_path)
    data = tmp_path / "data"
    result = prepare(str(source), "-o", str(data), "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["kind"] == "write-prepare" and manifest["examples"] == 1
    loaded = load_write_data(data)
    [example], [prompt] = loaded.examples, loaded.prompts
    assert example.id == prompt.id and prompt.prompt == example.prompt
    # the input: the cited references, not the paper itself, not the uncited entry
    assert set(prompt.keys) == {"vaswani2017", "prune2019", "sparse2019", "he2016", "adam2014"}
    assert "Routing Attention to Key Blocks" not in example.prompt  # its own entry is left out
    assert "Never Cited Here" not in example.prompt
    assert "Sequence transduction models" in example.prompt  # an abstract, where present
    body = MAIN.split("\\begin{document}")[1]
    leaked = own_ngrams(re.sub(r"\\[a-z]+\{[^}]*\}", " ", body)) & own_ngrams(example.prompt)
    assert leaked == set()  # the copied abstract did not make it into the prompt
    assert manifest["leakage"]["references_left_out"] >= 2
    # the target: outline comments, title, abstract, body sections (no appendix), known cites
    parsed = parse_paper(example.completion)
    assert parsed.title == "Routing Attention to Key Blocks"
    assert [h for h, _ in parsed.sections] == ["Introduction", "Experiments", "Conclusion"]
    assert "\\subsection{Contributions}" in parsed.sections[0][1]
    assert "\\cite{prune2019,sparse2019}" in parsed.sections[0][1]
    assert "self2021" not in example.completion  # a key the prompt does not offer is removed
    assert "section 2: Experiments | kind: experiments" in example.completion
    assert [m.role for m in chat(prompt)] == ["system", "user"]


def test_too_few_references_is_a_drop_and_no_data_is_exit_2(tmp_path: Path) -> None:
    refs = "@article{vaswani2017, title={Attention Is All You Need}}\n"
    source = paper(tmp_path, "thin", refs)
    data = tmp_path / "data"
    result = prepare(str(source), "-o", str(data))
    assert result.exit_code == 2
    assert "1 usable reference(s), fewer than write.min_paper_references=5" in result.output
    assert not data.exists()
    paper(tmp_path)
    ok = prepare(str(tmp_path / "papers"), "-o", str(data), "--json")  # one good, one dropped
    assert ok.exit_code == 0, ok.output
    assert [d["source"].endswith("thin") for d in json.loads(ok.stdout)["drops"]] == [True]
    assert (data / "drops.jsonl").read_text().count("\n") == 1


def test_load_write_data_refuses_other_folders(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    (build / "instances.jsonl").write_text("{}\n")
    review = tmp_path / "review"
    review.mkdir()
    (review / "manifest.json").write_text('{"kind": "review"}')
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = {
        build: "is a `papergym build` folder, not `papergym write prepare` data",
        review / "": "made by another command (kind 'review')",
        empty: "no manifest.json",
        tmp_path / "absent": "no such folder",
    }
    for path, reason in cases.items():
        with pytest.raises(BadInputError) as error:
            load_write_data(path)
        assert reason in str(error.value) and "\n" not in str(error.value)


def test_prepare_refuses_an_output_folder_of_another_command(tmp_path: Path) -> None:
    out = tmp_path / "build"
    out.mkdir()
    (out / "instances.jsonl").write_text("{}\n")
    result = prepare(str(paper(tmp_path)), "-o", str(out))
    assert result.exit_code == 2 and "not `papergym write prepare` data" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["instances.jsonl"]


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="../shared/papers is absent")
def test_real_papers_give_leak_free_data() -> None:
    results = prepare_papers(discover(SHARED_PAPERS), WriteSection())
    examples = [r.example for r in results if r.example is not None]
    assert len(examples) >= len(results) // 2  # most real papers cite enough to be used
    for example in examples:
        assert example.keys and example.completion.count("\\section{") >= 2
        assert example.title not in example.prompt
        target = parse_paper(example.completion)
        text = " ".join([target.title, target.abstract, *(b for _, b in target.sections)])
        own = own_ngrams(re.sub(r"\\cite\{[^}]*\}", " ", text))  # keys are meant to be shared
        assert not own & own_ngrams(example.prompt), example.source


def test_prepare_reads_an_eprint_archive(tmp_path: Path) -> None:
    source = paper(tmp_path)
    archive = tmp_path / "routing.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname="routing")
    data = tmp_path / "data"
    result = prepare(str(archive), "-o", str(data), "--json")
    assert result.exit_code == 0, result.output
    [example] = load_write_data(data).examples
    assert example.title == "Routing Attention to Key Blocks" and len(example.keys) == 5
