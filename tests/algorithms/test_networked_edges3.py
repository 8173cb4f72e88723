"""Networked models and the safe networked primal-dual method near the edges: discounts whose
roll-outs are too long to sample."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from rltheory.algorithms.networked import (
    NetworkedMDP,
    correlation_decay,
    joint_transition_matrix,
    neighborhoods,
    sis_network,
    truncation_error,
    truncation_errors,
)
from rltheory.algorithms.networked_pd import (
    SafeNetworkedProblem,
    local_critics,
    networked_primal_dual,
    sample_rollouts,
    sampled_truncated_gradient,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp.utility import linear_utility


# ------------------------------------------------------------------ roll-out length as γ → 1
def test_a_discount_with_unbounded_rollouts_is_refused_before_sampling():
    # old: gamma = 1 - 1e-12 drew geometric times of mean 1e12 and looped over them (did not finish)
    net = sis_network(nx.path_graph(2), gamma=1.0 - 1e-12)
    th = [np.zeros(s) for s in net.theta_shapes()]
    with pytest.raises(
        ValueError,
        match=r"gamma = 0\.999999999999\d* gives an expected roll-out segment length "
        r"1/\(1-gamma\) = 1e\+12 steps .* above max_length = 10000",
    ):
        sample_rollouts(net, th, 10, np.random.default_rng(0))
    C = linear_utility(np.zeros((2, 2)))
    pb = SafeNetworkedProblem(net, [C, C], [C, C], np.zeros(2))
    with pytest.raises(ValueError, match=r"1/\(1-gamma\) = 1e\+12 steps"):
        networked_primal_dual(
            pb, iterations=3, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=1.0, samples=10, rng=0
        )


def test_the_rollout_length_cap_is_the_expected_length():
    # 1/(1 - 0.75) = 4: refused under a cap of 3.5, sampled under 4.5 (the same draws as without a cap)
    net = sis_network(nx.path_graph(3), gamma=0.75)
    th = [np.zeros(s) for s in net.theta_shapes()]
    with pytest.raises(
        ValueError, match=r"gamma = 0\.75 gives .* 1/\(1-gamma\) = 4 steps .* max_length = 3\.5"
    ):
        sample_rollouts(net, th, 5, 0, max_length=3.5)
    got = sample_rollouts(net, th, 50, 1, max_length=4.5)
    ref = sample_rollouts(net, th, 50, 1)
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    # each sample's continuation counts tau' + 1 pairs per agent, E = 1/(1 - gamma) = 4
    counts = sample_rollouts(net, th, 4000, 2)[2]
    length = counts[:, 0].sum(axis=(1, 2))
    assert np.all(counts.sum(axis=(2, 3)) == length[:, None])
    # Var(tau' + 1) = gamma/(1 - gamma)^2 = 12: mean within 5 standard errors of 4
    assert abs(length.mean() - 4.0) <= 5 * np.sqrt(12.0 / 4000)


@pytest.mark.parametrize("bad", [0.5, 0, -1.0, float("nan"), float("inf"), True, "10"])
def test_a_bad_rollout_length_cap_is_named(bad):
    net = sis_network(nx.path_graph(2), gamma=0.5)
    th = [np.zeros(s) for s in net.theta_shapes()]
    with pytest.raises(ValueError, match=r"max_length must be a finite number >= 1; got"):
        sample_rollouts(net, th, 5, 0, max_length=bad)
    C = linear_utility(np.zeros((2, 2)))
    pb = SafeNetworkedProblem(net, [C, C], [C, C], np.zeros(2))
    kw = dict(iterations=1, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=1.0, max_length=bad)
    for mode in ({"samples": 5, "rng": 0}, {}):  # the exact mode does not sample, but names it too
        with pytest.raises(ValueError, match=r"max_length must be a finite number >= 1; got"):
            networked_primal_dual(pb, **kw, **mode)


# ------------------------------------------------------------------ hop counts
def test_each_kappa_is_checked_as_given():
    net = sis_network(nx.path_graph(3), policy_radius=1)
    th = [np.random.default_rng(0).normal(size=s) for s in net.theta_shapes()]
    # old: np.asarray([1, True]) turned True into the integer 1, accepted as kappa = 1
    with pytest.raises(ValueError, match=r"kappas\[1\] must be a non-negative integer; got True"):
        truncation_errors(net, th, [1, True])
    # old: np.asarray([1, 2.5]) blamed 'kappas[0] ... got 1.0'
    with pytest.raises(ValueError, match=r"kappas\[1\] must be a non-negative integer; got 2\.5"):
        truncation_errors(net, th, [1, 2.5])
    with pytest.raises(ValueError, match=r"kappas\[0\] must be a non-negative integer; got True"):
        truncation_errors(net, th, np.array([True, False]))
    # integers in any container (and one integer) agree with the one-kappa function; zero at the diameter
    ref = [truncation_error(net, th, k) for k in range(3)]
    assert ref[0] > ref[1] > 0.0 and ref[2] <= 1e-28
    for ks in ([0, 1, 2], (0, np.int64(1), 2), np.arange(3), range(3)):
        np.testing.assert_array_equal(truncation_errors(net, th, ks), ref)
    np.testing.assert_array_equal(truncation_errors(net, th, np.int64(1)), ref[1:2])
    # old: a set was one entry, 'kappas[0] must be a non-negative integer; got {0, 1}'; the errors
    # of an unordered container would follow no defined order
    for unordered in ({0, 1}, frozenset({2}), {0: "a"}):
        with pytest.raises(TypeError, match="kappas must be an integer or an ordered sequence"):
            truncation_errors(net, th, unordered)


# ------------------------------------------------------------------ node labels
def test_bool_and_float_node_labels_are_refused():
    # old: True and 1.0 passed 'v in range(n)' (they equal 1) and were taken as agent 1
    boolean = nx.Graph([(0, True)])
    with pytest.raises(InvalidModelError, match=r"labelled 0..n-1 \(n=2\); got node True"):
        sis_network(boolean)
    with pytest.raises(ValueError, match=r"labelled 0..n-1 \(n=2\); got node True"):
        neighborhoods(boolean, 1)
    floating = nx.Graph([(0, 1.0), (1.0, 2)])
    with pytest.raises(InvalidModelError, match=r"labelled 0..n-1 \(n=3\); got node 1\.0"):
        sis_network(floating)
    # numpy integer labels are integers: the same model as the plain path
    relabelled = nx.relabel_nodes(nx.path_graph(3), {k: np.int64(k) for k in range(3)})
    assert neighborhoods(relabelled, 1) == [(0, 1), (0, 1, 2), (1, 2)]
    assert sis_network(relabelled).diameter == 2


# ------------------------------------------------------------------ sampling never draws probability 0
class _ConstantUniforms(np.random.Generator):
    """A Generator whose uniforms are one fixed value in [0, 1) (0 is a value ``random`` can return);
    its geometric draws are the bit generator's as usual."""

    def __init__(self, u: float, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.u = u

    def random(self, size=None, dtype=np.float64, out=None):
        return np.full(size, self.u)


def test_a_state_of_initial_probability_zero_is_never_drawn():
    # old: the inverse CDF took the first k with CDF(k) >= u, so u = 0 drew state 0 with mu_i(0) = 0
    net = sis_network(nx.path_graph(2), gamma=0.0).replace(
        mu_local=np.array([[0.0, 1.0], [0.0, 1.0]])
    )
    s, a, counts = sample_rollouts(
        net, [np.zeros(sh) for sh in net.theta_shapes()], 4, _ConstantUniforms(0.0, 0)
    )
    np.testing.assert_array_equal(
        s, np.ones((4, 2), dtype=int)
    )  # gamma = 0: (s_tau, a_tau) = (s_0, a_0)
    np.testing.assert_array_equal(a, np.zeros((4, 2), dtype=int))  # uniform policy, u = 0: action 0
    assert counts[:, :, 0, :].sum() == 0.0


def test_a_rounding_negative_transition_entry_is_never_drawn():
    # one agent, S_l = 3: from every state the next is 0 or 2 (1/2 each); the validated row holds -1e-10 at 1
    P = np.tile(np.array([0.5, -1e-10, 0.5 + 1e-10]), (3, 1, 1))
    net = NetworkedMDP(
        nx.path_graph(1), (P,), np.zeros((1, 3, 1)), 0.9, np.array([[1.0, 0.0, 0.0]])
    )
    # old: u between CDF(1) = 0.5 - 1e-10 and CDF(0) = 0.5 drew state 1
    gen = _ConstantUniforms(0.5 - 5e-11, 1)
    s, _, counts = sample_rollouts(net, [np.zeros(sh) for sh in net.theta_shapes()], 50, gen)
    assert counts.sum() > 50  # some roll-outs moved
    assert not np.any(s == 1) and counts[:, 0, 1, :].sum() == 0.0


# ------------------------------------------------------------------ critic samples
@pytest.mark.parametrize(
    ("returns", "what"),
    [("ab", "text"), (np.full((2, 2), "1.0"), "text"), (np.full((2, 2), 1 + 2j), "complex")],
)
def test_returns_that_are_not_real_are_named(returns, what):
    # old: text failed in numpy's cast ("could not convert string to float: 'ab'") and complex
    # returns lost their imaginary part (a ComplexWarning at most)
    net = sis_network(nx.path_graph(2))
    th = [np.zeros(sh) for sh in net.theta_shapes()]
    s = a = np.zeros((2, 2), dtype=int)
    with pytest.raises(
        TypeError, match=rf"returns must be a real array of shape \(K, n=2\); got {what}"
    ):
        local_critics(net, s, a, returns, 1)
    with pytest.raises(
        TypeError, match=rf"returns must be a real array of shape \(K, n=2\); got {what}"
    ):
        sampled_truncated_gradient(net, th, s, a, returns, 1)
    # real returns: the kappa = diam critic of one block is the mean of its returns
    crit = local_critics(net, s, a, np.array([[1.0, 2.0], [3.0, 4.0]]), 1)
    assert crit[0][0] == 2.0 and crit[1][0] == 3.0


# ------------------------------------------------------------------ correlation decay
def test_correlation_decay_equals_a_brute_force_over_initial_states():
    """δ(d) = max over (i, j) at distance d, joint s and every other value of s_j of the TV distance
    between agent i's discounted state marginals, with Σ_t (1−γ)γ^t P_π^t summed term by term
    (γ^400 < 1e-60) instead of the inverse; S_l = 3 exercises every alternative value of s_j."""
    G = nx.path_graph(3)
    nb = neighborhoods(G, 1)
    rng = np.random.default_rng(5)
    S, A = 3, 2
    Ps = tuple(rng.dirichlet(np.ones(S), size=(S,) * len(nb[i]) + (A,)) for i in range(3))
    net = NetworkedMDP(G, Ps, rng.random((3, S, A)), 0.7, None, 1)
    th = [rng.normal(size=s) for s in net.theta_shapes()]
    d, delta = correlation_decay(net, th)
    P = np.asarray(joint_transition_matrix(net, th))
    M, Pt = np.zeros_like(P), np.eye(S**3)
    for t in range(400):
        M += (1 - net.gamma) * net.gamma**t * Pt
        Pt = Pt @ P
    states = list(np.ndindex(S, S, S))  # mixed radix, agent 0 most significant
    onehot = np.array([[[float(s[i] == v) for v in range(S)] for s in states] for i in range(3)])
    lam = np.stack([M @ onehot[i] for i in range(3)])  # lam[i, x]: agent i's marginal from joint x
    ref = np.zeros(3)
    for x, s in enumerate(states):
        for j in range(3):
            for v in range(S):
                if v == s[j]:
                    continue
                y = states.index(tuple(v if k == j else s[k] for k in range(3)))
                for i in range(3):
                    tv = 0.5 * np.abs(lam[i, x] - lam[i, y]).sum()
                    ref[abs(i - j)] = max(ref[abs(i - j)], tv)
    np.testing.assert_array_equal(d, [0, 1, 2])
    np.testing.assert_allclose(delta, ref, rtol=1e-12, atol=1e-15)
    assert ref[0] > ref[1] > ref[2] > 0.0
