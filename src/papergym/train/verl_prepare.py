"""``papergym train verl-prepare``: a folder that runs the GRPO stage on verl (Ray, many nodes).

verl runs outside PaperGym — its own Python, its own Ray cluster, its own Hydra config — so
the stage is handed over as files rather than as a function call::

    OUT/
      data/train.parquet        the training prompts, in verl's row layout (SPEC §7)
      data/test.parquet         the held-out split, when ``data.test_fraction`` makes one;
      data/train_sample.parquet   otherwise a few training rows: verl insists on a validation
                                  file, and validation is switched off for it
      grpo.yaml                 every verl setting as ``key: value`` (edit it, then launch)
      run_grpo.sh               the launcher: ``bash OUT/run_grpo.sh [extra Hydra overrides]``
      README.md                 how to run it on one node and on a Ray cluster (= docs/verl.md)

``grpo.yaml`` is the single source of the run's settings: ``run_grpo.sh`` reads it at launch
through :func:`launch_overrides` (``python3 -m papergym.train.verl_prepare hydra-args OUT``),
adds what only the launching shell knows (node and GPU counts, which reward keys this verl
version reads, the ``PAPERGYM_*`` variables) and starts ``verl.trainer.main_ppo``. Keeping the
launch logic here, typed and tested, keeps the shell script trivial; papergym must be
installed where verl runs anyway, because the reward function is papergym's.

Every key is one that verl's default config already has (checked against the configs of verl
0.6.1 to 0.9.1), so each is a plain ``key=value`` override, no Hydra ``+``; only the Ray
``env_vars`` are ``++`` (add, or replace where a verl version has them).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import yaml

from papergym.configload import read_yaml
from papergym.environment import environ
from papergym.errors import BadInputError

if TYPE_CHECKING:  # pyarrow-heavy imports stay out of the launch path (hydra-args)
    from papergym.records import Instance
    from papergym.train.config import GRPOSettings, TrainConfig

KeyStyle = Literal["current", "legacy"]
KEY_STYLES: tuple[KeyStyle, ...] = ("current", "legacy")

SPEC_FILE = "grpo.yaml"
SCRIPT_FILE = "run_grpo.sh"
README_FILE = "README.md"
MARKER_FILE = ".papergym-verl-bundle"
"""Present in every folder this module writes: only such a folder may be overwritten."""
FORMAT_VERSION = 1

TRAIN_FILE = "data/train.parquet"
TEST_FILE = "data/test.parquet"
SAMPLE_FILE = "data/train_sample.parquet"
TINY_MODEL_DIR = "tiny-model"
"""With ``model.name_or_path: tiny`` the tiny model is saved here and the config points at it."""
SAMPLE_ROWS = 8
"""Rows in the stand-in validation file when there is no test split (validation is off)."""

REWARD_FUNCTION = "compute_score"
"""Sync on purpose: every verl reward manager calls it; async ones also accept it."""
REWARD_MANAGER = "naive"
"""Per-sample calls. verl's reward loop (0.7+) registers no ``batch`` manager."""

PATH_KEYS = ("data.train_files", "data.val_files")
"""Values in ``grpo.yaml`` given relative to the bundle, made absolute at launch."""
ENV_PREFIX = "PAPERGYM_"
CONFIG_ENV = "PAPERGYM_CONFIG"
"""The variable naming the config file the reward adapter reads on every Ray worker."""
CONFIG_FILE = "config.yaml"
RAY_ENV_KEY = "ray_kwargs.ray_init.runtime_env.env_vars"
DEFAULT_NNODES = 1
DEFAULT_GPUS_PER_NODE = 8

CHARS_PER_TOKEN = 2
"""A deliberately low estimate, so that the prompt budget is generous rather than tight."""
CHAT_TEMPLATE_TOKENS = 64
MIN_PROMPT_LENGTH = 512
PROMPT_LENGTH_STEP = 256
MIN_TOKENS_PER_GPU = 16384

_LOSS_AGG_MODES = {
    "dapo": "token-mean",
    "bnpo": "token-mean",
    "grpo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
}
"""TRL's ``loss_type`` → verl's ``loss_agg_mode`` (how token losses are averaged)."""


