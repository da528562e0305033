"""SimPO + NLL: our formula by hand, and TRL's CPO trainer held to it on the same tiny batch."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
import torch
from datasets import Dataset

from papergym.train.cpo_import import cpo_classes
from papergym.train.models import load_model, load_tokenizer
from papergym.train.simpo_loss import IGNORE, simpo_nll_loss, token_logps


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x))


def test_simpo_nll_matches_the_formula_by_hand() -> None:
    # two pairs; masks make the completions 2 and 3 tokens (chosen), 3 and 1 (rejected)
    chosen = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, -0.5, -2.0]])
    chosen_mask = torch.tensor([[True, True, False], [True, True, True]])
    rejected = torch.tensor([[-3.0, -1.0, -2.0], [-4.0, 0.0, 0.0]])
    rejected_mask = torch.tensor([[True, True, True], [True, False, False]])
    beta, gamma, alpha = 2.0, 0.5, 0.7

    got = simpo_nll_loss(
        chosen, chosen_mask, rejected, rejected_mask, beta=beta, gamma=gamma, alpha=alpha
    )

    r_w = [(-1 - 2) / 2, (-0.5 - 0.5 - 2) / 3]  # length-normalised log-likelihoods
    r_l = [(-3 - 1 - 2) / 3, -4 / 1]
    preference = (
        sum(-_log_sigmoid(beta * (w - rj - gamma / beta)) for w, rj in zip(r_w, r_l, strict=True))
        / 2
    )
    nll = (1 + 2 + 0.5 + 0.5 + 2) / 5  # token mean over all chosen tokens of the batch
    assert got.preference.item() == pytest.approx(preference, rel=1e-6)
    assert got.nll.item() == pytest.approx(nll, rel=1e-6)
    assert got.loss.item() == pytest.approx(preference + alpha * nll, rel=1e-6)
    assert got.margin.item() == pytest.approx((r_w[0] - r_l[0] + r_w[1] - r_l[1]) / 2)


def test_alpha_zero_is_simpo_alone_and_margin_lowers_the_loss() -> None:
    logps = torch.tensor([[-1.0, -1.0]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    worse = torch.tensor([[-3.0, -3.0]])
    alone = simpo_nll_loss(logps, mask, worse, mask, beta=1.0, gamma=0.0, alpha=0.0)
    assert alone.loss.item() == pytest.approx(alone.preference.item())
    assert alone.loss.item() == pytest.approx(-_log_sigmoid(2.0))
    swapped = simpo_nll_loss(worse, mask, logps, mask, beta=1.0, gamma=0.0, alpha=0.0)
    assert swapped.loss.item() > alone.loss.item()


def test_empty_completion_and_bad_beta_are_refused() -> None:
    logps = torch.zeros(1, 2)
    full = torch.ones(1, 2, dtype=torch.bool)
    with pytest.raises(ValueError, match="completion token"):
        simpo_nll_loss(logps, full, logps, ~full, beta=1.0, gamma=0.0, alpha=1.0)
    with pytest.raises(ValueError, match="beta"):
        simpo_nll_loss(logps, full, logps, full, beta=0.0, gamma=0.0, alpha=1.0)


def test_token_logps_shift_and_mask() -> None:
    logits = torch.log_softmax(torch.randn(1, 4, 5, generator=torch.Generator().manual_seed(0)), -1)
    labels = torch.tensor([[IGNORE, 2, 3, IGNORE]])
    values, mask = token_logps(logits, labels)
    assert mask.tolist() == [[True, True, False]]
    assert values[0, 0].item() == pytest.approx(logits[0, 0, 2].item(), abs=1e-6)
    assert values[0, 1].item() == pytest.approx(logits[0, 1, 3].item(), abs=1e-6)


def test_cpo_import_point_is_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer, config = cpo_classes()
    assert trainer.__name__ == "CPOTrainer"
    assert config.__name__ == "CPOConfig"


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_trl_cpo_simpo_loss_equals_ours(tiny_model: Path, tmp_path: Path, alpha: float) -> None:
    """TRL's loss on one batch of real pairs equals ours on the same logits."""
    trainer_class, config_class = cpo_classes()
    beta, gamma = 2.0, 0.8
    pairs = [
        {"prompt": "Write about attention.", "chosen": "We study attention.", "rejected": "No."},
        {"prompt": "Plan a study.", "chosen": "Collect data.", "rejected": "We train a model."},
    ]
    args = config_class(
        output_dir=str(tmp_path / "cpo"),
        loss_type="simpo",
        beta=beta,
        simpo_gamma=gamma,
        cpo_alpha=alpha,
        per_device_train_batch_size=2,
        max_length=128,
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
    )
    model = load_model(str(tiny_model), "float32")
    trainer = trainer_class(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(pairs),
        processing_class=load_tokenizer(str(tiny_model)),
    )
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        trl_loss, metrics = trainer.get_batch_loss_metrics(trainer.model, batch)
        inputs = trainer.concatenated_inputs(
            batch, is_encoder_decoder=False, padding_value=trainer.pad_token_id, device="cpu"
        )
        logits = trainer.model(
            inputs["concatenated_input_ids"],
            attention_mask=inputs["concatenated_attention_mask"],
        ).logits
    logps, mask = token_logps(logits, inputs["concatenated_labels"])
    ours = simpo_nll_loss(
        logps[:2], mask[:2], logps[2:], mask[2:], beta=beta, gamma=gamma, alpha=alpha
    )
    assert float(trl_loss) == pytest.approx(ours.loss.item(), rel=1e-5)
    if alpha:
        assert metrics["nll_loss"] == pytest.approx(ours.nll.item(), rel=1e-5)
    assert metrics["rewards/margins"] == pytest.approx(beta * ours.margin.item(), rel=1e-4)
