"""Keep secrets out of what PaperGym records.

Text that comes from an endpoint (an error message, an echoed request) or names one (a base URL)
ends up in drop reasons, dataset cards, logs and stdout. Two kinds of secret can ride along: the
userinfo of a URL (``http://user:KEY@host``) and the value of an API key that a server echoes
back. ``redact`` removes both: URL userinfo always, and every key value registered with
``register_secret`` (the LLM layer registers each key it reads from the environment).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

MASK = "***"
# A key shorter than this is not worth masking: it would mask ordinary words ("test", "EMPTY").
_MIN_SECRET_LENGTH = 8
# scheme://userinfo@host — userinfo has no '/', '@' or whitespace.
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/@\s]+)@")

_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that ``redact`` masks it wherever it appears."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        with _lock:
            _secrets.add(value)


def redact_url(url: str) -> str:
    """``url`` without the userinfo part (``http://user:key@host/v1`` → ``http://***@host/v1``)."""
    return _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", url)


def redact(text: str) -> str:
    """``text`` with URL userinfo and every registered secret masked."""
    text = redact_url(text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def redact_data(value: Any) -> Any:
    """``value`` with secrets masked in every string it holds, mapping keys included (a
    configuration, a card's data)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
