"""Independent reference for the likelihood-sum epsilon lower bounds.

Written from the formulas below alone, without reading the package's code.

n users hold x_i in {-1, +1} and report y_i = x_i + N(0, sigma^2); a shuffler
releases the multiset {y_i}. D puts the target at +1 and the other n - 1
users at -1, D' puts all n users at -1. With L(y) = exp(2 y / sigma^2), the
ratio of N(1, sigma^2) to N(-1, sigma^2), the released multiset has density
ratio P / Q = S / n with S = sum_i L(y_i), so

  delta(eps) = E_Q[(S / n - e^eps)_+],  y_i iid N(-1, sigma^2),

and epsilon(delta) is the smallest eps >= 0 with delta(eps) <= delta. Under Q,
log L ~ N(m, s^2) with m = -2 / sigma^2, s = 2 / sigma (so E L = 1), and
E[(L - c)_+] = Phi(d1) - c Phi(d2), d2 = (m - ln c) / s, d1 = d2 + s.

n = 1 is that closed form; n = 2 is a quadrature over y_1 of the closed form
in y_2. For large n, S is bracketed on a lattice (see `_lattice_bracket`).
Both `likelihood_sum_epsilon_lower_bound` and
`gaussian_shuffle_epsilon_lower_bound` claim lower bounds on epsilon(delta)
of exactly this pair: they must not exceed the reference, and they must not
be trivially small either.
"""

import math

import numpy as np
import pytest
from scipy import fft
from scipy import integrate
from scipy import optimize
from scipy import special

from shuffle_accountants.pld import likelihood_sum

_SIGMAS = (0.5, 1.0, 2.0, 5.0)
_DELTAS = (1e-2, 1e-4, 1e-6)
# Combinations whose epsilon is above this are skipped (none is, here).
_MAX_EPSILON = 60.0
_BOUNDS = {
    'likelihood_sum': likelihood_sum.likelihood_sum_epsilon_lower_bound,
    'gaussian_shuffle': likelihood_sum.gaussian_shuffle_epsilon_lower_bound,
}


def _log_ratio_law(sigma):
  """Mean and standard deviation of log L under Q."""
  return -2.0 / sigma**2, 2.0 / sigma


def _excess(c, sigma):
  """E_Q[(L - c)_+], the lognormal closed form (1 - c for c <= 0)."""
  if c <= 0.0:
    return 1.0 - c
  m, s = _log_ratio_law(sigma)
  d2 = (m - math.log(c)) / s
  d1 = d2 + s
  if d1 >= 0.0:
    return float(special.ndtr(d1) - c * special.ndtr(d2))
  # Phi(x) = erfcx(-x / sqrt 2) exp(-x^2 / 2) / 2, and m = -s^2 / 2 gives
  # c exp(-d2^2 / 2) = exp(-d1^2 / 2): the difference of two tiny Phi's
  # becomes a tiny factor times a difference of order-one numbers.
  r = math.sqrt(0.5)
  return 0.5 * math.exp(-0.5 * d1 * d1) * float(
      special.erfcx(-d1 * r) - special.erfcx(-d2 * r))


def _delta_one(epsilon, sigma):
  return _excess(math.exp(epsilon), sigma)


def _delta_two(epsilon, sigma):
  """(1/2) E_{y1}[E_{y2}[(L1 + L2 - 2 e^eps)_+]], y1 by quadrature."""
  m, s = _log_ratio_law(sigma)
  c = 2.0 * math.exp(epsilon)

  def integrand(z):  # z = (log L1 - m) / s, standard normal
    return _excess(c - math.exp(m + s * z), sigma) * math.exp(-0.5 * z * z)

  # The inner excess turns linear (1 - (c - L1)) where L1 = c: split there.
  # Beyond |z| = 40 the integrand is below exp(-800 + 4 * 40).
  kink = min(max((math.log(c) - m) / s, -40.0), 40.0)
  total = 0.0
  for a, b in ((-40.0, kink), (kink, 40.0)):
    if b > a:
      total += integrate.quad(
          integrand, a, b, epsabs=0.0, epsrel=1e-12, limit=500)[0]
  return 0.5 * total / math.sqrt(2.0 * math.pi)


def _epsilon(delta_of_epsilon, delta):
  """The smallest eps >= 0 with delta_of_epsilon(eps) <= delta."""
  if delta_of_epsilon(0.0) <= delta:
    return 0.0
  high = 1.0
  while delta_of_epsilon(high) > delta:
    high *= 2.0
  return optimize.brentq(
      lambda e: math.log(delta_of_epsilon(e)) - math.log(delta), 0.0, high,
      xtol=1e-13, rtol=1e-13)


