"""convergence_plot: a fit whose window starts at t = 0 on a log t axis."""

from __future__ import annotations

import numpy as np

from rltheory.bounds import fit_linear_rate
from rltheory.plot import convergence_plot, figure, png_bytes


def test_a_window_from_zero_does_not_stretch_the_log_axis():
    # a geometric fit over k = 0..29 drew its line from t = 1e-300: the x axis spanned
    # [8e-316, 3e16] and the measured curve (t = 1..29 on the axis) was a sliver
    k = np.arange(30)
    fit = fit_linear_rate(k, 0.9**k)
    _, axes = figure()
    ax = convergence_plot(axes[0, 0], k, 0.9**k, label="err", fit=fit)
    fit_line = ax.get_lines()[-1]
    x = np.asarray(fit_line.get_xdata())
    assert x.min() == 1.0 and x.max() == 29.0  # the positive part of the window [0, 29]
    # the line is the fitted curve C rho^t, here with C = 1 and rho = 0.9
    np.testing.assert_allclose(fit_line.get_ydata(), 0.9**x, rtol=1e-12)
    lo, hi = ax.get_xlim()
    assert 0.5 < lo < 1.0 and 29.0 < hi < 60.0


def test_a_window_with_no_positive_t_keeps_its_legend_entry():
    # all of the window on t <= 0: nothing to draw on a log axis, but the fit is still reported
    t = np.arange(-5.0, 1.0)
    fit = fit_linear_rate(t, 0.5**t)
    fig, axes = figure()
    ax = convergence_plot(axes[0, 0], t, 0.5**t, label="err", fit=fit)
    assert len(ax.get_lines()[-1].get_xdata()) == 0
    assert any(text.get_text().startswith("fit: ρ 0.500") for text in ax.get_legend().get_texts())
    assert png_bytes(fig)[:4] == b"\x89PNG"


def test_a_positive_window_is_drawn_whole_whatever_points_are_plotted():
    # fitted on t = 1..100, plotted every 10th point from t = 5: the line spans the fitted
    # window [1, 100], as before the t = 0 fix (which had started it at the first plotted t)
    t = np.arange(1.0, 101.0)
    fit = fit_linear_rate(t, 0.97**t)
    _, axes = figure()
    shown = t[4::10]
    ax = convergence_plot(axes[0, 0], shown, 0.97**shown, label="err", fit=fit)
    x = np.asarray(ax.get_lines()[-1].get_xdata())
    assert x[0] == 1.0 and x[-1] == 100.0
