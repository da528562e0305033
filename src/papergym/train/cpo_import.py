"""The one place PaperGym imports TRL's CPO trainer, which SimPO + NLL training runs on.

In TRL 1.x the CPO trainer moved to ``trl.experimental.cpo``; importing anything under
``trl.experimental`` warns (``TRLExperimentalWarning``) that the API may change without notice.
We know, and pin the behaviour we rely on with a numerical test (tests/train/test_simpo_loss.py
compares TRL's loss with ours), so the warning is silenced here, for this import only, rather
than by setting ``TRL_EXPERIMENTAL_SILENCE`` for the whole process. Should a later TRL move the
trainer again, this module is the only one to change, and the error says what to do.
"""

from __future__ import annotations

import warnings
from typing import Any

CPO_MODULE = "trl.experimental.cpo"
"""Where the installed TRL (1.16) keeps ``CPOTrainer`` and ``CPOConfig``."""


def cpo_classes() -> tuple[type[Any], type[Any]]:
    """``(CPOTrainer, CPOConfig)`` from TRL, without its experimental-API warning.

    Raises ImportError with one line naming the module when this TRL has no CPO trainer there.
    """
    from trl.import_utils import TRLExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TRLExperimentalWarning)
        try:
            from trl.experimental.cpo import CPOConfig, CPOTrainer
        except ImportError as error:  # pragma: no cover - depends on the installed TRL
            raise ImportError(
                f"this TRL has no CPO trainer in {CPO_MODULE} ({error}); PaperGym's SimPO + NLL "
                "training is written against TRL 1.16: install a TRL that has it"
            ) from None
    return CPOTrainer, CPOConfig
