"""Command-line flags generated from the configuration's fields.

A flag is a shorthand for one config key: ``--limit 3`` is ``build.limit=3``. Its name, type,
bounds and help come from the key's field (its docstring is the description every section
writes once, as TRL's ``GRPOConfig`` does), so nothing is restated here::

    @app.command("build")
    @reports_errors
    @config_flags(recipe="build.recipe", limit="build.limit", leakage_judge="build.leakage_judge")
    def build(sources: ..., out: ..., given: Given = (), debug: DebugOption = False) -> None:
        config = resolve(config_file, overrides, given)

The decorator adds one option per keyword (``--recipe``, ``--limit``, a boolean's
``--leakage-judge/--no-leakage-judge``; another spelling with ``key=("build.limit", "-n")``),
hides them from the function, and hands it the overrides of the flags the user gave as
``given`` (a flag left out sets nothing, so the file and the defaults decide).
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import annotated_types
import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from papergym.cli.common import (
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    llm_flags,
)
from papergym.settings.load import Override, flag, model_of
from papergym.settings.models import PaperGymConfig

F = TypeVar("F", bound=Callable[..., Any])
Given = Sequence[Override]
"""The overrides of the flags given on the command line (the parameter ``given``)."""

# "… (--limit)." at the end of a description: the reference names the flag, the flag's help need not
_FLAG_MARKER = re.compile(r"\s*\((?:--|-[a-z])[^()]*\)(?P<stop>\.?)\s*$")


@dataclass(frozen=True)
class ConfigFlag:
    """One generated option: the parameter it fills, the key it sets, its command-line names."""

    parameter: str
    key: str
    names: tuple[str, ...]


def field_of(key: str, root: type[BaseModel] = PaperGymConfig) -> FieldInfo:
    """The field a dotted key names (``build.limit``); a wrong key is a programming error."""
    model: type[BaseModel] | None = root
    *sections, last = key.split(".")
    for part in sections:
        assert model is not None and part in model.model_fields, f"no config section {key}"
        model = model_of(model.model_fields[part].annotation)
    assert model is not None and last in model.model_fields, f"no config key {key}"
    return model.model_fields[last]


def description(field: FieldInfo) -> str:
    """A field's description without the trailing ``(--flag)`` some docstrings carry."""
    text = " ".join((field.description or "").split())
    return _FLAG_MARKER.sub(lambda m: m["stop"], text).rstrip()


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def help_text(key: str, field: FieldInfo) -> str:
    """The option's help: the field's description, then the key it sets and its default."""
    default = field.get_default(call_default_factory=True)
    return f"{description(field)} [{key}; default {_shown(default)}]"


def _option_type(annotation: Any) -> Any:
    """The type a command-line option takes for a field of ``annotation`` (always optional:
    an option left out sets nothing)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _option_type(members[0])
        return str  # e.g. 'all' | int: the text is validated by the config model
    if typing.get_origin(annotation) is Literal or annotation in (bool, int, float, str, Path):
        return annotation
    if typing.get_origin(annotation) in (list, tuple):
        return list[str]
    return str


def _bounds(field: FieldInfo) -> dict[str, Any]:
    """Inclusive bounds click can check itself (the config model checks the rest)."""
    bounds: dict[str, Any] = {}
    for item in field.metadata:
        if isinstance(item, annotated_types.Ge):
            bounds["min"] = item.ge
        elif isinstance(item, annotated_types.Le):
            bounds["max"] = item.le
    return bounds


def _names(parameter: str, annotation: Any, spelled: tuple[str, ...]) -> tuple[str, ...]:
    if spelled:
        return spelled
    name = "--" + parameter.replace("_", "-")
    return (f"{name}/--no-{name[2:]}",) if annotation is bool else (name,)


def _parameter(spec: ConfigFlag) -> inspect.Parameter:
    field = field_of(spec.key)
    kind = _option_type(field.annotation)
    bounds = _bounds(field) if kind in (int, float) else {}
    option = typer.Option(
        *spec.names, help=help_text(spec.key, field), show_default=False, **bounds
    )
    return inspect.Parameter(
        spec.parameter,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[kind | None, option],
    )


def with_options(
    command: F,
    parameter: str,
    options: Sequence[inspect.Parameter],
    collect: Callable[[dict[str, Any]], Any],
    *,
    in_place: bool,
) -> F:
    """``command`` with its parameter ``parameter`` replaced by ``options`` (where it stood, or
    after every other parameter): the wrapper hands the command ``collect(kwargs)``, which pops
    the options' values, as ``parameter``."""
    signature = inspect.signature(command)
    assert parameter in signature.parameters, f"{command.__name__} takes no `{parameter}`"
    # annotations evaluated: typer reads the signature, which holds them as written
    hints = typing.get_type_hints(command, include_extras=True)
    parameters: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        if p.name == parameter:
            parameters.extend(options if in_place else ())
        else:
            parameters.append(p.replace(annotation=hints.get(p.name, p.annotation)))
    if not in_place:
        positional = [p for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        keyword = [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
        parameters = [*positional, *keyword, *options]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        collected = collect(kwargs)  # pops the options' values
        return command(*args, **kwargs, **{parameter: collected})

    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper  # type: ignore[return-value]


def config_flags(**keys: str | tuple[str, ...]) -> Callable[[F], F]:
    """Add one option per ``parameter=key`` (or ``parameter=(key, *names)``) to a command; the
    command receives the overrides of those given as ``given``."""
    specs = []
    for parameter, value in keys.items():
        key, *spelled = (value,) if isinstance(value, str) else value
        annotation = field_of(key).annotation
        specs.append(
            ConfigFlag(parameter, key, _names(parameter, _option_type(annotation), tuple(spelled)))
        )

    def decorate(command: F) -> F:
        def given(kwargs: dict[str, Any]) -> list[Override]:
            return [
                flag(spec.key, value, spec.names[0].split("/")[0])
                for spec in specs
                if (value := kwargs.pop(spec.parameter, None)) is not None
            ]

        generated = [_parameter(spec) for spec in specs]
        return with_options(command, "given", generated, given, in_place=False)

    return decorate


def llm_options(
    *, cache: bool = True, base_url: Any = BaseUrlOption, model: Any = ModelOption
) -> Callable[[F], F]:
    """Put the shared LLM flags (``--llm-config``, ``--base-url``, ``--model``,
    ``--api-key-env`` and, with ``cache``, ``--no-cache``, ``--cache-dir``) where the command's
    parameter ``llm`` stands; the command receives their overrides (:func:`llm_flags`) as
    ``llm``. ``base_url`` and ``model`` are the option types, for a command whose help says
    more (an eval's judge)."""
    types: dict[str, tuple[Any, Any]] = {
        "llm_config": (LLMConfigOption, None),
        "base_url": (base_url, None),
        "model": (model, None),
        "api_key_env": (ApiKeyEnvOption, None),
    }
    if cache:
        types |= {"no_cache": (NoCacheOption, False), "cache_dir": (CacheDirOption, None)}
    options = [
        inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation
        )
        for name, (annotation, default) in types.items()
    ]

    def overrides(kwargs: dict[str, Any]) -> list[Override]:
        return llm_flags(**{name: kwargs.pop(name) for name in types})

    def decorate(command: F) -> F:
        return with_options(command, "llm", options, overrides, in_place=True)

    return decorate
