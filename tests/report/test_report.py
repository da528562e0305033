"""``papergym report``: the page and report.md from eval and compare folders, escaping of
untrusted answers, bad input, and the page in headless Chromium.

Fixtures are written with the eval and compare records themselves (not hand-written dicts), so a
change of their schema breaks these tests rather than the report in a user's hands.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval import records as er
from papergym.eval.compare import records as cr
from papergym.eval.stats import bootstrap_mean, correlation, paired_difference
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.report.render import md_cell
from papergym.report.run import write_report

runner = CliRunner()

SCRIPT_ANSWER = '<script>document.title="pwned"</script><img src=x onerror=alert(1)> plan | step'
SYSTEMS = ("base", "grpo")
QUESTIONS = [f"q{i}" for i in range(8)]
JUDGE = "llm:judge-model@http://127.0.0.1:9/v1"


def _estimate(values: list[float]) -> er.Estimate:
    return bootstrap_mean(values, resamples=200)


def _score(system: str, index: int, instance_id: str) -> tuple[er.EvalAnswer, er.EvalScore]:
    """A deterministic answer and score: grpo writes longer answers and passes more."""
    words = 80 + 25 * index + (120 if system == "grpo" else 0)
    answer = SCRIPT_ANSWER if (system == "grpo" and index == 0) else f"{system} plan {index} " * 20
    unscored = system == "base" and index == 7
    verdicts = tuple(
        er.EvalVerdict(
            criterion_id=f"{instance_id}-c{rank}",
            kind="specific",
            dimension="method" if rank < 3 else "experiment",
            rank=rank,
            passed=None if unscored else (rank + index + (system == "grpo")) % 2 == 0,
            reason=f"criterion {rank} <b>reason</b>",
        )
        for rank in (1, 2, 3)
    ) + tuple(
        er.EvalVerdict(
            criterion_id=c.id,
            kind="general",
            passed=None if unscored else (len(c.id) + index) % 3 != 0,
            reason="general reason",
        )
        for c in GENERAL_CRITERIA
    )
    value = None if unscored else min(1.0, 0.2 + 0.05 * index + (0.2 if system == "grpo" else 0))
    return (
        er.EvalAnswer(system=system, instance_id=instance_id, sample=0, answer=answer, words=words),
        er.EvalScore(
            system=system,
            instance_id=instance_id,
            sample=0,
            value=value,
            specific=value,
            general=value,
            method=value,
            experiment=value,
            words=words,
            verdicts=verdicts,
            unscored_reason="judge answer unparsed" if unscored else None,
            judge=JUDGE,
        ),
    )


def _system_summary(name: str, scores: list[er.EvalScore]) -> er.SystemSummary:
    scored = [s for s in scores if s.value is not None]
    rewards = [s.value for s in scored if s.value is not None]
    words = [float(s.words) for s in scored]

    def rate(match: str, by_rank: bool) -> er.Estimate:
        passes = [
            1.0 if v.passed else 0.0
            for s in scored
            for v in s.verdicts
            if (str(v.rank) if by_rank else v.criterion_id) == match and v.passed is not None
        ]
        return _estimate(passes)

    return er.SystemSummary(
        system=er.EvalSystem(
            name=name, spec=f"openai:{name}@http://127.0.0.1:9/v1", kind="endpoint", model=name
        ),
        answers=len(scores),
        scored=len(scored),
        unscored=len(scores) - len(scored),
        unscored_reasons={"judge answer unparsed": len(scores) - len(scored)}
        if len(scores) > len(scored)
        else {},
        reward=_estimate(rewards),
        specific=_estimate(rewards),
        general=_estimate(rewards),
        by_dimension={"method": _estimate(rewards), "experiment": _estimate(rewards)},
        general_criteria={c.id: rate(c.id, False) for c in GENERAL_CRITERIA},
        by_rank={str(r): rate(str(r), True) for r in (1, 2, 3)},
        words=_estimate(words),
        length_reward=(
            correlation(words, rewards, "pearson", resamples=200),
            correlation(words, rewards, "spearman", resamples=200),
        ),
    )


def write_eval_dir(path: Path, systems: tuple[str, ...] = SYSTEMS) -> Path:
    answers: list[er.EvalAnswer] = []
    scores: list[er.EvalScore] = []
    for system in systems:
        for index, instance_id in enumerate(QUESTIONS):
            answer, score = _score(system, index, instance_id)
            answers.append(answer)
            scores.append(score)
    summaries = [_system_summary(name, [s for s in scores if s.system == name]) for name in systems]
    both = [
        (a.value, b.value)
        for a, b in zip(
            [s for s in scores if s.system == systems[-1]],
            [s for s in scores if s.system == systems[0]],
            strict=True,
        )
        if a.value is not None and b.value is not None
    ]
    pair = er.PairedDifference(
        a=systems[-1],
        b=systems[0],
        reward=paired_difference([x for x, _ in both], [y for _, y in both], resamples=200),
        wins=sum(x > y for x, y in both),
        ties=sum(x == y for x, y in both),
        losses=sum(x < y for x, y in both),
    )
    summary = er.EvalSummary(
        version="0.1.0",
        data="build/",
        data_format="instances",
        data_id="d4t4",
        split="test",
        questions=len(QUESTIONS),
        instance_ids=tuple(QUESTIONS),
        samples=1,
        temperature=0.0,
        max_tokens=512,
        judge=JUDGE,
        alpha=0.7,
        seed=0,
        resamples=200,
        systems=tuple(summaries),
        pairs=(pair,),
    )
    path.mkdir(parents=True, exist_ok=True)
    write_jsonl(path / er.ANSWERS_FILE, answers)
    write_jsonl(path / er.SCORES_FILE, scores)
    write_jsonl(
        path / er.QUESTIONS_FILE,
        [
            er.EvalQuestion(
                instance_id=instance_id,
                question=f"How would you study question {instance_id}?",
                criteria={v.criterion_id: f"text of {v.criterion_id}" for v in scores[0].verdicts},
            )
            for instance_id in QUESTIONS
        ],
    )
    write_text_atomic(path / er.SUMMARY_FILE, summary.model_dump_json(indent=2))
    return path


def _rates(system: str, wins: int, ties: int, losses: int) -> cr.SystemRates:
    total = wins + ties + losses

    def share(k: int) -> er.Estimate:
        return _estimate([1.0] * k + [0.0] * (total - k))

    return cr.SystemRates(
        system=system,
        wins=wins,
        ties=ties,
        losses=losses,
        win=share(wins),
        tie=share(ties),
        loss=share(losses),
    )


def write_compare_dir(path: Path) -> Path:
    orderings = (SYSTEMS, tuple(reversed(SYSTEMS)))
    verdicts = [
        cr.CompareVerdict(
            instance_id=instance_id,
            judge="judge",
            model="judge-model-7b",
            ordering=ordering,
            setup="s1",
            picks={criterion: cr.Pick(label="B", system=ordering[1]) for criterion in cr.CRITERIA}
            if instance_id != "q3"
            else None,
            reason="B <em>is</em> better | more specific",
            unparsed_reason="no JSON in the answer" if instance_id == "q3" else None,
        )
        for instance_id in QUESTIONS
        for ordering in orderings
    ]
    bias = cr.PositionBias(
        first=_estimate([0.0] * 14),
        expected=0.5,
        by_position={"A": 0.0, "B": 1.0},
        decisive=14,
    )
    criteria = tuple(
        cr.CriterionResult(
            criterion=criterion,
            verdicts=16,
            parsed=14,
            unparsed=2,
            systems=(_rates("base", 7, 0, 7), _rates("grpo", 7, 0, 7)),
            position_bias=bias,
        )
        for criterion in cr.CRITERIA
    )
    summary = cr.CompareSummary(
        version="0.1.0",
        eval_dirs=("evals/a", "evals/b"),
        data_id="d4t4",
        systems=SYSTEMS,
        judges=("judge",),
        judge_models={"judge": "judge-model-7b"},
        reference_shown=True,
        design="permutations",
        orderings=orderings,
        questions=len(QUESTIONS),
        verdicts=16,
        parsed=14,
        unparsed=2,
        unparsed_reasons={"no JSON in the answer": 2},
        resamples=200,
        seed=0,
        criteria=criteria,
        agreement=(
            cr.Agreement(
                criterion="overall",
                kappa=0.4125,
                observed=0.7,
                expected=0.49,
                items=14,
                excluded=2,
                judges=2,
            ),
        ),
    )
    path.mkdir(parents=True, exist_ok=True)
    write_jsonl(path / cr.VERDICTS_FILE, verdicts)
    write_text_atomic(path / cr.SUMMARY_FILE, summary.model_dump_json(indent=2))
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("report")
    eval_dir = write_eval_dir(root / "eval")
    cmp_dir = write_compare_dir(root / "cmp")
    out = root / "out" / "report.html"
    result = runner.invoke(app, ["report", str(eval_dir), str(cmp_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out, out.read_text(encoding="utf-8"), out.with_suffix(".md").read_text(encoding="utf-8")


def test_report_shows_tables_with_intervals_judge_and_unscored(page: tuple[Path, str, str]) -> None:
    _, html, markdown = page
    for text in (html, markdown):
        assert "llm:judge-model@http://127.0.0.1:9/v1" in text  # which judge scored them
        # reward of grpo: mean of 0.4 .. 0.75 over 8 questions, with its interval and n
        assert re.search(r"0\.575 \[0\.\d{3}, 0\.\d{3}\] n=8", text)
        # base: one answer unscored, named with its reason; its mean is over 7 questions
        assert "1 (judge answer unparsed: 1)" in text
        assert re.search(r"0\.350 \[0\.\d{3}, 0\.\d{3}\] n=7", text)
        assert "grpo − base" in text
        assert "general-soundness" in text
        # compare: win/tie/loss with intervals, unparsed counted apart, position bias
        assert "judge (judge-model-7b)" in text  # the compare judge and its model
        assert "Win / tie / loss: overall" in text
        assert "14 parsed of 16 verdicts; 2 unparsed" in text
        assert "Position bias" in text
        assert "Agreement between judges (Fleiss" in text
        cells = re.sub(r"<[^>]+>", " ", text)  # the row's cells, with or without tags
        assert re.search(r"overall\W+0\.412\W+0\.700\W+0\.490\W+14\W+2\W+2", cells)


def test_report_draws_each_plot_inline(page: tuple[Path, str, str]) -> None:
    _, html, _ = page
    titles = re.findall(r"<svg[^>]*><title>([^<]*)</title>", html)
    assert titles == [
        "Scores by system (95% intervals)",
        "Paired reward differences",
        "Pass rate of each general criterion",
        "Pass rate of specific criteria by rank",
        "Answer length",
        "Reward against answer length",
        "Win / tie / loss: overall",
        "Win / tie / loss: method",
        "Win / tie / loss: experiment",
        "Position bias: share of decisive verdicts picking the first answer",
    ]
    # the scatter's legend carries each system's length-reward correlation
    assert re.search(r"grpo: r = 1\.00 \[", html)


SCRIPT_BLOCK = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)


def without_scripts(html: str) -> str:
    """The page without its script elements: the browser's inline script and its JSON data."""
    return SCRIPT_BLOCK.sub("", html)


