r"""Policies and the chains they induce, and the shared checks of the value kernels.

* ``π`` as a stochastic policy array ``[..., S, A]`` (:func:`as_stochastic_policy`; deterministic
  integer policies ``[..., S]`` one-hot encoded) and the greedy policy
  ``π(s) = argmax_a Q(s, a)`` (:func:`greedy`);
* the policy's chain ``P_π(s, s') = Σ_a π(a|s) P(s'|s, a)`` (:func:`policy_transition_matrix`)
  and reward ``r_π(s) = Σ_a π(a|s) r(s, a)`` (:func:`policy_reward`), gathered row by row for
  deterministic policies;
* the checks every value kernel shares: a discount is present (average-reward models name
  :func:`rltheory.mdp.gain_bias`), batch shapes broadcast (a located ``ValueError`` naming
  every argument), and computed values stay in the dtype's range (:func:`_check_in_range`).

Split out of :mod:`rltheory.mdp.bellman` (operators, evaluation, occupancy), which re-exports
every name; only array-API calls, as there.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §2.1.5–2.1.6 (policies), §6.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_action_table, as_policy_array, check_action_indices, check_real
from ..backend import array_namespace, to_numpy
from .model import FiniteMDP

__all__ = [
    "as_stochastic_policy",
    "greedy",
    "policy_transition_matrix",
    "policy_reward",
]


def _discount(mdp: FiniteMDP, gamma: float | None, what: str) -> float:
    g = mdp.gamma if gamma is None else gamma
    if g is None:
        raise ValueError(
            f"{what} needs a discount factor but the model has gamma=None (average reward); "
            "use rltheory.mdp.gain_bias for the average-reward criterion"
        )
    return float(g)


def _check_in_range(
    model: Any, x: Any, name: str, what: str, names: tuple[str, ...], scale: Any
) -> Any:
    """Return ``x`` if finite, else raise the located ``ValueError`` for values beyond the float range.

    ``x`` (values, Q-values, advantages, ... of ``model``, a :class:`FiniteMDP` or a finite-horizon
    model; trailing axes ``names``, leading axes the batch, possibly a batch of policies broadcast
    with the model's) is computed from finite data, so a non-finite entry means the exact quantity
    is not representable in the model's dtype (rewards 1e307 at γ = 0.99 give ``V = 1e309``): it
    was returned as ``inf``, or ``nan`` where two overflows met. The message names the first
    instance (batch index), its ``max|R|``, the a-priori bound ``scale(max|R|)``, the entry, and
    the remedy (values scale with ``R``, so divide ``R`` by a power of 2, which is exact).
    """
    xp = array_namespace(x)
    if bool(xp.all(xp.isfinite(x))):
        return x
    h = np.asarray(to_numpy(x))
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
    nb = len(idx) - len(names)
    mb = model.batch_shape
    inst = tuple(idx[nb - len(mb) + k] if mb[k] > 1 else 0 for k in range(len(mb)))
    R = np.asarray(to_numpy(model.R), dtype=np.float64)[inst]
    where = f" (batch index {idx[:nb]})" if nb else ""
    M = float(np.max(np.abs(R)))
    entry = ", ".join(f"{n}={i}" for n, i in zip(names, idx[nb:], strict=True))
    dt = model.dtype
    with np.errstate(over="ignore", divide="ignore"):
        bound = scale(M)
    raise ValueError(
        f"{name}: {what} left the {dt} range{where}: max|R| = {M:.4g} {bound}; largest {dt} number "
        f"{float(xp.finfo(dt).max):.4g}; first non-finite entry ({entry}) = {h[idx]}. Values scale with R: "
        "divide R by a power of 2 and scale the result back"
    )


def _discounted_scale(g: float) -> Any:
    return lambda M: f"at gamma = {g!r} (|V| <= max|R|/(1-gamma) = {M / (1.0 - g):.4g})"


def as_stochastic_policy(mdp: FiniteMDP, pi: Any, *, field: str = "pi") -> Any:
    """Return ``π`` as a stochastic policy array ``[..., S, A]`` in the model's namespace.

    An integer array ``π[..., s]`` (deterministic policy) is one-hot encoded; a
    floating array must have shape ``(..., S, A)`` with rows on the simplex.

    Raises
    ------
    ValueError
        Wrong shape, action index out of ``[0, A)`` (the first offending state is
        named), or rows that are not distributions.
    """
    return as_policy_array(pi, mdp.S, mdp.A, mdp.xp, mdp.dtype, field)


def greedy(Q: Any, *, atol: float = 0.0) -> Any:
    """Greedy deterministic policy ``π(s) = argmax_a Q(s, a)``.

    Tie rule: the smallest action index among those within ``atol`` of the
    maximum (``atol=0``: exact ties only). Returns an integer array ``[..., S]``.
    ``Q`` must have shape ``(..., S, A)`` and finite entries (``ValueError`` naming ``Q``
    and, for a NaN or infinite entry, its index and value).
    """
    atol = check_real(atol, "atol")
    if atol < 0:
        raise ValueError(f"atol must be >= 0; got {atol}")
    return _greedy(as_action_table(Q, "Q"), atol=atol)


def _greedy(Q: Any, *, atol: float = 0.0) -> Any:
    """:func:`greedy` without validation (library loops pass their own ``Q``)."""
    xp = array_namespace(Q)
    if atol == 0.0:
        return xp.argmax(Q, axis=-1)
    near = Q >= xp.max(Q, axis=-1, keepdims=True) - atol
    return xp.argmax(xp.astype(near, xp.int8), axis=-1)


def _validated_policy(mdp: FiniteMDP, pi: Any, field: str = "pi") -> tuple[bool, Any]:
    """Validate ``pi`` once: ``(True, int[..., S])`` if deterministic, else ``(False, π[..., S, A])``."""
    if isinstance(pi, (list, tuple)):
        pi = np.asarray(pi)
    if _integral(pi):  # (only integer tables move to the model's namespace here: a numpy float16
        pi = mdp.xp.asarray(pi)  # policy bound for array_api_strict failed in xp.asarray, unnamed)
        check_action_indices(pi, mdp.S, mdp.A, field)
        return True, pi
    return False, as_stochastic_policy(mdp, pi, field=field)


def _integral(pi: Any) -> bool:
    """Whether ``pi`` is an integer (deterministic) policy table, read in its own namespace."""
    if not hasattr(pi, "dtype"):
        return isinstance(pi, (int, np.integer)) and not isinstance(pi, bool)
    try:
        return bool(array_namespace(pi).isdtype(pi.dtype, "integral"))
    except (TypeError, ValueError):  # a dtype no namespace knows: as_stochastic_policy names it
        return False


def _policy_batch(mdp: FiniteMDP, pi: Any, k: int) -> tuple[int, ...]:
    """The batch shape of ``pi`` (``k`` trailing policy axes) broadcast with the model's; a
    ``ValueError`` naming both when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(pi.shape[: pi.ndim - k]), mdp.batch_shape))
    except ValueError:
        raise ValueError(
            f"pi's batch shape {tuple(pi.shape[: pi.ndim - k])} does not broadcast against the model's "
            f"batch shape {mdp.batch_shape}"
        ) from None