def _exact_epsilon(num_users, sigma, delta):
  delta_fn = {1: _delta_one, 2: _delta_two}[num_users]
  return _epsilon(lambda e: delta_fn(e, sigma), delta)


# --------------------------------------------------------------- lattice --


def _floor_law(sigma, h, cap_index):
  """P_Q(floor(min(L, K) / h) = j) for j = 0..J, with K = J h."""
  m, s = _log_ratio_law(sigma)
  edges = (np.log(h * np.arange(1, cap_index + 1)) - m) / s
  lower = np.concatenate(([-np.inf], edges))
  upper = np.concatenate((edges, [np.inf]))
  # CDF differences left of the median, survival differences right of it:
  # both keep their relative accuracy far into the tails.
  return np.where(
      lower >= 0.0,
      special.ndtr(-lower) - special.ndtr(-upper),
      special.ndtr(upper) - special.ndtr(lower))


def _log_chernoff(law, h, num_users, threshold, upper):
  """log of a Chernoff bound on P(S >= threshold) (upper) or P(S < thr.).

  S is a sum of num_users iid copies of j h, j ~ law; the moment generating
  function is the exact one of the lattice law.
  """
  values = h * np.arange(law.size)
  mean = float(np.dot(law, values))
  var = float(np.dot(law, (values - mean)**2))
  gap = threshold - num_users * mean if upper else (
      num_users * mean - threshold)
  if gap <= 0.0:
    return 0.0
  sign = 1.0 if upper else -1.0
  keep = law > 0.0
  values, log_law = values[keep], np.log(law[keep])

  def log_bound(log_lam):
    lam = math.exp(log_lam)
    exponent = (sign * lam) * values + log_law
    top = float(exponent.max())
    log_mgf = top + math.log(float(np.sum(np.exp(exponent - top))))
    return min(0.0, -sign * lam * threshold + num_users * log_mgf)

  guess = math.log(gap / (num_users * var))
  result = optimize.minimize_scalar(
      log_bound, bounds=(guess - 25.0, guess + 3.0), method='bounded',
      options={'xatol': 1e-2})
  return min(log_bound(guess), float(result.fun))


def _log_upper_tail(law, h, num_users, threshold, sigma):
  """log of a bound on P(S_low >= threshold), S_low = h sum_i floor_i.

  Direct Chernoff, and for heavy tails a two-jump split: for y <= K, unless
  two users have L > y (probability <= C(n, 2) P(L > y)^2), S_low <= K +
  sum_i floor(min(L_i, y)), whose lattice law is `law` capped at y.
  """
  cap = h * (law.size - 1)
  best = _log_chernoff(law, h, num_users, threshold, upper=True)
  m, s = _log_ratio_law(sigma)
  for fraction in (0.5, 0.25, 0.125, 0.0625):
    index = int(fraction * (law.size - 1))
    y = h * index
    if index < 1 or threshold - cap <= 0.0:
      continue
    capped = np.concatenate((law[:index], [law[index:].sum()]))
    log_two = (math.log(0.5 * num_users * (num_users - 1))
               + 2.0 * float(special.log_ndtr((m - math.log(y)) / s)))
    log_rest = _log_chernoff(
        capped, h, num_users, threshold - cap, upper=True)
    best = min(best, float(np.logaddexp(log_two, log_rest)))
  return best


def _two_user_excess(law, h):
  """c -> E[(S_low / 2 - c)_+] for two users, exactly (no FFT).

  E[(X1 + X2 - t)_+] = sum_j law_j E[(X - (t - j h))_+], and E[(X - u)_+]
  is read off suffix sums of the single-user law.
  """
  values = h * np.arange(law.size)
  suffix0 = np.append(np.cumsum(law[::-1])[::-1], 0.0)
  suffix1 = np.append(np.cumsum((law * values)[::-1])[::-1], 0.0)

  def excess(c):
    u = 2.0 * c - values
    i = np.searchsorted(values, u)
    return 0.5 * float(np.dot(law, suffix1[i] - u * suffix0[i]))

  return excess


