"""Output folders that a command resumes, and refusing one made by another configuration.

Every command that writes a folder (build, ARES build, review, eval, a training run) records
what decides its output — its *identity* — in a file of the folder. Run again on the same
folder, the command continues when the identity is the same and refuses, naming each key that
differs (``old → new``), when it is not. A non-empty folder without that file is another
command's output or the user's own files, and is refused too: nothing is ever written into it.
Everything here checks before anything is written, so a refused run leaves no trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.redact import redact

_UNSET = object()


@dataclass(frozen=True)
class RunRecord:
    """The file of a folder that records what made it.

    ``what`` names the folder in messages ("build", "review"); ``hint`` ends a refusal (what to
    do instead); ``limit`` shows at most that many differing keys (None: all).
    """

    name: str
    what: str
    hint: str = "use another -o folder or the same settings"
    limit: int | None = None

    @property
    def a_what(self) -> str:
        """``what`` with its article ("a build", "an ARES build")."""
        return f"{'an' if self.what[:1].lower() in 'aeio' else 'a'} {self.what}"

    def path(self, out: Path) -> Path:
        return out / self.name

    def read(self, out: Path) -> dict[str, Any]:
        """The recorded mapping (YAML or JSON by the file's suffix); bad input when unreadable."""
        path = self.path(out)
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as error:
            reason = " ".join(str(error).split())[:200]
            raise BadInputError(
                path, f"unreadable ({reason}); remove it or use another -o"
            ) from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise BadInputError(path, "not a mapping; remove it or use another -o")
        return data

    def write(self, out: Path, data: Mapping[str, Any]) -> Path:
        """Record ``data`` in ``out`` (created), atomically."""
        out.mkdir(parents=True, exist_ok=True)
        path = self.path(out)
        if path.suffix == ".json":
            text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        else:
            text = yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True)
        write_text_atomic(path, text)
        return path


def check_output_path(out: Path) -> None:
    """Refuse an output path that is a file or lies under one (nothing is created)."""
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    existing = next((p for p in (out, *out.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise BadInputError(out, f"cannot create the output folder: {existing} is not a folder")


def is_empty(out: Path) -> bool:
    """Whether ``out`` is absent or an empty folder."""
    return not (out.is_dir() and any(out.iterdir()))


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys (``models.judge``); an empty mapping stays a value."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(value: Any, unset: str) -> str:
    if value is _UNSET:
        return unset
    return "(none)" if value is None else redact(str(value))


def differences(
    old: Mapping[str, Any], new: Mapping[str, Any], unset: str = "(unset)", *, group: bool = False
) -> list[str]:
    """``key: old → new`` for every dotted key whose value differs, sorted; a key only one
    side has shows ``unset`` on the other. Secrets are masked. With ``group``, keys that changed
    the same way share one entry (``endpoints.judge, endpoints.writer: A → B``)."""
    before, after = flatten(old), flatten(new)
    changes: dict[tuple[str, str], list[str]] = {}
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key, _UNSET), after.get(key, _UNSET)
        if was != now:
            change = (_shown(was, unset), _shown(now, unset))
            changes.setdefault(change if group else (key, *change), []).append(key)  # type: ignore[arg-type]
    return [f"{', '.join(keys)}: {change[-2]} → {change[-1]}" for change, keys in changes.items()]


def refuse_differences(out: Path, record: RunRecord, changes: list[str]) -> None:
    """Bad input naming the keys that differ, when any do."""
    if not changes:
        return
    shown = changes if record.limit is None else changes[: record.limit]
    more = len(changes) - len(shown)
    listed = "; ".join(shown) + (f"; … {more} more" if more > 0 else "")
    raise BadInputError(
        out,
        f"output folder holds {record.a_what} with a different configuration ({listed}); "
        f"{record.hint}",
    )


def resumes(
    out: Path,
    record: RunRecord,
    identity: Mapping[str, Any],
    *,
    recorded_identity: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None,
) -> bool:
    """Whether ``out`` continues a run (True) or starts one (False); writes nothing.

    Refuses an output path that is a file, a non-empty folder without ``record`` (another
    command's output), and a run whose recorded identity differs from ``identity``.
    ``recorded_identity`` turns the recorded mapping into an identity (default: the mapping's
    keys that ``identity`` has); it may raise :class:`BadInputError`.
    """
    check_output_path(out)
    if is_empty(out):
        return False
    if not record.path(out).is_file():
        raise BadInputError(
            out,
            f"output folder is not empty and holds no PaperGym {record.what} ({record.name}); "
            "use another -o",
        )
    recorded = record.read(out)
    old = (
        recorded_identity(recorded)
        if recorded_identity is not None
        else {key: recorded.get(key, _UNSET) for key in identity}
    )
    refuse_differences(out, record, differences(_present(old), identity))
    return True


def refuse_foreign(
    out: Path, record: RunRecord, *, ours: Callable[[Path], bool] | None = None
) -> None:
    """Refuse an output path that is a file, and a non-empty folder without ``record`` (or
    that ``ours``, a stricter test, rejects), naming the folder's first entries: another
    command's output or the user's own files, which are never written into. Writes nothing."""
    check_output_path(out)
    if is_empty(out) or (ours(out) if ours is not None else record.path(out).is_file()):
        return
    shown = ", ".join(sorted(p.name for p in out.iterdir())[:3])
    raise BadInputError(
        out,
        f"holds {shown} but no {record.name}: not a `papergym {record.what}` folder; "
        "use another -o",
    )


def merged_identity(
    out: Path,
    record: RunRecord,
    identity: Mapping[str, Any],
    *,
    accumulate: Collection[str] = (),
) -> dict[str, Any]:
    """The identity to record in ``out``: ``identity`` when the folder holds no ``record`` yet,
    else the recorded one merged with it — refused, naming each key that differs, when they
    disagree. A key the record lacks reads as None (a file from before that key existed).

    A key in ``accumulate`` holds a mapping whose entries add up across runs (eval's systems,
    one run evaluating a few and the next more): only the entries both sides hold must agree,
    and the result holds them all.
    """
    if not record.path(out).is_file():
        return dict(identity)
    recorded = record.read(out)
    old: dict[str, Any] = {}
    merged = dict(identity)
    for key, value in identity.items():
        if key in accumulate:
            earlier = dict(recorded.get(key) or {})
            old[key] = {**value, **{k: v for k, v in earlier.items() if k in value}}
            merged[key] = {**earlier, **value}
        else:
            old[key] = recorded.get(key)
    refuse_differences(out, record, differences(old, identity))
    return merged


def _present(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not _UNSET}
