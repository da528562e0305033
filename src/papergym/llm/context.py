"""Fitting prompts into a model's context, and recognising a server's context errors.

A real server answers a prompt longer than its context with a 400 ("This model's maximum
context length is 2048 tokens..."); a paper sent that way would be lost. So a prompt is fitted
before it is sent, by these rules:

- The answer keeps room for ``min(max_tokens, context // 2)`` tokens; the prompt gets the rest.
  When the prompt then leaves less than ``max_tokens``, the request's ``max_tokens`` is lowered
  to what is left (a server would refuse the request otherwise).
- A prompt over its budget loses the middle of its longest user message (the instructions at
  either end stay), marked ``[... N characters cut to fit the model's context ...]``; the cut
  is returned as a :class:`~papergym.llm.types.PromptCut` for the usage counts.
- Tokens are counted with the model's tokenizer where there is one (the ``hf`` backend), else
  estimated as ``ceil(characters / 3)`` plus 4 per message: English prose and LaTeX average 3.5
  to 4.5 characters a token in the tokenizers of the served models we know, so the estimate
  errs long. (Text of CJK scripts or long digit runs can be denser; a server's 400 then
  teaches the real ratio, see :func:`context_error`.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from papergym.llm.types import LLMContextError, Message, PromptCut

CHARS_PER_TOKEN = 3.0
"""Characters per token of the estimate used where no tokenizer is at hand (conservative)."""
TOKENS_PER_MESSAGE = 4
"""Tokens a chat template adds around each message, in the estimate."""
MARKER_TOKENS = 24
"""Tokens the cut's marker may take (a rough upper bound; the count after the cut checks)."""
MIN_KEPT_CHARS = 200
SMALLEST_SERVED_CONTEXT = 2048
"""Tokens every chat model we know of is served with at least: a prompt and answer that fit in
them are sent without asking the server for its context length. Asking costs a request, and
``transformers serve`` 5.10 without a Hugging Face cache folder dies of it (its ``/v1/models``
scans that folder and the error stops the server)."""
"""A cut message keeps at least this much, or the prompt is refused as unfittable."""

Counter = Callable[[Sequence[Message]], Awaitable[int]]


def estimate_tokens(
    messages: Sequence[Message], extra_chars: int = 0, chars_per_token: float = CHARS_PER_TOKEN
) -> int:
    """The conservative estimate of a prompt's tokens (``extra_chars``: a schema sent with it)."""
    chars = sum(len(m.content) for m in messages) + extra_chars
    return math.ceil(chars / chars_per_token) + TOKENS_PER_MESSAGE * len(messages)


@dataclass(frozen=True)
class Fitted:
    """A prompt ready to send: its messages, its token count, the answer's room, any cut."""

    messages: list[Message]
    prompt_tokens: int
    max_tokens: int
    cut: PromptCut | None


async def fit_prompt(
    messages: Sequence[Message],
    *,
    context_tokens: int,
    max_tokens: int,
    count: Counter,
    counted: str = "estimate",
) -> Fitted:
    """``messages`` fitted to ``context_tokens`` with room for the answer (see the module doc).

    Raises :class:`LLMContextError` when no cut of the longest user message makes it fit.
    """
    room = min(max_tokens, context_tokens // 2)
    budget = context_tokens - room
    tokens = await count(messages)
    if tokens <= budget:
        return Fitted(list(messages), tokens, min(max_tokens, context_tokens - tokens), None)
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        raise _unfittable(tokens, budget, context_tokens, "it has no user message to cut")
    index = max(users, key=lambda i: len(messages[i].content))
    text = messages[index].content
    fitted, after, keep = list(messages), tokens, len(text)
    # Characters per token of this prompt, then of what the cuts removed (re-measured each
    # round: two or three rounds suffice with a real tokenizer, one with the estimate).
    ratio = max(sum(len(m.content) for m in messages) / tokens, 0.5)
    for _ in range(8):
        over = after - budget
        if over <= 0:
            break
        keep = int(keep - (over + MARKER_TOKENS) * ratio)
        if keep < MIN_KEPT_CHARS:
            raise _unfittable(
                tokens, budget, context_tokens, "even with its longest user message cut"
            )
        fitted[index] = messages[index].model_copy(update={"content": cut_middle(text, keep)})
        after = await count(fitted)
        if tokens > after:
            ratio = max((len(text) - keep) / (tokens - after), 0.5)
    if after > budget:
        raise _unfittable(tokens, budget, context_tokens, "after cutting its longest user message")
    cut = PromptCut(
        message=index,
        tokens_before=tokens,
        tokens_after=after,
        chars_removed=len(text) - keep,
        context_tokens=context_tokens,
        counted="tokenizer" if counted == "tokenizer" else "estimate",
    )
    return Fitted(fitted, after, min(max_tokens, context_tokens - after), cut)


def cut_middle(text: str, keep: int) -> str:
    """``text`` with its middle taken out so that ``keep`` characters of it remain (three
    quarters from the start, one from the end), the cut marked where it was."""
    head = keep * 3 // 4
    tail = keep - head
    removed = len(text) - keep
    marker = f"\n[... {removed} characters cut to fit the model's context ...]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")