# --------------------------------------------------------------------------------------------
# Preparing the bundle


def prepare_verl(config: TrainConfig, out: Path) -> list[Path]:
    """Write the verl bundle for ``config`` into ``out`` and return the files a user needs.

    The data is read and every setting checked before ``out`` is touched; the folder is then
    filled in a temporary sibling and swapped in, so a failure never leaves half a bundle.
    """
    from papergym.export.common import replace_dir
    from papergym.train.data import load_instances
    from papergym.train.models import TINY, resolve_model_path

    check_out_dir(out)
    splits = load_instances(config.data)
    val_file = TEST_FILE if splits.get("test") else SAMPLE_FILE
    tiny = config.model if config.model.name_or_path == TINY else None
    if tiny is not None:  # the in-process test model travels inside the bundle
        model = tiny.model_copy(update={"name_or_path": str(out.resolve() / TINY_MODEL_DIR)})
        config = config.model_copy(update={"model": model})
    spec = bundle_spec(config, splits, val_file)
    spec["papergym"].setdefault("reward_env", {})[CONFIG_ENV] = str(out.resolve() / CONFIG_FILE)

    def fill(folder: Path) -> None:
        from papergym.train.config import save_config

        _fill(folder, config, splits, val_file, spec)
        save_config(folder, config)  # the reward's settings, read by each worker via CONFIG_ENV
        if tiny is not None:
            resolve_model_path(tiny, folder)  # builds folder/tiny-model

    replace_dir(out, fill)
    return [
        out / TRAIN_FILE,
        out / val_file,
        out / SPEC_FILE,
        out / CONFIG_FILE,
        out / SCRIPT_FILE,
        out / README_FILE,
    ]


def check_out_dir(out: Path) -> None:
    """Refuse a file, or a non-empty folder that verl-prepare did not write (it is replaced)."""
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER_FILE).is_file():
        raise BadInputError(
            out, "folder is not empty and was not written by verl-prepare; choose a new folder"
        )


def reward_module_path() -> Path:
    """The installed ``papergym/reward/verl.py``: verl imports the reward function by file."""
    from papergym.reward import verl as reward_verl

    return Path(reward_verl.__file__).resolve()


def bundle_spec(
    config: TrainConfig, splits: Mapping[str, list[Instance]], val_file: str
) -> dict[str, Any]:
    """Everything ``grpo.yaml`` holds: PaperGym facts, verl overrides, both reward key styles."""
    train = splits["train"]
    batch = prompts_per_step(config.grpo)
    if len(train) < batch:
        raise BadInputError(
            config.data.build_dir,
            f"{len(train)} training instances, fewer than one step's {batch} prompts "
            "(grpo.prompts_per_step x grpo.gradient_accumulation_steps)",
        )
    rows = {"train": len(train), "val": _val_rows(splits)}
    return {
        "papergym": {
            "format": FORMAT_VERSION,
            "name": config.name,
            "rows": rows,
            "validation": "test split" if val_file == TEST_FILE else "off (no test split)",
            "reward_env": reward_env_defaults(config),
        },
        "overrides": grpo_overrides(config, rows["train"], val_file, _prompt_length(config, train)),
        "reward_keys": reward_key_styles(str(reward_module_path())),
    }


def prompts_per_step(grpo: GRPOSettings) -> int:
    """Prompts per optimiser step: verl's ``data.train_batch_size`` (answers = that x n)."""
    return grpo.prompts_per_step * grpo.gradient_accumulation_steps


def grpo_overrides(
    config: TrainConfig, train_rows: int, val_file: str, max_prompt_length: int
) -> dict[str, Any]:
    """The GRPO settings (SPEC §4) as verl keys (present in verl 0.6.1 to 0.9.1 alike).

    One optimiser step per training step (mini-batch = batch), as TRL's GRPO does by default;
    micro-batches are sized by token count (dynamic batch size), so no per-GPU count to tune.
    """
    batch = prompts_per_step(config.grpo)
    return {
        **_data_overrides(config, batch, val_file, max_prompt_length),
        **_actor_overrides(config, batch, max_prompt_length),
        **_trainer_overrides(config, train_rows, batch, validate=val_file == TEST_FILE),
    }