def _fft_excess(law, h, n, sigma, c_max):
  """Lower and upper bounds on c -> G(c) = E[(S_low / n - c)_+].

  The law of S_low / h is numpy's FFT of the single-user floor law raised
  to the n-th power, read in a cyclic window [lo, lo + N). The identity
    G(c) = E[S_low] / n - c + E[(c - S_low / n)_+],
  with the exact lattice mean, needs the law only below n c.

  Aliasing. The window shows at s the sum over w of P(S_low = s + w N): it
  over-counts by at most A = P(S_low < lo) + P(S_low >= lo + N) in all, and
  leaves out the mass below lo, at most P(S_low < lo). Both probabilities
  are bounded here by Chernoff bounds with the exact moment generating
  function of the lattice law (a two-jump split for the heavy tail of
  sigma = 1), and the window grows until each is below e^-40; c A is then
  taken off the lower side and added to the upper side. Instead of a fixed
  mean +- 40 sd, the lower edge is where the bound says so (15 sd is enough
  for all three cases, the lower tail being light) and the upper edge
  a bit above n c for sigma = 2 and 5. For n = 10^5, sigma = 1 one user
  alone pushes S past n c with probability ~1e-7 (log L has sd 2): the top
  there ends several times n c up, where two such users are needed.

  FFT noise. Raising the transform to the n-th power multiplies its
  rounding by about n; the result carries noise of a roughly uniform size,
  visible as the negative entries. The lower side clips at 0 after taking
  off 100 times the most negative entry at every point; the upper side
  clips at 0 and adds that allowance at every point.
  """
  values = h * np.arange(law.size)
  mean1 = float(np.dot(law, values))
  mean = n * mean1
  sd = math.sqrt(n * float(np.dot(law, (values - mean1)**2)))
  # The window: lo, then top, widened until the aliased mass is negligible.
  spread = 15.0
  while True:
    lo = max(0.0, mean - spread * sd)
    log_below = (-math.inf if lo == 0.0 else _log_chernoff(
        law, h, n, lo, upper=False))
    if log_below < -40.0:
      break
    spread += 5.0
  s_lo = int(math.floor(lo / h))
  top = max(mean + spread * sd, 1.02 * n * c_max)
  while True:
    log_above = _log_upper_tail(law, h, n, top, sigma)
    if log_above < -40.0:
      break
    top = lo + 1.5 * (top - lo)
  size = fft.next_fast_len(int(math.ceil(top / h)) - s_lo + 1, real=True)
  log_alias = float(np.logaddexp(log_below, log_above))
  alias = math.exp(log_alias)
  assert log_alias < -32.0

  if law.size <= size:
    single = np.zeros(size)
    single[:law.size] = law
  else:
    single = np.bincount(np.arange(law.size) % size, weights=law,
                         minlength=size)
  transform = fft.rfft(single)
  del single
  transform **= n
  mass = fft.irfft(transform, size)
  del transform
  mass = np.roll(mass, -(s_lo % size))  # mass[i]: S_low = (s_lo + i) h
  noise = 100.0 * max(-float(mass.min()), 0.0)
  if noise == 0.0:
    noise = n * np.finfo(float).eps * float(mass.max())
  x = (s_lo + np.arange(size)) * (h / n)  # S_low / n at each entry

  def lattice_excess(weights):
    """c -> E[(S_low / n - c)_+] for a law `weights` on the window."""
    total0 = float(np.sum(weights))
    total1 = float(np.dot(weights, x))
    # Suffix sums stay small where they are read (above n c), so their
    # rounding is negligible; sum_{x < c} w (c - x) = c total0 - total1
    # + sum_{x >= c} w (x - c).
    suffix0 = np.append(np.cumsum(weights[::-1])[::-1], 0.0)
    suffix1 = np.append(np.cumsum((weights * x)[::-1])[::-1], 0.0)

    def excess(c):
      i = int(np.searchsorted(x, c))
      below = c * total0 - total1 + suffix1[i] - c * suffix0[i]
      return mean1 - c + below

    return excess

  g_low = lattice_excess(np.maximum(mass - noise, 0.0))
  g_up = lattice_excess(np.maximum(mass, 0.0) + noise)
  del mass
  return g_low, g_up, alias, noise, size