def _batches(what: str, *named: tuple[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast of the batch shapes ``named`` (``(name, shape)`` pairs), else a ``ValueError``
    naming ``what`` and every batch shape: a (4, S, A) ``pi`` with a (3, S) ``V`` failed inside
    numpy's multiply ('operands could not be broadcast together'), naming neither argument."""
    try:
        return tuple(np.broadcast_shapes(*(shape for _, shape in named)))
    except ValueError:
        listed = ", ".join(f"{name}'s batch shape {shape}" for name, shape in named)
        raise ValueError(f"{what}: the batch shapes do not broadcast together: {listed}") from None


def _transition(mdp: FiniteMDP, det: bool, pi: Any) -> Any:
    """``P_π`` of an already validated policy (see :func:`_validated_policy`)."""
    xp = mdp.xp
    if det:  # gather the chosen rows: O(S²) instead of O(S²A)
        # the batch of the policy broadcast with the model's (one policy int[S] on a batch of
        # models, or a batch of policies on one model)
        lead = _policy_batch(mdp, pi, 1)
        P = xp.broadcast_to(mdp.P, lead + tuple(mdp.P.shape[-3:]))
        ix = xp.broadcast_to(pi[..., None, None], lead + (mdp.S, 1, mdp.S))
        return xp.take_along_axis(P, ix, axis=-2)[..., 0, :]
    _policy_batch(mdp, pi, 2)  # a located error for batches that do not broadcast
    # batched over s: (…, S, 1, A) @ (…, S, A, S') -> (…, S, 1, S')
    return (pi[..., None, :] @ mdp.P)[..., 0, :]


def _reward(mdp: FiniteMDP, det: bool, pi: Any) -> Any:
    """``r_π`` of an already validated policy."""
    xp = mdp.xp
    if det:
        lead = _policy_batch(mdp, pi, 1)
        R = xp.broadcast_to(mdp.R, lead + (mdp.S, mdp.A))
        ix = xp.broadcast_to(pi[..., None], lead + (mdp.S, 1))
        return xp.take_along_axis(R, ix, axis=-1)[..., 0]
    _policy_batch(mdp, pi, 2)
    return xp.sum(pi * mdp.R, axis=-1)


def policy_transition_matrix(mdp: FiniteMDP, pi: Any) -> Any:
    r"""``P_π[..., s, s'] = Σ_a π(a|s) P(s'|s, a)``."""
    return _transition(mdp, *_validated_policy(mdp, pi))


def policy_reward(mdp: FiniteMDP, pi: Any) -> Any:
    r"""``r_π(s) = Σ_a π(a|s) r(s, a)``."""
    return _reward(mdp, *_validated_policy(mdp, pi))
