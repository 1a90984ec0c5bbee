"""Certified ``delta`` for GPARV laws with the Table 1 structure (Theorem 4, Section 5.1).

This docstring is the map of the package: every module implements one part of it and says
which (:mod:`~amp.backends.structured.shape`, :mod:`~amp.backends.structured.binomial`,
:mod:`~amp.backends.structured.nuisance`, :mod:`~amp.backends.structured.tables`,
:mod:`~amp.backends.structured.lattice`, :mod:`~amp.backends.structured.zsplit`,
:mod:`~amp.backends.structured.model`, :mod:`~amp.backends.structured.evaluator`,
:mod:`~amp.backends.structured.planner`, :mod:`~amp.backends.structured.backend`).

Shape (:mod:`.shape`)
---------------------
For every Table 1 row (k-RR, RAPPOR, OUE, BLH, HR) and their exact finite forms, the blanket
atoms ``(a, b)`` of the GPARV law (:class:`amp.mechanisms.gparv.GPARV`) lie in
``{(1, 1), (E, 1), (1, E), (E, E)}`` for one ``E > 1`` (here ``E = e^eps0``), plus the atom
``G = 0`` (mass ``1 - gamma``, or explicit ``(0, 0)`` atoms).  With ``w = e^eps``,
``beta = w - 1`` and the multinomial counts ``X`` of ``(E, 1)``, ``Y`` of ``(1, E)``, ``O`` of
``(1, 1)`` and ``Z`` of ``(E, E)``,

    S = G_1 + ... + G_n = (E - w) X + (1 - w E) Y - beta V,      V = O + E Z,

and ``delta(eps) = E[S_+] / n``.  The count law does not depend on ``eps``.

Levels: the same algorithm serves laws whose types sit at other levels, ``(lx E, lx)``,
``(ly, ly E)``, ``(sv, sv)``, ``(sv E, sv E)`` (:class:`~.shape.StructuredShape`): then
``S = lx (E - w) X + ly (1 - w E) Y - sv beta V`` (the evaluator's ``gX``, ``gY`` and nuisance
coefficient ``beta``; every bound below only uses ``gX > 0 > gY`` and ``beta >= 0``).  This
covers k-RR's Theorem 5 law (``sv = 1/E``: outputs ``x2`` give ``(1/E, 1/E)``) and the laws of
the backgrounds ``x2 = x0`` (``lx = 1/E``) and ``x2 = x1`` (``ly = 1/E``) of every Table 1
mechanism.  Theorem 5's law of the bit mechanisms (unary encodings, local hashing, Hadamard)
has three nuisance levels and two levels of each active type: not this shape (the
characteristic-function inversion :mod:`amp.backends.cfinv` at large ``n``, the FFT below).

Algorithm (:mod:`.model`, :mod:`.evaluator`, :mod:`.backend`)
-------------------------------------------------------------
Condition on ``T = X + Y ~ Bin(n, pX + pY)``; given ``T``, ``X ~ Bin(T, r)`` (``r = pX/(pX+pY)``)
and the *nuisance* ``V`` of the ``m = n - T`` other users are independent.  For every ``T`` in a
Chernoff window and ``c(T, x) = (E - w) x + (1 - w E)(T - x)`` the inner value is
``g_m(c) = E[(c - beta V_m)_+]``, split by a Bernstein window ``[m mu - t, m mu + t]`` of ``V_m``:

* ``c >= beta (m mu + t)`` (linear region, all ``x >= x_hi(T)``): ``g = c - beta m mu`` up to
  ``+ beta E[(V - m mu - t)_+]`` (Bernstein).  The sum over ``x`` is closed form:
  ``sum_{x>=k} P(x)(c(x) - beta m mu) = (cbar - beta m mu) P(x >= k) + A (1-r) k P(x = k)``.
* ``c <= beta (m mu - t)`` (zero region): ``0 <= g <= beta (m mu - t) P(V <= m mu - t)``.
* the few ``x`` in between (the *band*, ``~ 2 beta t / A`` of them, ``A = (E-1)(1+w)``):
  ``g`` from a table of the nuisance law (cumulative mass and first moment), one lookup each.

Nuisance tables (eps-free, reused across ``eps``; :mod:`.nuisance`, :mod:`.tables`,
:mod:`.zsplit`, :mod:`.lattice`; chosen per ``eps`` by :mod:`.planner`):

* ``exact`` (small ``n``): one table per ``T`` with the exact atoms ``o + E z`` (multinomial
  masses from Boost's binomial pmf); no approximation.
* ``zsplit`` (moderate ``n``, large ``E``): condition on ``Z``: given ``Z = z``, ``O`` is
  ``Bin(m - z, kappa)``, so ``g_m(c) = sum_z P(Z = z) E[(c - beta E z - beta O)_+]``.  One table
  of ``Z`` rows (one per ``T``) and one of cumulative ``O`` rows (one per ``N = m - z``), both
  on common Chernoff windows; per band element the ``z`` with ``c - beta E z`` above the ``O``
  window are a closed form (``E[(c' - beta O)_+] = c' - beta N kappa`` up to an upper tail),
  those below contribute a tail only, and the ``~ (o window) / E`` in between are one lookup
  each.  No approximation; all sums are of non-negative terms (summation by parts).
* ``lattice``: ``T`` is cut into blocks of ``b`` consecutive values; block ``[T_b - b + 1, T_b]``
  uses the law of ``V'_{m0}``, ``m0 = n - T_b``, computed by inverting its characteristic function
  (closed form, centred, ``exp(m0 log phi)``) with an inverse FFT on the lattice ``Z / K``.
  Two controlled approximations, each with a proven second-order bound:

  - *integerisation* (only with ``(E, E)`` atoms): each ``(E, E)`` user's ``E`` is replaced by
    ``floor(K E)/K`` or ``ceil(K E)/K`` with the probabilities that keep its mean.  This is a
    mean-preserving spread, so the table value is an **upper** bound; the lower end subtracts
    ``beta [s1 E N^2 / 2 + s0 E|N|]`` where ``N`` is the rounding noise and ``s1 l + s0`` bounds
    the mass of any interval of length ``l`` under ``V`` (from the binomial law of ``O`` given
    ``Z``, or of ``Z`` given ``O``).  ``K`` is a continued-fraction denominator of ``E`` (small
    ``frac(K E)(1 - frac(K E)) / K^2``).
  - *block shift*: for ``T`` in the block, ``V'_m = V'_{m0} + V'_j`` with ``j = T_b - T`` extra
    users; Jensen gives ``g >= h(c - beta j mu)`` (table value), and the same smoothing argument
    bounds the excess by ``beta [s1 E Delta^2 / 2 + s0 E|Delta|]``, ``Delta = V'_j - j mu``.

  Block size ``b`` and ``K`` are chosen from these bounds so that their share of the bracket is
  small (``b`` = whole window at ``n = 10^8``).

Certified error terms (all added to the upper end / subtracted from the lower end)
---------------------------------------------------------------------------------
* ``T`` outside its window: ``S_+ <= (E - w) T``, so ``(E - w) E[T; T outside]`` (Chernoff)
  (:mod:`.model`, :mod:`.evaluator`).
* the ends of the window not evaluated at this ``eps`` (``Evaluator._core``): ``V >= 0`` and
  ``y_+ <= e^(theta y) / (e theta)`` give ``E[S_+ | T] <= B_T`` (the Chernoff bound with the
  nuisance); the ends whose ``sum P(T) B_T`` is within ``SKIP_REL = 1e-13`` of the window's
  total are skipped and twice that sum is added to the upper end (0 to the lower end).  The
  window itself (tail level ``1e-18``) is kept for every ``eps``; the work per ``eps`` covers
  only the ``T`` that matter (about 4/5 of the window at ``delta = 1e-6``; the eps brackets
  of the Table 1 rows at ``n = 10^9 .. 10^10`` stay the same to 12 digits).
* Bernstein tails of ``V_m`` in the linear and zero regions (above) (:mod:`.model`,
  :mod:`.evaluator`).
* the table's own error: for lattice tables, the element-wise bound on the inverted
  characteristic function (rounding of ``log phi``, of ``exp``, of the inverse FFT:
  ``10 u log2 N``), aliasing (Bernstein mass outside the FFT window), mass outside the window;
  for exact tables the Chernoff mass outside the ``(o, z)`` window (:mod:`.lattice`,
  :mod:`.tables`, :mod:`.zsplit`).
* the two gaps above (lattice tables only) (:mod:`.nuisance`, :mod:`.model`).
* floating point: Boost's binomial ``pmf``/``sf`` (``scipy.stats.binom``) are assumed accurate
  to a relative ``2e-10`` (observed ``< 2e-11`` at ``n = 10^8`` against 40-digit references;
  ``scipy.special.bdtr*`` (Cephes) and ``binom.logpmf`` (``gammaln`` differences) are *not*
  used: they lose ``1e-7`` at ``n = 10^8``); the linear region's ``sf`` along the window of ``T``
  is carried from Boost anchors by exact recurrences (:func:`.binomial.sf_run`), each value with
  its certified relative error (at most ``1.25 ETA_BINOM``, else Boost); the two cancelling
  closed forms get explicit bounds; all other sums are of non-negative terms and carry a relative factor ``1 +- 1e-9``
  (:mod:`.binomial`, :mod:`.evaluator`).  The float atoms ``E``, ``e^eps`` are within
  ``16 u (a + e^eps b)`` of the exact ones; :func:`amp.core.floats.widen` adds that floor to
  both ends (:mod:`.shape`).

Cost: the window of ``T`` has ``O(sqrt(n log(1/tau)))`` values and the band a few elements per
``T``; the band is built and evaluated in chunks of ``2^17`` elements (:mod:`.evaluator`), so
the memory is that of the arrays over ``T`` (about 400 MB at ``n = 10^10``), not of the band.
Sums are ``einsum`` reductions, not BLAS ``dot`` (whose threads stall on a shared machine).

A :class:`~amp.core.errors.NumericalError` is raised when the bracket cannot be made narrower than
``rel_tol``.  A :class:`StructuredBackend` is built once per ``(law, n)`` and owns the eps-free
count machinery (windows, nuisance tables), so evaluations at many ``eps`` (a grid, or the
``eps(delta)`` search of :mod:`amp.inversion`) reuse it.
"""

from amp.backends.structured.backend import StructuredBackend, delta_bracket_structured
from amp.backends.structured.shape import StructuredShape, structured_shape, supports

__all__ = ["StructuredBackend", "StructuredShape", "delta_bracket_structured",
           "structured_shape", "supports"]
