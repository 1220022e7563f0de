"""TW203's advice on a per-element read-back: "vectorize the loop" where the loop may be vectorized, and only the
read-back where the loop is a recurrence (the dev set's Kalman filter: no vectorized form exists)."""

from __future__ import annotations

from torchwise.engine import analyze

KALMAN = """import torch


def kalman_1d(measurements, q=1e-3, r=0.1):
    x, p = 0.0, 1.0
    estimates = torch.zeros(len(measurements))
    for t in range(len(measurements)):
        p = p + q
        k = p / (p + r)
        x = x + k * (measurements[t].item() - x)
        p = (1 - k) * p
        estimates[t] = x
    return estimates


z = torch.linspace(0, 1, 200)
est = kalman_1d(z)
"""

RUNNING_SUM = """import torch

x = torch.randn(100)
total = 0.0
for i in range(100):
    total = total + x[i].item()
"""


def _tw203(code: str) -> list:
    return [f for f in analyze(code, "case.py").findings if f.code == "TW203"]


def test_a_recurrence_is_not_told_to_vectorize():
    findings = _tw203(KALMAN)
    assert len(findings) == 1
    message = findings[0].message
    assert "vectorize" not in message and "recurrence" in message and "`x` carries over" in message
    assert "`.tolist()`" in message


def test_a_running_sum_keeps_the_vectorize_advice():
    findings = _tw203(RUNNING_SUM)
    assert len(findings) == 1 and "vectorize the loop" in findings[0].message


def test_an_ema_is_a_recurrence():
    code = RUNNING_SUM.replace("total = total + x[i].item()", "total = 0.9 * total + x[i].item()")
    findings = _tw203(code)
    assert len(findings) == 1 and "`total` carries over" in findings[0].message