def _data_overrides(
    config: TrainConfig, batch: int, val_file: str, max_prompt_length: int
) -> dict[str, Any]:
    """The algorithm and the data: what is sampled, how long prompts and answers may be."""
    grpo = config.grpo
    return {
        "algorithm.adv_estimator": "grpo",
        "algorithm.norm_adv_by_std_in_grpo": _normalise_by_std(grpo.scale_rewards),
        "algorithm.use_kl_in_reward": False,
        "data.train_files": TRAIN_FILE,
        "data.val_files": val_file,
        "data.train_batch_size": batch,
        "data.max_prompt_length": max_prompt_length,
        "data.max_response_length": grpo.max_completion_length,
        "data.filter_overlong_prompts": True,
        "data.truncation": "error",
        "data.shuffle": True,
        "data.seed": config.seed,
    }


def _actor_overrides(config: TrainConfig, batch: int, max_prompt_length: int) -> dict[str, Any]:
    """The policy, its optimiser and loss, the rollouts, the reference model and LoRA."""
    grpo = config.grpo
    return {
        "actor_rollout_ref.model.path": _model_path(config.model.name_or_path),
        "actor_rollout_ref.actor.optim.lr": grpo.learning_rate,
        "actor_rollout_ref.actor.ppo_mini_batch_size": batch,
        "actor_rollout_ref.actor.use_dynamic_bsz": True,
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": max(
            MIN_TOKENS_PER_GPU, max_prompt_length + grpo.max_completion_length
        ),
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 1,
        "actor_rollout_ref.actor.use_kl_loss": grpo.beta > 0,
        "actor_rollout_ref.actor.kl_loss_coef": grpo.beta,
        "actor_rollout_ref.actor.kl_loss_type": "low_var_kl",
        "actor_rollout_ref.actor.entropy_coeff": 0.0,
        "actor_rollout_ref.actor.loss_agg_mode": _LOSS_AGG_MODES[grpo.loss_type],
        "actor_rollout_ref.actor.clip_ratio": grpo.epsilon,
        "actor_rollout_ref.actor.clip_ratio_low": grpo.epsilon,
        "actor_rollout_ref.actor.clip_ratio_high": grpo.epsilon_high or grpo.epsilon,
        "actor_rollout_ref.rollout.name": "vllm",
        "actor_rollout_ref.rollout.n": grpo.num_generations,
        "actor_rollout_ref.rollout.temperature": grpo.temperature,
        "actor_rollout_ref.rollout.tensor_model_parallel_size": 1,
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 1,
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 1,
        **_lora_overrides(config),
    }


def _trainer_overrides(
    config: TrainConfig, train_rows: int, batch: int, *, validate: bool
) -> dict[str, Any]:
    """How long to train, when to save and validate, where to write, on how many GPUs."""
    grpo = config.grpo
    return {
        "trainer.total_training_steps": grpo.steps,
        "trainer.total_epochs": epochs_for(grpo.steps, train_rows, batch),
        "trainer.save_freq": grpo.save_every,
        "trainer.max_actor_ckpt_to_keep": grpo.keep_checkpoints,
        "trainer.test_freq": grpo.save_every if validate else -1,
        "trainer.val_before_train": validate,
        "trainer.project_name": "papergym",
        "trainer.experiment_name": config.name,
        "trainer.default_local_dir": str((config.output_dir / "verl-grpo").resolve()),
        "trainer.logger": ["console"],
        "trainer.nnodes": DEFAULT_NNODES,
        "trainer.n_gpus_per_node": DEFAULT_GPUS_PER_NODE,
    }