def test_the_only_scripts_are_the_browsers_own_allowed_by_their_hash(
    page: tuple[Path, str, str],
) -> None:
    _, html, _ = page
    blocks = SCRIPT_BLOCK.findall(html)
    code = [body for attributes, body in blocks if not attributes.strip()]
    data = [body for attributes, body in blocks if 'type="application/json"' in attributes]
    # per browser (one per section) an index block and, for its 8 questions, one details block
    assert len(code) == 1 and len(data) == 4 and len(blocks) == 5
    index = [body for attributes, body in blocks if 'id="browser-data-' in attributes]
    details = [body for attributes, body in blocks if 'id="browser-details-' in attributes]
    assert len(index) == 2 and len(details) == 2
    # the script comes after every index and before every details block
    assert (
        html.index('id="browser-data-1"')
        < html.index("<script>")
        < html.index('id="browser-details-0-0"')
    )
    digest = base64.b64encode(hashlib.sha256(code[0].encode("utf-8")).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert f"script-src &#39;sha256-{digest}&#39;" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1).split("script-src")[1]
    # the data blocks cannot be closed or commented out by an answer
    assert all("<" not in body and ">" not in body for body in data)


def test_report_loads_nothing_from_outside(page: tuple[Path, str, str]) -> None:
    _, html, _ = page
    html = without_scripts(html)
    # real tags only: escaped answer text ("&lt;img src=...") is not markup
    tags = re.findall(r"<[a-zA-Z][^>]*>", html)
    assert not [t for t in tags if re.match(r"<(script|link|iframe|img|object|embed)\b", t, re.I)]
    assert not [t for t in tags if re.search(r"\b(src|href|xlink:href)\s*=", t, re.I)]
    style = html.split("<style>")[1].split("</style>")[0]
    assert "url(" not in style and "@import" not in style
    assert "default-src 'none'" in html  # and the browser is told to refuse any load or script


