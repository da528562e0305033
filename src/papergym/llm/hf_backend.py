"""The ``hf`` backend: a transformers causal LM in this process, with requests batched.

For a local folder (or a hub model where the network allows) there is no server to run: the
model loads on first use, in a thread so the event loop keeps serving. Concurrent ``complete``
calls are collected for a few milliseconds and answered by one left-padded ``generate`` call
per group of identical generation settings, because a batch of rows costs about as much as one
row on a GPU. Only one ``generate`` runs at a time.

A schema becomes an instruction in the prompt (with the compact JSON schema). With xgrammar
installed and ``structured_output`` not ``none``, it is also enforced while decoding, one grammar
per row of a batch (:mod:`papergym.llm.grammar`); either way the client validates the answer and
repairs it when it must.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel

from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig
from papergym.llm.gguf import (
    available_memory,
    gguf_source,
    local_gguf_path,
    read_header,
    refuse_if_too_big,
    weights_bytes,
)
from papergym.llm.grammar import RowGrammars, SchemaGrammars, constrained_decoding
from papergym.llm.structured import json_schema_for
from papergym.llm.types import Completion, LLMError, Message, SamplingParams, Usage

SCHEMA_INSTRUCTION = (
    "Answer with only a JSON value that conforms to the JSON schema below, and nothing else: "
    "no explanation before or after it, and no code fences.\n\nJSON schema:\n{schema}"
)


@dataclass(frozen=True)
class GenerationSettings:
    """What must be equal for requests to share one ``generate`` call."""

    temperature: float
    top_p: float | None
    max_tokens: int
    n: int
    seed: int | None
    stop: tuple[str, ...] | None

    @classmethod
    def of(cls, params: SamplingParams) -> GenerationSettings:
        if params.temperature == 0:  # greedy ignores these, so they must not split batches
            return cls(0.0, None, params.max_tokens, params.n, None, params.stop)
        return cls(
            params.temperature, params.top_p, params.max_tokens, params.n, params.seed, params.stop
        )

    @property
    def sampling(self) -> bool:
        return self.temperature > 0

    @property
    def solo(self) -> bool:
        """Seeded sampling runs alone: in a batch, the other rows would change its draws."""
        return self.sampling and self.seed is not None


@dataclass(frozen=True)
class LoadedModel:
    tokenizer: Any
    model: Any
    eos_ids: frozenset[int]
    pad_id: int


@dataclass(eq=False)  # compared by identity: two equal requests are still two callers
class _Request:
    prompt_ids: list[int]
    settings: GenerationSettings
    future: asyncio.Future[list[Completion]]
    arrived: float
    grammar: Any = None  # the compiled grammar its answer must follow (None: unconstrained)


RunBatch = Callable[[list[list[int]], list[Any], GenerationSettings], list[list[Completion]]]


class HFBackend:
    """A local transformers model answering chat requests, batched."""

    name = "hf"

    def __init__(self, config: BackendConfig) -> None:
        self.config = config
        self._loaded: LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._batcher: _Batcher | None = None
        self._grammars: SchemaGrammars | None = None
        self.constrained = constrained_decoding(config)
        """Whether structured answers are decoded under their schema's grammar."""

    @property
    def model(self) -> str:
        return self.config.model

    async def complete(
        self, messages: Sequence[Message], params: SamplingParams, schema: type[BaseModel] | None
    ) -> list[Completion]:
        """``params.n`` completions of ``messages``; the call's usage is on the first one."""
        loaded = await self.load()
        # In a thread: templating and tokenizing a paper-length prompt takes milliseconds.
        prompt_ids = await asyncio.to_thread(prompt_token_ids, loaded.tokenizer, messages, schema)
        grammar = None
        if schema is not None and self.constrained:  # compiled once per schema, in a thread
            grammar = await asyncio.to_thread(self._grammars_of(loaded).compiled, schema)
        return await self._current_batcher().submit(
            prompt_ids, GenerationSettings.of(params), grammar
        )

    async def render(self, messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        """The prompt text the model sees for ``messages`` (chat template applied)."""
        return render_prompt((await self.load()).tokenizer, messages, schema)

    async def ping(self) -> None:
        """Load the model now, so a wrong path fails before any work starts."""
        await self.load()

    async def context_limit(self, needed: int = 0) -> int | None:
        """The model's context length: ``context_tokens`` when set, else a GGUF file's
        metadata (read without loading), else the loaded model's ``max_position_embeddings``,
        else its tokenizer's ``model_max_length`` (when it is a real bound). Known locally, so
        asked whatever the prompt's size (``needed``)."""
        if self.config.context_tokens:
            return self.config.context_tokens
        path = local_gguf_path(self.config.model, self.config.gguf_file)
        if path is not None:
            return await asyncio.to_thread(lambda: read_header(path).context_length)
        return model_context_length(await self.load())

    async def count_prompt(
        self, messages: Sequence[Message], schema: type[BaseModel] | None
    ) -> int:
        """The prompt's exact token count, with the model's tokenizer and chat template."""
        loaded = await self.load()
        return len(await asyncio.to_thread(prompt_token_ids, loaded.tokenizer, messages, schema))

    counted = "tokenizer"
    # generate() is not refused an answer that runs past the model's positions (a server is),
    # and a max_tokens lowered per prompt length would split batches: only prompts are fitted.
    keeps_max_tokens = True

    async def load(self) -> LoadedModel:
        """The tokenizer and model, loaded once (in a thread) on first use."""
        if self._loaded is not None:
            return self._loaded
        return await asyncio.to_thread(self._load_once)

    async def close(self) -> None:
        await self.release()

    async def release(self) -> None:
        """Free the weights; a later call loads them again."""
        # Dropping the references frees the weights.
        self._loaded = None
        self._batcher = None
        self._grammars = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _load_once(self) -> LoadedModel:
        with self._load_lock:  # concurrent first calls wait for one load instead of racing
            if self._loaded is None:
                self._loaded = load_model(self.config)
            return self._loaded

    def _grammars_of(self, loaded: LoadedModel) -> SchemaGrammars:
        with self._load_lock:
            if self._grammars is None:
                self._grammars = SchemaGrammars(
                    loaded.tokenizer, loaded.model.config.vocab_size, loaded.eos_ids
                )
            return self._grammars

    def _current_batcher(self) -> _Batcher:
        # A batcher's futures and task belong to one event loop; a new loop gets a new one.
        loop = asyncio.get_running_loop()
        if self._batcher is None or self._batcher.loop is not loop:
            self._batcher = _Batcher(
                self._run_batch, self.config.batch_size, self.config.batch_wait_ms / 1000
            )
        return self._batcher

    def _run_batch(
        self, prompts: list[list[int]], grammars: list[Any], settings: GenerationSettings
    ) -> list[list[Completion]]:
        loaded = self._loaded or self._load_once()
        with self._generate_lock:
            try:
                return generate_batch(
                    loaded, prompts, settings, model_name=self.config.model, grammars=grammars
                )
            except (RuntimeError, ValueError) as error:  # bad settings, too long, out of memory
                first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise LLMError(f"{self.config.model}: generate failed: {first_line}") from error


def load_model(config: BackendConfig) -> LoadedModel:
    """Tokenizer and model from ``config.model`` (a folder or hub id), on the configured device."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    check_before_loading(config, device)
    source, gguf_file = gguf_source(config.model, config.gguf_file)
    try:
        gguf = {"gguf_file": gguf_file} if gguf_file else {}
        tokenizer = AutoTokenizer.from_pretrained(source, **gguf)
        model: Any = AutoModelForCausalLM.from_pretrained(source, dtype=config.dtype, **gguf)
    except OSError as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise BadInputError(None, f"hf backend cannot load '{config.model}': {reason}") from None
    model.to(device).eval()
    eos = model.generation_config.eos_token_id
    if eos is None:
        eos = tokenizer.eos_token_id
    eos_ids = frozenset([eos] if isinstance(eos, int) else eos or [])
    pad = model.generation_config.pad_token_id
    if pad is None:
        # Any id will do: padded positions are masked out and cut from the answers.
        pad = tokenizer.pad_token_id
        pad = pad if pad is not None else min(eos_ids, default=0)
    return LoadedModel(tokenizer=tokenizer, model=model, eos_ids=eos_ids, pad_id=pad)


NO_BOUND = 10**7
"""A tokenizer's ``model_max_length`` at or above this is transformers' "no limit" placeholder."""


def model_context_length(loaded: LoadedModel) -> int | None:
    """The context length a loaded model or its tokenizer states, ``None`` when neither does."""
    positions = getattr(loaded.model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        return positions
    bound = getattr(loaded.tokenizer, "model_max_length", None)
    return bound if isinstance(bound, int) and 0 < bound < NO_BOUND else None


def check_before_loading(config: BackendConfig, device: str) -> None:
    """Refuse, before any loading, a GGUF path that is missing or not GGUF, and weights that
    cannot fit in memory (see :mod:`papergym.llm.gguf` for the rule)."""
    path = local_gguf_path(config.model, config.gguf_file)
    if path is not None:
        needed = weights_bytes(read_header(path).parameters, config.dtype)
    elif (folder := Path(config.model).expanduser()).is_dir():
        path = folder
        needed = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    else:
        return  # a hub id: its size is not known before downloading
    refuse_if_too_big(path, needed, available_memory(device), device)


def conversation_for(
    messages: Sequence[Message], schema: type[BaseModel] | None
) -> list[dict[str, str]]:
    """``messages`` as chat-template dicts, with the JSON instruction added when a schema is given.

    The instruction goes at the end of the last user message, where models attend most, unless
    that message already shows the schema (the client's repair prompts do); with no user message
    it joins (or becomes) the leading system message, the one place every chat template accepts
    a system turn.
    """
    conversation = [message.model_dump() for message in messages]
    if schema is None:
        return conversation
    compact = json.dumps(json_schema_for(schema), ensure_ascii=False, separators=(",", ":"))
    instruction = SCHEMA_INSTRUCTION.format(schema=compact)
    users = [i for i, message in enumerate(conversation) if message["role"] == "user"]
    if users:
        last = conversation[users[-1]]
        if compact not in last["content"]:
            last["content"] = f"{last['content']}\n\n{instruction}"
    elif conversation and conversation[0]["role"] == "system":
        conversation[0]["content"] = f"{conversation[0]['content']}\n\n{instruction}"
    else:
        conversation.insert(0, {"role": "system", "content": instruction})
    return conversation


def render_prompt(
    tokenizer: Any, messages: Sequence[Message], schema: type[BaseModel] | None
) -> str:
    """The chat template applied to ``messages``, ending where the assistant's answer begins."""
    try:
        prompt: str = tokenizer.apply_chat_template(
            conversation_for(messages, schema), add_generation_prompt=True, tokenize=False
        )
    except ValueError as error:  # no chat template, or the template refused the roles
        raise LLMError(f"cannot apply the chat template: {error}") from error
    return prompt


def prompt_token_ids(
    tokenizer: Any, messages: Sequence[Message], schema: type[BaseModel] | None
) -> list[int]:
    """The prompt's token ids; the template already wrote any BOS, so none is added."""
    ids: list[int] = tokenizer(
        render_prompt(tokenizer, messages, schema), add_special_tokens=False
    )["input_ids"]
    return ids


def generate_batch(
    loaded: LoadedModel,
    prompts: list[list[int]],
    settings: GenerationSettings,
    *,
    model_name: str = "",
    grammars: Sequence[Any] | None = None,
) -> list[list[Completion]]:
    """One ``generate`` call for ``prompts``; per prompt, ``settings.n`` completions.
    ``grammars``: per prompt, the compiled grammar its answers must follow, or None."""
    model = loaded.model
    input_ids, attention_mask = left_pad(prompts, loaded.pad_id)
    # Greedy decoding gives n identical answers, and generate refuses n > 1 without sampling.
    rows_per_prompt = settings.n if settings.sampling else 1
    options = _generate_options(loaded, settings, rows_per_prompt)
    if grammars is not None and any(g is not None for g in grammars):
        from transformers import LogitsProcessorList

        # generate repeats each prompt's row rows_per_prompt times, next to each other
        per_row = [grammar for grammar in grammars for _ in range(rows_per_prompt)]
        vocab_size = model.config.vocab_size
        options["logits_processor"] = LogitsProcessorList([RowGrammars(per_row, vocab_size)])
    with torch.inference_mode(), _seeded(settings.seed, model.device):
        output = model.generate(
            input_ids=input_ids.to(model.device),
            attention_mask=attention_mask.to(model.device),
            **options,
        )
    rows: list[list[int]] = output[:, input_ids.shape[1] :].tolist()
    results = []
    for index, prompt in enumerate(prompts):
        mine = rows[index * rows_per_prompt : (index + 1) * rows_per_prompt]
        answers = [_answer(loaded, row, settings) for row in mine]
        answers = answers * settings.n if rows_per_prompt == 1 else answers
        results.append(_completions(answers, len(prompt), model_name))
    return results


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``[batch, width]`` ids and attention mask, sequences aligned to the right edge (so every
    row's answer starts at the same column)."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, seq in enumerate(sequences):
        if seq:
            ids[i, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            mask[i, width - len(seq) :] = 1
    return ids, mask


def _generate_options(
    loaded: LoadedModel, settings: GenerationSettings, rows_per_prompt: int
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "max_new_tokens": settings.max_tokens,
        "do_sample": settings.sampling,
        "num_return_sequences": rows_per_prompt,
        "pad_token_id": loaded.pad_id,
        "eos_token_id": sorted(loaded.eos_ids),
    }
    if settings.sampling:
        options["temperature"] = settings.temperature
        if settings.top_p is not None:
            options["top_p"] = settings.top_p
    if settings.stop:  # stop generating at a stop string rather than only cutting the text
        options["stop_strings"] = list(settings.stop)
        options["tokenizer"] = loaded.tokenizer
    return options


@contextlib.contextmanager
def _seeded(seed: int | None, device: torch.device) -> Iterator[None]:
    """Sampling from ``seed``, without disturbing the process's own random streams."""
    if seed is None:
        yield
        return
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


@dataclass(frozen=True)
class _Answer:
    text: str
    tokens: int
    finish_reason: str


def _answer(loaded: LoadedModel, row: list[int], settings: GenerationSettings) -> _Answer:
    """One generated row as text, its token count (padding excluded) and why it ended."""
    ended = next((i for i, token in enumerate(row) if token in loaded.eos_ids), None)
    if ended is not None:
        length = ended + 1
    else:  # rows that finished early (a stop string) are filled with padding after the end
        length = len(row)
        while length and row[length - 1] == loaded.pad_id:
            length -= 1
    text = loaded.tokenizer.decode(row[:length], skip_special_tokens=True)
    cut = min((i for i in (text.find(s) for s in settings.stop or ()) if i >= 0), default=None)
    if cut is not None:
        return _Answer(text[:cut], length, "stop")
    at_limit = ended is None and length >= settings.max_tokens
    return _Answer(text, length, "length" if at_limit else "stop")


def _completions(answers: list[_Answer], prompt_tokens: int, model_name: str) -> list[Completion]:
    usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=sum(a.tokens for a in answers))
    return [
        Completion(
            text=answer.text,
            finish_reason=answer.finish_reason,
            usage=usage if index == 0 else Usage(),
            model=model_name,
        )
        for index, answer in enumerate(answers)
    ]


class _Batcher:
    """Collects concurrent requests for a moment, then runs them as few batched calls.

    A batch is up to ``size`` requests with equal settings, gathered until the oldest has
    waited ``wait_s``; batches run one after another, each in a worker thread.
    """

    def __init__(self, run: RunBatch, size: int, wait_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self._run = run
        self._size = size
        self._wait_s = wait_s
        self._pending: list[_Request] = []
        self._arrived = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    async def submit(
        self, prompt_ids: list[int], settings: GenerationSettings, grammar: Any = None
    ) -> list[Completion]:
        request = _Request(
            prompt_ids, settings, self.loop.create_future(), self.loop.time(), grammar
        )
        self._pending.append(request)
        self._arrived.set()
        if self._worker is None or self._worker.done():
            self._worker = self.loop.create_task(self._drain())
        return await request.future

    async def _drain(self) -> None:
        while self._pending:
            await self._fill()
            batch = self._take()
            if not batch:
                continue
            try:
                results = await asyncio.to_thread(
                    self._run,
                    [r.prompt_ids for r in batch],
                    [r.grammar for r in batch],
                    batch[0].settings,
                )
            except Exception as error:  # handed to every waiting caller, who re-raises it
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(error)
                continue
            for request, result in zip(batch, results, strict=True):
                if not request.future.done():  # a caller may have been cancelled meanwhile
                    request.future.set_result(result)

    async def _fill(self) -> None:
        # Counted from the oldest request's arrival: requests that queued up while the previous
        # batch was generating have waited long enough already.
        deadline = self._pending[0].arrived + self._wait_s
        while not self._oldest_batch_full() and (left := deadline - self.loop.time()) > 0:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)

    def _oldest_batch_full(self) -> bool:
        first = self._pending[0]
        if first.settings.solo:
            return True
        return sum(r.settings == first.settings for r in self._pending) >= self._size

    def _take(self) -> list[_Request]:
        """The oldest request and the ones sharing its settings, in arrival order."""
        self._pending = [r for r in self._pending if not r.future.done()]
        if not self._pending:
            return []
        first = self._pending[0]
        limit = 1 if first.settings.solo else self._size
        batch = [r for r in self._pending if r.settings == first.settings][:limit]
        self._pending = [r for r in self._pending if r not in batch]
        return batch