def reward_key_styles(module_path: str) -> dict[str, dict[str, str]]:
    """The reward settings under both names verl has used for them.

    ``current``: verl >= 0.7.1, the ``reward`` group (``verl/trainer/config/reward/reward.yaml``).
    ``legacy``: verl < 0.7.1, the top-level ``custom_reward_function`` and
    ``reward_model.reward_manager``. Only one style is passed per launch: 0.7.1 and 0.8 copy set
    legacy keys over the current ones, and 0.9 ignores the legacy keys altogether.
    """
    return {
        "current": {
            "reward.custom_reward_function.path": module_path,
            "reward.custom_reward_function.name": REWARD_FUNCTION,
            "reward.reward_manager.name": REWARD_MANAGER,
        },
        "legacy": {
            "custom_reward_function.path": module_path,
            "custom_reward_function.name": REWARD_FUNCTION,
            "reward_model.reward_manager": REWARD_MANAGER,
        },
    }


def reward_env_defaults(config: TrainConfig) -> dict[str, str]:
    """The reward's settings as the variables the verl adapter reads (the shell's values win)."""
    env = {
        "PAPERGYM_REWARD_JUDGE": config.reward.judge,
        "PAPERGYM_REWARD_ALPHA": str(config.reward.alpha),
    }
    if config.reward.llm_config is not None:
        env["PAPERGYM_LLM_CONFIG"] = str(config.reward.llm_config.resolve())
    return env


