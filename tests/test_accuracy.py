"""ampbook.accuracy: the frequency estimators are unbiased, their variance is the exact formula, the
binomial shortcut has the law of the per-user randomizers, and bad input is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

import amp
from ampbook import accuracy as A
from amp.core.errors import ParameterError

HIST = np.array([400, 250, 200, 100, 50])          # n = 1000, k = 5
ORACLES = [("krr", 1.0), ("oue", 1.0), ("olh", 1.0), ("krr", 4.0), ("oue", 3.0), ("olh", 3.0)]
REPS = 20_000


@pytest.mark.parametrize("name,eps0", ORACLES, ids=[f"{n}-{e:g}" for n, e in ORACLES])
def test_estimator_is_unbiased(name, eps0):
    o = A.oracle(name, eps0, HIST.size)
    f = o.estimate(o.simulate(HIST, np.random.default_rng(11), reps=REPS), HIST.sum())
    se = np.sqrt(o.variance(HIST) / REPS)             # standard error from the exact variance
    z = np.abs(f.mean(axis=0) - HIST / HIST.sum()) / se
    assert np.all(z < 5), z


@pytest.mark.parametrize("name,eps0", ORACLES, ids=[f"{n}-{e:g}" for n, e in ORACLES])
def test_empirical_variance_matches_formula(name, eps0):
    o = A.oracle(name, eps0, HIST.size)
    f = o.estimate(o.simulate(HIST, np.random.default_rng(12), reps=REPS), HIST.sum())
    ratio = f.var(axis=0, ddof=1) / o.variance(HIST)
    assert np.all(np.abs(ratio - 1) < 6 * math.sqrt(2 / REPS)), ratio   # ~6 sd of a variance


def _per_user(o: A.FrequencyOracle, xs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Support counts from the randomizers themselves, one user at a time (an explicit
    random hash table for OLH): the oracle for the binomial shortcut."""
    e, k = math.exp(o.eps0), o.k
    counts = np.zeros(k, dtype=int)
    for x in xs:
        if o.name == "krr":
            probs = np.full(k, 1 / (e + k - 1))
            probs[x] = e / (e + k - 1)
            counts[rng.choice(k, p=probs)] += 1
        elif o.name == "oue":
            bits = rng.random(k) < 1 / (e + 1)
            bits[x] = rng.random() < 0.5
            counts += bits
        else:
            h = rng.integers(0, o.g, size=k)             # a fully random hash [k] -> [g]
            probs = np.full(o.g, 1 / (e + o.g - 1))
            probs[h[x]] = e / (e + o.g - 1)
            b = rng.choice(o.g, p=probs)
            counts += h == b
    return counts


@pytest.mark.parametrize("name", A.ORACLES)
def test_shortcut_has_the_law_of_the_randomizers(name):
    """Mean and covariance of the counts: shortcut vs per-user simulation (n = 6, k = 3)."""
    hist = np.array([3, 2, 1])
    xs = np.repeat(np.arange(3), hist)
    o = A.oracle(name, 1.5, 3)
    rng = np.random.default_rng(13)
    reps = 6_000
    direct = np.array([_per_user(o, xs, rng) for _ in range(reps)])
    short = o.simulate(hist, rng, reps=reps)
    for sample in (direct, short):
        exact_mean = hist * o.p + (hist.sum() - hist) * o.q
        se = np.sqrt(np.diag(np.cov(sample.T)) / reps)
        assert np.all(np.abs(sample.mean(axis=0) - exact_mean) < 5 * se)
    assert np.allclose(np.cov(direct.T), np.cov(short.T), atol=0.08)
    if name == "krr":
        assert np.all(short.sum(axis=1) == hist.sum())         # one value per report
        assert np.cov(short.T)[0, 1] < 0


def test_large_n_is_cheap_and_unbiased():
    f_true = A.zipf_frequencies(100, 1.1)
    hist = np.random.default_rng(14).multinomial(10**7, f_true)
    o = A.oracle("krr", 12.0, 100)
    f = o.estimate(o.simulate(hist, np.random.default_rng(15), reps=200), 10**7)
    z = np.abs(f.mean(axis=0) - hist / 10**7) / np.sqrt(o.variance(hist) / 200)
    assert np.all(z < 5)


@pytest.mark.parametrize("noise", A.NOISES)
def test_central_noise_unbiased_with_exact_variance(noise):
    counts = A.central_counts(HIST, 0.5, np.random.default_rng(16), reps=REPS, noise=noise)
    var = A.central_variance(0.5, noise)
    z = np.abs(counts.mean(axis=0) - HIST) / math.sqrt(var / REPS)
    assert np.all(z < 5)
    ratio = counts.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) < 0.06), ratio          # heavy-ish tails: a wider band
    if noise == "geometric":
        assert np.all(counts == np.round(counts))


def test_central_variances():
    assert A.central_variance(1.0) == 8.0
    alpha = math.exp(-0.5)
    assert math.isclose(A.central_variance(1.0, "geometric"), 2 * alpha / (1 - alpha) ** 2)
    assert A.central_variance(1.0, "geometric") < A.central_variance(1.0)


