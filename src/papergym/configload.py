"""Reading a configuration model: a YAML file plus ``key.sub=value`` overrides, over the
``PAPERGYM_*`` variables.

Generic over the model, so a process that needs only some sections (the reward adapters that verl,
OpenRLHF and TRL import read ``reward`` and ``llm``) reads them without composing every package's
section; :mod:`papergym.settings` reads the whole :class:`~papergym.settings.PaperGymConfig` with it.

Precedence, strongest first: overrides and the flags that stand for keys (``--alpha`` is
``reward.alpha``), the config file (with ``extends: base.yaml`` merged underneath), the
``PAPERGYM_*`` variables of :mod:`papergym.environment`, and the defaults. Errors are one line
that blames what set the key: an override (``override 'opsd.stepz=3': opsd.stepz: unknown key
(did you mean opsd.steps?)``), the file, or a variable.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from papergym import environment
from papergym.errors import BadInputError

_OVERRIDE = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*=", re.IGNORECASE)


@dataclass(frozen=True)
class Override:
    """One key set from the command line: ``key=value`` text or a flag standing for the key."""

    key: tuple[str, ...]
    value: Any
    label: str  # what the user typed, for error messages: "opsd.steps=3" or "--alpha"

    def named(self) -> str:
        return f"override {self.label!r}" if "=" in self.label else f"option {self.label}"


def parse_override(text: str) -> Override:
    """``a.b.c=value`` → the key (a, b, c) and the value parsed as YAML (numbers, lists, null)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise BadInputError(None, f"override {text!r} is not key=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as error:
        raise BadInputError(
            None, f"override {text!r}: not a YAML value ({_first_line(error)})"
        ) from None
    return Override(tuple(part for part in key.strip().split(".")), value, text)


def flag(key: str, value: Any, label: str) -> Override:
    """The override a command-line flag stands for (``flag("reward.alpha", 0.5, "--alpha")``)."""
    return Override(tuple(key.split(".")), value, label)


def is_override(argument: str) -> bool:
    """Whether a positional argument is a ``key=value`` override rather than a path.

    The one rule of every command: ``name.sub=value`` whose key is a lowercase dotted name is an
    override, unless a file or folder of that name exists (a path always wins).
    """
    return bool(_OVERRIDE.match(argument)) and not Path(argument).exists()


def split_arguments(arguments: Sequence[str]) -> tuple[list[str], list[str]]:
    """(paths, overrides) of a command's positional arguments, each in the given order."""
    paths = [a for a in arguments if not is_override(a)]
    return paths, [a for a in arguments if is_override(a)]


# --- reading -------------------------------------------------------------------------------------


def read_config_file(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file as data, with ``extends: other.yaml`` (relative to it) merged underneath.

    ``llm: path.yaml`` (relative to the file) is replaced by that LLM file's content.
    """
    data = _read_mapping(path, "a PaperGym config must be a YAML mapping")
    if path.resolve() in seen:
        raise BadInputError(path, "config extends itself (a cycle of `extends`)")
    if isinstance(data.get("llm"), str):
        data["llm"] = _read_mapping(path.parent / data["llm"], "an LLM config must be a mapping")
    parent = data.pop("extends", None)
    if parent is None:
        return data
    base = read_config_file(path.parent / str(parent), (*seen, path.resolve()))
    return deep_merge(base, data)


def read_yaml(path: Path, missing: str = "config file not found") -> Any:
    """The YAML document of ``path`` (None when empty); a one-line error naming the file when
    it is not there (``missing``), not UTF-8 text, or not YAML."""
    if not path.is_file():
        raise BadInputError(path, missing)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise BadInputError(path, f"not valid YAML ({_first_line(error)})") from None
    except UnicodeDecodeError:
        raise BadInputError(path, "not UTF-8 text") from None


def _read_mapping(path: Path, not_mapping: str) -> dict[str, Any]:
    loaded = read_yaml(path)
    if loaded is not None and not isinstance(loaded, dict):
        raise BadInputError(path, not_mapping)
    return loaded or {}


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` over ``base``, mappings merged key by key."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def apply_overrides(data: dict[str, Any], overrides: Sequence[str | Override]) -> dict[str, Any]:
    """A copy of ``data`` with each override applied (dotted keys reach nested blocks)."""
    result: dict[str, Any] = yaml.safe_load(yaml.safe_dump(data)) or {}
    for item in overrides:
        override = parse_override(item) if isinstance(item, str) else item
        node = result
        for part in override.key[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise BadInputError(None, f"{override.named()}: {part} is not a section")
            node = child
        value = override.value
        if override.key == ("llm",) and isinstance(value, str | Path):
            value = _read_mapping(Path(value), "an LLM config must be a mapping")
        node[override.key[-1]] = str(value) if isinstance(value, Path) else value
    return result


def _environment_layer(env: Mapping[str, str] | None) -> tuple[dict[str, Any], list[Override]]:
    """The data the ``PAPERGYM_*`` variables give, and each as an override (for blame)."""
    data: dict[str, Any] = {}
    llm_file = environment.llm_config_file(env)
    if llm_file is not None:
        data["llm"] = _read_mapping(llm_file, "an LLM config must be a mapping")
    found = [flag(key, value, f"${name}") for name, key, value in environment.fallbacks(env)]
    return apply_overrides(data, found), found


Model = TypeVar("Model", bound=BaseModel)


def load_model(
    model: type[Model],
    path: Path | None = None,
    overrides: Sequence[str | Override] = (),
    *,
    env: Mapping[str, str] | None = None,
) -> Model:
    """``model`` read from ``path`` (YAML, optional) and ``overrides``, over the variables.

    ``overrides`` are ``key=value`` texts or :func:`flag` records, applied in order (a later one
    wins). ``env`` replaces the process environment (tests).
    """
    parsed = [parse_override(o) if isinstance(o, str) else o for o in overrides]
    raw, from_env = _environment_layer(env)
    given = read_config_file(path) if path is not None else {}
    raw = apply_overrides(deep_merge(raw, given), parsed)
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise config_error(first_error(error), model, path, parsed, given, from_env) from None


def first_error(error: ValidationError) -> ErrorDetails:
    """The error to report: an unknown key first (a typo explains the missing key beside it)."""
    errors = error.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def config_error(
    first: ErrorDetails,
    model: type[BaseModel],
    path: Path | None,
    overrides: Sequence[Override],
    given: Mapping[str, Any] | None = None,
    from_env: Sequence[Override] = (),
) -> BadInputError:
    """One line for the first validation error, blaming what set the key.

    The last override that set the failing key (or a section holding it, or, for an unknown key,
    the unknown key itself) is to blame; then the file when it holds the key; then a variable.
    An override setting a key inside a failing section (batch_size against micro_batch_size) is
    named beside the file. An unknown key gets the closest valid one.
    """
    loc = [str(part) for part in first["loc"]]
    where = ".".join(loc) or "config"
    unknown = first["type"] == "extra_forbidden"
    reason = f"unknown key{suggestion(loc, model)}" if unknown else first["msg"]
    reason = reason.removeprefix("Value error, ")
    for override in reversed(overrides):
        key = list(override.key)
        if loc[: len(key)] == key or (unknown and key[: len(loc)] == loc):
            return BadInputError(None, f"{override.named()}: {where}: {reason}")
    if path is None or not _holds(given or {}, loc):
        for variable in reversed(from_env):
            key = list(variable.key)
            if loc[: len(key)] == key:
                return BadInputError(None, f"{variable.label}: {where}: {reason}")
    related = [o.named() for o in overrides if loc and list(o.key[: len(loc)]) == loc]
    if related:
        reason += f" (with {', '.join(related)})"
    return BadInputError(path, f"{where}: {reason}")


def _holds(data: Mapping[str, Any], loc: list[str]) -> bool:
    node: Any = data
    for part in loc:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds, through ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [m for a in typing.get_args(annotation) if (m := model_of(a)) is not None]
        return models[0] if len(models) == 1 else None
    return None


def suggestion(loc: list[str], model: type[BaseModel]) -> str:
    """`` (did you mean a.b?)`` for the valid key of ``model`` nearest ``loc``'s last part, or its
    section's keys."""
    for part in loc[:-1]:
        field = model.model_fields.get(part)
        inner = model_of(field.annotation) if field is not None else None
        if inner is None:
            return ""
        model = inner
    valid = list(model.model_fields)
    prefix = ".".join([*loc[:-1], ""])
    close = difflib.get_close_matches(loc[-1], valid, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {prefix}{close[0]}?)"
    return f" (valid keys{' in ' + prefix[:-1] if prefix else ''}: {', '.join(valid)})"


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
