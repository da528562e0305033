"""``papergym export`` as a function (:func:`run_export`): built instances → verl / TRL / Hugging
Face / parquet, each with a card (the command line, :mod:`papergym.cli.export`, prints the result).

Reads ``BUILD_DIR/instances.jsonl`` (required) and, when present, what the card reports on, in
the layout ``papergym build`` and ``papergym audit`` write:

- ``dropped.jsonl`` (or ``drops.jsonl``): :class:`~papergym.records.Drop` records;
- ``usage.json`` (``UsageTracker.as_dict()`` rows, or ``{"usage": rows}``), else the
  ``usage_rows`` and ``builder_note`` the build saved in its ``card.json``;
- ``leakage.json`` (a summary mapping), else ``leakage_report.json`` from ``papergym audit``
  (its per-dataset, per-dimension and per-origin rates);
- ``build.yaml`` (the build's settings), else ``config.yaml`` / ``config.json`` (builds of
  earlier releases saved their settings there): the build configuration the card shows.

Each format folder also gets ``config.yaml``: the export's own resolved configuration, as the
caller gives its text (``--split`` is ``data.test_fraction``, ``--system-prompt``
``data.system_prompt``, the keys training reads, so one config file gives the export and the
training run the same split and prompt).

The writers are imported when the command runs, not when the CLI starts, because ``pyarrow``
and ``datasets`` are slow to import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from papergym.errors import BadInputError
from papergym.export.common import ExportResult, check_split, split_instances
from papergym.export.datesplit import DateSplit, split_by_date, split_rule_card
from papergym.jsonl import iter_json_lines, read_jsonl, write_text_atomic
from papergym.records import Drop, Instance

INSTANCES_FILE = "instances.jsonl"
DROPS_FILES: tuple[str, ...] = ("dropped.jsonl", "drops.jsonl")
USAGE_FILE = "usage.json"
BUILD_CARD_FILE = "card.json"
LEAKAGE_FILE = "leakage.json"
AUDIT_REPORT_FILE = "leakage_report.json"
CONFIG_FILES: tuple[str, ...] = ("build.yaml", "config.yaml", "config.yml", "config.json")
CONFIG_FILE = "config.yaml"
"""The export's own resolved configuration, in each format's folder."""


class ExportFormat(StrEnum):
    """The export formats; ``all`` means every one of them."""

    verl = "verl"
    trl = "trl"
    hf = "hf"
    parquet = "parquet"
    verifiers = "verifiers"
    all = "all"


FORMAT_ORDER: tuple[str, ...] = ("verl", "trl", "hf", "parquet", "verifiers")
ALL_FORMATS: tuple[str, ...] = ("verl", "trl", "hf", "parquet")
"""What ``all`` writes: the datasets. The verifiers environment is a package, asked for by name."""


def chosen_formats(formats: list[ExportFormat] | None) -> list[str]:
    """The formats to write, in a fixed order, without repeats; none given means all."""
    names = {f.value for f in formats or [ExportFormat.all]}
    return [f for f in FORMAT_ORDER if ("all" in names and f in ALL_FORMATS) or f in names]


def check_target(target: Path) -> None:
    """An export goes to a new or empty folder, or over an earlier export (it has a card.json):
    never into a folder of something else, whose files it would overwrite."""
    if target.exists() and not target.is_dir():
        raise BadInputError(target, "output path exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / "card.json").is_file():
        raise BadInputError(
            target, "folder holds files that are not a PaperGym export; give a new or empty folder"
        )


def out_dir_for(build_dir: Path, out: Path | None, name: str, several: bool) -> Path:
    """``BUILD_DIR/export/<format>`` by default; ``--out`` itself for one format, else a sub-folder."""
    if out is None:
        return build_dir / "export" / name
    return out / name if several else out


def _read_side_text(path: Path) -> str:
    """A side file's text: UTF-8, with the byte-order mark Windows editors write accepted."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BadInputError(path, f"not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise BadInputError(path, f"cannot read: {error.strerror or error}") from None


def _load_json(path: Path) -> Any:
    try:
        return json.loads(_read_side_text(path))
    except json.JSONDecodeError as error:
        raise BadInputError(path, f"not valid JSON: {error}") from None


