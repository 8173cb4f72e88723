"""The library's direct HiGHS calls run with HiGHS's console text discarded.

HiGHS prints some statuses with a bare ``printf`` that scipy's ``disp=False`` does not reach
(``_numerics.highs_console_silenced``, 24051ef). ``bradley_terry._separated`` and
``stage_equilibria._stage_lp`` called ``linprog`` directly, outside that guard (helper-79's open
item). Here ``linprog`` is replaced by one that writes to file descriptor 1 as HiGHS does and then
solves: nothing may reach standard output, and the result is the real one.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.optimize

from rltheory.algorithms import bradley_terry, stage_equilibria

_real = scipy.optimize.linprog


def _noisy(*args, **kwargs):
    os.write(1, b"Highs::returnFromOptimizeModel: model_status_ = Not Set\n")
    return _real(*args, **kwargs)


def test_stage_lp_discards_highs_console_text(capfd, monkeypatch):
    monkeypatch.setattr(stage_equilibria, "linprog", _noisy)
    lo = hi = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])  # coordination game
    sig = stage_equilibria._stage_lp("ce", lo, hi)
    assert capfd.readouterr().out == ""
    assert sig.shape == (2, 2) and abs(float(sig.sum()) - 1.0) < 1e-9 and np.all(sig >= 0)


def test_separation_lp_discards_highs_console_text(capfd, monkeypatch):
    monkeypatch.setattr(scipy.optimize, "linprog", _noisy)
    # two groups, each won by its first trajectory every time: separable along beta = (1,)
    Z = np.array([[1.0], [2.0]])
    assert bradley_terry._separated(Z, np.array([3, 2]), np.array([3, 2]))
    assert capfd.readouterr().out == ""
