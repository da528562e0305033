"""The LLM layer: one async protocol over OpenAI-compatible servers and local models."""

from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig, load_llm_config
from papergym.llm.types import (
    BudgetExceededError,
    LLMError,
    LLMOutputError,
    LLMResult,
    LLMTransportError,
    LLMTruncatedError,
    Message,
    SamplingParams,
    Usage,
)

__all__ = [
    "BackendConfig",
    "BudgetExceededError",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMOutputError",
    "LLMResult",
    "LLMTransportError",
    "LLMTruncatedError",
    "Message",
    "SamplingParams",
    "Usage",
    "load_llm_config",
]