def _lattice_bracket(num_users, sigma, delta, h, max_epsilon):
  """[eps_low, eps_up] containing epsilon(delta), and diagnostics.

  Each L_i is written as X_i + r_i + B_i with X_i = h floor(min(L_i, K) / h)
  on the lattice, r_i = min(L_i, K) - X_i in [0, h) and B_i = (L_i - K)_+,
  K = J h. Let S_low = sum X_i, R = sum r_i, B = sum B_i.

  Floor / ceil. S_low <= S <= S_low + n h + B (ceil(min(L, K)) is at most
  floor(min(L, K)) + h, so the ceiling law is the floor law moved by h and
  one convolution serves both sides), and (a + b)_+ <= a_+ + b_+, so with
  G(c) = E[(S_low / n - c)_+]:
    G(c) <= delta(eps) <= G(c - h) + E[(L - K)_+],  c = e^eps.
  If K >= n c the lower side also gets + E[(L - K)_+]: when some B_i > 0,
  S_low >= K >= n c, so the positive part splits exactly.

  Tighter (used for the assertions). R is a sum of n independent [0, h)
  variables with known mean n rho, rho = E min(L, K) - E X, so by Hoeffding
  P(R / n - rho >= tau) and P(rho - R / n >= tau) are each at most
  q = exp(-2 n tau^2 / h^2); as (.)_+ is monotone and 1-Lipschitz, with
  b1 = rho - tau and b0 = rho + tau (tau sized for q h ~ 1e-14):
    G(c - b1) - b1 q  <=  E[(S_low / n + R / n - c)_+]
                      <=  G(c - b0) + (h - b0) q.
  For n = 10^4 this shrinks the lattice gap h to about 0.07 h.

  G on the lattice: exact sums for n = 2 (`_two_user_excess`), an FFT for
  larger n (`_fft_excess`), each giving a lower and an upper function.
  """
  n = num_users
  c_max = math.exp(max_epsilon)
  m, s = _log_ratio_law(sigma)
  # K: n c_max (the lossless split), or where E[(L - K)_+] < Phi(-7.5).
  cap_index = int(math.ceil(
      min(n * c_max, math.exp(m + s * (s + 7.5))) / h))
  cap = cap_index * h
  tail_cap = _excess(cap, sigma)
  law = _floor_law(sigma, h, cap_index)
  assert abs(law.sum() - 1.0) < 1e-12
  values = h * np.arange(cap_index + 1)
  mean1 = float(np.dot(law, values))
  rho = (1.0 - tail_cap) - mean1  # E[r_i]

  if n == 2:
    g_low = g_up = _two_user_excess(law, h)
    alias, noise, size = 0.0, 0.0, law.size
  else:
    g_low, g_up, alias, noise, size = _fft_excess(law, h, n, sigma, c_max)

  def split(c):  # the exact + E[(L - K)_+] of the lower side, if K >= n c
    return tail_cap if cap >= n * c else 0.0

  tau = h * math.sqrt(math.log(h / 1e-14) / (2.0 * n))
  b1, b0 = max(rho - tau, 0.0), min(rho + tau, h)
  hoeffding = math.exp(-2.0 * n * tau**2 / h**2)

  def delta_low(e, plain):
    c = math.exp(e)
    if plain:
      return g_low(c) - c * alias + split(c)
    return g_low(c - b1) - c * alias - b1 * hoeffding + split(c)

  def delta_up(e, plain):
    c = math.exp(e)
    b = h if plain else b0
    return (g_up(c - b) + c * alias + (h - b) * hoeffding + tail_cap)

  result = {'noise': noise, 'alias': alias, 'size': size, 'tau': tau,
            'tail_cap': tail_cap}
  for plain, tag in ((False, ''), (True, '_plain')):
    assert delta_low(0.0, plain) > delta and delta_up(0.0, plain) > delta
    assert delta_low(max_epsilon, plain) < delta
    assert delta_up(max_epsilon, plain) < delta
    # delta_low(e) >= delta at the root, so epsilon(delta) >= it; any e
    # with delta_up(e) <= delta is >= epsilon(delta).
    result['eps_low' + tag] = optimize.brentq(
        lambda e: delta_low(e, plain) - delta, 0.0, max_epsilon, xtol=1e-12)
    result['eps_up' + tag] = optimize.brentq(
        lambda e: delta_up(e, plain) - delta, 0.0, max_epsilon, xtol=1e-12)
  return result


# ----------------------------------------------------------------- tests --


# Every (sigma, delta) for the likelihood-sum bound; the Gaussian-shuffle
# bound (about as slow, ~1 s a call) at the two smaller deltas.
_SMALL_CASES = [
    (name, num_users, sigma, delta)
    for name in sorted(_BOUNDS)
    for num_users in (1, 2)
    for sigma in _SIGMAS
    for delta in _DELTAS
    if name == 'likelihood_sum' or delta < 1e-2
]


