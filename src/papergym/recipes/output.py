"""What decides a build's output (its settings) and the output folder it is written to.

``build.yaml`` records the settings (:class:`BuildSettings`); a build resumed in a folder must
share their identity, and a folder built with another configuration is refused naming each key
that differs. The identity says which model played each role: its name *and* where it is served
(:func:`served_by`: the normalised endpoints, credentials stripped, or a local model's folder
and weights), since ``m`` on another server can be another model, and a build continued there
would mix papers written by two. A build.yaml of an earlier release records no endpoints; it
resumes without comparing them, and records them from then on.

``config.yaml`` beside it is the resolved configuration of the whole command, as every command
saves it (its text is the caller's: this package never reads the whole configuration): it holds
keys that do not change the output (timeouts, the reward, the training sections), so it is a
record, not what the resume check compares. Builds of earlier releases saved the settings as
``config.yaml``; such a folder is still read (and resumed).

The paper build and ARES share this folder's machinery: :func:`start_output` writes either's
settings, :func:`refuse_changes` words either's refusal (through :mod:`papergym.runfolder`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.identity import backend_identity, local_model_identity
from papergym.llm.types import Role
from papergym.recipes.settings import LeakageAction
from papergym.records import LEGACY_STAGE_NAMES, STAGE_NAMES, BuilderName, RecipeName
from papergym.runfolder import (
    RunRecord,
    check_output_path,
    differences,
    is_empty,
    refuse_differences,
)

SETTINGS_FILE = "build.yaml"
"""The build's :class:`BuildSettings`, which a resumed build must match."""
CONFIG_FILE = "config.yaml"
"""The resolved configuration of the command (secrets masked), as every command saves it."""
SAME_OPTIONS = "use another folder or the same options"
STAGE_SET = ", ".join(STAGE_NAMES)
"""The stages a paper build extracts, as build.yaml records them."""
LEGACY_STAGE_SET = ", ".join(LEGACY_STAGE_NAMES)
"""What a build.yaml without ``stages`` was built with: the old set, whose ``field`` stage the
goal replaced; such a folder is refused (its papers' stages would mix two sets), not resumed."""
ENDPOINTS_HINT = (
    f" (another server may serve another model; if it serves the very same one, delete the "
    f"endpoints key of {SETTINGS_FILE} to continue)"
)


class BuildSettings(BaseModel):
    """Everything that decides what a build produces; saved as build.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recipe: RecipeName = "papergym"
    builder: BuilderName = "extractive"
    limit: int | None = None
    max_unit_words: int = 1200
    paper_concurrency: int = 16
    leakage_judge: bool = True  # LLM builds: SPEC §2 step 9 verdict per criterion, one call each
    leakage_action: LeakageAction = "replace"  # what the judge's "leaked" does (build.leakage)
    leakage_min_criteria: int = 5
    models: dict[str, str] = {}  # role → "backend:model", so a different model is a different build
    endpoints: dict[str, str] = {}  # role → where that model is served (:func:`served_by`)
    stages: str = STAGE_SET  # the stage set; another one (the old "field" set) is another build
    mix: dict[str, float] | None = None  # build --mix: the discipline shares sampled to
    target: int | None = None  # papers sampled to the mix
    seed: int = 0  # the mix sample's seed
    selection: str = ""  # digest of the sources the mix selected (recipes.mix.MixSelection)
    papergym_version: str = __version__

    def identity(self, without: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The fields a resumed build must share with the one that wrote the folder, but for
        the keys in ``without`` (what an earlier release's build.yaml did not record).

        Which model played each role, and where it was served, are part of it; API keys are
        not (a rotated key continues the same build), nor are credentials in a URL. The
        leakage judge counts only for LLM builds, the only ones that call it.
        """
        identity: dict[str, Any] = {
            "recipe": self.recipe,
            "builder": self.builder,
            "models": self.models,
            "endpoints": self.endpoints,
            "max_unit_words": self.max_unit_words,
            "stages": self.stages,
        }
        if self.mix is not None:  # an unmixed build's identity stays what it always was
            identity.update(
                mix=self.mix, target=self.target, seed=self.seed, selection=self.selection
            )
        if self.builder == "llm":
            identity["leakage_judge"] = self.leakage_judge
            if self.leakage_judge:
                identity["leakage_action"] = self.leakage_action
                identity["leakage_min_criteria"] = self.leakage_min_criteria
        return {key: value for key, value in identity.items() if key not in without}


