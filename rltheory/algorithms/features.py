r"""Feature maps for linear critics and softmax-linear actors.

``Φ[s, :] = φ(s)ᵀ`` for state features (one-hot/tabular, random Gaussian, radial
basis functions and tile coding on gridworld coordinates, Sutton & Barto 2018,
§9.5), state–action features ``φ(s, a)`` built from them, and the compatible
features ``ψ(s, a) = ∇_θ log π_θ(a|s) = φ(s, a) − Σ_b π_θ(b|s) φ(s, b)`` of a
softmax-linear policy (Sutton et al. 2000, Thm 2). Re-exported by
:mod:`rltheory.algorithms.critics`.

References
----------
Sutton, R., Barto, A. (2018). *Reinforcement Learning*, 2nd ed. §9.5 (tile coding, RBFs).
Sutton, R., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for RL
with function approximation. NeurIPS. Theorem 2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import _source_atol, check_finite, check_probability, real_scalar
from .._validate import check_int as _int
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.sample import _rng

__all__ = [
    "tabular_features",
    "random_features",
    "rbf_features",
    "tile_features",
    "state_action_features",
    "compatible_features",
]


def _host_float(x: Any, field: str) -> np.ndarray:
    """``x`` as a float64 numpy array; complex or text input is a ``TypeError`` naming ``field``
    (``np.asarray(x, dtype=float)`` dropped imaginary parts with only a warning and parsed strings)."""
    return np.asarray(as_float(x, np, field=field), dtype=np.float64)


def _at_least_one(n: int, field: str, what: str, shape: tuple[int, ...]) -> None:
    """``ValueError`` naming ``field`` and its shape when it holds no ``what``."""
    if n < 1:
        raise ValueError(f"{field} must hold at least one {what}; got shape {shape}")


def tabular_features(S: int) -> np.ndarray:
    """One-hot features ``Φ = I_S`` (the tabular case: every ``V`` is representable).

    Examples
    --------
    >>> tabular_features(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return np.eye(_int(S, "S"))


def random_features(S: int, d: int, *, rng: np.random.Generator | int) -> np.ndarray:
    """Gaussian features ``Φ[s, k] ~ N(0, 1/d)`` i.i.d. (full column rank a.s. when ``d ≤ S``).

    Examples
    --------
    >>> random_features(5, 2, rng=0).shape
    (5, 2)
    """
    S, d = _int(S, "S"), _int(d, "d")
    if d > S:
        raise ValueError(f"d must be <= S = {S} for full column rank; got d={d}")
    return _rng(rng).normal(size=(S, d)) / math.sqrt(d)


def rbf_features(coords: Any, centers: Any, *, width: float, bias: bool = True) -> np.ndarray:
    r"""Gaussian radial basis features ``φ_k(s) = exp(−‖x_s − c_k‖²/(2w²))`` (plus a constant 1).

    Parameters
    ----------
    coords : array (S, k)
        State coordinates (e.g. grid cells ``GridWorld.cells``), ``S ≥ 1``.
    centers : array (m, k)
        ``m ≥ 1`` unless ``bias`` (``ValueError`` for a feature map with no rows or no columns).
    width : float > 0
    bias : bool
        Append the constant feature (``True``/``False`` or a numpy bool; ``ValueError`` otherwise).

    Examples
    --------
    >>> rbf_features([[0.0], [1.0]], [[0.0]], width=1.0).round(4).tolist()
    [[1.0, 1.0], [0.6065, 1.0]]
    """
    x = _host_float(coords, "coords")
    c = _host_float(centers, "centers")
    if x.ndim != 2 or c.ndim != 2 or x.shape[1] != c.shape[1]:
        raise ValueError(
            f"coords (S, k) and centers (m, k) must agree in k; got {x.shape} and {c.shape}"
        )
    check_finite(x, "coords", ("s", "i"))
    check_finite(c, "centers", ("m", "i"))
    if not isinstance(bias, (bool, np.bool_)):  # "False", None or 0 would pick a layout silently
        raise ValueError(f"bias must be True or False; got {bias!r}")
    # an (0, d) or (S, 0) feature matrix came back without a word, and failed later far from here
    _at_least_one(x.shape[0], "coords", "state (row)", x.shape)
    if not bias:
        _at_least_one(c.shape[0], "centers", "center (row) when bias=False", c.shape)
    w = real_scalar(width)  # Python or numpy real; NaN (failing the test) for anything else
    if not w > 0:
        raise ValueError(f"width must be > 0; got {width!r}")
    if not math.isfinite(w):
        raise ValueError(f"width must be finite; got {width!r}")
    # exp(−½ Σ_i ((x_i − c_i)/w)²): dividing before squaring keeps w² out of the computation, which
    # underflowed to 0 for w < 1e-162 (0/0 = NaN at a centre) and raised OverflowError for w > 1e154;
    # A difference x_i − c_i beyond the float range (|x_i|, |c_i| near 1e308) is formed from the
    # halves instead, (x_i/2 − c_i/2)/w·2 (exact halving there): its inf gave φ = 0 even where
    # w is as large (x = 1e308, c = −1e308, w = 1e308: exp(−2) = 0.135). A z² beyond the range
    # gives inf and exp(−inf) = 0, the value's own underflow.
    with np.errstate(over="ignore", invalid="ignore"):
        diff = x[:, None, :] - c[None, :, :]
        z = diff / w
        far = ~np.isfinite(diff)
        if np.any(far):
            z = np.where(far, (x[:, None, :] / 2.0 - c[None, :, :] / 2.0) / w * 2.0, z)
        phi = np.exp(-0.5 * (z * z).sum(-1))
    return np.concatenate([phi, np.ones((x.shape[0], 1))], axis=1) if bias else phi


def tile_features(coords: Any, *, low: Any, high: Any, n_tiles: int, n_tilings: int) -> np.ndarray:
    r"""Binary tile coding: ``n_tilings`` uniform grids of ``n_tiles`` tiles per dimension.

    Tiling ``j`` is offset by ``j/n_tilings`` of a tile width in every dimension
    (Sutton & Barto 2018, §9.5.4); each state activates one tile per tiling, so
    every row of the result has exactly ``n_tilings`` ones. Columns of tiles that
    no state activates are dropped.

    Coordinates must lie in ``[low, high]`` (``ValueError`` naming the first one outside), with
    ``S, k ≥ 1`` (``ValueError`` naming ``coords`` and its shape otherwise). Tiling 0
    is the ``n_tiles`` tiles ``[low + i w, low + (i + 1) w)``, ``w = (high − low)/n_tiles``, the last
    one closed at ``high``; an offset tiling needs ``n_tiles + 1`` tiles to cover the range.

    Examples
    --------
    >>> tile_features([[0.0], [0.9]], low=[0.0], high=[1.0], n_tiles=2, n_tilings=1).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    x = _host_float(coords, "coords")
    if x.ndim != 2:
        raise ValueError(f"coords must have shape (S, k); got {x.shape}")
    check_finite(x, "coords", ("s", "i"))
    # no states: a (0, 0) matrix; no coordinates (k = 0): n_tilings identical constant columns
    _at_least_one(x.shape[0], "coords", "state (row)", x.shape)
    _at_least_one(x.shape[1], "coords", "coordinate (column)", x.shape)
    bounds = []
    for name, b in (("low", low), ("high", high)):
        b = _host_float(b, name)
        try:
            b = np.broadcast_to(b, x.shape[1:])
        except ValueError:
            raise ValueError(
                f"{name} must be a scalar or have shape ({x.shape[1]},) like coords' k; "
                f"got {b.shape}"
            ) from None
        check_finite(b, name, ("i",))
        bounds.append(b)
    lo, hi = bounds
    if np.any(hi <= lo):
        raise ValueError(f"high must exceed low in every dimension; got low={lo}, high={hi}")
    outside = (x < lo) | (x > hi)
    if np.any(outside):
        s, i = (int(v) for v in np.argwhere(outside)[0])
        raise ValueError(
            f"coords must lie in [low, high]; coords(s={s}, i={i}) = {float(x[s, i])!r} is outside "
            f"[{float(lo[i])!r}, {float(hi[i])!r}]"
        )
    n_tiles, n_tilings = _int(n_tiles, "n_tiles"), _int(n_tilings, "n_tilings")
    S, k = x.shape
    with np.errstate(over="ignore"):
        span = hi - lo
    if not np.all(
        np.isfinite(span)
    ):  # a range wider than the largest float: quarter everything (exact)
        x, lo, hi = x / 4.0, lo / 4.0, hi / 4.0
        span = hi - lo
    # a span below 1 is scaled up, per dimension, by the power of 2 that brings it into [1, 2)
    # (exact, and no overflow: |x| <= max(|low|, |high|) <= span/eps). Near the bottom of the range
    # the width span/n_tiles was subnormal or 0: low = 0, high = 1e-320, n_tiles = 4096 put every
    # interior state in the last tile (u = inf) and the state at low in a NaN tile
    up = np.minimum(np.frexp(span)[1] - 1, 0)
    x, lo, hi = np.ldexp(x, -up), np.ldexp(lo, -up), np.ldexp(hi, -up)
    span = hi - lo
    width = span / n_tiles
    blocks = []
    for j in range(n_tilings):
        u = (x - lo + width * j / n_tilings) / width
        # tiling 0 ends with the tile closed at high; an offset one needs n_tiles + 1 tiles
        idx = np.clip(np.floor(u), 0, n_tiles if j else n_tiles - 1)
        # only the tiles some state reaches, in row-major order of their grid coordinates (the
        # (n_tiles + 1)^k grid itself is never allocated: 1e9 columns for k = 3, n_tiles = 1000)
        tiles, col = np.unique(idx, axis=0, return_inverse=True)
        blk = np.zeros((S, tiles.shape[0]))
        blk[np.arange(S), np.reshape(col, (-1,))] = 1.0
        blocks.append(blk)
    return np.concatenate(blocks, axis=1)


def state_action_features(phi: Any, A: int) -> np.ndarray:
    r"""``φ(s, a) = e_a ⊗ φ(s)``: shape ``(S, A, A·d)`` (one block of weights per action).

    ``phi`` must be a finite ``(S, d)`` array with ``S, d ≥ 1`` (``ValueError`` naming it otherwise).

    Examples
    --------
    >>> state_action_features([[1.0], [2.0]], 2)[1].tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    f = _host_float(phi, "phi")
    if f.ndim != 2:
        raise ValueError(f"phi must have shape (S, d); got {f.shape}")
    check_finite(f, "phi", ("s", "j"))
    _at_least_one(f.shape[0], "phi", "state (row)", f.shape)
    _at_least_one(f.shape[1], "phi", "feature (column)", f.shape)
    A = _int(A, "A")
    S, d = f.shape
    out = np.zeros((S, A, A * d))
    for a in range(A):
        out[:, a, a * d : (a + 1) * d] = f
    return out


def compatible_features(phi_sa: Any, pi: Any) -> Any:
    r"""``ψ(s, a) = φ(s, a) − Σ_b π(b|s) φ(s, b)`` (``= ∇_θ log π_θ(a|s)`` for softmax-linear π).

    Parameters
    ----------
    phi_sa : array (..., S, A, d)
    pi : array (..., S, A)
        A stochastic policy (rows on the simplex).

    Raises
    ------
    ValueError
        Shapes disagree, a NaN or infinite entry of ``phi_sa`` or ``pi``, or a row of ``pi``
        off the simplex (named and located).

    Examples
    --------
    >>> import numpy as np
    >>> compatible_features(np.eye(2)[None], np.array([[0.5, 0.5]])).tolist()
    [[[0.5, -0.5], [-0.5, 0.5]]]
    """
    if isinstance(phi_sa, (list, tuple)):
        phi_sa = _host_float(phi_sa, "phi_sa")
    if isinstance(pi, (list, tuple)):
        pi = _host_float(pi, "pi")
    xp = array_namespace(phi_sa, pi)
    f = as_float(phi_sa, xp, field="phi_sa")
    p = as_float(
        pi, xp, field="pi"
    )  # its own precision first: the row-sum tolerance is the source's
    atol = _source_atol(p, xp)
    p = as_float(p, xp, f.dtype)
    if f.ndim < 3 or p.ndim < 2 or tuple(f.shape[-3:-1]) != tuple(p.shape[-2:]):
        raise ValueError(
            f"phi_sa (..., S, A, d) and pi (..., S, A) disagree: {tuple(f.shape)} vs {tuple(p.shape)}"
        )
    check_finite(f, "phi_sa", ("s", "a", "j"))
    check_probability(p, "pi", ("s", "a"), "pi[s, :]", atol=atol)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is the located error below
        psi = _compatible_features(f, p)
    return _check_psi(psi, f, "compatible_features")


def _compatible_features(f: Any, p: Any) -> Any:
    """:func:`compatible_features` on validated float arrays (library loops)."""
    xp = array_namespace(f, p)
    return f - xp.sum(p[..., None] * f, axis=-2, keepdims=True)


def _check_psi(psi: Any, f: Any, what: str, err: Any = None) -> Any:
    """``psi`` unchanged if it (and ``err``, the sizes it is known to) is finite; else a located
    ``ValueError``: ``φ − E_πφ`` reaches ``2·max|φ|``, beyond the float range for ``|φ| ≳ 9e307``."""
    xp = array_namespace(psi)
    for arr in (psi, err):
        if arr is not None and not bool(xp.all(xp.isfinite(arr))):
            h = to_numpy(arr)
            idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
            at = ", ".join(f"{n}={i}" for n, i in zip(("s", "a", "j"), idx[-3:], strict=True))
            raise ValueError(
                f"{what}: the compatible features psi = phi - E_pi phi overflow at ({at}): "
                f"|psi| <= 2 max|phi| with max|phi| = {float(xp.max(xp.abs(f))):.6g}; "
                f"scale the features down"
            )
    return psi


def _compatible_features_loo(f: Any, p: Any) -> tuple[Any, Any]:
    r"""``ψ = φ − E_πφ`` without cancellation, and the size to which each entry is known.

    ``ψ(s, a) = Σ_{b≠a} π(b|s)·(φ(s, a) − φ(s, b)) = r_a φ(s, a) − Σ_{b≠a} π(b|s) φ(s, b)`` with
    ``r_a = Σ_{b≠a} π(b|s)`` (``Σ_b π(b|s) = 1``). The plain ``φ − E_πφ`` computes ``1 − π(a|s)``
    by cancellation, so where ``π(a|s) ≈ 1`` its entries are known only to ``ε·|φ|`` absolute and
    the other actions' tiny ``π(b|s)`` are lost; here they keep their relative accuracy. Returns
    ``(ψ, err)`` with ``err = r_a|φ(s, a)| + Σ_{b≠a} π(b|s)|φ(s, b)|`` (each entry of ``ψ`` is
    within a few ``ε·err`` of the exact one, for ``A`` up to ~1e3). ``(S, A, d)`` arrays.
    """
    xp = array_namespace(f, p)
    A = f.shape[-2]
    psi, err = [], []
    af = xp.abs(f)
    for a in range(A):
        others = [b for b in range(A) if b != a]
        r = sum((p[..., b] for b in others), start=xp.zeros_like(p[..., a]))
        m = sum((p[..., b, None] * f[..., b, :] for b in others), start=xp.zeros_like(f[..., a, :]))
        e = sum(
            (p[..., b, None] * af[..., b, :] for b in others), start=xp.zeros_like(f[..., a, :])
        )
        psi.append(r[..., None] * f[..., a, :] - m)
        err.append(r[..., None] * af[..., a, :] + e)
    return xp.stack(psi, axis=-2), xp.stack(err, axis=-2)


def _is_one_hot(f: Any) -> bool:
    r"""Whether ``φ(s, a) = c_{sa}·e_{j(s,a)}``: one nonzero entry per ``(s, a)``, no column shared.

    Tabular features up to the order and scale of the columns (``f`` ``(S, A, d)``, validated);
    their compatible critic has the closed form ``compatible._one_hot_critic``. Host sync: one bool.
    """
    xp = array_namespace(f)
    if f.ndim != 3:
        return False
    nz = xp.astype(f != 0, xp.int64)
    per_row = xp.sum(nz, axis=-1)
    per_col = xp.sum(xp.reshape(nz, (-1, f.shape[-1])), axis=0)
    return bool(xp.all(per_row == 1)) and bool(xp.all(per_col <= 1))