def test_answer_with_script_is_shown_as_text(page: tuple[Path, str, str]) -> None:
    _, html, markdown = page
    html = without_scripts(html)
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html.lower() and "<img" not in html.lower()
    # the judge's reasons are escaped too, in the page and in the Markdown
    assert "criterion 1 &lt;b&gt;reason&lt;/b&gt;" in html
    assert "B &lt;em&gt;is&lt;/em&gt; better \\| more specific" in markdown
    assert "<em>" not in markdown


def test_markdown_has_the_same_tables(page: tuple[Path, str, str]) -> None:
    _, _, markdown = page
    assert "| system | model | answers | scored | unscored | reward |" in markdown
    assert "| r(length, reward) | unbacked |" in markdown  # the judge's unquoted "met"s
    assert "### Position bias: how often the answer shown first wins" in markdown
    assert "<svg" not in markdown
    assert md_cell("a|b\n<c>") == "a\\|b &lt;c&gt;"


def test_a_folder_that_is_neither_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    good = write_eval_dir(tmp_path / "eval")
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("hello")
    out = tmp_path / "out" / "report.html"
    result = runner.invoke(app, ["report", str(good), str(stray), "-o", str(out)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(stray) in lines[0] and "neither an eval folder" in lines[0]
    assert not out.exists() and not out.with_suffix(".md").exists()
    assert not (tmp_path / "out").exists()


def test_a_broken_summary_names_its_file(tmp_path: Path) -> None:
    bad = write_eval_dir(tmp_path / "eval")
    (bad / er.SUMMARY_FILE).write_text('{"version": "0.1.0"}')
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(bad), "-o", str(out)])
    assert result.exit_code == 2
    assert f"{bad / er.SUMMARY_FILE}: not a valid EvalSummary" in " ".join(result.output.split())
    assert not out.exists()


