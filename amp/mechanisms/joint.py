"""Joint composition of local randomizers (Section 6).

The joint composition of ``R_1, ..., R_m`` maps ``x = (x^1, ..., x^m)`` to
``(R_1(x^1), ..., R_m(x^m))`` with independent components; it is ``sum_i eps0_i``-LDP
(Theorem 1) and any two input vectors are neighbours.

Blanket of a product (Section 6, "the optimal decomposition of a joint composition is the
Cartesian product of the optimal decompositions"): the minimum over a product input set of a
product of non-negative factors factorises, so

    c(y) = min_x prod_i R_i(x^i)(y^i) = prod_i c_i(y^i),     gamma = prod_i gamma_i,

and the blanket ``omega`` is the product of the component blankets. For a pair of joint inputs
``(x, x')`` the blanket likelihood ratios are products, ``a = prod_i a_i``, ``b = prod_i b_i``, of
independent component ratios with ``W^i ~ omega_i``:

* where ``x^i != x'^i`` the factor ``(a_i, b_i)`` has the component's pair law;
* where ``x^i == x'^i`` it is ``(a_i, a_i)`` with ``a_i = R_i(x^i)(W^i)/c_i(W^i)``: the
  "same-input" law, whose atoms are ``(a, a, p)`` for the atoms ``(a, b, p)`` of any pair law
  with first input ``x^i`` (the marginal of ``a``; the masses ``p = c_i(y)`` do not depend on
  the pair).

Which pair is worst. The blanket bound (Theorem 4) holds for the pair whose law is used, so the
certified bound of the joint mechanism is the **maximum over all pair types**: every non-empty set
``S`` of components where ``x`` and ``x'`` differ (and, for non-symmetric components, every
choice of component pair / input). The paper's experiments use inputs that differ in every
component; :meth:`JointMechanism.gparv_laws` returns all candidates so that the caller takes the
maximum (see :func:`amp.oracles.joint_pairs.subset_deltas` for an exact comparison at small ``n``).

Laws are combined atom by atom (outer products, merging coinciding atoms after each step) and
never through the product matrix; ``c`` identical components are combined with the multinomial
type structure (an atom of the ``c``-fold product is a multiset of component atoms, with mass
``multinomial coefficient x product of masses``), so ``m ~ 10`` stays fast.
"""

from __future__ import annotations

import itertools
import math
from collections import abc
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.base import Mechanism

__all__ = [
    "JointMechanism", "JointPair", "joint_copies",
    "MAX_CANDIDATES", "MAX_ATOMS", "MAX_MATRIX_ENTRIES",
]

#: Largest number of candidate pair types enumerated (``2^12 - 1`` subsets of 12 distinct
#: symmetric components fit).
MAX_CANDIDATES = 4095
#: Largest number of atoms of an intermediate product law (before merging).
MAX_ATOMS = 2_000_000
#: Largest number of entries of an explicit product matrix (:meth:`JointMechanism.matrix`).
MAX_MATRIX_ENTRIES = 4_000_000

_ONE = GPARV([1.0], [1.0], [1.0], 0.0, "constant 1")


# ---------------------------------------------------------------------------- law algebra
def _arrays(law: GPARV) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return law.a, law.b, law.p


def _merge_arrays(a: np.ndarray, b: np.ndarray, p: np.ndarray, eps0: float,
                  lower: bool = False):
    law = GPARV(a, b, p, max(eps0, 0.0), lower=lower)
    return law.a, law.b, law.p


