"""The vocabulary of the LLM layer: messages, sampling parameters, usage, results and errors.

Every LLM-backed step of PaperGym speaks these types, whatever backend answers it.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from papergym.errors import PaperGymError

T = TypeVar("T", bound=BaseModel)

Role = Literal["extractor", "writer", "rubric", "judge", "reviewer", "policy"]
ROLES: tuple[Role, ...] = ("extractor", "writer", "rubric", "judge", "reviewer", "policy")


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class SamplingParams(BaseModel):
    """What changes a model's answer besides the messages; all of it is part of the cache key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, description="Sampling temperature.")
    max_tokens: int = Field(default=2048, description="Most tokens in an answer.")
    top_p: float | None = Field(default=None, description="Nucleus sampling (null: off).")
    seed: int | None = Field(default=None, description="Sampling seed, where the server takes one.")
    n: int = Field(default=1, ge=1, description="Number of samples wanted for this prompt.")
    stop: tuple[str, ...] | None = Field(default=None, description="Stop sequences.")


class Usage(BaseModel):
    """Tokens spent by one call (zero when the answer came from the cache)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    reasoning_chars: int = 0  # thinking kept out of the answer (server fields, <think> blocks)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            reasoning_chars=self.reasoning_chars + other.reasoning_chars,
        )


class PromptCut(BaseModel):
    """A prompt cut to fit the model's context before it was sent: which message, how much."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: int = Field(description="Index of the message whose content was cut.")
    tokens_before: int = Field(description="Prompt tokens before the cut.")
    tokens_after: int = Field(description="Prompt tokens after the cut.")
    chars_removed: int = Field(description="Characters taken out of the message.")
    context_tokens: int = Field(description="The context length the prompt was fitted to.")
    counted: Literal["tokenizer", "estimate"] = Field(
        description="How tokens were counted: the model's tokenizer, or the chars/3 estimate."
    )

    @property
    def tokens_removed(self) -> int:
        return self.tokens_before - self.tokens_after


class Completion(BaseModel):
    """One raw answer from a backend: text, why it stopped, what it cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    finish_reason: str | None = None
    usage: Usage = Usage()
    model: str = ""
    prompt_cut: PromptCut | None = None


class LLMResult(BaseModel, Generic[T]):
    """What a stage gets back: the text, the validated object when a schema was given, usage."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    text: str
    parsed: T | None = None
    usage: Usage = Usage()
    finish_reason: str | None = None
    cached: bool = False
    model: str = ""
    role: str = ""
    attempts: int = 1
    prompt_cut: PromptCut | None = None


class LLMError(PaperGymError):
    """Base of the LLM layer's errors; callers turn them into a dropped item or an unscored verdict."""


class LLMTransportError(LLMError):
    """The endpoint could not be reached or kept failing (after bounded retries)."""


class LLMTruncatedError(LLMError):
    """The answer was cut by the token limit: an error, never something to parse.

    ``completion`` is the cut answer, which the client caches so that a run asked again with
    the same budget reports the same cut without paying for it twice.
    """

    def __init__(self, message: str, *, completion: Completion | None = None) -> None:
        super().__init__(message)
        self.completion = completion


class LLMOutputError(LLMError):
    """The answer did not contain valid output for the schema, even after re-asking."""

    def __init__(
        self, message: str, *, last_text: str = "", errors: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.last_text = last_text
        self.errors = errors or []


class LLMContextError(LLMTransportError):
    """The prompt does not fit the model's context, even cut; or the server said so (a 400
    "maximum context length"-style error). Not transient: asking again the same way fails.

    A transport error still, as the server's 400 was before it had its own type: every caller
    that records an endpoint failure (eval, compare, the reviewer, the recipes) records this one
    the same way instead of crashing on an error it does not know."""

    def __init__(
        self, message: str, *, context_tokens: int | None = None, prompt_tokens: int | None = None
    ) -> None:
        super().__init__(message)
        self.context_tokens = context_tokens
        self.prompt_tokens = prompt_tokens


class BudgetExceededError(LLMError):
    """The run's token or cost budget is spent; the run stops cleanly."""


JSONSchema = dict[str, Any]
