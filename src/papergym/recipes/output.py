"""What decides a build's output (its settings) and the output folder it is written to.

``build.yaml`` records the settings (:class:`BuildSettings`); a build resumed in a folder must
share their identity, and a folder built with another configuration is refused naming each key
that differs. ``config.yaml`` beside it is the resolved configuration of the whole command, as
every command saves it: it holds keys that do not change the output (endpoints, the reward, the
training sections), so it is a record, not what the resume check compares. Builds of earlier
releases saved the settings as ``config.yaml``; such a folder is still read (and resumed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.llm.config import LLMConfig
from papergym.llm.types import Role
from papergym.records import BuilderName, RecipeName
from papergym.runfolder import (
    RunRecord,
    check_output_path,
    differences,
    is_empty,
    refuse_differences,
)
from papergym.settings.load import CONFIG_FILE, save_config
from papergym.settings.models import PaperGymConfig

SETTINGS_FILE = "build.yaml"
"""The build's :class:`BuildSettings`, which a resumed build must match."""


class BuildSettings(BaseModel):
    """Everything that decides what a build produces; saved as build.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recipe: RecipeName = "papergym"
    builder: BuilderName = "extractive"
    limit: int | None = None
    max_unit_words: int = 1200
    paper_concurrency: int = 16
    leakage_judge: bool = True  # LLM builds: SPEC §2 step 9 verdict per criterion, one call each
    models: dict[str, str] = {}  # role → "backend:model", so a different model is a different build
    papergym_version: str = __version__

    def identity(self) -> dict[str, Any]:
        """The fields a resumed build must share with the one that wrote the folder.

        Endpoint URLs and keys are not part of it (nor of config.yaml): the same model behind
        another replica, or a rotated key, continues the same build. The leakage judge counts
        only for LLM builds, the only ones that call it.
        """
        identity: dict[str, Any] = {
            "recipe": self.recipe,
            "builder": self.builder,
            "models": self.models,
            "max_unit_words": self.max_unit_words,
        }
        if self.builder == "llm":
            identity["leakage_judge"] = self.leakage_judge
        return identity


def settings_for(
    recipe: RecipeName,
    builder: BuilderName,
    llm: LLMConfig | None,
    *,
    leakage_judge: bool = True,
    **extra: Any,
) -> BuildSettings:
    models: dict[str, str] = {}
    if builder == "llm" and llm is not None:
        roles: tuple[Role, ...] = ("extractor", "writer", "rubric")
        for role in (*roles, "judge") if leakage_judge else roles:
            backend = llm.roles.get(role, llm.default)
            if backend is not None:
                models[role] = f"{backend.backend}:{backend.model}"
    return BuildSettings(
        recipe=recipe,
        builder=builder,
        models=models,
        # The extractive builder never calls a judge; its config must not say it did.
        leakage_judge=leakage_judge and builder == "llm",
        **extra,
    )


# --- the output folder ---------------------------------------------------------------------------


BUILD_RECORD = RunRecord(SETTINGS_FILE, "build", hint="use another folder or the same options")


def _is_whole_config(path: Path) -> bool:
    """Whether ``path`` is a resolved :class:`PaperGymConfig` (it has a ``build`` section), not
    the flat :class:`BuildSettings` an earlier release saved under the same name."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False  # unreadable: reported as not a build configuration when read as settings
    return isinstance(data, dict) and isinstance(data.get("build"), dict)


def recorded_settings(out: Path) -> Path | None:
    """The file holding the settings of the build in ``out``: build.yaml, else an earlier
    release's config.yaml; None when neither is there."""
    path = out / SETTINGS_FILE
    if path.is_file():
        return path
    legacy = out / CONFIG_FILE
    if legacy.is_file() and not _is_whole_config(legacy):
        return legacy
    return None


def _previous_identity(config_path: Path) -> dict[str, Any]:
    """The identity recorded in an existing build.yaml (keys it lacks take today's defaults)."""
    try:
        previous = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        if not isinstance(previous, dict):
            raise ValueError("not a mapping")
        defaults = BuildSettings().model_dump()
        # Keys of other versions are ignored: only what decides the output is compared.
        known = {key: previous.get(key, value) for key, value in defaults.items()}
        return BuildSettings.model_validate({**known, "papergym_version": ""}).identity()
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as error:
        reason = " ".join(str(error).split())[:200]
        raise BadInputError(config_path, f"not a PaperGym build configuration: {reason}") from None


def check_output(out: Path, settings: BuildSettings) -> bool:
    """Whether ``out`` resumes a build (True) or is new (False); writes nothing.

    Refuses a path that is a file or lies under one, a non-empty folder that holds no build, and
    a build made with another configuration (naming the keys that differ, old → new).
    """
    check_output_path(out)
    if is_empty(out):
        return False
    config_path = recorded_settings(out)
    if config_path is None:
        raise BadInputError(
            out, f"output folder is not empty and holds no PaperGym build ({SETTINGS_FILE})"
        )
    changes = differences(_previous_identity(config_path), settings.identity(), unset="(none)")
    refuse_differences(out, BUILD_RECORD, changes)
    return True


def start_output(out: Path, settings: BuildSettings, config: PaperGymConfig | None = None) -> None:
    """Create ``out`` and record the settings, then the resolved ``config`` (secrets masked)
    when given (call :func:`check_output` first).

    build.yaml is written first: a folder interrupted between the two still resumes, and an
    earlier release's config.yaml is only replaced once its settings are saved in build.yaml.
    """
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / SETTINGS_FILE, yaml.safe_dump(settings.model_dump(), sort_keys=False))
    if config is not None:
        save_config(out, config)


def prepare_output(
    out: Path, settings: BuildSettings, config: PaperGymConfig | None = None
) -> bool:
    """Check then create ``out``; True when resuming (:func:`check_output` + :func:`start_output`)."""
    resuming = check_output(out, settings)
    start_output(out, settings, config)
    return resuming