def test_the_report_must_be_an_html_file(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"must end in \.html"):
        write_report([write_eval_dir(tmp_path / "eval")], tmp_path / "report.md")


# ------------------------------------------------------------------------------ headless Chromium


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if found := shutil.which(name):
            return found
    return None


CHROMIUM_FLAGS = ("--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars")


def run_chromium(page: Path, *flags: str, fragment: str = "") -> subprocess.CompletedProcess[str]:
    """Chromium on ``page`` (with ``#fragment``: how the sample browser's filter is set)."""
    browser = chromium()
    if browser is None:
        pytest.skip(
            "Chromium not found (chromium, chromium-browser, google-chrome): .ci/run installs "
            "it with apt-get install chromium"
        )
    return subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            page.as_uri() + (f"#{fragment}" if fragment else ""),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def console_messages(stderr: str) -> list[str]:
    """What the page wrote to the console (errors included: uncaught exceptions, blocked loads),
    as Chromium logs it with --enable-logging=stderr: ``...:CONSOLE:...] "message", source: ...``."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def _unfilter_sequential(kind: int, line: list[int], up: list[int], channels: int) -> None:
    """PNG's Average (3) and Paeth (4) filters, undone in place: each byte needs the one to
    its left, already undone, so these rows are done byte by byte."""
    for x in range(len(line)):
        left = line[x - channels] if x >= channels else 0
        if kind == 3:
            line[x] = (line[x] + (left + up[x]) // 2) & 0xFF
            continue
        corner = up[x - channels] if x >= channels else 0
        p = left + up[x] - corner
        pa, pb, pc = abs(p - left), abs(p - up[x]), abs(p - corner)
        predictor = left if pa <= pb and pa <= pc else (up[x] if pb <= pc else corner)
        line[x] = (line[x] + predictor) & 0xFF


def png_pixels(data: bytes) -> np.ndarray:
    """The pixels (height × width × channels, uint8) of an 8-bit, non-interlaced PNG (what
    Chromium writes). Pillow is not a dependency; numpy undoes the None, Sub and Up filters
    (most of Chromium's rows) a row at a time."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, header = 8, b"", b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        chunk = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0, (depth, interlace)
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour_type]
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, width * channels + 1)
    rows = np.zeros((height, width * channels), dtype=np.uint8)
    previous = np.zeros(width * channels, dtype=np.uint8)
    for y in range(height):
        kind, line = int(raw[y, 0]), raw[y, 1:]
        if kind == 0:
            rows[y] = line
        elif kind == 1:  # Sub: a running sum along the row, per channel (uint8 wraps as PNG)
            rows[y] = np.cumsum(line.reshape(width, channels), axis=0, dtype=np.uint8).ravel()
        elif kind == 2:
            rows[y] = line + previous
        else:
            undone = line.tolist()
            _unfilter_sequential(kind, undone, previous.tolist(), channels)
            rows[y] = undone
        previous = rows[y]
    return rows.reshape(height, width, channels)