def served_by(backend: BackendConfig) -> str:
    """Where ``backend``'s model is served, as a build records it: its normalised endpoints
    (credentials stripped; several replicas joined by commas), or a local model's folder as
    given with the digest of its weights' files (``runs/tiny/final#1a2b...``: new weights in
    the same folder are another model; :func:`~papergym.llm.identity.local_model_identity`),
    the folder left as written so that no absolute path of this machine is recorded."""
    if backend.backend == "hf":
        weights = local_model_identity(backend.model)  # "/abs/folder#digest", or a hub id
        where = backend.model
        if weights != backend.model:
            where += "#" + weights.rsplit("#", 1)[1]
        return f"{where} gguf_file={backend.gguf_file}" if backend.gguf_file else where
    return ",".join(backend_identity(backend)["endpoints"])


def role_models(llm: LLMConfig, roles: Sequence[Role]) -> tuple[dict[str, str], dict[str, str]]:
    """(role → "backend:model", role → :func:`served_by`) of the ``roles`` ``llm`` serves."""
    models: dict[str, str] = {}
    endpoints: dict[str, str] = {}
    for role in roles:
        backend = llm.roles.get(role, llm.default)
        if backend is not None:
            models[role] = f"{backend.backend}:{backend.model}"
            endpoints[role] = served_by(backend)
    return models, endpoints


def settings_for(
    recipe: RecipeName,
    builder: BuilderName,
    llm: LLMConfig | None,
    *,
    leakage_judge: bool = True,
    **extra: Any,
) -> BuildSettings:
    models: dict[str, str] = {}
    endpoints: dict[str, str] = {}
    if builder == "llm" and llm is not None:
        roles: tuple[Role, ...] = ("extractor", "writer", "rubric")
        models, endpoints = role_models(llm, (*roles, "judge") if leakage_judge else roles)
    return BuildSettings(
        recipe=recipe,
        builder=builder,
        models=models,
        endpoints=endpoints,
        # The extractive builder never calls a judge; its config must not say it did.
        leakage_judge=leakage_judge and builder == "llm",
        **extra,
    )


# --- the output folder ---------------------------------------------------------------------------


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


UNRECORDED_BEFORE = frozenset({"endpoints"})
"""Identity keys an earlier release's build.yaml may lack: not compared when absent (the folder
resumes, and records them from then on), rather than taken as today's default."""


def _previous_settings(config_path: Path) -> tuple[BuildSettings, frozenset[str]]:
    """The settings recorded in an existing build.yaml (keys it lacks take today's defaults),
    and the identity keys of :data:`UNRECORDED_BEFORE` it lacks."""
    try:
        previous = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        if not isinstance(previous, dict):
            raise ValueError("not a mapping")
        defaults = BuildSettings().model_dump()
        # Keys of other versions are ignored: only what decides the output is compared.
        known = {key: previous.get(key, value) for key, value in defaults.items()}
        known["stages"] = previous.get("stages", LEGACY_STAGE_SET)
        settings = BuildSettings.model_validate({**known, "papergym_version": ""})
        return settings, frozenset(key for key in UNRECORDED_BEFORE if key not in previous)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as error:
        reason = " ".join(str(error).split())[:200]
        raise BadInputError(config_path, f"not a PaperGym build configuration: {reason}") from None


def refuse_changes(out: Path, what: str, changes: Sequence[str]) -> None:
    """Refuse ``out``, which holds a ``what`` ("build", "ARES build") made with other settings,
    naming each key that differs (none: nothing to refuse).

    When the endpoints differ, the hint says how to continue where the other server serves the
    very same model (the folder then resumes as an earlier release's would)."""
    endpoints = any("endpoints." in change for change in changes)
    hint = SAME_OPTIONS + (ENDPOINTS_HINT if endpoints else "")
    if any(change.startswith("stages:") for change in changes):
        hint += (
            " (its papers' stages were extracted with another stage set, such as the old field "
            "stage before the research goal: rebuild in a new folder)"
        )
    refuse_differences(out, RunRecord(SETTINGS_FILE, what, hint=hint), list(changes))


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
    previous, unrecorded = _previous_settings(config_path)
    changes = differences(
        previous.identity(unrecorded), settings.identity(unrecorded), "(none)", group=True
    )
    refuse_changes(out, "build", changes)
    return True


def start_output(out: Path, settings: BaseModel, config_yaml: str | None = None) -> None:
    """Create ``out`` and record the ``settings`` (a paper build's or ARES's), then the resolved
    configuration's YAML (``config_yaml``, secrets masked) when given (check the folder first).

    build.yaml is written first: a folder interrupted between the two still resumes, and an
    earlier release's config.yaml is only replaced once its settings are saved in build.yaml.
    """
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / SETTINGS_FILE, yaml.safe_dump(settings.model_dump(), sort_keys=False))
    if config_yaml is not None:
        write_text_atomic(out / CONFIG_FILE, config_yaml)


def prepare_output(out: Path, settings: BuildSettings, config_yaml: str | None = None) -> bool:
    """Check then create ``out``; True when resuming (:func:`check_output` + :func:`start_output`)."""
    resuming = check_output(out, settings)
    start_output(out, settings, config_yaml)
    return resuming
