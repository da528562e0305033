from __future__ import annotations

import doctest
import math

import pytest
import torch

from papergym.train import losses
from papergym.train.losses import generalized_jsd


def probs_to_logits(*rows: list[float]) -> torch.Tensor:
    return torch.tensor([rows], dtype=torch.float64).log()


P = [0.7, 0.2, 0.1]
Q = [0.1, 0.3, 0.6]


def kl(p: list[float], q: list[float]) -> float:
    return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True))


def test_doctests() -> None:
    assert doctest.testmod(losses).failed == 0


def test_endpoints_are_the_two_kl_directions_by_hand() -> None:
    student, teacher, mask = probs_to_logits(Q), probs_to_logits(P), torch.ones(1, 1)
    assert float(generalized_jsd(student, teacher, mask, beta=0.0)) == pytest.approx(kl(P, Q))
    assert float(generalized_jsd(student, teacher, mask, beta=1.0)) == pytest.approx(kl(Q, P))


def test_half_is_the_symmetric_jsd_bounded_by_ln2() -> None:
    student, teacher, mask = probs_to_logits(Q), probs_to_logits(P), torch.ones(1, 1)
    m = [(a + b) / 2 for a, b in zip(P, Q, strict=True)]
    expected = 0.5 * kl(P, m) + 0.5 * kl(Q, m)
    forward = float(generalized_jsd(student, teacher, mask))
    assert forward == pytest.approx(expected)
    assert float(generalized_jsd(teacher, student, mask)) == pytest.approx(forward)
    disjoint_s = torch.tensor([[[30.0, -30.0]]])
    disjoint_t = torch.tensor([[[-30.0, 30.0]]])
    assert float(generalized_jsd(disjoint_s, disjoint_t, torch.ones(1, 1))) == pytest.approx(
        math.log(2), rel=1e-4
    )


def test_mean_over_valid_tokens_and_padding_contributes_nothing() -> None:
    torch.manual_seed(0)
    student, teacher = torch.randn(2, 4, 7), torch.randn(2, 4, 7)
    mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]])
    base = generalized_jsd(student, teacher, mask)
    noisy = student.clone()
    noisy[mask == 0] = torch.randn_like(noisy[mask == 0]) * 100
    assert float(generalized_jsd(noisy, teacher, mask)) == pytest.approx(float(base))
    per_token = [
        float(
            generalized_jsd(
                student[b : b + 1, t : t + 1], teacher[b : b + 1, t : t + 1], torch.ones(1, 1)
            )
        )
        for b, t in ((0, 0), (0, 1), (1, 0))
    ]
    assert float(base) == pytest.approx(sum(per_token) / 3)


def test_temperature_gradient_and_validation() -> None:
    student = torch.randn(1, 2, 5, requires_grad=True)
    teacher = torch.randn(1, 2, 5)
    loss = generalized_jsd(student, teacher.detach(), torch.ones(1, 2), temperature=2.0)
    loss.backward()
    assert student.grad is not None and torch.isfinite(student.grad).all()
    assert float(generalized_jsd(student.detach(), teacher, torch.zeros(1, 2))) == 0.0
    with pytest.raises(ValueError):
        generalized_jsd(student, teacher, torch.ones(1, 2), beta=1.5)
    with pytest.raises(ValueError):
        generalized_jsd(student, teacher[:, :1], torch.ones(1, 2))


def test_top_k_compares_the_teachers_support_renormalised() -> None:
    student = torch.tensor([[[1.0, 2.0, 0.5, -3.0]]])
    teacher = torch.tensor([[[0.0, 3.0, 1.0, 2.5]]])
    mask = torch.ones(1, 1)
    # teacher's top-2 tokens are 1 and 3: the same as full JSD over just those two logits
    expected = generalized_jsd(student[..., [1, 3]], teacher[..., [1, 3]], mask)
    assert torch.allclose(generalized_jsd(student, teacher, mask, top_k=2), expected)
    # k at least the vocabulary is the full divergence
    full = generalized_jsd(student, teacher, mask)
    assert torch.allclose(generalized_jsd(student, teacher, mask, top_k=4), full)
    assert not torch.allclose(expected, full)


# Two answers on a two-token vocabulary, padded to 3 positions. With β = 1 the divergence is
# KL(S‖T); the student is uniform, S = (1/2, 1/2). Answer A has one token, where the teacher is
# T = (3/4, 1/4): KL = ½·ln(½ / ¾) + ½·ln(½ / ¼) = ½·ln(4/3). Answer B has three tokens, where
# the teacher equals the student: KL = 0 at each.
D = 0.5 * math.log(4 / 3)
STUDENT = torch.zeros(2, 3, 2, dtype=torch.float64)
TEACHER = torch.zeros(2, 3, 2, dtype=torch.float64)
TEACHER[0, 0] = torch.tensor([math.log(3.0), 0.0])
TEACHER[0, 1:] = torch.tensor([5.0, -5.0])  # padding of A: a large divergence, masked out
LENGTHS_MASK = torch.tensor([[1, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize(
    ("reduction", "expected"),
    [
        ("token", D / 4),  # (D + 0 + 0 + 0) over the batch's 4 answer tokens
        ("sequence", (D / 1 + 0 / 3) / 2),  # A's mean D, B's mean 0, then over the 2 answers
    ],
)
def test_token_and_sequence_reductions_by_hand(reduction: str, expected: float) -> None:
    loss = generalized_jsd(STUDENT, TEACHER, LENGTHS_MASK, beta=1.0, reduction=reduction)  # type: ignore[arg-type]
    assert float(loss) == pytest.approx(expected, rel=1e-6)  # the loss runs in float32


def test_sequence_reduction_leaves_out_an_answer_without_tokens() -> None:
    mask = torch.tensor([[1, 0, 0], [0, 0, 0]])  # B was empty
    loss = generalized_jsd(STUDENT, TEACHER, mask, beta=1.0, reduction="sequence")
    assert float(loss) == pytest.approx(D, rel=1e-6)  # A alone, not (D + 0) / 2
    nothing = generalized_jsd(STUDENT, TEACHER, torch.zeros(2, 3), reduction="sequence")
    assert float(nothing) == 0.0
    with pytest.raises(ValueError, match="reduction"):
        generalized_jsd(STUDENT, TEACHER, mask, reduction="answer")  # type: ignore[arg-type]
