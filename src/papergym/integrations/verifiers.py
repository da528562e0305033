"""PaperGym as a ``verifiers`` environment (tested with verifiers 0.4.0, its ``verifiers.v1`` API).

``papergym export BUILD --format verifiers -o ENV_DIR`` writes an installable package whose
module subclasses the classes here and exports them through ``__all__``, which is how verifiers
finds an environment (``vf-eval <env-id>``); its ``load_environment(**kwargs)`` returns the
:class:`verifiers.v1.Env` for Python use. Everything that touches verifiers' API is in this
module, so a new verifiers release means changes here, not in exported environments.

- :class:`PaperGymTaskset` loads the exported rows of one split (``split``); each task's
  ``prompt`` is the training prompt (the question, with the exported system prompt as the
  system message) and its ``info`` holds ``question``, ``reference``, ``rubric`` (JSON),
  ``instance_id``, ``paper_id`` and ``recipe``.
- :class:`PaperGymTask` scores the reply with PaperGym's reward, configured as ``papergym
  score`` is (the exported ``papergym.yaml``, then ``--env.taskset.task.*``: ``judge``,
  ``judge_base_url``, ``judge_model``, ``judge_api_key_env``, ``alpha``, ``overrides``). The
  reward is named ``rubric``; the metrics ``rubric_specific``, ``rubric_general``,
  ``rubric_unscored`` and ``answer_chars`` are recorded beside it, and the whole score (each
  criterion's verdict and reason) goes to ``trace.info["papergym"]``.
- :class:`PaperGymHarness` is single-turn: one chat completion through verifiers'
  interception endpoint, in-process (no sandbox program).
- :class:`PaperGymEnv` is the single-agent env with the local ``subprocess`` runtime and this
  harness as defaults, so ``vf-eval`` needs no runtime flags.

**Unscored answers.** When the judge cannot score an answer, the ``rubric`` reward raises
:class:`~papergym.integrations.common.UnscoredAnswer`. verifiers wraps an exception escaping a
``@reward`` as a ``TaskError`` and records it on the trace (``ok`` false, ``stop_condition``
``task_error``, the reward left ``None``), which is how verifiers marks a failed reward: its
reward and metric means leave errored rollouts out, and ``vf-eval --resume`` re-runs them. The
trace is not given a reward of 0.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

try:
    import verifiers.v1 as vf
    from openai import AsyncOpenAI
    from verifiers.v1.runtimes import SubprocessConfig
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "papergym.integrations.verifiers needs verifiers: pip install 'papergym[verifiers]'"
    ) from error

from papergym.integrations.common import (
    UnscoredAnswer,
    ascore,
    integration_config,
    reward_for,
    row_instance,
    score_metrics,
)
from papergym.jsonl import iter_json_lines
from papergym.records import Score
from papergym.settings.models import PaperGymConfig

TESTED_VERSIONS = ("0.4.0",)
"""verifiers releases this module was tested with."""

DATA_DIR = "data"
CONFIG_FILE = "papergym.yaml"
INFO_FIELDS: tuple[str, ...] = (
    "question",
    "reference",
    "rubric",
    "instance_id",
    "paper_id",
    "recipe",
)


class PaperGymData(vf.TaskData):
    """One exported row: the prompt verifiers sends and the ``info`` the reward reads."""

    info: dict[str, str] = Field(default_factory=dict)


class PaperGymTaskConfig(vf.TaskConfig):
    """The reward's settings (``--env.taskset.task.*``), over the exported ``papergym.yaml``."""

    config: str | None = None
    """A PaperGym config file (default: the environment's own papergym.yaml)."""
    overrides: list[str] = Field(default_factory=list)
    """PaperGym ``key=value`` overrides (``reward.criteria_per_call=1``)."""
    judge: Literal["auto", "offline", "llm"] | None = None
    """reward.judge: offline (no LLM), llm, or auto."""
    judge_base_url: str | None = None
    """The judge's OpenAI-compatible endpoint (``llm.roles.judge.base_url``)."""
    judge_model: str | None = None
    """The judge's model name at that endpoint."""
    judge_api_key_env: str | None = None
    """The environment variable holding the judge endpoint's API key."""
    alpha: float | None = None
    """reward.alpha: the weight of the specific criteria."""


class PaperGymTask(vf.Task[PaperGymData, vf.State, PaperGymTaskConfig]):
    """Scores a reply with PaperGym's reward (see the module docstring)."""

    def __init__(self, data: PaperGymData, config: PaperGymTaskConfig | None = None) -> None:
        super().__init__(data, config)
        self._scores: dict[str, Score] = {}  # trace id -> its score, from the metric to the reward

    async def _score(self, trace: vf.Trace) -> Score:
        if trace.id in self._scores:
            return self._scores[trace.id]
        reward = reward_for(_config_of(self.config.model_dump_json()))
        score = await ascore(reward, row_instance(self.data.info), trace.last_reply)
        self._scores[trace.id] = score
        return score

    @vf.metric(priority=1)
    async def rubric_parts(self, trace: vf.Trace) -> dict[str, float]:
        """The specific and general parts, the unscored flag and the answer's length."""
        return score_metrics(await self._score(trace), trace.last_reply)

    @vf.reward(weight=1.0)
    async def rubric(self, trace: vf.Trace) -> float:
        """α·specific + (1−α)·general; an unscored answer raises (a failed reward, not 0)."""
        score = await self._score(trace)
        self._scores.pop(trace.id, None)
        trace.info["papergym"] = score.model_dump(mode="json")  # every verdict with its reason
        if score.value is None:
            raise UnscoredAnswer(score.instance_id, score.unscored_reason)
        return score.value


