"""Which model answers: a backend's identity, for every cache of answers and verdicts.

A model *name* does not say which model answers. ``m`` behind ``http://127.0.0.1:8001/v1`` and
``m`` behind ``:8002`` can be two different models, and ``runs/tiny/final`` holds other weights
after a second training run. So a cached answer is keyed by :func:`backend_identity`: the
backend's kind, the model, the normalised endpoints (an HTTP backend) or the weights' files
(a local model), and the settings that change what the model is asked or how it decodes.

Credentials never enter an identity: a URL's userinfo (``user:KEY@``) and query parameters
that carry keys or tokens (``?api-key=...``) are dropped, and the API key itself is read from
the environment by the backend, never here. Spellings of one address are one endpoint: scheme
and host are lower-cased, a default port (80, 443) and trailing slashes are dropped, and the
remaining query parameters are sorted.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from papergym.environment import environ
from papergym.llm.config import BackendConfig
from papergym.llm.grammar import CONSTRAINED, constrained_decoding

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
"""Where the OpenAI SDK sends requests when no base URL is given (nor $OPENAI_BASE_URL)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Query parameters that authenticate rather than select: Azure's api-key, signed URLs'
# sig/signature, access_token, a function key's code, and the like.
_CREDENTIAL_PARAMETER = re.compile(
    r"key|token|secret|passw|pwd|auth|sig|credential|session|^code$", re.IGNORECASE
)


def normalise_endpoint(url: str) -> str:
    """``url`` as one spelling per endpoint, with every credential stripped.

    >>> normalise_endpoint("HTTP://user:sk-123@LocalHost:80/v1/?api-key=sk-123&b=2&a=1")
    'http://localhost/v1?a=1&b=2'
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()  # hostname drops the userinfo
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a number: keep what was written, it will fail at the backend
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    query = sorted(
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _CREDENTIAL_PARAMETER.search(name)
    )
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), urlencode(query), ""))


def default_endpoint() -> str:
    """The endpoint an ``openai`` backend without a base URL reaches (as the SDK decides)."""
    return environ().get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL


def local_model_identity(model: str) -> str:
    """A local model folder's absolute path and a digest of its files' names, sizes and
    modification times, so that new weights in the same folder are a new model; anything
    else (a hub id) as given."""
    folder = Path(model).expanduser()
    if folder.is_file():  # one weights file (a GGUF): its path, size and modification time
        stat = folder.stat()
        return f"{folder.resolve()}#{stat.st_size}-{stat.st_mtime_ns}"
    if not folder.is_dir():
        return model
    folder = folder.resolve()
    files = sorted(
        (entry.name, stat.st_size, stat.st_mtime_ns)
        for entry in folder.iterdir()
        if entry.is_file() and (stat := entry.stat())
    )
    digest = hashlib.sha256(repr(files).encode("utf-8")).hexdigest()[:16]
    return f"{folder}#{digest}"


def backend_identity(config: BackendConfig) -> dict[str, Any]:
    """Everything about ``config`` that decides its answers besides the request itself.

    Left out on purpose: the API key variable, timeouts, retries, concurrency and rate limits
    (they decide whether an answer comes, not what it says).
    """
    # A set context length decides how long prompts are cut; when unset the key is absent, so
    # the identities (and cached answers) of configurations without it are unchanged.
    context = {"context_tokens": config.context_tokens} if config.context_tokens else {}
    if config.backend == "hf":
        # Decoding under the schema's grammar gives other answers than the prompt alone; only
        # then is the key present, so the identities of unconstrained hf backends are unchanged.
        grammar = {"structured_output": CONSTRAINED} if constrained_decoding(config) else {}
        return (
            {
                "backend": "hf",
                "model": local_model_identity(config.model),
                "gguf_file": config.gguf_file,
                "dtype": config.dtype,
                "device": config.device,
            }
            | context
            | grammar
        )
    endpoints = config.base_url or (default_endpoint(),)
    return {
        "backend": config.backend,
        "model": config.model,
        "endpoints": sorted({normalise_endpoint(url) for url in endpoints}),
        "structured_output": schema_mode_identity(config),
        "extra_body": config.extra_body,
    } | context


def identity_text(config: BackendConfig) -> str:
    """:func:`backend_identity` in one readable line, for records that say which model
    answered: ``m@http://127.0.0.1:8001/v1``, or a local folder with its weights' digest."""
    identity = backend_identity(config)
    if config.backend == "hf":
        words = [str(identity["model"])]
        words += [f"gguf_file={config.gguf_file}"] if config.gguf_file else []
        words += [f"dtype={config.dtype}"] if config.dtype != "auto" else []
        words += [f"device={config.device}"] if config.device else []
        return " ".join(words)
    words = [f"{config.model}@{','.join(identity['endpoints'])}"]
    if schema_mode_identity(config) != "response_format":
        words.append(f"structured_output={config.structured_output}")
    if config.extra_body:
        words.append(f"extra_body={json.dumps(config.extra_body, sort_keys=True)}")
    return " ".join(words)


def schema_mode_identity(config: BackendConfig) -> str:
    """How the schema is sent, as identities record it. ``json_schema`` keeps its old name
    (``response_format``) so that caches and build folders made before the rename still match;
    so does ``auto``, the new default: it sends ``response_format`` wherever the endpoint takes
    it, and where it does not, the mode it falls back to is decided by the endpoint, which the
    identity already names."""
    if config.structured_output in ("auto", "json_schema"):
        return "response_format"
    return config.structured_output