def epochs_for(steps: int, train_rows: int, batch: int) -> int:
    """Enough passes over the data for ``steps`` batches (verl drops each epoch's last partial)."""
    return math.ceil(steps / (train_rows // batch))


def estimate_prompt_length(questions: Sequence[str], system_prompt: str | None) -> int:
    """A token budget that fits the longest prompt, without loading the model's tokenizer.

    Overestimating only reserves memory; prompts that still do not fit are dropped by verl
    (``data.filter_overlong_prompts``) and counted in its log.
    """
    longest = max((len(q) for q in questions), default=0) + len(system_prompt or "")
    tokens = math.ceil(longest / CHARS_PER_TOKEN) + CHAT_TEMPLATE_TOKENS
    rounded = math.ceil(tokens / PROMPT_LENGTH_STEP) * PROMPT_LENGTH_STEP
    return max(MIN_PROMPT_LENGTH, rounded)


def _prompt_length(config: TrainConfig, train: Sequence[Instance]) -> int:
    return estimate_prompt_length([i.question for i in train], config.data.system_prompt)


def _val_rows(splits: Mapping[str, list[Instance]]) -> int:
    test = splits.get("test")
    return len(test) if test else min(SAMPLE_ROWS, len(splits["train"]))


def _normalise_by_std(scale_rewards: str) -> bool:
    """TRL's ``scale_rewards`` → verl's switch; verl has no batch-level std scaling."""
    if scale_rewards == "batch":
        raise BadInputError(
            None, "grpo.scale_rewards=batch has no verl equivalent; use 'group' or 'none'"
        )
    return scale_rewards == "group"


def _model_path(name_or_path: str) -> str:
    """A hub name as is, a local folder made absolute (Ray workers run from other folders)."""
    local = Path(name_or_path).expanduser()
    return str(local.resolve()) if local.exists() else name_or_path


def _lora_overrides(config: TrainConfig) -> dict[str, Any]:
    """verl's FSDP LoRA keys; vLLM then needs the real base weights (``load_format``)."""
    lora = config.lora
    if not lora.enabled:
        return {"actor_rollout_ref.model.lora_rank": 0}
    return {
        "actor_rollout_ref.model.lora_rank": lora.r,
        "actor_rollout_ref.model.lora_alpha": lora.alpha,
        "actor_rollout_ref.model.target_modules": lora.target_modules,
        "actor_rollout_ref.rollout.load_format": "safetensors",
    }


def _fill(
    folder: Path,
    config: TrainConfig,
    splits: Mapping[str, list[Instance]],
    val_file: str,
    spec: dict[str, Any],
) -> None:
    """Write every file of the bundle into the (temporary) ``folder``."""
    _write_data(folder, config, splits, val_file)
    (folder / SPEC_FILE).write_text(_spec_text(spec), encoding="utf-8")
    templates = resources.files("papergym.train").joinpath("templates", "verl")
    for name in (SCRIPT_FILE, README_FILE):
        (folder / name).write_text(templates.joinpath(name).read_text("utf-8"), encoding="utf-8")
    marker = {"written_by": "papergym train verl-prepare", "format": FORMAT_VERSION}
    (folder / MARKER_FILE).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    _set_modes(folder)


def _write_data(
    folder: Path, config: TrainConfig, splits: Mapping[str, list[Instance]], val_file: str
) -> None:
    from papergym.export.common import write_table
    from papergym.export.verl import FORMAT, verl_table

    system = config.data.system_prompt
    write_table(folder / TRAIN_FILE, verl_table(splits["train"], "train", system), FORMAT)
    if val_file == TEST_FILE:
        table = verl_table(splits["test"], "test", system)
    else:
        table = verl_table(splits["train"][:SAMPLE_ROWS], "train", system)
    write_table(folder / val_file, table, FORMAT)


def _spec_text(spec: dict[str, Any]) -> str:
    header = (
        "# verl settings for the GRPO stage, written by `papergym train verl-prepare`.\n"
        "# run_grpo.sh passes `overrides` plus one `reward_keys` style (VERL_REWARD_KEYS:\n"
        "# current = verl >= 0.7.1, legacy = older) to verl.trainer.main_ppo as key=value;\n"
        "# trainer.nnodes / n_gpus_per_node come from NNODES / GPUS_PER_NODE at launch, and\n"
        "# papergym.reward_env are defaults for the PAPERGYM_* variables of the reward.\n"
        "# Data paths are relative to this folder. See README.md.\n"
    )
    return header + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)


def _set_modes(folder: Path) -> None:
    """Modes as the umask gives ordinary files, not the owner-only ones of temporary files.

    Workers on other nodes may run as other users; the script must be executable. The mode
    is read off ``grpo.yaml``, written the ordinary way, rather than by changing the umask.
    """
    file_mode = (folder / SPEC_FILE).stat().st_mode & 0o777
    exec_mode = file_mode | (file_mode & 0o444) >> 2
    for path in [folder, *folder.rglob("*")]:
        path.chmod(exec_mode if path.is_dir() or path.name == SCRIPT_FILE else file_mode)


# --------------------------------------------------------------------------------------------
# Launching: grpo.yaml + the shell's environment -> Hydra overrides for verl.trainer.main_ppo


def launch_overrides(bundle: Path, env: Mapping[str, str]) -> list[str]:
    """The ``key=value`` arguments ``run_grpo.sh`` gives ``verl.trainer.main_ppo``.

    Reads ``NNODES``, ``GPUS_PER_NODE``, ``VERL_REWARD_KEYS``, ``TRAIN_BATCH_SIZE`` and every
    ``PAPERGYM_*`` variable from ``env``; refuses, before any GPU is touched, what verl would
    reject later (a batch the GPUs cannot split, a reward file missing on this machine).
    """
    spec = read_spec(bundle)
    values = dict(spec["overrides"])
    for key in PATH_KEYS:
        values[key] = str(bundle.resolve() / values[key])
    values["trainer.nnodes"] = _env_int(env, "NNODES", DEFAULT_NNODES)
    values["trainer.n_gpus_per_node"] = _env_int(env, "GPUS_PER_NODE", DEFAULT_GPUS_PER_NODE)
    if env.get("TRAIN_BATCH_SIZE"):
        _set_batch(values, _env_int(env, "TRAIN_BATCH_SIZE", 1), spec["papergym"]["rows"]["train"])
    _check_batch(values)
    reward = _reward_keys(spec, env.get("VERL_REWARD_KEYS") or "current")
    args = [f"{key}={hydra_value(value)}" for key, value in {**values, **reward}.items()]
    return args + [
        f"++{RAY_ENV_KEY}.{name}={hydra_value(value)}"
        for name, value in sorted(ray_env_vars(spec, env).items())
    ]


def read_spec(bundle: Path) -> dict[str, Any]:
    """``grpo.yaml`` of ``bundle``, checked for the sections the launcher reads."""
    path = bundle / SPEC_FILE
    spec = read_yaml(path, missing="not found; run `papergym train verl-prepare` first")
    sections = ("papergym", "overrides", "reward_keys")
    if not isinstance(spec, dict) or not all(isinstance(spec.get(s), dict) for s in sections):
        raise BadInputError(path, f"needs the mappings {', '.join(sections)}")
    if spec["papergym"].get("format") != FORMAT_VERSION:
        raise BadInputError(path, "written by another papergym version; prepare it again")
    return cast(dict[str, Any], spec)


def ray_env_vars(spec: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """The reward's ``PAPERGYM_*`` variables for every Ray worker, the shell's over the defaults.

    Only ``PAPERGYM_*`` travel this way: verl prints its Ray arguments, so an API key (named by
    ``PAPERGYM_API_KEY_ENV``, never held in it) must instead be exported before ``ray start``.
    """
    defaults = {str(k): str(v) for k, v in spec["papergym"].get("reward_env", {}).items()}
    given = {k: v for k, v in env.items() if re.fullmatch(rf"{ENV_PREFIX}[A-Z0-9_]+", k)}
    return {**defaults, **given}


def hydra_value(value: Any) -> str:
    """``value`` in Hydra's override grammar; strings are always quoted, so stay strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(hydra_value(item) for item in value) + "]"
    return hydra_quote(str(value))


def hydra_quote(text: str) -> str:
    """Single-quote ``text`` for Hydra: escape quotes, and backslashes that precede a quote."""
    escaped = re.sub(r"(\\*)'", lambda m: m.group(1) * 2 + "\\'", text)
    escaped = re.sub(r"(\\+)$", lambda m: m.group(1) * 2, escaped)
    return f"'{escaped}'"


def _reward_keys(spec: Mapping[str, Any], style: str) -> dict[str, Any]:
    if style not in KEY_STYLES:
        raise BadInputError(None, f"VERL_REWARD_KEYS must be current or legacy, not {style!r}")
    keys = spec["reward_keys"].get(style)
    if not isinstance(keys, dict):
        raise BadInputError(None, f"{SPEC_FILE} has no reward_keys.{style}")
    for key, value in keys.items():
        if key.endswith(".path") and not Path(str(value)).is_file():
            raise BadInputError(
                value, "reward module not found on this machine; run verl-prepare here again"
            )
    return cast(dict[str, Any], keys)


def _set_batch(values: dict[str, Any], batch: int, train_rows: int) -> None:
    """``TRAIN_BATCH_SIZE``: prompts per step, and the epochs that make up the steps."""
    if train_rows < batch:
        raise BadInputError(None, f"TRAIN_BATCH_SIZE={batch} exceeds the {train_rows} train rows")
    values["data.train_batch_size"] = batch
    values["actor_rollout_ref.actor.ppo_mini_batch_size"] = batch
    values["trainer.total_epochs"] = epochs_for(
        int(values["trainer.total_training_steps"]), train_rows, batch
    )


def _check_batch(values: Mapping[str, Any]) -> None:
    """verl splits each step's answers evenly over all GPUs: the count must divide."""
    answers = int(values["data.train_batch_size"]) * int(values["actor_rollout_ref.rollout.n"])
    gpus = int(values["trainer.nnodes"]) * int(values["trainer.n_gpus_per_node"])
    if answers % gpus:
        raise BadInputError(
            None,
            f"{answers} answers per step (prompts x rollout.n) do not split over {gpus} GPUs; "
            "set TRAIN_BATCH_SIZE so that TRAIN_BATCH_SIZE x rollout.n is a multiple of "
            "NNODES x GPUS_PER_NODE",
        )


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name) or str(default)
    if not raw.isdigit() or int(raw) < 1:
        raise BadInputError(None, f"{name} must be a positive integer, not {raw!r}")
    return int(raw)


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m papergym.train.verl_prepare hydra-args BUNDLE``: NUL-separated overrides."""
    parser = argparse.ArgumentParser(prog="python3 -m papergym.train.verl_prepare")
    commands = parser.add_subparsers(dest="command", required=True)
    hydra_args = commands.add_parser("hydra-args", help="print verl's overrides, NUL-separated")
    hydra_args.add_argument("bundle", type=Path)
    options = parser.parse_args(argv)
    try:
        args = launch_overrides(options.bundle, environ())
    except BadInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write("".join(f"{arg}\0" for arg in args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