def test_probabilities_and_mechanisms():
    o = A.oracle("krr", 2.0, 10)
    e = math.exp(2.0)
    assert math.isclose(o.p, e / (e + 9)) and math.isclose(o.q, 1 / (e + 9))
    assert math.isclose(A.oracle("oue", 2.0, 10).q, 1 / (e + 1))
    olh = A.oracle("olh", 2.0, 10)
    assert olh.g == round(e + 1) == 8 and math.isclose(olh.q, 1 / 8)
    ratios = {   # the largest likelihood ratio of one output between two inputs is e^eps0
        "krr": lambda o: o.p / o.q,
        "oue": lambda o: o.p * (1 - o.q) / (o.q * (1 - o.p)),
        "olh": lambda o: o.p / ((1 - o.p) / (o.g - 1)),
    }
    for name in A.ORACLES:
        assert math.isclose(ratios[name](A.oracle(name, 2.0, 10)), e)
    assert isinstance(A.oracle("oue", 2.0, 10).mechanism(), amp.OUE)
    assert A.oracle("olh", 2.0, 10).mechanism().g == 8


@pytest.mark.parametrize("name", A.ORACLES)
def test_calibrated_oracle_is_certified(name):
    n, eps, delta = 10_000, 1.0, 1e-6
    o = A.calibrated_oracle(name, 59, n, eps, delta)
    assert o.eps0 > eps
    assert amp.delta(o.mechanism(), n, eps).upper <= delta


def test_errors():
    f = np.array([[0.5, 0.5], [0.7, 0.3]])
    truth = np.array([0.6, 0.4])
    assert np.allclose(A.mse(f, truth), [0.01, 0.01])
    assert np.allclose(A.max_abs_error(f, truth), [0.1, 0.1])


BAD = [
    (lambda: A.FrequencyOracle("rappor", 1.0, 5), "oracle must be one of"),
    (lambda: A.FrequencyOracle("krr", -1.0, 5), "eps0 must be > 0, got -1.0"),
    (lambda: A.FrequencyOracle("krr", 1.0, 1), "k must be"),
    (lambda: A.FrequencyOracle("olh", 1.0, 5), "g is required"),
    (lambda: A.FrequencyOracle("oue", 1.0, 5, 4), "g applies to olh only"),
    (lambda: A.olh_buckets(40.0), "eps0 must be <= 30"),
    (lambda: A.histogram([3, -1, 2]), "got -1"),
    (lambda: A.histogram([1.5, 2]), "got 1.5"),
    (lambda: A.histogram([0, 0]), "at least one user"),
    (lambda: A.histogram([[1, 2]]), "1-D"),
    (lambda: A.oracle("krr", 1.0, 3).simulate([1, 2], np.random.default_rng(0)), "k = 3"),
    (lambda: A.oracle("krr", 1.0, 3).simulate([1, 2, 3], 7), "numpy Generator"),
    (lambda: A.oracle("krr", 1.0, 3).simulate([1, 2, 3], np.random.default_rng(0), 0),
     "reps must be"),
    (lambda: A.oracle("krr", 1.0, 3).estimate([1, 2], 3), "k = 3"),
    (lambda: A.central_counts([1, 2], 0.0, np.random.default_rng(0)), "eps must be > 0"),
    (lambda: A.central_variance(1.0, "gauss"), "noise must be one of"),
    (lambda: A.zipf_frequencies(10, 0.0), "s must be > 0"),
    (lambda: A.family("hadamard", 10), "oracle must be one of"),
]


@pytest.mark.parametrize("call,message", BAD, ids=[m for _, m in BAD])
def test_bad_input_refused(call, message):
    with pytest.raises(ParameterError, match=message):
        call()


def test_compare_orders_the_three_settings():
    hist = np.random.default_rng(17).multinomial(100_000, A.zipf_frequencies(20, 1.1))
    shuffled = A.calibrated_oracle("krr", 20, 100_000, 1.0, 1e-6)
    c = A.compare(hist, shuffled, 1.0, np.random.default_rng(18), reps=200)
    assert c.local.eps0 == 1.0 and c.n == 100_000
    assert c.expected_mse["central"] == 8.0 / 100_000 ** 2
    for s in A.SETTINGS:                     # Monte Carlo within ~5 sd of the exact MSE
        assert abs(c.mse[s] / c.expected_mse[s] - 1) < 0.1, (s, c.mse[s], c.expected_mse[s])
    assert c.mse["central"] < c.mse["shuffled"] < c.mse["local"]
    assert c.max_abs["central"] < c.max_abs["shuffled"] < c.max_abs["local"]


@pytest.mark.parametrize("eps0,g,d", [(3.0, 3, 3), (4.0, 4, 3), (2.0, 2, 5)])
def test_olh_privacy_form_is_conservative_for_the_simulated_family(eps0, g, d):
    """The chapter accounts OLH with Table 1's large-domain form (``d=None``) and simulates the
    full hash family over [d]: on small cases the exact finite form's bound is below it."""
    finite = amp.delta(amp.OLH(eps0, g=g, d=d), 1000, 0.5)
    large = amp.delta(A.FrequencyOracle("olh", eps0, d, g).mechanism(), 1000, 0.5)
    assert finite.upper <= large.upper
