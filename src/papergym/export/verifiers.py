"""A ``verifiers`` environment package: ``pip install ENV_DIR``, then ``vf-eval <name>``.

The package is thin: its module subclasses :mod:`papergym.integrations.verifiers` (the one
place that touches verifiers' API) and ships the data beside it::

    ENV_DIR/pyproject.toml               depends on papergym[verifiers] and verifiers
    ENV_DIR/README.md
    ENV_DIR/<module>/__init__.py          load_environment(**kwargs) and the exported classes
    ENV_DIR/<module>/papergym.yaml        the export's resolved configuration (the reward's)
    ENV_DIR/<module>/data/train.jsonl     one row per instance: prompt and the info fields
    ENV_DIR/<module>/data/test.jsonl      with --split

Writing needs neither verifiers nor papergym's integration module. The environment is named
``papergym-<folder>`` after the build folder (or after ``-o``'s folder when it is not the
default ``export/verifiers``), because verifiers imports an environment by its name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from papergym import __version__
from papergym.export.common import (
    ExportResult,
    chat_prompt,
    replace_dir,
    rubric_json,
    split_instances,
)
from papergym.export.datesplit import DateSplit
from papergym.jsonl import write_text_atomic
from papergym.records import Instance

FORMAT = "verifiers"
VERIFIERS_REQUIREMENT = "verifiers>=0.4,<0.5"
"""The verifiers releases the generated module is written for (tested: 0.4.0)."""


def environment_name(out_dir: Path, build_dir: Path | None = None) -> str:
    """``papergym-<slug>``: of the build folder for the default output folder, else of ``-o``."""
    folder = out_dir.resolve()
    if folder.name == FORMAT and folder.parent.name == "export":
        folder = build_dir.resolve() if build_dir is not None else folder.parent.parent
    slug = re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-") or "env"
    return slug if slug.startswith("papergym") else f"papergym-{slug}"


def module_name(name: str) -> str:
    """The importable module of an environment name, as verifiers derives it."""
    return name.replace("-", "_").lower()


def class_prefix(module: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in module.split("_") if part)


def env_row(instance: Instance, system_prompt: str | None) -> dict[str, Any]:
    """One task: the training prompt and the fields the reward reads."""
    return {
        "prompt": chat_prompt(instance.question, system_prompt),
        "question": instance.question,
        "reference": instance.reference_answer,
        "rubric": rubric_json(instance.rubric),
        "instance_id": instance.id,
        "paper_id": instance.paper_id,
        "recipe": instance.recipe,
    }


def pyproject_text(name: str, module: str) -> str:
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
description = "A PaperGym rubric-graded research-plan environment for verifiers."
requires-python = ">=3.11"
dependencies = ["papergym[verifiers]>={__version__}", "{VERIFIERS_REQUIREMENT}"]

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["papergym.yaml", "data/*.jsonl"]
"""


def module_text(name: str, module: str) -> str:
    prefix = class_prefix(module)
    return f'''"""{name}: a PaperGym environment for verifiers (written by `papergym export --format
verifiers`). The code is PaperGym's (papergym.integrations.verifiers); this module names the data.
"""

from pathlib import Path
from typing import Any

from papergym.integrations import verifiers as _papergym

ENV_ID = "{name}"


class {prefix}Taskset(_papergym.PaperGymTaskset):
    PACKAGE_DIR = Path(__file__).resolve().parent


PaperGymHarness = _papergym.PaperGymHarness
PaperGymEnv = _papergym.PaperGymEnv


def load_environment(**kwargs: Any) -> Any:
    """This environment as a verifiers Env. Keyword arguments: split ("train" or "test"),
    judge ("offline", "llm", "auto"), judge_base_url, judge_model, judge_api_key_env, alpha,
    config (a PaperGym config file in place of papergym.yaml), overrides (["key=value"])."""
    return _papergym.load_environment(ENV_ID, **kwargs)


__all__ = ["{prefix}Taskset", "PaperGymHarness", "PaperGymEnv", "load_environment"]
'''


def readme_text(name: str, module: str, rows: dict[str, int]) -> str:
    splits = ", ".join(f"{split} {n}" for split, n in rows.items())
    example = "test" if rows.get("test") else "train"  # a split this environment has
    return f"""# {name}

A PaperGym environment for [verifiers](https://github.com/PrimeIntellect-ai/verifiers): each
task asks for a research plan; PaperGym's rubric reward grades the reply (α·specific +
(1−α)·general). Tasks: {splits}. Written by `papergym export --format verifiers`; see
PaperGym's docs/integrations.md.

```bash
pip install -e .            # needs papergym[verifiers] ({VERIFIERS_REQUIREMENT})
vf-eval {name} -m MODEL --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var KEY_VAR \\
  --env.taskset.split train --env.taskset.task.judge llm \\
  --env.taskset.task.judge-base-url http://127.0.0.1:8001/v1 --env.taskset.task.judge-model JUDGE \\
  --no-push -n 5
```

```python
from {module} import load_environment
env = load_environment(split="{example}", judge="offline", alpha=0.7)
```

- The reward is `rubric`; the metrics `rubric_specific`, `rubric_general`, `rubric_unscored` and
  `answer_chars` are recorded beside it, and every criterion's verdict and reason is in the
  trace's `info["papergym"]`.
- The reward's settings come from `{module}/papergym.yaml` (the export's configuration), then
  from `--env.taskset.task.*` (or `load_environment`'s keyword arguments).
- An answer the judge cannot score is a failed reward (a `TaskError` on the trace, left out of
  the means, re-run by `vf-eval --resume`), never a 0.
"""


def write_verifiers(
    instances: list[Instance],
    out_dir: Path,
    *,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
    system_prompt: str | None = None,
    build_dir: Path | None = None,
    config_yaml: str | None = None,
) -> ExportResult:
    """Write the environment package into ``out_dir`` (the package folder swapped in whole).

    ``config_yaml`` is the resolved configuration the package ships as ``papergym.yaml`` (the
    reward's settings); none given: an empty mapping, the defaults."""
    name = environment_name(out_dir, build_dir)
    module = module_name(name)
    splits = split_instances(instances, test_fraction, date_split)

    def fill(folder: Path) -> None:
        (folder / "__init__.py").write_text(module_text(name, module), encoding="utf-8")
        shipped = config_yaml if config_yaml is not None else "{}\n"
        (folder / "papergym.yaml").write_text(shipped, encoding="utf-8")
        data = folder / "data"
        data.mkdir()
        for split, items in splits.items():
            lines = [json.dumps(env_row(i, system_prompt), ensure_ascii=False) for i in items]
            (data / f"{split}.jsonl").write_text("".join(f"{line}\n" for line in lines), "utf-8")

    out_dir.mkdir(parents=True, exist_ok=True)
    package = replace_dir(out_dir / module, fill)
    rows = {split: len(items) for split, items in splits.items()}
    write_text_atomic(out_dir / "pyproject.toml", pyproject_text(name, module))
    write_text_atomic(out_dir / "README.md", readme_text(name, module, rows))
    files = [out_dir / "pyproject.toml", out_dir / "README.md", package]
    return ExportResult(FORMAT, out_dir, rows, files)
