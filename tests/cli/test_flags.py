"""Flags generated from config fields: name, type, bounds and help from the field, and the
overrides of the flags given (and only those) handed to the command."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from papergym.cli.flags import (
    Given,
    config_flags,
    description,
    field_of,
    help_text,
    llm_options,
)
from papergym.cli.groups import single_app
from papergym.settings.load import load_config

runner = CliRunner()


def _app() -> tuple[typer.Typer, list[Any]]:
    seen: list[Any] = []
    app = single_app()

    @app.command("demo")
    @config_flags(
        recipe="build.recipe",
        limit="build.limit",
        leakage_judge="build.leakage_judge",
        alpha=("reward.alpha", "--alpha", "-a"),
        per_call="reward.criteria_per_call",
    )
    def demo(path: Annotated[str, typer.Argument()], given: Given = ()) -> None:
        """A demo command."""
        seen.append((path, list(given)))

    return app, seen


def test_flags_take_name_type_and_help_from_the_field() -> None:
    app, _ = _app()
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in ("--recipe", "--limit", "--leakage-judge", "--no-leakage-judge", "--alpha", "-a"):
        assert name in text
    assert "papergym|innov|design|ares" in text  # a Literal field's choices
    assert description(field_of("build.limit")) in text
    assert "[build.limit; default none]" in text
    assert "[reward.alpha; default 0.7]" in text
    assert "(--limit)" not in text  # the docstring's flag marker is not repeated


def test_only_given_flags_become_overrides_and_the_config_validates_them() -> None:
    app, seen = _app()
    assert runner.invoke(app, ["p"]).exit_code == 0
    assert seen[-1] == ("p", [])
    result = runner.invoke(
        app, ["p", "--limit", "3", "--no-leakage-judge", "-a", "0.5", "--per-call", "2"]
    )
    assert result.exit_code == 0, result.output
    _, given = seen[-1]
    config = load_config(None, given, env={})
    assert (config.build.limit, config.build.leakage_judge) == (3, False)
    assert (config.reward.alpha, config.reward.criteria_per_call) == (0.5, 2)
    assert [o.label for o in given] == ["--limit", "--leakage-judge", "--alpha", "--per-call"]


def test_bounds_from_the_field_are_checked_by_click() -> None:
    app, _ = _app()
    result = runner.invoke(app, ["p", "--limit", "0"])
    assert result.exit_code == 2
    assert "--limit" in result.output and "1" in result.output


@pytest.mark.parametrize("key", ["build.limit", "reward.alpha", "review.threshold"])
def test_help_names_the_key_it_sets(key: str) -> None:
    assert help_text(key, field_of(key)).endswith("]")
    assert f"[{key}; default" in help_text(key, field_of(key))


def test_llm_options_stand_where_llm_is_and_become_its_overrides() -> None:
    seen: list[Any] = []
    app = single_app()

    @app.command("demo")
    @config_flags(limit="build.limit")
    @llm_options()
    def demo(
        path: Annotated[str, typer.Argument()],
        llm: Given = (),
        last: Annotated[bool, typer.Option("--last")] = False,
        given: Given = (),
    ) -> None:
        """A demo command."""
        seen.append((list(llm), list(given)))

    shown = runner.invoke(app, ["--help"], env={"COLUMNS": "300"}).output
    names = ("--llm-config", "--base-url", "--model", "--api-key-env", "--no-cache", "--cache-dir")
    places = [shown.index(name) for name in (*names, "--last", "--limit")]
    assert places == sorted(places)  # in the place of `llm`, the config flags last
    assert runner.invoke(app, ["p"]).exit_code == 0
    assert seen[-1] == ([], [])
    result = runner.invoke(app, ["p", "--model", "m", "--no-cache", "--limit", "2"])
    assert result.exit_code == 0, result.output
    llm, given = seen[-1]
    config = load_config(None, [*given, *llm])
    assert (config.llm.default.model, config.llm.cache, config.build.limit) == ("m", False, 2)


def test_llm_options_without_the_cache_flags() -> None:
    app = single_app()

    @app.command("demo")
    @llm_options(cache=False)
    def demo(llm: Given = ()) -> None:
        """A demo command."""

    shown = runner.invoke(app, ["--help"], env={"COLUMNS": "300"}).output
    assert "--base-url" in shown and "--no-cache" not in shown
