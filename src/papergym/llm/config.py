"""LLM configuration: which backend and model answers each role.

One YAML file maps roles to backends::

    default:                      # used by every role not listed under roles
      backend: openai
      base_url: http://localhost:8000/v1     # or a list: several endpoints, round-robin
      model: Qwen/Qwen3-8B
      api_key_env: OPENAI_API_KEY            # the *name* of the variable, never the key
      max_concurrency: 64
      timeout: 120                # seconds one request may take before it is retried
      max_retries: 3
      deadline: 300               # seconds one call may take in all, retries included
    roles:
      judge: {backend: openai, base_url: http://judge:8000/v1, model: Qwen/Qwen3-4B}
    prices:                       # USD per million tokens; unpriced models show as unpriced
      Qwen/Qwen3-8B: {input: 0.1, output: 0.4}
    budget_usd: 20

For the common single-model case, ``--base-url/--model/--api-key-env`` flags or the
``PAPERGYM_BASE_URL``, ``PAPERGYM_MODEL`` and ``PAPERGYM_API_KEY_ENV`` variables suffice.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from papergym.configload import read_yaml
from papergym.environment import environ
from papergym.errors import BadInputError
from papergym.llm.servers import (
    DEFAULT_RETRY_STATUSES,
    LEGACY_MODES,
    PRESETS,
    ErrorBody,
    Preset,
    StructuredOutput,
)
from papergym.llm.types import ROLES, Role, SamplingParams

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_DEADLINE_S = 300.0
DEFAULT_MAX_TOKENS_CEILING = 8192


class BackendConfig(BaseModel):
    """How to reach one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["openai", "hf"] = Field(
        default="openai",
        description="openai: an OpenAI-compatible HTTP endpoint; hf: a transformers model in "
        "this process.",
    )
    model: str = Field(
        description="Model name at the endpoint (hf: a hub name, a folder, or a .gguf file)."
    )
    base_url: tuple[str, ...] = Field(
        default=(), description="One or more OpenAI-compatible endpoints, used round-robin."
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    max_concurrency: int = Field(default=64, ge=1, description="In-flight requests per endpoint.")
    requests_per_minute: float | None = Field(
        default=None, gt=0, description="Request rate limit per endpoint (null: none)."
    )
    tokens_per_minute: float | None = Field(
        default=None, gt=0, description="Token rate limit per endpoint (null: none)."
    )
    # A structured answer of a few thousand tokens takes well under two minutes on a loaded
    # server; a request that has not finished by then is more likely hung than slow, and one
    # hung request must not hold a paper for long (600 s x 5 attempts was 50 minutes).
    timeout: float = Field(
        default=DEFAULT_TIMEOUT_S,
        gt=0,
        description="Seconds one request may take, from sending it to the last byte of the "
        "answer, before it is abandoned and retried.",
    )
    max_retries: int = Field(
        default=DEFAULT_MAX_RETRIES,
        ge=0,
        description="Retries after a failed request (connection error, timeout, HTTP 408/409/"
        "425/429/5xx, or a status-200 body that is not a chat completion).",
    )
    deadline: float | None = Field(
        default=DEFAULT_DEADLINE_S,
        gt=0,
        description="Most seconds one call may spend at the endpoint, every attempt and backoff "
        "included (waiting for a free slot under max_concurrency or the rate limits is not "
        "counted); null for no bound beyond timeout x (max_retries + 1).",
    )
    retry_base_delay: float = Field(
        default=0.5, ge=0, description="First backoff in seconds; doubles per retry, with jitter."
    )
    max_tokens_ceiling: int = Field(
        default=DEFAULT_MAX_TOKENS_CEILING,
        ge=1,
        description="An answer cut by max_tokens is asked once more with max_tokens doubled, up "
        "to this ceiling, before it counts as truncated; at or below max_tokens, no retry.",
    )
    structured_output: StructuredOutput = Field(
        default="auto",
        description="How the schema is sent: auto (the best mode the endpoint takes: "
        "json_schema, then json_object, ollama_format, structured_outputs, guided_json, none, "
        "each asked again in the next when refused with HTTP 400/422, remembered per endpoint "
        "for the process and from llm-check's record), json_schema (OpenAI response_format; "
        "the old name response_format is read as this), json_object (response_format "
        "json_object with a schema: llama.cpp, llama-cpp-python), ollama_format (the schema as "
        "format), structured_outputs (vLLM>=0.12), guided_json (older vLLM), or none (prompt "
        "only). The answer is validated locally either way. hf backend: none puts the schema "
        "in the prompt only; any other mode also enforces it while decoding (constrained "
        "decoding, needs xgrammar: pip install 'papergym[grammar]'; without it, prompt only).",
    )
    repair_attempts: int = Field(
        default=2,
        ge=0,
        le=5,
        description="Times an answer that fails its schema is sent back with the errors.",
    )
    params: SamplingParams = Field(
        default=SamplingParams(), description="Default sampling settings of this backend."
    )
    extra_body: dict[str, object] = Field(
        default_factory=dict, description="Extra JSON fields sent with every request."
    )
    # Only the hf backend (a transformers model in this process) reads these.
    device: str | None = Field(default=None, description="hf: torch device; None = cuda if any.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto", description="hf: dtype of the weights."
    )
    gguf_file: str | None = Field(
        default=None,
        description="hf: a GGUF file inside the model folder (or hub repo) to load, "
        "dequantised by transformers (needs the gguf package).",
    )
    batch_size: int = Field(default=8, ge=1, description="hf: most requests in one generate.")
    batch_wait_ms: float = Field(default=10.0, ge=0, description="hf: wait to fill a batch.")
    context_tokens: int | None = Field(
        default=None,
        ge=16,
        description="The model's context length in tokens (prompt and answer together). null: "
        "the server's /v1/models entry where it says (vLLM max_model_len, llama.cpp n_ctx, ...), "
        "else a local model's own (GGUF metadata, max_position_embeddings); unknown: prompts are "
        "sent as they are. A prompt longer than context_tokens - max_tokens (max_tokens at most "
        "half the context) is cut to fit before it is sent (the middle of its longest user "
        "message), and the cut is counted in the usage.",
    )

    # Added for real servers (issue 22): presets, retry statuses, error bodies, slow servers.
    preset: Preset | None = Field(
        default=None,
        description="The server behind this backend (vllm, sglang, ollama, llamacpp, openai, "
        "transformers): sets structured_output, retry_statuses and error_body to what it "
        "supports (docs/llm.md has the table); a field given explicitly wins.",
    )
    retry_statuses: tuple[int, ...] = Field(
        default=DEFAULT_RETRY_STATUSES,
        description="HTTP statuses that are retried (with backoff); other 4xx/5xx fail at once.",
    )
    error_body: ErrorBody = Field(
        default="auto",
        description="Where the server's error bodies put the message shown in errors: openai "
        "(error.message), vllm (message, as SGLang too), fastapi (detail: transformers serve), "
        "or auto (any of them).",
    )
    tokens_per_s: float | None = Field(
        default=None,
        gt=0,
        description="The slowest generation speed (tokens per second per request) to wait for: "
        "a request may take max(timeout, max_tokens / tokens_per_s) seconds, and deadline grows "
        "by the same factor. Null: the speed measured at the endpoint in this process (or by "
        "llm-check), with room for the server to be twice as slow; the timeout alone before any "
        "measurement.",
    )

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("structured_output", mode="before")
    @classmethod
    def _legacy_mode(cls, value: object) -> object:
        return LEGACY_MODES.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: object) -> object:
        """A preset's fields, under those given explicitly."""
        if isinstance(data, dict) and isinstance(data.get("preset"), str):
            return {**PRESETS.get(data["preset"], {}), **data}
        return data


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class LLMConfig(BaseModel):
    """Roles → backends, prices, budget and cache settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default: BackendConfig | None = Field(
        default=None, description="The backend of every role not listed under roles."
    )
    roles: dict[Role, BackendConfig] = Field(
        default_factory=dict, description="A backend per role, in place of the default."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="USD per million tokens by model name ({input, output, cached_input}); "
        "unpriced models show as unpriced.",
    )
    budget_usd: float | None = Field(
        default=None, gt=0, description="Spend after which the run stops cleanly (null: none)."
    )
    budget_tokens: int | None = Field(
        default=None, gt=0, description="Tokens after which the run stops cleanly (null: none)."
    )
    cache: bool = Field(default=True, description="Read and write the LLM response cache.")
    cache_dir: Path | None = Field(
        default=None, description="Folder of the response cache (null: ~/.cache/papergym)."
    )

    preset: Preset | None = Field(
        default=None,
        description="The server behind every backend without its own preset (vllm, sglang, "
        "ollama, llamacpp, openai, transformers): see default.preset.",
    )

    @model_validator(mode="before")
    @classmethod
    def _preset_for_each_backend(cls, data: object) -> object:
        """``preset`` handed to every backend that names none (explicit fields still win)."""
        if not isinstance(data, dict) or not isinstance(data.get("preset"), str):
            return data
        preset = data["preset"]
        data = dict(data)
        if data.get("default") is not None:
            data["default"] = _with_preset(data["default"], preset)
        if isinstance(data.get("roles"), dict):
            data["roles"] = {
                role: _with_preset(backend, preset) for role, backend in data["roles"].items()
            }
        return data

    def for_role(self, role: Role) -> BackendConfig:
        """The backend that answers ``role``; a missing one is a configuration error."""
        backend = self.roles.get(role, self.default)
        if backend is None:
            raise BadInputError(None, f"no LLM configured for role '{role}' (and no default)")
        return backend

    @property
    def configured(self) -> bool:
        return self.default is not None or bool(self.roles)


def _with_preset(backend: object, preset: str) -> object:
    """``backend`` (a mapping or a config) with ``preset`` when it names none itself."""
    if isinstance(backend, BackendConfig):
        if "preset" in backend.model_fields_set:
            return backend
        return {**backend.model_dump(exclude_unset=True), "preset": preset}
    if isinstance(backend, dict) and "preset" not in backend:
        return {**backend, "preset": preset}
    return backend


NO_LLM_HINT = "pass --llm-config, or --base-url and --model, or set llm in the -c file"
"""How to give an LLM: said after a refusal for want of one."""

Offline = TypeVar("Offline", bound=str)


def require_llm(llm: LLMConfig, refusal: str) -> None:
    """Refuse (bad input, one line: ``refusal`` and the ways to give one) when no LLM is
    configured."""
    if not llm.configured:
        raise BadInputError(None, f"{refusal}: {NO_LLM_HINT}")


def llm_or(choice: str, offline: Offline, llm: LLMConfig, refusal: str) -> Literal["llm"] | Offline:
    """A setting that is ``llm``, ``auto`` or the ``offline`` way, resolved: ``auto`` is
    ``llm`` when an LLM is configured, else ``offline``; ``llm`` without one is refused
    (``refusal``: which setting asked for it)."""
    if choice == "llm":
        require_llm(llm, refusal)
        return "llm"
    if choice == "auto" and llm.configured:
        return "llm"
    return offline


def load_llm_config(
    path: Path | None = None,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> LLMConfig:
    """The configuration from a YAML file, then flags, then ``PAPERGYM_*`` variables.

    Flags and variables fill or override the *default* backend; without any of them (and no
    file) the result is unconfigured, which means: use the embedded, LLM-free default.
    """
    env = environ() if env is None else env
    path = path or (Path(env["PAPERGYM_LLM_CONFIG"]) if env.get("PAPERGYM_LLM_CONFIG") else None)
    data = _read_yaml(path) if path else {}
    overrides = {
        "base_url": base_url or env.get("PAPERGYM_BASE_URL"),
        "model": model or env.get("PAPERGYM_MODEL"),
        "api_key_env": api_key_env or env.get("PAPERGYM_API_KEY_ENV"),
    }
    overrides = {k: v for k, v in overrides.items() if v}
    if overrides:
        given = data.get("default") or {}
        if not isinstance(given, dict):
            raise BadInputError(path, "'default' must be a mapping (backend, base_url, model, ...)")
        default: dict[str, object] = {**given, **overrides}
        data["default"] = default
    if no_cache:
        data["cache"] = False
    if cache_dir or env.get("PAPERGYM_CACHE_DIR"):
        data["cache_dir"] = str(cache_dir or env["PAPERGYM_CACHE_DIR"])
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInputError(
            path or "LLM options", f"invalid LLM config at '{where}': {first['msg']}"
        ) from None


def _read_yaml(path: Path) -> dict[str, object]:
    data = read_yaml(path, missing="no such LLM config file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadInputError(path, "an LLM config must be a mapping (default:, roles:, prices:)")
    unknown = set(data.get("roles") or {}) - set(ROLES)
    if unknown:
        raise BadInputError(
            path, f"unknown role(s) {sorted(unknown)}; roles are {', '.join(ROLES)}"
        )
    return data
