"""``papergym export``: built instances → verl / TRL / Hugging Face / parquet / a verifiers
environment, each with a card (the work is :func:`papergym.export.run.run_export`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, config_flags
from papergym.cli.groups import single_app
from papergym.export.common import ExportResult
from papergym.export.datesplit import date_rule
from papergym.export.run import ExportFormat, chosen_formats, run_export
from papergym.settings.load import config_yaml

app = single_app()

BuildDirArgument = Annotated[
    Path,
    typer.Argument(
        help="Build folder holding instances.jsonl (and, for the card, dropped.jsonl, "
        "build.yaml, card.json, leakage_report.json when present).",
        show_default=False,
    ),
]
FormatsOption = Annotated[
    list[ExportFormat] | None,
    typer.Option(
        "--format",
        "-f",
        help="Format to write (repeatable): verl, trl, hf, parquet, verifiers (an "
        "installable verifiers environment package), or all (verl, trl, hf and parquet). "
        "Default: all.",
        show_default=False,
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--out",
        help="Output folder. Default: BUILD_DIR/export/<format>. With several formats, "
        "each goes to OUT/<format>.",
        show_default=False,
    ),
]


CompareLeakageOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--compare-leakage",
        help="A papergym audit output folder (audit -o DIR) whose per-dataset leakage rates "
        "the card sets beside this dataset's, each with its method and denominator "
        "(repeatable).",
        show_default=False,
    ),
]


@app.command("export")
@reports_errors
@config_flags(
    split=("data.test_fraction", "--split"),
    split_by="data.split_by",
    test_after="data.test_after",
    undated="data.undated",
    system_prompt="data.system_prompt",
)
def export(
    build_dir: BuildDirArgument,
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    formats: FormatsOption = None,
    out: OutOption = None,
    compare_leakage: CompareLeakageOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Export built instances for verl, TRL, Hugging Face datasets, parquet or a verifiers environment, with a dataset card.

        Each format gets its own folder with card.md, card.json and config.yaml (the resolved configuration; -c FILE and key=value arguments set the data.* keys as the flags do).

    Splits: --split F holds out a share F of papers by a stable hash; --split-by date --test-after YYYY-MM puts papers dated after that month in test and the rest in train (the date ingestion parsed, else the arXiv id's month). A paper with no date is refused (exit 2, naming it) unless --undated train|test|drop places it. The card states the rule and each split's date range. Exit code 2 when instances.jsonl is missing or invalid, or repeats an instance id with different content (identical copies are exported once, with a warning), or when a --compare-leakage folder holds no leakage_report.json.
    """
    names = chosen_formats(formats)
    resolved = resolve(config, overrides, given)
    results = run_export(
        build_dir,
        names,
        out=out,
        test_fraction=resolved.data.test_fraction,
        date_split=date_rule(
            resolved.data.split_by, resolved.data.test_after, resolved.data.undated
        ),
        system_prompt=resolved.data.system_prompt,
        config_yaml=config_yaml(resolved),
        on_warning=lambda message: stderr.print(
            f"warning: {escape(message)}", highlight=False, soft_wrap=True
        ),
        missing_note=_unfinished_build,
        compare_leakage=compare_leakage or [],
    )
    instances = sum(r.total for r in results[:1])
    if json_output:
        payload = {
            "build_dir": str(build_dir),
            "instances": instances,
            "split": resolved.data.test_fraction,
            "split_by": resolved.data.split_by,
            "test_after": resolved.data.test_after,
            "exports": [r.as_dict() for r in results],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        _print_summary(results, instances)


def _unfinished_build(build_dir: Path) -> str | None:
    """What an ARES build folder without instances.jsonl holds and what to run next."""
    from papergym.recipes.ares.output import unfinished_note  # only when the file is missing

    return unfinished_note(build_dir)


def _rows_text(rows: dict[str, int]) -> str:
    if list(rows) == ["train"]:
        return f"{rows['train']:,}"
    return " / ".join(f"{n:,} {split}" for split, n in rows.items())


def _print_summary(results: list[ExportResult], instances: int) -> None:
    table = Table(title=f"Exported {instances:,} instance(s)", title_justify="left")
    table.add_column("format", no_wrap=True)
    table.add_column("rows", justify="right", no_wrap=True)
    table.add_column("path", overflow="fold")
    for result in results:
        table.add_row(result.format, _rows_text(result.rows), str(result.path))
    stdout.print(table)
