"""`papergym build` under endpoint faults, bad input and resumes, over HTTP with the test server.

An endpoint failure is not a property of the paper (retried on the next run, exit 1); a drop is.
Secrets and the builder's local paths never reach what a build records.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import Behaviour, FakeOpenAIServer, error_response
from papergym.fakellm.plausible import responder
from papergym.jsonl import read_jsonl
from papergym.recipes.reading import relative_source as _relative
from papergym.records import BuildFailure, Drop, Instance, Paper

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers"
JUDGE_PROMPT = "auditing a grading rubric for criterion leakage"
runner = CliRunner()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as running:
        yield running


def llm_config(tmp_path: Path, base_url: str, **extra: object) -> Path:
    """An LLM config that gives up at once, so that a failing endpoint fails fast."""
    path = tmp_path / "llm.yaml"
    default = {"base_url": base_url, "model": "m", "max_retries": 0, "retry_base_delay": 0}
    path.write_text(yaml.safe_dump({"default": {**default, **extra}}), encoding="utf-8")
    return path


def build_args(config: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "build",
        str(EXAMPLE),
        "-o",
        str(out),
        "--llm-config",
        str(config),
        "--cache-dir",
        str(cache),
        "--json",
        *extra,
    ]


def judge_calls(server: FakeOpenAIServer) -> int:
    return sum(JUDGE_PROMPT in json.dumps(r.get("messages")) for r in server.requests)


def every_file_text(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())


# --- item 2: endpoint failures leave papers unfinished, and a re-run builds them -----------------


def test_a_burst_of_500s_fails_papers_without_dropping_them_and_a_rerun_builds_them(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out, cache = tmp_path / "env", tmp_path / "cache"
    args = build_args(llm_config(tmp_path, server.base_url), out, cache)
    server.fail(500, times=1000)  # the endpoint is down for the whole first run
    failed = runner.invoke(app, args)
    assert failed.exit_code == 1, failed.output
    assert "run the same command again" in failed.stderr
    summary = json.loads(failed.stdout)
    assert summary["instances"] == 0 and summary["drops"] == []
    [failure] = read_jsonl(out / "failed.jsonl", BuildFailure)
    assert failure.step == "llm:transport" and "500" in failure.reason
    assert read_jsonl(out / "dropped.jsonl", Drop) == []
    assert not list((out / "papers").glob("*/drop.json"))  # nothing marks the paper finished
    assert "Not finished: the LLM endpoint failed" in (out / "card.md").read_text()
    assert json.loads((out / "card.json").read_text())["failed"][0]["step"] == "llm:transport"

    server.clear_script()  # the endpoint recovers
    before = server.request_count
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert server.request_count > before  # the paper was really retried
    assert len(read_jsonl(out / "instances.jsonl", Instance)) == 1
    assert read_jsonl(out / "failed.jsonl", BuildFailure) == []  # rewritten by each run
    assert "Not finished" not in (out / "card.md").read_text()


@pytest.mark.parametrize(("mode", "step"), [("400", "llm:"), ("truncated", "llm:truncated")])
def test_client_errors_and_truncated_answers_are_not_drops(
    server: FakeOpenAIServer, tmp_path: Path, mode: str, step: str
) -> None:
    out = tmp_path / "env"
    server.default = Behaviour.parse(mode)
    result = runner.invoke(app, build_args(llm_config(tmp_path, server.base_url), out, tmp_path))
    assert result.exit_code == 1, result.output
    [failure] = read_jsonl(out / "failed.jsonl", BuildFailure)
    assert failure.step.startswith(step)
    assert read_jsonl(out / "dropped.jsonl", Drop) == []
    # a cut answer comes back from the cache when run again unchanged: the line says so
    said = " ".join(result.output.split())
    assert ("raise max_tokens (and max_tokens_ceiling) first" in said) == (mode == "truncated")


def test_an_older_builds_endpoint_drops_are_retried_and_real_drops_kept(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out, cache = tmp_path / "env", tmp_path / "cache"
    args = build_args(llm_config(tmp_path, server.base_url), out, cache)
    assert runner.invoke(app, args).exit_code == 0
    [folder] = list((out / "papers").iterdir())
    # What builds before this fix wrote after a burst of 500s: a drop that finished the paper.
    (folder / "instance.json").unlink()
    old = Drop(
        source="x",
        step="llm:transport",
        reason="gave up after 5 attempts: 500",
        paper_id=folder.name,
    )
    (folder / "drop.json").write_text(old.model_dump_json(), encoding="utf-8")
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert len(read_jsonl(out / "instances.jsonl", Instance)) == 1
    assert not (folder / "drop.json").exists() and read_jsonl(out / "dropped.jsonl", Drop) == []

    # A drop for the paper itself (output still invalid after the repairs) stays finished.
    (folder / "instance.json").unlink()
    bad = Drop(source="x", step="llm:output", reason="no valid JSON", paper_id=folder.name)
    (folder / "drop.json").write_text(bad.model_dump_json(), encoding="utf-8")
    calls = server.request_count
    kept = runner.invoke(app, args)
    assert kept.exit_code == 2 and "no instance built" in kept.stderr
    assert server.request_count == calls
    [kept_drop] = read_jsonl(out / "dropped.jsonl", Drop)
    assert (kept_drop.step, kept_drop.reason) == ("llm:output", "no valid JSON")


# --- item 6: --no-leakage-judge -------------------------------------------------------------------


def test_no_leakage_judge_makes_no_judge_call_and_says_so(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "env"
    config = llm_config(tmp_path, server.base_url)
    result = runner.invoke(app, [*build_args(config, out, tmp_path / "c"), "--no-leakage-judge"])
    assert result.exit_code == 0, result.output
    assert judge_calls(server) == 0 and server.request_count > 0
    settings = yaml.safe_load((out / "build.yaml").read_text())
    assert settings["leakage_judge"] is False and "judge" not in settings["models"]
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["build"]["leakage_judge"] is False and resolved["build"]["builder"] == "llm"
    [instance] = read_jsonl(out / "instances.jsonl", Instance)
    assert not [v for c in instance.rubric.specific for v in c.leakage if v.method == "judge"]

    with_judge = runner.invoke(app, build_args(config, tmp_path / "judged", tmp_path / "c"))
    assert with_judge.exit_code == 0, with_judge.output
    assert judge_calls(server) == 1  # one judge call per instance, and only here


# --- item 18: the refusal names the keys that differ -------------------------------------------------


def test_a_changed_configuration_is_refused_naming_each_key_old_and_new(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "env"
    config = llm_config(tmp_path, server.base_url)
    assert runner.invoke(app, build_args(config, out, tmp_path / "c")).exit_code == 0
    before = every_file_text(out)
    other = runner.invoke(
        app,
        [*build_args(config, out, tmp_path / "c"), "--no-leakage-judge", "--recipe", "design"],
    )
    assert other.exit_code == 2
    line = other.stderr.strip()
    assert "\n" not in line
    assert "leakage_judge: True → False" in line
    assert "models.judge: openai:m → (none)" in line
    assert "recipe: papergym → design" in line
    assert every_file_text(out) == before  # nothing rewritten


def test_a_build_continued_on_another_server_of_the_same_model_name_is_refused(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Before: the folder resumed on the other server (exit 0), so a build could mix papers
    written by two models called ``m``. The instances of the same inputs stay byte-identical."""
    out = tmp_path / "env"
    config = llm_config(tmp_path, server.base_url)
    assert runner.invoke(app, build_args(config, out, tmp_path / "c")).exit_code == 0
    before = every_file_text(out)
    with FakeOpenAIServer(responder=responder) as other:
        (tmp_path / "moved").mkdir()
        moved = llm_config(tmp_path / "moved", other.base_url)
        refused = runner.invoke(app, build_args(moved, out, tmp_path / "c"))
        assert other.request_count == 0
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert "\n" not in line and f"{server.base_url} → {other.base_url}" in line
    assert "endpoints.extractor, endpoints.judge, endpoints.rubric, endpoints.writer" in line
    assert every_file_text(out) == before  # nothing rewritten
    again = runner.invoke(app, build_args(config, out, tmp_path / "c"))  # the same server
    assert again.exit_code == 0 and json.loads(again.stdout)["resumed_papers"] == 1
    fresh = tmp_path / "fresh"
    assert runner.invoke(app, build_args(config, fresh, tmp_path / "c")).exit_code == 0
    instances = (out / "instances.jsonl").read_bytes()
    assert instances and instances == (fresh / "instances.jsonl").read_bytes()