def _unfittable(tokens: int, budget: int, context: int, how: str) -> LLMContextError:
    return LLMContextError(
        f"context length exceeded: a prompt of {tokens} tokens cannot fit the {budget} tokens "
        f"a context of {context} leaves beside the answer, {how}",
        context_tokens=context,
        prompt_tokens=tokens,
    )


# What servers say when a prompt is too long: vLLM/SGLang/OpenAI ("maximum context length"),
# OpenAI's code context_length_exceeded, llama.cpp (exceed_context_size_error, "exceeds the
# available context size"), Ollama/TGI ("input is too long", "must be <= N tokens"), Anthropic-
# style proxies ("prompt is too long").
_CONTEXT_ERROR = re.compile(
    r"maximum context length|context[ _]length[ _]exceeded|context_length_exceeded"
    r"|exceeds? the (?:available )?context|exceed_context_size|context window|context size"
    r"|prompt is too long|input is too long|too many (?:input )?tokens"
    r"|longer than the model'?s? (?:maximum )?context",
    re.IGNORECASE,
)
_CONTEXT_LIMIT = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"['\"]?n_ctx['\"]?\s*[:=]\s*(\d+)"),
    re.compile(r"context (?:length|size|window) (?:of|is) (\d+)", re.IGNORECASE),
)
_PROMPT_TOKENS = (
    re.compile(r"(\d+) (?:tokens )?in the messages", re.IGNORECASE),
    re.compile(r"(?:has|requested|with) (\d+) (?:input|prompt) tokens", re.IGNORECASE),
    re.compile(r"['\"]?n_prompt_tokens['\"]?\s*[:=]\s*(\d+)"),
)


def context_error(status: int, text: str) -> LLMContextError | None:
    """The context error a server's ``status``/error ``text`` reports, with the context length
    and prompt tokens it states where it states them; ``None`` for any other error."""
    if status not in (400, 413, 422) or not _CONTEXT_ERROR.search(text):
        return None
    return LLMContextError(
        f"context length exceeded (HTTP {status}): {text}",
        context_tokens=_first_number(_CONTEXT_LIMIT, text),
        prompt_tokens=_first_number(_PROMPT_TOKENS, text),
    )


def _first_number(patterns: Sequence[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        if match := pattern.search(text):
            return int(match.group(1))
    return None


# Keys under which servers list a model's context length in GET /v1/models: vLLM and SGLang
# (max_model_len), LM Studio / OpenRouter style (context_length, max_context_length), and
# llama.cpp's server (meta.n_ctx, else the training context meta.n_ctx_train).
_MODEL_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window")
_META_CONTEXT_KEYS = ("n_ctx", "n_ctx_train")


def context_from_models(listing: object, model: str) -> int | None:
    """The context length the ``/v1/models`` body ``listing`` states for ``model`` (or for its
    only model, when the server lists one under another name), ``None`` where it says none."""
    entries = listing.get("data") if isinstance(listing, Mapping) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, Mapping)]
    mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in mine:
        meta = entry.get("meta")
        candidates = [entry.get(key) for key in _MODEL_CONTEXT_KEYS]
        if isinstance(meta, Mapping):
            candidates += [meta.get(key) for key in _META_CONTEXT_KEYS]
        for value in candidates:
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None