def colour_counts(pixels: np.ndarray) -> Counter[tuple[int, int, int]]:
    """How many pixels have each RGB colour."""
    packed = pixels[:, :, :3].reshape(-1, 3).astype(np.uint32)
    values, counts = np.unique(
        (packed[:, 0] << 16) | (packed[:, 1] << 8) | packed[:, 2], return_counts=True
    )
    return Counter(
        {
            (int(v) >> 16, (int(v) >> 8) & 0xFF, int(v) & 0xFF): int(c)
            for v, c in zip(values, counts, strict=True)
        }
    )


def test_png_decoder_reads_every_filter() -> None:
    # a 3×4 RGB image written with each filter: the decoder must give back the pixels
    image = np.arange(36, dtype=np.uint8).reshape(4, 9) * 7
    filtered = []
    for y, kind in enumerate((0, 1, 2, 3)):
        line, up = (
            image[y].astype(int),
            (image[y - 1] if y else np.zeros(9, dtype=np.uint8)).astype(int),
        )
        left = np.concatenate([[0, 0, 0], line[:-3]])
        predictor = {0: 0, 1: left, 2: up, 3: (left + up) // 2}[kind]
        filtered.append(bytes([kind]) + bytes(((line - predictor) % 256).astype(np.uint8)))
    paeth_image = np.vstack([image, image[:1] ^ 0x55])
    line, up = paeth_image[4].astype(int), paeth_image[3].astype(int)
    left = np.concatenate([[0, 0, 0], line[:-3]])
    corner = np.concatenate([[0, 0, 0], up[:-3]])
    p = left + up - corner
    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
    predictor = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, corner))
    filtered.append(bytes([4]) + bytes(((line - predictor) % 256).astype(np.uint8)))
    header = struct.pack(">IIBBBBB", 3, 5, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(b"".join(filtered))) + chunk(b"IEND", b"")
    assert (png_pixels(png) == paeth_image.reshape(5, 3, 3)).all()


def test_console_check_catches_a_script_error(tmp_path: Path) -> None:
    # the harness itself: a page that throws must be caught, or a clean run would prove nothing
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><p>x</p><script>notDefined();</script>")
    completed = run_chromium(broken, "--dump-dom")
    assert any("notDefined" in line for line in console_messages(completed.stderr))