# --- item 11: secrets -----------------------------------------------------------------------------


def test_secrets_in_the_url_and_echoed_by_the_server_are_never_recorded(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, userinfo = "sk-echoed-by-server-0123456789", "sk-in-the-userinfo-9876543210"
    monkeypatch.setenv("PG_BUILD_TEST_KEY", key)
    url = server.base_url.replace("http://", f"http://user:{userinfo}@")
    config = llm_config(tmp_path, url, api_key_env="PG_BUILD_TEST_KEY")
    out = tmp_path / "env"
    server.default = Behaviour.respond(
        lambda _: error_response(400, f"Incorrect API key provided: {key}")
    )
    result = runner.invoke(app, build_args(config, out, tmp_path / "c"))
    assert result.exit_code == 1, result.output
    assert read_jsonl(out / "failed.jsonl", BuildFailure)
    # An older build's drop that kept the URL with its userinfo is cleaned on resume.
    [folder] = list((out / "papers").iterdir())
    old = Drop(source="x", step="llm:output", reason=f"{url}: no JSON", paper_id=folder.name)
    (folder / "drop.json").write_text(old.model_dump_json(), encoding="utf-8")
    again = runner.invoke(app, build_args(config, out, tmp_path / "c"))
    assert again.exit_code == 2, again.output
    recorded = every_file_text(out) + result.output + again.output
    assert "user:" not in recorded
    for secret in (key, userinfo):
        assert secret not in recorded
    assert "***" in (out / "dropped.jsonl").read_text()


# --- item 13: no local absolute paths in what a build writes -------------------------------------------


def test_source_paths_are_relative_to_the_source_given(tmp_path: Path) -> None:
    roots = [Path("/home/me/papers"), Path("/home/me/one-paper"), Path("e.tar.gz"), Path(".")]
    assert _relative("/home/me/papers/p1", roots) == "p1"
    assert _relative("/home/me/papers/sub/2301.01234.tar.gz", roots) == "sub/2301.01234.tar.gz"
    assert _relative("/home/me/one-paper", roots) == "one-paper"
    assert _relative("e.tar.gz", roots) == "e.tar.gz"
    assert _relative(".", [Path(".")]) == Path.cwd().name


def test_an_absolute_source_leaves_no_local_path_in_the_output(tmp_path: Path) -> None:
    papers = tmp_path / "my-local-papers"
    shutil.copytree(EXAMPLE, papers)
    with tarfile.open(tmp_path / "toy.tar.gz", "w:gz") as archive:
        archive.add(EXAMPLE / "sparse-attention-toy", arcname="toy")
    for source, name in ((papers, "sparse-attention-toy"), (tmp_path / "toy.tar.gz", "toy.tar.gz")):
        out = tmp_path / f"out-{name}"
        result = runner.invoke(app, ["build", str(source.resolve()), "-o", str(out)])
        assert result.exit_code == 0, result.output
        [instance] = read_jsonl(out / "instances.jsonl", Instance)
        assert instance.source_path == name
        [paper_file] = list(out.glob("papers/*/paper.json"))
        assert Paper.model_validate_json(paper_file.read_text()).meta.source_path == name
        assert str(tmp_path) not in every_file_text(out)
    # An instance written by an older build with the absolute path is cleaned on resume.
    out = tmp_path / "out-sparse-attention-toy"
    [instance_file] = list(out.glob("papers/*/instance.json"))
    old = Instance.model_validate_json(instance_file.read_text())
    instance_file.write_text(old.model_copy(update={"source_path": str(papers)}).model_dump_json())
    paper_file = instance_file.with_name("paper.json")
    paper = Paper.model_validate_json(paper_file.read_text())
    meta = paper.meta.model_copy(update={"source_path": str(papers)})
    paper_file.write_text(paper.model_copy(update={"meta": meta}).model_dump_json())
    assert runner.invoke(app, ["build", str(papers.resolve()), "-o", str(out)]).exit_code == 0
    assert str(tmp_path) not in every_file_text(out)


# --- item 15: bad input writes nothing ------------------------------------------------------------


def test_bad_sources_and_outputs_are_one_line_exit_2_and_write_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(b"\x1f\x8b not really gzip")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = [
        (
            [str(tmp_path / "papres")],
            tmp_path / "o1",
            f"{tmp_path / 'papres'}: no such file or folder",
        ),
        ([str(EXAMPLE), str(tmp_path / "typo")], tmp_path / "o2", "typo: no such file or folder"),
        ([str(empty)], tmp_path / "o3", f"{empty}: empty folder"),
        ([str(corrupt)], tmp_path / "o4", f"{corrupt}: no paper could be read"),
        ([str(EXAMPLE)], a_file, f"{a_file}: output path exists and is not a folder"),
        ([str(EXAMPLE)], a_file / "out", "is not a folder"),
    ]
    for sources, out, message in cases:
        result = runner.invoke(app, ["build", *sources, "-o", str(out)])
        assert result.exit_code == 2, (sources, result.output)
        assert result.stdout == ""
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
        assert message in result.stderr, result.stderr
        assert not out.exists() or out == a_file
    assert a_file.read_text() == "x"