@pytest.mark.parametrize('name, num_users, sigma, delta', _SMALL_CASES)
def test_small_n_against_exact(name, num_users, sigma, delta):
  exact = _exact_epsilon(num_users, sigma, delta)
  if exact > _MAX_EPSILON:
    pytest.skip(f'epsilon {exact} above {_MAX_EPSILON}')
  bound = _BOUNDS[name](num_users, sigma, delta)
  assert bound <= exact * (1.0 + 1e-6) + 1e-9, (bound, exact)
  # Observed bound / exact, worst over delta, for n = 1 and n = 2:
  #   likelihood_sum:   sigma 0.5: 0.564, 0.565; sigma 1: 0.748, 0.763;
  #                     sigma 2 and 5: above 0.99992.
  #   gaussian_shuffle: sigma 0.5: 0.643, 0.634; sigma 1: 0.941, 0.937;
  #                     sigma 2 and 5: above 0.99992.
  # Floors a bit below those, so that a trivial bound fails.
  floors = {'likelihood_sum': {0.5: 0.5, 1.0: 0.7},
            'gaussian_shuffle': {0.5: 0.6, 1.0: 0.9}}[name]
  assert bound >= floors.get(sigma, 0.99) * exact, (bound, exact)


def test_n_equal_one_is_the_gaussian_mechanism():
  # delta(eps) of the Gaussian mechanism with sensitivity mu = 2 / sigma.
  for sigma in _SIGMAS:
    mu = 2.0 / sigma
    for epsilon in (0.0, 0.5, 2.0, 8.0):
      expected = (special.ndtr(mu / 2 - epsilon / mu)
                  - math.exp(epsilon) * special.ndtr(-mu / 2 - epsilon / mu))
      assert _delta_one(epsilon, sigma) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize('sigma, delta, h', [
    (0.5, 1e-6, 1e7),
    (1.0, 1e-6, 5.0),
    (2.0, 1e-4, 2e-3),
])
def test_quadrature_inside_lattice_bracket(sigma, delta, h):
  """The n = 2 quadrature against the (plain) lattice bracket."""
  exact = _exact_epsilon(2, sigma, delta)
  result = _lattice_bracket(2, sigma, delta, h, exact + 1.0)
  assert result['eps_low_plain'] <= exact <= result['eps_up_plain']
  # Observed widths: 3e-6, 2e-5 and 3e-5 relative.
  assert result['eps_up_plain'] - result['eps_low_plain'] < 1e-4 * exact


@pytest.mark.parametrize('num_users, sigma, delta, h, max_epsilon', [
    (10**4, 2.0, 1e-6, 2e-3, 0.06),
    (10**4, 5.0, 1e-6, 5e-4, 0.02),
    (10**5, 1.0, 1e-6, 0.1, 0.8),
])
def test_large_n_inside_lattice_bracket(num_users, sigma, delta, h,
                                        max_epsilon):
  result = _lattice_bracket(num_users, sigma, delta, h, max_epsilon)
  low, up = result['eps_low'], result['eps_up']
  # The tight bracket lies in the plain floor / ceil one and is narrow.
  assert result['eps_low_plain'] <= low * (1 + 1e-12)
  assert up <= result['eps_up_plain'] * (1 + 1e-12)
  assert up - low < 0.01 * low, result
  # Observed (both functions return the same value in all three cases):
  #   n = 10^4, sigma = 2: [0.045753, 0.045891] (0.30 % wide), bound
  #     0.045795: bound / eps_low 1.0009, bound / eps_up 0.9979;
  #   n = 10^4, sigma = 5: [0.013031, 0.013066] (0.27 %), bound 0.013042:
  #     1.0009, 0.9982;
  #   n = 10^5, sigma = 1: [0.46826, 0.47006] (0.38 %), bound 0.37668:
  #     0.804, 0.801.
  # (Finer lattices, h = 2.5e-4 and 4e-5, narrow the first two to
  # [0.0458139, 0.0458305] and [0.0130474, 0.0130500]: the bound sits about
  # 0.04 % below epsilon there.) So the bound is tested to within the
  # bracket's width, and 0.7 leaves room above a trivial bound.
  for name, function in sorted(_BOUNDS.items()):
    bound = function(num_users, sigma, delta)
    assert bound <= up, (name, bound, result)
    assert bound >= 0.7 * low, (name, bound, result)