@functools.lru_cache(maxsize=16)
def _config_of(settings: str) -> PaperGymConfig:
    """The configuration of a task's settings (as JSON), read once, not once a rollout."""
    return task_config(PaperGymTaskConfig.model_validate_json(settings))


def task_config(config: PaperGymTaskConfig) -> PaperGymConfig:
    """The PaperGym configuration of a task's settings."""
    return integration_config(
        config.config,
        config.overrides,
        judge=config.judge,
        judge_base_url=config.judge_base_url,
        judge_model=config.judge_model,
        judge_api_key_env=config.judge_api_key_env,
        alpha=config.alpha,
    )


class PaperGymTasksetConfig(vf.TasksetConfig):
    """Which rows load (``--env.taskset.*``) and the reward's settings (``.task.*``)."""

    split: Literal["train", "test"] = "train"
    """The exported split to load."""
    data_dir: str | None = None
    """A folder of exported ``train.jsonl``/``test.jsonl`` (default: the environment's own)."""
    task: PaperGymTaskConfig = PaperGymTaskConfig()


class PaperGymTaskset(vf.Taskset[PaperGymTask, PaperGymTasksetConfig]):
    """The exported rows of one split as tasks."""

    PACKAGE_DIR: ClassVar[Path | None] = None
    """The exported environment's package folder, with data/ and papergym.yaml (set by the
    generated module's subclass)."""

    def load(self) -> list[PaperGymTask]:
        folder = self._data_dir()
        path = folder / f"{self.config.split}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no {self.config.split} split in this environment")
        settings = self.config.task
        shipped = None if self.PACKAGE_DIR is None else self.PACKAGE_DIR / CONFIG_FILE
        if settings.config is None and shipped is not None and shipped.is_file():
            settings = settings.model_copy(update={"config": str(shipped)})
        # a bad setting (alpha=2, a missing config file) fails here, once, in one line, rather
        # than as every rollout's TaskError; the configuration is cached for the rollouts
        _config_of(settings.model_dump_json())
        tasks = []
        for _, row in iter_json_lines(path):
            if not isinstance(row, dict):
                raise ValueError(f"{path}: every line must be a JSON object")
            tasks.append(PaperGymTask(task_data(row), settings))
        return tasks

    def _data_dir(self) -> Path:
        if self.config.data_dir is not None:
            return Path(self.config.data_dir)
        if self.PACKAGE_DIR is None:
            raise ValueError("no data: set data_dir (--env.taskset.data-dir)")
        return self.PACKAGE_DIR / DATA_DIR


def task_data(row: dict[str, Any]) -> PaperGymData:
    """A task's data from an exported row (``prompt`` as chat messages, the info fields)."""
    messages = row.get("prompt") or [{"role": "user", "content": row["question"]}]
    system = next((m["content"] for m in messages if m.get("role") == "system"), None)
    user = [m for m in messages if m.get("role") != "system"]
    prompt: Any = user[0]["content"] if len(user) == 1 else user
    return PaperGymData(
        id=str(row["instance_id"]),
        prompt=prompt,
        system_prompt=system,
        info={name: str(row.get(name) or "") for name in INFO_FIELDS},
    )


class PaperGymHarnessConfig(vf.HarnessConfig):
    """The single-turn harness has no settings of its own."""


class PaperGymHarness(vf.Harness[PaperGymHarnessConfig]):
    """One chat completion of the task's prompt, in-process, through the interception
    endpoint (so verifiers records it on the trace like any harness's model call)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [m.model_dump(exclude_none=True) for m in prompt or []]
        async with AsyncOpenAI(base_url=endpoint, api_key=secret) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)  # type: ignore[arg-type]
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class PaperGymEnvConfig(vf.EnvConfig):
    """The one ``agent`` seat, on the local subprocess runtime (no sandbox is needed)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())


class PaperGymEnv(vf.Env[PaperGymEnvConfig]):
    """The single-agent env with PaperGym's defaults (see :class:`PaperGymEnvConfig`)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


def load_environment(
    env_id: str,
    *,
    split: Literal["train", "test"] = "train",
    data_dir: str | Path | None = None,
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    judge: Literal["auto", "offline", "llm"] | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    judge_api_key_env: str | None = None,
    alpha: float | None = None,
) -> vf.Env:
    """The environment ``env_id`` (an installed exported environment) with these settings."""
    task = {
        "config": None if config is None else str(config),
        "overrides": list(overrides or []),
        "judge": judge,
        "judge_base_url": judge_base_url,
        "judge_model": judge_model,
        "judge_api_key_env": judge_api_key_env,
        "alpha": alpha,
    }
    taskset = {
        "id": env_id,
        "split": split,
        "data_dir": None if data_dir is None else str(data_dir),
        "task": task,
    }
    return vf.load_environment(vf.resolve_env_config({"taskset": taskset}))