def _usage_rows(rows: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BadInputError(path, "expected a list of usage rows (or {'usage': [...]})")
    return rows


def _build_card(build_dir: Path) -> dict[str, Any]:
    """The ``card.json`` the build wrote, or ``{}``."""
    path = build_dir / BUILD_CARD_FILE
    data = _load_json(path) if path.is_file() else {}
    return data if isinstance(data, dict) else {}


def read_usage(build_dir: Path) -> list[dict[str, Any]] | None:
    """Usage rows from ``usage.json``, else from the build's ``card.json``; ``None`` if neither."""
    path = build_dir / USAGE_FILE
    if path.is_file():
        data = _load_json(path)
        return _usage_rows(data.get("usage") if isinstance(data, dict) else data, path)
    rows = _build_card(build_dir).get("usage_rows")
    return None if rows is None else _usage_rows(rows, build_dir / BUILD_CARD_FILE)


def read_builder_note(build_dir: Path) -> str | None:
    """The note the build put on its card (for example, that it is the extractive baseline)."""
    note = _build_card(build_dir).get("builder_note")
    return note if isinstance(note, str) and note else None


def audit_summary(report: dict[str, Any]) -> dict[str, Any]:
    """``{group: {"criteria", "<method>_rate"}}`` from a ``papergym audit`` report's rate rows."""
    summary: dict[str, Any] = {}
    for row in report.get("rates", []):
        if not isinstance(row, dict) or row.get("by") == "all":
            continue
        name = str(row.get("dataset", ""))
        if row.get("by") != "dataset":
            name = f"{name} [{row.get('by')}={row.get('value')}]"
        entry: dict[str, Any] = {"criteria": row.get("criteria")}
        for method in ("judge", "overlap"):
            if isinstance(row.get(method), dict):
                entry[f"{method}_rate"] = row[method].get("rate")
        summary[name] = entry
    return summary


def read_leakage(build_dir: Path) -> dict[str, Any] | None:
    """The leakage audit summary: ``leakage.json`` as is, else ``leakage_report.json`` summarised."""
    for name in (LEAKAGE_FILE, AUDIT_REPORT_FILE):
        path = build_dir / name
        if not path.is_file():
            continue
        data = _load_json(path)
        if not isinstance(data, dict):
            raise BadInputError(path, "expected a JSON object")
        return data if name == LEAKAGE_FILE else audit_summary(data) or None
    return None


def read_config(build_dir: Path) -> dict[str, Any]:
    """The resolved build configuration saved in the build folder, or ``{}``."""
    for name in CONFIG_FILES:
        path = build_dir / name
        if not path.is_file():
            continue
        if path.suffix == ".json":
            data = _load_json(path)
        else:
            try:
                data = yaml.safe_load(_read_side_text(path))
            except yaml.YAMLError as error:
                # one line: PyYAML spreads its message and the offending spot over several
                raise BadInputError(
                    path, f"not valid YAML: {' '.join(str(error).split())}"
                ) from None
        if not isinstance(data, dict):
            raise BadInputError(path, "expected a mapping")
        return data
    return {}


def read_instances(
    build_dir: Path,
    on_warning: Callable[[str], None] | None = None,
    missing_note: Callable[[Path], str | None] | None = None,
) -> list[Instance]:
    """The instances to export; a missing, invalid or empty file is the user's error.

    ``missing_note`` says, for a folder without instances.jsonl, what it holds and what to run
    next (an unfinished ARES build: the command line passes the recipe's note; this package
    sits below the recipes and does not import them).

    An instance id seen twice with different content is refused (one of the copies would
    be trained and scored under the wrong rubric); identical copies, as from concatenating
    two builds, are exported once and ``on_warning`` is told.
    """
    if not build_dir.is_dir():
        raise BadInputError(build_dir, "no such build folder")
    path = build_dir / INSTANCES_FILE
    if not path.exists() and missing_note is not None:
        note = missing_note(build_dir)
        if note is not None:
            raise BadInputError(build_dir, note)
    first: dict[str, tuple[int, Instance]] = {}
    lines: dict[str, list[int]] = {}  # id -> every line it is on, for ids seen more than once
    for number, data in iter_json_lines(path):
        try:
            instance = Instance.model_validate(data)
        except ValidationError as error:
            reason = f"not a valid Instance: {str(error).splitlines()[0]}"
            raise BadInputError(f"{path}:{number}", reason) from None
        if instance.id not in first:
            first[instance.id] = (number, instance)
            continue
        line, kept = first[instance.id]
        if instance != kept:
            raise BadInputError(
                path,
                f"instance id {instance.id} is on lines {line} and {number} with different "
                "content; keep one of them",
            )
        lines.setdefault(instance.id, [line]).append(number)
    if not first:
        raise BadInputError(path, "no instances to export")
    if lines and on_warning is not None:
        shown = "; ".join(
            f"{i} on lines {', '.join(map(str, at))}" for i, at in list(lines.items())[:3]
        )
        more = f"; ... {len(lines) - 3} more" if len(lines) > 3 else ""
        on_warning(
            f"{path}: {len(lines)} instance(s) repeated with identical content, each exported "
            f"once ({shown}{more})"
        )
    return [instance for _, instance in first.values()]


def read_drops(build_dir: Path) -> list[Drop]:
    """The build's rejections, for the card's drop counts; none when the file is absent."""
    for name in DROPS_FILES:
        if (build_dir / name).is_file():
            return read_jsonl(build_dir / name, Drop)
    return []


def write_format(
    name: str,
    instances: list[Instance],
    out_dir: Path,
    test_fraction: float | None,
    system_prompt: str | None,
    *,
    date_split: DateSplit | None = None,
    build_dir: Path | None = None,
    config_yaml: str | None = None,
) -> ExportResult:
    """Write one format into ``out_dir`` (the verifiers package names itself after
    ``build_dir`` and ships the resolved configuration, ``config_yaml``)."""
    if name == "verifiers":
        from papergym.export.verifiers import write_verifiers

        return write_verifiers(
            instances,
            out_dir,
            test_fraction=test_fraction,
            date_split=date_split,
            system_prompt=system_prompt,
            build_dir=build_dir,
            config_yaml=config_yaml,
        )
    if name == "verl":
        from papergym.export.verl import write_verl

        return write_verl(
            instances,
            out_dir,
            test_fraction=test_fraction,
            date_split=date_split,
            system_prompt=system_prompt,
        )
    if name == "trl":
        from papergym.export.trl import write_trl

        return write_trl(
            instances,
            out_dir,
            test_fraction=test_fraction,
            date_split=date_split,
            system_prompt=system_prompt,
        )
    if name == "hf":
        from papergym.export.hf import write_hf

        return write_hf(instances, out_dir, test_fraction=test_fraction, date_split=date_split)
    from papergym.export.parquet import write_parquet

    return write_parquet(instances, out_dir, test_fraction=test_fraction, date_split=date_split)


def run_export(
    build_dir: Path,
    formats: list[str],
    *,
    out: Path | None = None,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
    system_prompt: str | None = None,
    on_warning: Callable[[str], None] | None = None,
    config_yaml: str | None = None,
    missing_note: Callable[[Path], str | None] | None = None,
    compare_leakage: Sequence[Path] = (),
) -> list[ExportResult]:
    """Read the build folder and write every format with its card (the command, minus printing)
    and, when given, the resolved configuration (``config_yaml``) as config.yaml.

    ``on_warning`` is told of what is exported but not as it was found (repeated instances);
    ``missing_note`` explains a folder without instances.jsonl (see :func:`read_instances`).
    ``date_split`` splits by the papers' dates instead of ``test_fraction``'s hash.
    ``compare_leakage``: ``papergym audit`` output folders whose rates the card sets beside ours.
    Bad input (the folder, its files, the split, an undated paper the date rule refuses, a
    target holding other files) is a
    :class:`~papergym.errors.BadInputError`, raised before anything is written."""
    from papergym.export.card import write_card
    from papergym.export.leakage_card import read_comparison

    check_split(test_fraction)
    instances = read_instances(build_dir, on_warning, missing_note)
    splits = (  # decided once, before anything is written: an undated paper may be refused
        split_by_date(instances, date_split, build_dir / INSTANCES_FILE)
        if date_split is not None
        else split_instances(instances, test_fraction)
    )
    split_rule = split_rule_card(instances, splits, test_fraction, date_split)
    drops = read_drops(build_dir)
    usage, leakage, config = read_usage(build_dir), read_leakage(build_dir), read_config(build_dir)
    builder_note = read_builder_note(build_dir)
    comparison = read_comparison(compare_leakage)
    targets = {name: out_dir_for(build_dir, out, name, len(formats) > 1) for name in formats}
    for target in targets.values():  # every target checked before anything is written
        check_target(target)
    results = []
    for name in formats:
        target = targets[name]
        result = write_format(
            name,
            instances,
            target,
            test_fraction,
            system_prompt,
            date_split=date_split,
            build_dir=build_dir,
            config_yaml=config_yaml,
        )
        write_card(
            target,
            instances,
            drops,
            config=config,
            usage=usage,
            builder_note=builder_note,
            leakage=leakage,
            formats=[name],
            splits=result.rows,
            split_rule=split_rule,
            comparison=comparison,
            mix=_build_card(build_dir).get("mix"),  # the build's discipline mix, as it reported it
        )
        if config_yaml is not None:
            write_text_atomic(target / CONFIG_FILE, config_yaml)
        results.append(result)
    return results