def test_page_loads_in_headless_chromium_with_plots_and_no_console_errors(
    page: tuple[Path, str, str], tmp_path: Path
) -> None:
    report, _, _ = page
    shot = tmp_path / "report.png"
    # one launch does both; half scale: the 1280×2400 page in 640×1200 pixels, which the
    # decoder reads fast
    dom = run_chromium(
        report,
        "--dump-dom",
        "--force-device-scale-factor=0.5",
        "--window-size=1280,2400",
        f"--screenshot={shot}",
    )
    assert dom.returncode == 0 and shot.is_file(), dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    # the browser parsed the plots as SVG and the hostile answer as text
    assert dom.stdout.count("<svg") == 10
    body = without_scripts(dom.stdout)
    assert "<script" not in body.lower() and "<img" not in body.lower()
    assert "&lt;script&gt;" in body
    # the sample browser drew itself: every question counted, one page of rows, none opened
    assert 'data-shown="8" data-total="8"' in body
    assert body.count('<details class="sample"') == 8 + 8  # eval's and compare's questions
    pixels = png_pixels(shot.read_bytes())
    assert pixels.shape[:2] == (1200, 640)
    variance = float(pixels[:, :, :3].mean(axis=2).var())
    assert variance > 500, variance  # a blank page has 0
    # the plots are drawn: the bars of the first system in its palette colour (#0072B2) and
    # the second's (#E69F00) cover many pixels
    colours = colour_counts(pixels)
    assert colours[(0x00, 0x72, 0xB2)] > 500, colours.most_common(8)
    assert colours[(0xE6, 0x9F, 0x00)] > 500, colours.most_common(8)


def test_examples_show_the_question_and_each_criterions_text(page: tuple[Path, str, str]) -> None:
    _, html, _ = page
    assert re.search(r'<p class="question">How would you study question [^<]+\?</p>', html)
    assert "<td>text of general-soundness</td>" in html


# ------------------------------------------------------------------------------ sample browser


def browser_status(dom: str) -> list[tuple[int, int]]:
    """Each sample browser's (questions shown, questions in all), in page order."""
    return [
        (int(shown), int(total))
        for shown, total in re.findall(r'data-shown="(\d+)" data-total="(\d+)"', dom)
    ]


def test_a_filter_in_the_address_changes_what_the_browser_shows(
    page: tuple[Path, str, str],
) -> None:
    report, _, _ = page
    # grpo's rewards are 0.40, 0.45, 0.50, 0.55, ...: three questions at most 0.5, sorted by
    # score, high first; q0 opened
    fragment = "system=grpo&max=0.5&sort=score-down&open=q0"
    dom = run_chromium(report, "--dump-dom", fragment=fragment)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    status = browser_status(dom.stdout)
    assert status[0] == (3, 8)
    ids = re.findall(r'<span class="sample-id">([^<]+)</span>', dom.stdout)
    assert ids[:3] == ["q2", "q1", "q0"]
    # compare: grpo won half the parsed picks of each question; q3's verdicts did not parse
    assert status[1] == (7, 8)
    rows = re.findall(r'<details class="sample"[^>]*>.*?</details>', dom.stdout, re.S)
    opened = [row for row in rows if '<details class="sample" open' in row]
    assert opened, rows[:1]
    first = opened[0]
    # only the filtered system's answer, written as text: the hostile answer does not run
    assert "<h4>grpo" in first and "<h4>base" not in first
    assert "&lt;script&gt;document.title" in first and "<script>document" not in first
    assert "text of q0-c1" in first and "criterion 1 &lt;b&gt;reason&lt;/b&gt;" in first
    assert re.search(r'<td class="(pass|fail)">(pass|fail)</td>', first)


@pytest.mark.slow
def test_the_browser_pages_many_questions_and_filters_by_criterion(tmp_path: Path) -> None:
    """120 questions: 50 rows drawn, not 120; a criterion filter and the last page."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "report_scale.py"
    spec = importlib.util.spec_from_file_location("report_scale", path)
    assert spec is not None and spec.loader is not None
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    folder = scale.write_eval_dir(tmp_path / "eval", 120)
    report = tmp_path / "report.html"
    write_report([folder], report)
    dom = run_chromium(report, "--dump-dom").stdout
    assert browser_status(dom) == [(120, 120)] and dom.count('<details class="sample"') == 50
    scores = [
        er.EvalScore.model_validate_json(line)
        for line in (folder / er.SCORES_FILE).read_text().splitlines()
    ]
    met = {s.instance_id for s in scores if s.system == "base" and s.verdicts[0].passed}
    dom = run_chromium(
        report, "--dump-dom", fragment="system=base&criterion=c1&met=yes&page=9"
    ).stdout
    assert browser_status(dom) == [(len(met), 120)]
    last_page = len(met) - 50 * ((len(met) - 1) // 50)
    assert dom.count('<details class="sample"') == last_page  # page 9 is past the end: the last
