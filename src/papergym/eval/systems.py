"""The systems ``papergym eval`` compares: a run folder, a local model, or an endpoint.

A SYSTEM argument is ``name=SPEC`` or ``SPEC``; SPEC is ``openai:MODEL@URL`` (any
OpenAI-compatible server), a training run folder (its ``final/``, or its last stage's), or a
local model folder (the hf backend of the LLM layer).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from papergym.errors import BadInputError
from papergym.eval.records import EvalSystem
from papergym.llm.config import BackendConfig
from papergym.redact import redact, redact_url

ENDPOINT_PREFIX = "openai:"
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.+-]*$")
_STAGE_DIR = re.compile(r"^(\d+)-[a-z]+$")


@dataclass(frozen=True)
class ResolvedSystem:
    """A system and the backend that generates its answers."""

    record: EvalSystem
    backend: BackendConfig
    system_prompt: str | None
    """The system message its training used, when a run folder says (else the eval config's)."""


def split_name(argument: str) -> tuple[str | None, str]:
    """``(name, spec)`` of ``name=SPEC``; ``(None, argument)`` when there is no name.

    Only a plain word before the first ``=`` is a name, so a path or URL holding ``=`` (a
    query string) is left whole.
    """
    name, sep, spec = argument.partition("=")
    if sep and _NAME.match(name) and spec and not Path(argument).exists():
        return name, spec
    return None, argument


def _run_final(run: Path) -> Path | None:
    """A run folder's final model: summary.json's ``final_model``, ``final/``, or the last
    numbered stage's ``final/``."""
    summary = run / "summary.json"
    if summary.is_file():
        try:
            final = json.loads(summary.read_text(encoding="utf-8")).get("final_model")
        except (ValueError, AttributeError, OSError):
            final = None
        if isinstance(final, str):
            for candidate in (Path(final), run / Path(final).name):
                if (candidate / "config.json").is_file():
                    return candidate
    if (run / "final" / "config.json").is_file():
        return run / "final"
    stages = sorted(
        (int(m.group(1)), d)
        for d in run.iterdir()
        if d.is_dir()
        and (m := _STAGE_DIR.match(d.name))
        and (d / "final" / "config.json").is_file()
    )
    return stages[-1][1] / "final" if stages else None


def _run_system_prompt(run: Path) -> str | None:
    """``data.system_prompt`` of the run's config.yaml: the prompt its training used."""
    path = run / "config.yaml"
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return None
    section = data.get("data") if isinstance(data, dict) else None
    prompt = section.get("system_prompt") if isinstance(section, dict) else None
    return prompt if isinstance(prompt, str) and prompt else None


def _endpoint(spec: str, api_key_env: str | None, concurrency: int) -> BackendConfig:
    body = spec[len(ENDPOINT_PREFIX) :]
    # split at "@http", not the last "@": a URL may carry user:key@ credentials
    at = body.find("@http")
    model, url = (body[:at], body[at + 1 :]) if at >= 0 else ("", "")
    if not model or not url.startswith(("http://", "https://")):
        raise BadInputError(
            None, f"system {redact(spec)!r}: an endpoint is openai:MODEL@http(s)://HOST/v1"
        )
    return BackendConfig(
        model=model, base_url=(url,), api_key_env=api_key_env, max_concurrency=concurrency
    )


def resolve_system(
    argument: str,
    *,
    api_key_env: str | None = None,
    concurrency: int = 64,
    default_prompt: str | None = None,
) -> ResolvedSystem:
    """What ``argument`` names; a missing or unloadable folder is one-line bad input."""
    name, spec = split_name(argument)
    if spec.startswith(ENDPOINT_PREFIX):
        backend = _endpoint(spec, api_key_env, concurrency)
        shown = ENDPOINT_PREFIX + backend.model + "@" + redact_url(backend.base_url[0])
        record = EvalSystem(
            name=name or backend.model, spec=shown, kind="endpoint", model=backend.model
        )
        return ResolvedSystem(record, backend, default_prompt)
    path = Path(spec)
    if not path.exists():
        raise BadInputError(
            path,
            "no such run folder or model (a SYSTEM is a run folder, a model folder or "
            "openai:MODEL@URL)",
        )
    if not path.is_dir():
        raise BadInputError(path, "is a file; a SYSTEM is a run folder or a model folder")
    if (path / "config.json").is_file():
        model, kind, prompt = path, "model", default_prompt
    else:
        final = _run_final(path)
        if final is None:
            raise BadInputError(
                path, "not a model folder (no config.json) nor a run folder with a final/ model"
            )
        model, kind, prompt = final, "run", _run_system_prompt(path) or default_prompt
    backend = BackendConfig(backend="hf", model=str(model))
    record = EvalSystem(name=name or path.resolve().name, spec=spec, kind=kind, model=str(model))
    return ResolvedSystem(record, backend, prompt)


def resolve_systems(
    arguments: list[str],
    *,
    api_key_env: str | None = None,
    concurrency: int = 64,
    default_prompt: str | None = None,
) -> list[ResolvedSystem]:
    """Every SYSTEM; names must be distinct (they key every record)."""
    if not arguments:
        raise BadInputError(
            None, "no SYSTEM given (a run folder, a model folder or openai:MODEL@URL)"
        )
    systems = [
        resolve_system(
            a, api_key_env=api_key_env, concurrency=concurrency, default_prompt=default_prompt
        )
        for a in arguments
    ]
    seen: set[str] = set()
    for system in systems:
        if system.record.name in seen:
            raise BadInputError(
                None,
                f"two systems are named {system.record.name!r}; name them: NAME=SPEC",
            )
        seen.add(system.record.name)
    return systems
