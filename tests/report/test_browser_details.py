"""The sample browser's two parts in headless Chromium: the list is drawn from the index, and a
question opened (from the address while the page loads, or by hand after it has loaded) shows
its answers and verdicts from its details block.

Opening a question after load needs a driver: Chromium's DevTools protocol over a pipe
(``--remote-debugging-pipe``: commands on the child's fd 3, replies on its fd 4), which
evaluates outside the page's Content-Security-Policy; the page's own script is what opens it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from test_report import (
    CHROMIUM_FLAGS,
    browser_status,
    chromium,
    console_messages,
    run_chromium,
    write_eval_dir,
)

from papergym.report.run import write_report


class DevTools:
    """A headless Chromium on one page, driven by the DevTools protocol over a pipe."""

    def __init__(self, url: str) -> None:
        browser = chromium()
        if browser is None:
            pytest.skip("Chromium not found (chromium, chromium-browser, google-chrome)")
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def on_fds_3_and_4() -> None:  # the child's ends where Chromium looks for them
            read, write = os.dup(commands_read), os.dup(replies_write)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.process = subprocess.Popen(
            [browser, *CHROMIUM_FLAGS, "--remote-debugging-pipe", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=on_fds_3_and_4,
        )
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        self.next_id = 0
        pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        attached = self.call("Target.attachToTarget", targetId=pages[0]["targetId"], flatten=True)
        self.session = attached["sessionId"]
        self.call("Page.navigate", self.session, url=url)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events in between are skipped)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.replies, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return dict(reply["result"])

    def evaluate(self, expression: str, tries: int = 20) -> Any:
        """The value of ``expression`` (a promise is awaited) in the page; tried again while
        the page being left for the report (about:blank) takes the expression with it."""
        for _ in range(tries - 1):
            try:
                result = self.call(
                    "Runtime.evaluate",
                    self.session,
                    expression=expression,
                    awaitPromise=True,
                    returnByValue=True,
                )
                break
            except RuntimeError as error:
                if "context was destroyed" not in str(error):
                    raise
        else:
            raise AssertionError(f"the page never stayed for {expression[:60]!r}")
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.commands)
        os.close(self.replies)


OPEN_AFTER_LOAD = """new Promise(function (done) {
  function open() {
    var row = Array.prototype.find.call(document.querySelectorAll("details.sample"),
      function (d) { return d.querySelector(".sample-id").textContent === "%s"; });
    row.open = true;  // what a click on its summary does: the toggle event fills it
    setTimeout(function () { done(row.outerHTML); }, 100);
  }
  // the report may not have replaced about:blank yet: wait until it has loaded
  (function wait() {
    var loaded = location.protocol === "file:" && document.readyState === "complete";
    if (loaded && document.body.dataset.loadMs) open(); else setTimeout(wait, 20);
  })();
})"""


def opened_rows(dom: str) -> list[str]:
    return re.findall(r'<details class="sample" open="">.*?</details>', dom, re.S)


@pytest.fixture(scope="module")
def eval_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("details")
    page = root / "report.html"
    write_report([write_eval_dir(root / "eval")], page)
    return page


def _shows_answers_and_verdicts(row: str, question: str) -> None:
    assert "loading…" not in row  # filled once the details were parsed
    assert re.search(rf'<p class="question">How would you study question {question}\b', row)
    assert "<h4>base" in row and "<h4>grpo" in row
    assert "<td>text of general-soundness</td>" in row  # criterion text: the details block
    assert re.search(r'<td class="(pass|fail)">(pass|fail)</td>', row)
    assert '<pre class="answer">' in row


def test_a_question_opened_from_the_address_while_loading_shows_its_details(
    eval_page: Path,
) -> None:
    # the script runs before the details blocks are parsed: it shows "loading…" and fills
    # the question on DOMContentLoaded
    dom = run_chromium(eval_page, "--dump-dom", fragment="open=q5")
    assert dom.returncode == 0 and console_messages(dom.stderr) == [], dom.stderr[-2000:]
    rows = opened_rows(dom.stdout)
    assert len(rows) == 1 and '<span class="sample-id">q5</span>' in rows[0]
    _shows_answers_and_verdicts(rows[0], "q5")


def test_a_question_opened_after_load_shows_its_details(eval_page: Path) -> None:
    tools = DevTools(eval_page.as_uri())
    try:
        row = tools.evaluate(OPEN_AFTER_LOAD % "q6")
        ready = tools.evaluate("document.body.dataset.browserReadyMs")
    finally:
        tools.close()
    assert '<span class="sample-id">q6</span>' in row
    _shows_answers_and_verdicts(row, "q6")
    assert float(ready) > 0


def _scale_benchmark() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "report_scale.py"
    spec = importlib.util.spec_from_file_location("report_scale", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # writing 2,000 questions and a 19 MB page: over 5 s here
def test_the_list_of_2000_questions_is_drawn_and_a_late_question_opens(tmp_path: Path) -> None:
    scale = _scale_benchmark()
    folder = scale.write_eval_dir(tmp_path / "eval", 2000)
    page = tmp_path / "report.html"
    write_report([folder], page)
    html = page.read_text(encoding="utf-8")
    assert len(re.findall(r'id="browser-details-0-\d+"', html)) == 10  # 200 per block
    # the last question sits in the last block, read when it is opened
    dom = run_chromium(page, "--dump-dom", fragment="open=q01999&sort=question&page=40")
    assert dom.returncode == 0 and console_messages(dom.stderr) == [], dom.stderr[-2000:]
    assert browser_status(dom.stdout) == [(2000, 2000)]
    assert dom.stdout.count('<details class="sample"') == 50
    assert re.search(r'<body[^>]*data-browser-ready-ms="[0-9.]+"', dom.stdout)
    rows = opened_rows(dom.stdout)
    assert len(rows) == 1 and "q01999: " in rows[0]  # its reasons begin with its id
