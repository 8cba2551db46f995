"""A real statistical bound for the distribution tests (no scipy needed)."""
import math

import torch

Z_1E4 = 3.719  # one-sided normal quantile for p = 1e-4


def chi2_critical(df: int, z: float = Z_1E4) -> float:
    """Wilson–Hilferty approximation of the chi-square quantile (accurate to ~1% for df >= 3)."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


def chi2_stat(counts: torch.Tensor, probs: torch.Tensor) -> tuple[float, int]:
    """Pearson's statistic of observed counts against expected probabilities (cells with E >= 5)."""
    n = counts.sum().item()
    expected = probs.double() * n
    keep = expected >= 5
    other_obs = counts[~keep].sum().item()
    other_exp = expected[~keep].sum().item()
    stat = (((counts[keep].double() - expected[keep]) ** 2) / expected[keep]).sum().item()
    cells = int(keep.sum())
    if other_exp >= 5:
        stat += (other_obs - other_exp) ** 2 / other_exp
        cells += 1
    return stat, cells - 1


def matches(counts: torch.Tensor, probs: torch.Tensor) -> bool:
    stat, df = chi2_stat(counts, probs)
    return stat < chi2_critical(df)
