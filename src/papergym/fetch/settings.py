"""The ``fetch`` section: ``papergym fetch``."""

from __future__ import annotations

from pydantic import Field, field_validator

from papergym.configbase import ConfigSection

DEFAULT_BASE_URL = "https://export.arxiv.org"
DEFAULT_USER_AGENT = (
    "PaperGym-fetch/1 (PaperGym, a toolkit that turns papers into RL environments; "
    "set fetch.user_agent to name your project and a contact e-mail)"
)
"""The project publishes no URL yet: the default names PaperGym and asks the user for a contact."""


class FetchSection(ConfigSection):
    """``papergym fetch``: downloading arXiv sources and their metadata."""

    base_url: str = DEFAULT_BASE_URL
    """Where the arXiv API (/api/query), OAI-PMH (/oai2) and e-prints (/e-print/<id>) are served:
    arXiv's export host, or a mirror that serves the same paths (--base-url)."""
    delay_s: float = Field(3.0, ge=0.0)
    """Seconds to wait between two requests (arXiv asks for 3 s); every request, API or
    download, waits it (--delay)."""
    user_agent: str = Field(DEFAULT_USER_AGENT, min_length=1)
    """User-Agent header sent with every request: name your project and a contact address."""
    timeout_s: float = Field(60.0, gt=0.0)
    """Seconds to wait for a server's answer (connect and each read) before giving up."""
    max_retries: int = Field(4, ge=0)
    """Retries of a request answered 503 or 429, or cut by a network error."""
    backoff_s: float = Field(10.0, ge=0.0)
    """First wait before a retry, doubled at each retry; a Retry-After header, when longer, wins."""
    max_backoff_s: float = Field(300.0, ge=0.0)
    """The longest single wait before a retry (Retry-After included)."""
    page_size: int = Field(100, ge=1, le=2000)
    """Ids asked of the API per metadata request."""

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http:// or https:// URL, not {url!r}")
        return url.rstrip("/")
