"""The shipped example paper has a bibliography, so the writer's data demo runs on it:
``papergym write prepare examples/papers`` yields one example whose prompt offers its references,
and the build demo reads the same paper text as before the citations were added."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from papergym.cli import app
from papergym.ingestion import ingest
from papergym.write.data import load_write_data

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"
EXAMPLE = PAPERS / "sparse-attention-toy"
runner = CliRunner()


def test_write_prepare_runs_on_the_example_papers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = runner.invoke(app, ["write", "prepare", str(PAPERS), "-o", str(data), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["examples"] == 1
    [prompt] = load_write_data(data).prompts
    bib = (EXAMPLE / "refs.bib").read_text(encoding="utf-8")
    assert set(prompt.keys) == set(re.findall(r"^@\w+\{([^,]+),", bib, re.MULTILINE))
    assert "abstract" not in bib.lower().replace("(no abstracts)", "")  # metadata only


def test_the_example_paper_cites_only_keys_its_bibliography_has() -> None:
    tex = "\n".join(p.read_text(encoding="utf-8") for p in sorted(EXAMPLE.rglob("*.tex")))
    cited = {k.strip() for g in re.findall(r"\\cite\{([^}]*)\}", tex) for k in g.split(",")}
    bib = (EXAMPLE / "refs.bib").read_text(encoding="utf-8")
    assert cited == set(re.findall(r"^@\w+\{([^,]+),", bib, re.MULTILINE))
    [paper] = ingest(EXAMPLE)
    text = " ".join(s.text for s in paper.sections)
    assert "[cite]" in text and not any(key in text for key in cited)  # keys never reach the text
