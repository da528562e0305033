"""A build folder records where each role's model is served, and resumes only there.

The same model name behind another server can be another model: continued there, a build would
mix papers written by two (issue 20, item 1's mistake at folder level). ``build.yaml`` records
each role's normalised endpoint (credentials stripped) or a local model's folder and weights;
a resume elsewhere is refused naming what differs, credentials masked. A build.yaml of an
earlier release records no endpoint: it resumes, and records them from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.ares.build import AresJob, ares_settings
from papergym.recipes.ares.output import AresSettings, check_ares_output
from papergym.recipes.output import (
    SETTINGS_FILE,
    BuildSettings,
    check_output,
    served_by,
    settings_for,
    start_output,
)

SECRET = "sk-secret-0123456789abcdef"


def llm(url: str) -> LLMConfig:
    return LLMConfig(default=BackendConfig(model="m", base_url=url))


def paper_settings(url: str) -> BuildSettings:
    return settings_for("papergym", "llm", llm(url))


def started(tmp_path: Path, settings: BuildSettings) -> Path:
    out = tmp_path / "env"
    start_output(out, settings)
    return out


def refusal(call: Callable[[], object]) -> str:
    """The one-line refusal ``call`` raises."""
    with pytest.raises(BadInputError) as caught:
        call()
    return str(caught.value)


def test_a_build_continued_on_another_endpoint_is_refused_naming_it_credentials_masked(
    tmp_path: Path,
) -> None:
    """Before: the same model name on port 8002 resumed the build made on 8001."""
    first = f"http://user:{SECRET}@127.0.0.1:8001/v1?api-key={SECRET}"
    out = started(tmp_path, paper_settings(first))
    recorded = (out / SETTINGS_FILE).read_text(encoding="utf-8")
    assert "endpoints:" in recorded and "http://127.0.0.1:8001/v1" in recorded
    assert SECRET not in recorded and "user" not in recorded

    message = refusal(lambda: check_output(out, paper_settings("http://127.0.0.1:8002/v1")))
    assert (
        "endpoints.extractor, endpoints.judge, endpoints.rubric, endpoints.writer: "
        "http://127.0.0.1:8001/v1 → http://127.0.0.1:8002/v1" in message
    )
    assert "models." not in message  # the name did not change; where it is served did
    assert SECRET not in message and "\n" not in message


def test_the_same_endpoint_spelled_otherwise_or_with_another_key_resumes(tmp_path: Path) -> None:
    out = started(tmp_path, paper_settings(f"http://user:{SECRET}@127.0.0.1:8001/v1"))
    assert check_output(out, paper_settings("HTTP://127.0.0.1:8001/v1/"))
    assert check_output(out, paper_settings("http://other:sk-rotated-key@127.0.0.1:8001/v1"))


def test_one_role_moved_to_another_server_is_named_alone(tmp_path: Path) -> None:
    config = llm("http://127.0.0.1:8001/v1")
    out = started(tmp_path, settings_for("papergym", "llm", config))
    moved = config.model_copy(
        update={"roles": {"judge": BackendConfig(model="m", base_url="http://10.0.0.7:8000/v1")}}
    )
    message = refusal(lambda: check_output(out, settings_for("papergym", "llm", moved)))
    assert "(endpoints.judge: http://127.0.0.1:8001/v1 → http://10.0.0.7:8000/v1)" in message


def test_an_earlier_build_yaml_without_endpoints_resumes_and_records_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "env"
    out.mkdir()
    earlier = paper_settings("http://127.0.0.1:8001/v1").model_dump(exclude={"endpoints"})
    (out / SETTINGS_FILE).write_text(yaml.safe_dump(earlier), encoding="utf-8")
    now = paper_settings("http://127.0.0.1:8002/v1")
    assert check_output(out, now)  # nothing recorded: not compared
    start_output(out, now)
    message = refusal(lambda: check_output(out, paper_settings("http://127.0.0.1:8003/v1")))
    assert "http://127.0.0.1:8002/v1 → http://127.0.0.1:8003/v1" in message


def test_the_extractive_builder_records_no_endpoint(tmp_path: Path) -> None:
    settings = settings_for("papergym", "extractive", llm("http://127.0.0.1:8001/v1"))
    assert settings.endpoints == {} and settings.models == {}


def test_new_weights_in_a_local_models_folder_are_another_model(tmp_path: Path) -> None:
    weights = tmp_path / "model"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"0" * 64)
    local = LLMConfig(default=BackendConfig(backend="hf", model=str(weights)))
    out = started(tmp_path, settings_for("papergym", "llm", local))
    before = served_by(local.for_role("writer"))
    assert before.startswith(f"{weights}#") and len(before) > len(f"{weights}#")
    (weights / "model.safetensors").write_bytes(b"1" * 128)  # retrained in place
    message = refusal(lambda: check_output(out, settings_for("papergym", "llm", local)))
    assert f"{before} → {served_by(local.for_role('writer'))}" in message


def test_a_local_model_given_relative_is_recorded_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.safetensors").write_bytes(b"0" * 64)
    monkeypatch.chdir(tmp_path)
    recorded = served_by(BackendConfig(backend="hf", model="model"))
    assert recorded.startswith("model#") and str(tmp_path) not in recorded


# --- ARES --------------------------------------------------------------------------------------


def ares_config(url: str | None) -> AresJob:
    return AresJob(llm=llm(url) if url else LLMConfig())


def ares_started(tmp_path: Path, settings: AresSettings) -> Path:
    out = tmp_path / "ares"
    start_output(out, settings, None)
    return out


def test_an_ares_llm_build_continued_on_another_endpoint_is_refused(tmp_path: Path) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:8001/v1"
    out = ares_started(tmp_path, ares_settings(ares_config(url), "llm"))
    assert check_ares_output(out, ares_settings(ares_config("http://127.0.0.1:8001/v1/"), "llm"))
    other = ares_settings(ares_config("http://127.0.0.1:8002/v1"), "llm")
    message = refusal(lambda: check_ares_output(out, other))
    assert "output folder holds an ARES build with a different configuration" in message
    assert "endpoints.extractor, endpoints.judge, endpoints.writer: " in message
    assert "http://127.0.0.1:8001/v1 → http://127.0.0.1:8002/v1" in message
    assert SECRET not in message + (out / SETTINGS_FILE).read_text(encoding="utf-8")


def test_an_offline_ares_folder_continues_on_any_endpoint_then_stays_there(
    tmp_path: Path,
) -> None:
    out = ares_started(tmp_path, ares_settings(ares_config(None), "offline"))
    chosen = ares_settings(ares_config("http://127.0.0.1:8002/v1"), "llm")
    assert check_ares_output(out, chosen)  # the LLM run chooses the models and their servers
    start_output(out, chosen, None)
    later = ares_settings(ares_config("http://127.0.0.1:8003/v1"), "llm")
    assert "endpoints." in refusal(lambda: check_ares_output(out, later))


def test_an_earlier_ares_build_yaml_without_endpoints_resumes(tmp_path: Path) -> None:
    out = tmp_path / "ares"
    out.mkdir()
    earlier = ares_settings(ares_config("http://127.0.0.1:8001/v1"), "llm")
    data = earlier.model_dump(exclude={"endpoints"})
    (out / SETTINGS_FILE).write_text(yaml.safe_dump(data), encoding="utf-8")
    assert check_ares_output(out, ares_settings(ares_config("http://127.0.0.1:8002/v1"), "llm"))
