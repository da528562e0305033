"""A scripted paper writer behind a real loopback OpenAI-compatible server (``FakeOpenAIServer``).

:class:`ScriptedWriter` is the server's responder. It tells the writer's requests apart by their
prompt (``papergym/write/prompts``): an outline request gets an outline that builds on the keys
listed in the prompt, a section request a LaTeX body that cites one of the section's keys and
one key the bibliography lacks (the writer must remove it), repeating its own heading (the
writer must drop it), an experiments section numbers, a bare "4%" and a table (the writer must
mark them simulated and escape the percent), and under the plan-only rule a plan in words.

Faults: ``bad_outline`` answers every outline with a key the bibliography lacks (still invalid
after the LLM layer's repairs: the paper is a drop); ``plan_digits_once`` answers each plan-only
section first with numerals, and the repair request with a plan in words.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

GHOST_KEY = "ghost2099"
"""A key the scripted writer cites that no test bibliography has."""

BIB = r"""
@article{vaswani2017attention,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and Shazeer, Noam},
  year = {2017},
  journal = {Advances in Neural Information Processing Systems},
  abstract = {The dominant sequence transduction models are based on complex recurrent networks.}
}
@inproceedings{he2016resnet,
  title = {Deep Residual Learning for Image Recognition},
  author = {He, Kaiming and Zhang, Xiangyu},
  year = {2016},
  booktitle = {CVPR}
}
@article{kingma2014adam,
  title = {Adam: A Method for Stochastic Optimization},
  author = {Kingma, Diederik P. and Ba, Jimmy},
  year = {2014},
  journal = {arXiv preprint arXiv:1412.6980}
}
@misc{notitle2020,
  author = {Nobody, A.},
  year = {2020}
}
"""

PLAN_TEXT = (
    "We will compare the method with the baselines of \\cite{he2016resnet} on three public "
    "datasets, over five seeds, and report accuracy with intervals. The approach is supported "
    "if it beats the strongest baseline on most datasets."
)
RESULTS_TEXT = (
    "Our method reaches an accuracy of 91.2\\% against 88.5\\% for \\cite{he2016resnet}, a "
    "3x speedup over \\citet{" + GHOST_KEY + "}, and an error of 4% (a bare percent sign).\n\n"
    "\\begin{table}[h]\n\\centering\n\\begin{tabular}{lc}\nMethod & Accuracy \\\\\n"
    "Ours & 91.2 \\\\\nBaseline & 88.5 \\\\\n\\end{tabular}\n"
    "\\caption{Accuracy on the benchmark.}\n\\end{table}"
)


def _user(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    return str(users[0]) if users else ""


def _last(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(messages[-1].get("content", "")) if messages else ""


@dataclass
class ScriptedWriter:
    """The responder: deterministic answers to outline, section and abstract requests."""

    bad_outline: bool = False
    plan_digits_once: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)
    """Every request's kind and user prompt, in the order they came."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _count(self, kind: str, prompt: str = "") -> None:
        with self._lock:
            self.calls[kind] = self.calls.get(kind, 0) + 1
            self.order.append((kind, prompt))

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = _user(body)
        if prompt.startswith("Plan a research paper"):
            self._count("outline", prompt)
            return self.outline(prompt)
        if prompt.startswith("Outline the next section"):
            self._count("section_outline", prompt)
            return self.section_outline(prompt)
        if prompt.startswith("You have written the paper below"):
            self._count("abstract", prompt)
            if "experiment plan" in prompt:
                return {"latex": "We study attention models and plan their evaluation."}
            return {
                "latex": "We study attention models; our method improves accuracy by 2.7 points."
            }
        self._count("section", prompt)
        return self.section(prompt, repairing=len(body.get("messages") or []) > 2)

    def outline(self, prompt: str) -> dict[str, Any]:
        keys = re.findall(r"^\[([^\]]+)\]", prompt, re.MULTILINE)
        first = GHOST_KEY if self.bad_outline else keys[0]
        return {
            "title": "Attention for Residual Networks",
            "abstract_plan": "We combine attention with residual learning.",
            "sections": [
                {"heading": "Introduction", "kind": "introduction",
                 "purpose": "Motivate the combination.", "references": [first, keys[1]]},
                {"heading": "Method", "kind": "method",
                 "purpose": "Describe the model.", "references": [keys[0]]},
                {"heading": "Experiments", "kind": "experiments",
                 "purpose": "Evaluate the model.", "references": [keys[1], keys[2]]},
                {"heading": "Conclusion", "kind": "conclusion",
                 "purpose": "Sum up.", "references": []},
            ],
        }  # fmt: skip

    def section_outline(self, prompt: str) -> dict[str, Any]:
        """A section's outline naming its heading, built on the last key listed."""
        heading = re.search(r'section \d+, "([^"]+)"', prompt)
        keys = re.findall(r"^\[([^\]]+)\]", prompt, re.MULTILINE)
        name = heading.group(1) if heading else "?"
        return {"purpose": f"Refined plan for {name}.", "references": keys[-1:]}

    def section(self, prompt: str, *, repairing: bool) -> dict[str, Any]:
        heading = re.search(r'Now write section \d+, "([^"]+)"', prompt)
        name = heading.group(1) if heading else "?"
        plan = "experiment plan" in prompt
        if name in {"Experiments", "Conclusion"}:
            if plan:
                if self.plan_digits_once and not repairing:
                    return {"latex": "We will run 5 seeds on 3 datasets and expect 90\\% accuracy."}
                return {"latex": PLAN_TEXT}
            return {"latex": RESULTS_TEXT}
        return {
            "latex": f"\\section{{{name}}}\nThis section, {name}, builds on \\cite{{vaswani2017attention}} and "
            f"\\cite{{{GHOST_KEY}}}. We use ResNet-50 as a backbone.\n\n\\subsection{{Details}}\n"
            "The model stacks attention blocks over residual blocks."
        }