def _power(law: GPARV, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms of the product of ``count`` i.i.d. copies of ``law`` (multinomial types).

    An atom of the product is a multiset of component atoms with counts ``c_1..c_K``:
    ``a = prod a_j^c_j``, ``b = prod b_j^c_j``, mass ``count!/prod c_j! * prod p_j^c_j``.
    """
    if count == 0:
        return _arrays(_ONE)
    a, b, p = _arrays(law)
    K = a.size
    n_types = math.comb(count + K - 1, K - 1)
    if n_types > MAX_ATOMS:
        raise ParameterError(f"{count} copies of a law with {K} atoms give {n_types} atom types "
                             f"(max {MAX_ATOMS})")
    C = np.array([np.bincount(combo, minlength=K)
                  for combo in itertools.combinations_with_replacement(range(K), count)],
                 dtype=np.int64)
    coef = np.array([math.factorial(count) // math.prod(math.factorial(int(c)) for c in row)
                     for row in C], dtype=float)
    pa = coef * np.prod(p[None, :] ** C, axis=1)
    aa = np.prod(a[None, :] ** C, axis=1)
    bb = np.prod(b[None, :] ** C, axis=1)
    return aa, bb, pa


def _outer(x: tuple[np.ndarray, np.ndarray, np.ndarray],
           y: tuple[np.ndarray, np.ndarray, np.ndarray], eps0: float, lower: bool = False):
    """Law of the product of two independent factors, coinciding atoms merged (on the safe
    side of the law: ``lower=True`` for a Theorem 5 law, :class:`~amp.mechanisms.GPARV`)."""
    n = x[0].size * y[0].size
    if n > MAX_ATOMS:
        raise ParameterError(f"product law would have {n} atoms before merging "
                             f"(max {MAX_ATOMS}); the components' ratios do not share a "
                             "lattice, so atoms do not merge")
    a = np.multiply.outer(x[0], y[0]).ravel()
    b = np.multiply.outer(x[1], y[1]).ravel()
    p = np.multiply.outer(x[2], y[2]).ravel()
    return _merge_arrays(a, b, p, eps0, lower)


def _same_input_laws(pair_laws: Sequence[GPARV], lower: bool = False) -> list[GPARV]:
    """Laws of ``(a, a)`` with ``a = R(x)(W)/c(W)``, one per distinct input law.

    The ``a`` marginal of the pair law of ``(x0, x1)`` is the law for ``x0``, the ``b`` marginal
    the law for ``x1``; every input is the first input of some pair, so the marginals of all
    pair laws cover every input.
    """
    out: list[GPARV] = []
    for law in pair_laws:
        for r in (law.a, law.b):
            cand = GPARV(r, r, law.p, law.eps0, f"same input, {law.label}", lower=lower)
            if not any(cand.same_law(o) for o in out):
                out.append(cand)
    return out


def _dedupe(laws: Iterable[GPARV]) -> list[GPARV]:
    out: list[GPARV] = []
    for law in laws:
        if not any(law.same_law(o) for o in out):
            out.append(law)
    return out


def _same_lists(x: Sequence[GPARV], y: Sequence[GPARV]) -> bool:
    return len(x) == len(y) and all(u.same_law(v) for u, v in zip(x, y))


# ---------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class JointPair:
    """One candidate pair type of a joint mechanism and its GPARV law.

    Attributes
    ----------
    differ : tuple of int
        Components where the two joint inputs differ (a representative: for identical
        components only the number matters).
    choice : tuple of int
        For each component, the index of the option used: ``0..D-1`` a component pair law
        (``differ``), ``D..`` a same-input law (Section 6, module docstring).
    law : GPARV
        The law of the pair of joint inputs.
    """

    differ: tuple[int, ...]
    choice: tuple[int, ...]
    law: GPARV


def _enumerate(options: Sequence[tuple[list[GPARV], list[GPARV]]], eps0: float,
               name: str, what: str, lower: bool = False) -> list[JointPair]:
    """All products of per-component options with at least one 'differ' option (``lower``:
    Theorem 5 laws, merged on the lower side).

    ``options[i] = (differ_laws, same_laws)`` of component ``i``. Identical components (equal
    option lists) are grouped and enumerated as multisets, whose laws are multinomial powers.
    """
    m = len(options)
    groups: list[list[int]] = []
    for i in range(m):
        for g in groups:
            j = g[0]
            if (_same_lists(options[i][0], options[j][0])
                    and _same_lists(options[i][1], options[j][1])):
                g.append(i)
                break
        else:
            groups.append([i])
    total = 1
    for g in groups:
        r = len(options[g[0]][0]) + len(options[g[0]][1])
        total *= math.comb(len(g) + r - 1, r - 1)
    if total - 1 > MAX_CANDIDATES:
        raise ParameterError(f"joint mechanism of {m} components has {total - 1} candidate pair "
                             f"types (max {MAX_CANDIDATES}); the bound is a maximum over all of "
                             "them. Use fewer distinct components (identical components are "
                             "grouped) or JointMechanism.pair_law(differ) for a chosen pair")

    # per group: list of (counts over its options, law arrays, #differ)
    group_terms = []
    cache: dict[tuple[int, int, int], tuple] = {}
    for gi, g in enumerate(groups):
        dl, sl = options[g[0]]
        opts = list(dl) + list(sl)
        r = len(opts)
        terms = []
        for combo in itertools.combinations_with_replacement(range(r), len(g)):
            counts = np.bincount(np.array(combo, dtype=int), minlength=r)
            acc = _arrays(_ONE)
            for j, c in enumerate(counts):
                if c == 0:
                    continue
                key = (gi, j, int(c))
                if key not in cache:
                    cache[key] = _power(opts[j], int(c))
                acc = _outer(acc, cache[key], eps0, lower)
            n_diff = int(counts[:len(dl)].sum())
            # assign options to the group's components in order
            choice = [j for j, c in enumerate(counts) for _ in range(int(c))]
            terms.append((choice, n_diff, acc, len(dl)))
        group_terms.append(terms)

    out: list[JointPair] = []
    for sel in itertools.product(*group_terms):
        if sum(t[1] for t in sel) == 0:
            continue
        acc = _arrays(_ONE)
        choice = [0] * m
        differ = []
        for g, (ch, _, arrays, nd) in zip(groups, sel):
            acc = _outer(acc, arrays, eps0, lower)
            for idx, j in zip(g, ch):
                choice[idx] = j
                if j < nd:
                    differ.append(idx)
        differ_t = tuple(sorted(differ))
        label = (f"{name}, {what} differ in components {list(differ_t)}" if len(differ_t) < m
                 else f"{name}, {what} differ in every component")
        law = GPARV(acc[0], acc[1], acc[2], eps0, label, lower=lower)
        out.append(JointPair(differ_t, tuple(choice), law))
    out.sort(key=lambda jp: (-len(jp.differ), jp.differ, jp.choice))
    return out


# ---------------------------------------------------------------------------- mechanism
class JointMechanism(Mechanism):
    """Joint composition ``x -> (R_1(x^1), ..., R_m(x^m))`` of local randomizers (Section 6).

    ``eps0 = sum_i eps0_i`` (Theorem 1); blanket mass ``gamma = prod_i gamma_i``. Components
    may differ (heterogeneous). A component in its Table 1 large-domain form (``d=None``)
    makes the joint mechanism large-domain too (no matrix).

    The certified blanket bound (Theorem 4) is the **maximum over** :meth:`gparv_laws`: one law
    per pair type (the set of components in which the two inputs differ; for non-symmetric
    components also which component pair / input). The paper's experiments use only the pair
    differing in every component (:meth:`pair_law` with ``differ=None``).

    Parameters
    ----------
    components : sequence of Mechanism
        At least one component.
    name : str, optional
        Display name; by default ``"m-joint <name>"`` for identical components or the
        components' names joined by ``" x "``.

    Examples
    --------
    >>> import amp
    >>> j = amp.JointMechanism([amp.KRR(2.0, k=10)] * 2)   # eps0 = 2 + 2
    >>> j.m, j.eps0, round(j.gamma, 4), len(j.gparv_laws())
    (2, 4.0, 0.3723, 2)
    >>> d = amp.delta(j, 10_000, 0.3)
    >>> f"{d.value:.3e}", d.method
    ('1.836e-11', 'cf')
    """

    def __init__(self, components: Sequence[Mechanism], name: str | None = None):
        if (isinstance(components, (Mechanism, str, bytes))
                or not isinstance(components, abc.Sequence)):
            raise ParameterError("components must be a sequence of Mechanism objects, got "
                                 f"{type(components).__name__}")
        comps = tuple(components)
        if not comps:
            raise ParameterError("components must contain at least one Mechanism, got an "
                                 "empty sequence")
        for i, c in enumerate(comps):
            if not isinstance(c, Mechanism):
                raise ParameterError(f"component {i} must be a Mechanism, got {show(c)}")
        self.components = comps
        self.eps0 = float(math.fsum(c.eps0 for c in comps))
        if self.eps0 > V.MAX_EPS0:
            raise ParameterError(f"total eps0 = {self.eps0} exceeds {V.MAX_EPS0}")
        self.finite = all(c.finite for c in comps)
        if name is None:
            names = [c.name for c in comps]
            name = (f"{len(comps)}-joint {names[0]}" if len(set(names)) == 1 and len(comps) > 1
                    else " x ".join(names))
        self.name = name
        self._pairs: list[JointPair] | None = None
        self._lower: dict[bool, list[JointPair]] = {}

    # ------------------------------------------------------------------ constructors
    @classmethod
    def copies(cls, mechanism: Mechanism, m: int) -> "JointMechanism":
        """``m`` copies of one mechanism instance; the total level is ``m * mechanism.eps0``.

        To split a total budget ``eps0`` as ``eps0/m`` per component use :func:`joint_copies`.
        """
        if not isinstance(mechanism, Mechanism):
            raise ParameterError(f"mechanism must be a Mechanism, got {show(mechanism)}")
        m = V.int_at_least("m", m, 1)
        return cls([mechanism] * m)

    # ------------------------------------------------------------------ properties
    @property
    def m(self) -> int:
        """Number of components."""
        return len(self.components)

    @property
    def gamma(self) -> float:
        """Blanket mass ``prod_i gamma_i`` of the product blanket."""
        return float(math.prod(c.gamma for c in self.components))

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        """True when a single pair type exists (one symmetric component).

        False (use :meth:`gparv_laws`) also when the candidates are too many to enumerate.
        """
        try:
            return len(self.gparv_laws()) == 1
        except ParameterError:
            return False

    def _options(self) -> list[tuple[list[GPARV], list[GPARV]]]:
        out = []
        for c in self.components:
            dl = list(c.gparv_laws())
            out.append((dl, _same_input_laws(dl)))
        return out

    # ------------------------------------------------------------------ laws
    def pairs(self) -> list[JointPair]:
        """All candidate pair types with their laws, differing-in-every-component first."""
        if self._pairs is None:
            self._pairs = _enumerate(self._options(), self.eps0, self.name, "x, x'")
        return list(self._pairs)

    def gparv_laws(self) -> list[GPARV]:
        """Distinct laws of all candidate pair types; the bound is the maximum over them.

        For ``m`` identical symmetric components these are the ``m`` laws "differ in ``s``
        components", ``s = m, m-1, ..., 1``; for distinct symmetric components, one per
        non-empty subset (``2^m - 1``, at most :data:`MAX_CANDIDATES`).
        """
        return _dedupe(jp.law for jp in self.pairs())

    def pair_law(self, differ: Iterable[int] | None = None) -> GPARV:
        """Law of the pair differing exactly in the components ``differ`` (default: all).

        Needs every component to be symmetric (one pair law and one same-input law); otherwise
        use :meth:`pairs`.
        """
        idx = set(range(self.m)) if differ is None else set(differ)
        if not idx or not idx <= set(range(self.m)):
            raise ParameterError(f"differ must be a non-empty subset of 0..{self.m - 1}, got "
                                 f"{sorted(idx)}")
        acc = _arrays(_ONE)
        for i, (dl, sl) in enumerate(self._options()):
            if len(dl) != 1 or len(sl) != 1:
                raise ParameterError(f"component {i} ({self.components[i].name}) is not "
                                     "symmetric; use pairs() and take the maximum")
            acc = _outer(acc, _arrays(dl[0] if i in idx else sl[0]), self.eps0)
        label = (f"{self.name}, x, x' differ in every component" if len(idx) == self.m
                 else f"{self.name}, x, x' differ in components {sorted(idx)}")
        return GPARV(acc[0], acc[1], acc[2], self.eps0, label)

    def lower_pairs(self, subsets: bool = False) -> list[JointPair]:
        """Theorem 5 dataset pairs ``X0 = (x0, x2..x2)``, ``X1 = (x1, x2..x2)`` and their laws.

        Default (the paper's construction): joint inputs ``x0, x1, x2`` pairwise distinct in
        every component; the law is the product of the component Theorem 5 laws
        (``a = prod a_i``, ``b = prod b_i``, ``p = prod p_i``). With ``subsets=True`` also the
        pairs where ``x0^i == x1^i`` for some components, either equal to ``x2^i`` (factor 1) or
        distinct from it (factor ``(r, r)`` with ``r = R(x0^i)(y)/R(x2^i)(y)``, ``y ~ R(x2^i)``).
        Each is the exact divergence of a neighbouring dataset pair, hence a valid lower bound.
        """
        if subsets not in self._lower:
            opts = []
            for c in self.components:
                # the paper's construction (x0, x1, x2 distinct): no background laws
                dl = list(c.lower_laws(backgrounds=False))
                sl = _same_input_laws(dl, lower=True) + [_ONE] if subsets else []
                opts.append((dl, sl))
            self._lower[subsets] = _enumerate(opts, self.eps0, f"{self.name} Theorem 5",
                                              "x0, x1", lower=True)
        return list(self._lower[subsets])

    def lower_laws(self, pair=None, subsets: bool = False) -> list[GPARV]:
        """Theorem 5 laws (see :meth:`lower_pairs`); the lower bound is their maximum."""
        if pair is not None:
            raise ParameterError("JointMechanism.lower_laws uses joint inputs distinct in "
                                 f"every component; pair must be None, got {show(pair)}")
        return _dedupe(jp.law for jp in self.lower_pairs(subsets))

    # ------------------------------------------------------------------ finite form
    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """Number of inputs of each (finite) component."""
        return tuple(int(c.matrix().shape[0]) for c in self.components)

    def input_index(self, xs: Sequence[int]) -> int:
        """Row of :meth:`matrix` for the joint input ``(x^1, ..., x^m)`` (lexicographic)."""
        sizes = self.domain_sizes
        if len(xs) != len(sizes) or any(not 0 <= int(x) < s for x, s in zip(xs, sizes)):
            raise ParameterError(f"joint input must have {len(sizes)} entries within "
                                 f"{sizes}, got {tuple(xs)}")
        return int(np.ravel_multi_index(tuple(int(x) for x in xs), sizes))

    def matrix(self) -> np.ndarray:
        """Explicit product matrix (Kronecker product; rows in lexicographic input order).

        For tests and small sizes only: raises :class:`ParameterError` above
        :data:`MAX_MATRIX_ENTRIES` entries or for a large-domain component.
        """
        for c in self.components:
            if not c.finite:
                raise ParameterError(f"component {c.name} in its large-domain (Table 1) form "
                                     "has no finite matrix; give a domain size d")
        mats = [c.matrix() for c in self.components]
        size = math.prod(M.shape[0] * M.shape[1] for M in mats)
        if size > MAX_MATRIX_ENTRIES:
            raise ParameterError(f"product matrix would have {size} entries (max "
                                 f"{MAX_MATRIX_ENTRIES}); the laws need no matrix")
        out = mats[0]
        for M in mats[1:]:
            out = np.kron(out, M)
        return out

    def describe(self) -> str:
        inner = ", ".join(c.describe() for c in self.components)
        return f"{self.name} (joint of [{inner}], eps0={self.eps0:g})"


def joint_copies(make: Callable[..., Mechanism], m: int, eps0: float,
                 **kwargs) -> JointMechanism:
    """``m``-joint version of a mechanism with total budget ``eps0`` (``eps0/m`` each).

    The "k-joint" mechanisms of Section 7. ``make`` is a mechanism class or factory, called as
    ``make(eps0=eps0/m, **kwargs)`` when keyword arguments are given and as ``make(eps0/m)``
    otherwise; e.g. ``joint_copies(KRR, 3, 4.0, k=10)`` or ``joint_copies(RAPPOR, 2, 4.0)``.
    """
    m = V.int_at_least("m", m, 1)
    eps0 = V.eps0_value(eps0)
    if not callable(make):
        raise ParameterError(f"make must be a mechanism class or factory, got {show(make)}")
    comp = make(eps0=eps0 / m, **kwargs) if kwargs else make(eps0 / m)
    if not isinstance(comp, Mechanism):
        raise ParameterError(f"make returned {show(comp)}, not a Mechanism")
    return JointMechanism([comp] * m, name=f"{m}-joint {comp.name}" if m > 1 else None)
