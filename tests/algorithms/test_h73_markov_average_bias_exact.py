"""markov_average_bias is never below the exact bias it bounds, and never below its own exact value.

The bound ``|E_s[(1/N) Σ_{k<N} f(s_k)] − μ(f)| ≤ (span/N) Σ_{k<N} d(k)`` is attained on two-state
chains (start in the state farther from ``μ``, ``f`` its indicator); its float evaluation (cumsum,
then product and quotient) was ulps below the exact value of the given floats, and so below the
exact bias: on ``[[7/8, 1/8], [7/16, 9/16]]`` (``μ = (7/9, 2/9)``) with ``span = 1``, at N = 7..12.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds.average_reward import markov_average_bias


def _exact_two_state(P, K):
    """``d(k)`` and, for each start ``s`` and indicator ``f = 1{s'}``, the exact biases, in rationals."""
    a, b = P[0][1], P[1][0]
    mu = [b / (a + b), a / (a + b)]
    M = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]]
    d, rows = [], []
    for _ in range(K):
        d.append(max(sum(abs(M[s][j] - mu[j]) for j in range(2)) / 2 for s in range(2)))
        rows.append(M)
        M = [[sum(M[s][i] * P[i][j] for i in range(2)) for j in range(2)] for s in range(2)]
    biases = [
        [abs(sum(rows[k][s][t] for k in range(N)) / N - mu[t]) for N in range(1, K + 1)]
        for s in range(2)
        for t in range(2)
    ]
    return d, biases


def _upward(q):
    """The smallest float >= the rational q (valid tv input that is not below d(k))."""
    x = float(q)
    return x if Fraction(x) >= q else float(np.nextafter(x, np.inf))


@pytest.mark.parametrize(
    "P",
    [
        [[Fraction(7, 8), Fraction(1, 8)], [Fraction(7, 16), Fraction(9, 16)]],
        [[Fraction(1), Fraction(0)], [Fraction(3, 4), Fraction(1, 4)]],
        [[Fraction(9, 16), Fraction(7, 16)], [Fraction(0), Fraction(1)]],
        [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 5), Fraction(4, 5)]],
    ],
)
@pytest.mark.parametrize("span", [1.0, 3.0, 5.0])
def test_bound_covers_exact_bias_on_two_state_chains(P, span):
    K = 16
    d, biases = _exact_two_state(P, K)
    tv = np.array([_upward(q) for q in d])
    got = markov_average_bias(np.arange(1, K + 1), tv, span)
    exact_bound = [
        Fraction(span) * sum(Fraction(float(x)) for x in tv[:N]) / N for N in range(1, K + 1)
    ]
    for N in range(1, K + 1):
        g = Fraction(float(got[N - 1]))
        # never below the exact value of the given floats, and within the float evaluation's error
        assert g >= exact_bound[N - 1], (N, float(got[N - 1]))
        assert g <= exact_bound[N - 1] * (1 + Fraction(4 * (N + 4), 2**53))
        for bias in biases:
            assert g >= Fraction(span) * bias[N - 1]


def test_doctest_values_unchanged():
    # exact dyadic sums are returned as they are: (1 + 1/2 + 1/4 + 1/8)/4 = 15/32
    assert markov_average_bias([1, 2, 4], [1.0, 0.5, 0.25, 0.125], 1.0).tolist() == [
        1.0,
        0.75,
        0.46875,
    ]
