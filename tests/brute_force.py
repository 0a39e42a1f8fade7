"""Brute-force references, written independently of the library's code.

They enumerate exact output distributions with plain Python / scipy and share
no code with `shuffle_accountants`, so that a wrong bound cannot agree with a
reference by construction.
"""

import itertools
import math

import numpy as np
from scipy import stats
from scipy.special import logsumexp


def renyi(p, q, order):
  """D_order(p || q) for two aligned probability vectors (inf if unbounded).

  Both are renormalised: scipy's pmfs sum to one only up to ~1e-13, which
  matters when (order - 1) D is that small.
  """
  p, q = np.asarray(p, float), np.asarray(q, float)
  p, q = p / p.sum(), q / q.sum()
  support = p > 0
  if np.any(q[support] == 0):
    return math.inf
  return logsumexp(order * np.log(p[support])
                   + (1 - order) * np.log(q[support])) / (order - 1)


def binary_rr_rdp(local_epsilon, orders):
  """D_order of binary randomized response at eps0, from its output laws."""
  return np.array([renyi(krr_probabilities(0, 2, local_epsilon),
                         krr_probabilities(1, 2, local_epsilon), order)
                   for order in orders])


def krr_probabilities(value, num_categories, local_epsilon):
  """Output law of k-ary randomized response on input `value`."""
  denominator = math.exp(local_epsilon) + num_categories - 1
  probs = [1 / denominator] * num_categories
  probs[value] = math.exp(local_epsilon) / denominator
  return probs


def shuffled_histogram(dataset, num_categories, local_epsilon):
  """Exact law of the histogram of k-RR reports of `dataset` (a dict)."""
  return shuffled_law(dataset, krr_matrix(num_categories, local_epsilon))


def neighbouring_shuffled_krr_laws(num_users, num_categories, local_epsilon):
  """Yields (law_p, law_q) for every replace-one pair (both orders)."""
  # The output depends on the dataset only through its multiset.
  for rest in itertools.combinations_with_replacement(range(num_categories),
                                                      num_users - 1):
    for x, y in itertools.permutations(range(num_categories), 2):
      yield (shuffled_histogram(rest + (x,), num_categories, local_epsilon),
             shuffled_histogram(rest + (y,), num_categories, local_epsilon))


def worst_case_shuffled_krr_rdp(num_users, num_categories, local_epsilon,
                                orders):
  """max over all replace-one pairs (both orders) of the shuffled k-RR RDP."""
  worst = np.zeros(len(orders))
  for law_p, law_q in neighbouring_shuffled_krr_laws(
      num_users, num_categories, local_epsilon):
    keys = sorted(set(law_p) | set(law_q))
    p = [law_p.get(k, 0.0) for k in keys]
    q = [law_q.get(k, 0.0) for k in keys]
    worst = np.maximum(worst, [renyi(p, q, o) for o in orders])
  return worst


def clone_pair(num_users, local_epsilon):
  """The FMT21 clone pair by enumerating (C, A, Delta), as log-masses.

  Returns two dicts (a, b) -> log-probability; log space keeps atoms whose
  mass underflows double precision.
  """
  log_clone = -local_epsilon
  log_q = local_epsilon - np.logaddexp(local_epsilon, 0.0)
  log_1mq = -np.logaddexp(local_epsilon, 0.0)
  law_p, law_q = {}, {}
  for c in range(num_users):
    log_weight_c = stats.binom.logpmf(c, num_users - 1, math.exp(log_clone))
    split = stats.binom.logpmf(np.arange(c + 1), c, 0.5)
    for a_count in range(c + 1):
      for delta, log_prob in ((1, log_q), (0, log_1mq)):
        mass = log_weight_c + split[a_count] + log_prob
        key_p = (a_count + delta, c - a_count + 1 - delta)
        key_q = (a_count + 1 - delta, c - a_count + delta)
        law_p[key_p] = np.logaddexp(law_p.get(key_p, -np.inf), mass)
        law_q[key_q] = np.logaddexp(law_q.get(key_q, -np.inf), mass)
  return law_p, law_q


def clone_pair_rdp(num_users, local_epsilon, orders):
  law_p, law_q = clone_pair(num_users, local_epsilon)
  keys = sorted(law_p)
  assert set(keys) == set(law_q)
  # scipy's log-pmfs sum to one only up to ~1e-13; normalise so that the
  # reference is accurate when (order - 1) D is that small.
  log_p = np.array([law_p[k] for k in keys])
  log_q = np.array([law_q[k] for k in keys])
  log_p -= logsumexp(log_p)
  log_q -= logsumexp(log_q)
  return np.array([logsumexp(o * log_p + (1 - o) * log_q) / (o - 1)
                   for o in orders])


def binary_rr_all_equal_rdp(num_users, local_epsilon, orders):
  """Both orders of D_order for shuffled binary RR on (0..0) vs (0..0, 1).

  In log space (tail probabilities underflow for large eps0), normalised.
  """
  flip = 1 / (math.exp(local_epsilon) + 1)
  ks = np.arange(num_users + 1)
  log_d = stats.binom.logpmf(ks, num_users, flip)
  log_d1 = np.logaddexp(
      stats.binom.logpmf(ks, num_users - 1, flip) + math.log(flip),
      stats.binom.logpmf(ks - 1, num_users - 1, flip) + math.log1p(-flip))
  log_d -= logsumexp(log_d)
  log_d1 -= logsumexp(log_d1)
  def divergence(log_p, log_q, order):
    return logsumexp(order * log_p + (1 - order) * log_q) / (order - 1)
  return (np.array([divergence(log_d1, log_d, o) for o in orders]),
          np.array([divergence(log_d, log_d1, o) for o in orders]))


def hockey_stick(law_p, law_q, epsilon):
  """H_{e^eps}(P || Q) = sum (P - e^eps Q)_+ for two dicts of probabilities."""
  factor = math.exp(epsilon)
  return sum(max(0.0, mass - factor * law_q.get(key, 0.0))
             for key, mass in law_p.items())


def worst_case_shuffled_krr_delta(num_users, num_categories, local_epsilon,
                                  epsilons):
  """max over all replace-one pairs (both orders) of the shuffled k-RR delta."""
  worst = np.zeros(len(epsilons))
  for law_p, law_q in neighbouring_shuffled_krr_laws(
      num_users, num_categories, local_epsilon):
    worst = np.maximum(worst, [hockey_stick(law_p, law_q, e)
                               for e in epsilons])
  return worst


def clone_pair_profile(num_users, local_epsilon):
  """eps -> exact H_{e^eps} of the FMT21 clone pair, from every (c, a) atom."""
  p_clone = math.exp(-local_epsilon)
  q = 1 / (1 + math.exp(-local_epsilon))
  masses_p, masses_q = [], []
  for c in range(num_users):
    weight = stats.binom.pmf(c, num_users - 1, p_clone)
    if weight == 0:
      continue
    a = np.arange(c + 2)
    split_minus = stats.binom.pmf(a - 1, c, 0.5)  # A = a - 1, Delta = 1
    split_plain = stats.binom.pmf(a, c, 0.5)      # A = a, Delta = 0
    masses_p.append(weight * (q * split_minus + (1 - q) * split_plain))
    masses_q.append(weight * (q * split_plain + (1 - q) * split_minus))
  masses_p, masses_q = np.concatenate(masses_p), np.concatenate(masses_q)
  return lambda epsilon: float(np.sum(np.maximum(
      0.0, masses_p - math.exp(epsilon) * masses_q)))


def binary_rr_all_equal_delta(num_users, local_epsilon, epsilon):
  """Both orders of H_{e^eps} for shuffled binary RR, (0..0) vs (0..0, 1)."""
  flip = 1 / (math.exp(local_epsilon) + 1)
  ones = np.arange(num_users + 1)
  zeros_law = stats.binom.pmf(ones, num_users, flip)
  rest = stats.binom.pmf(ones, num_users - 1, flip)
  one_law = (1 - flip) * np.concatenate([[0.0], rest[:-1]]) + flip * rest
  factor = math.exp(epsilon)
  return max(np.sum(np.maximum(0.0, zeros_law - factor * one_law)),
             np.sum(np.maximum(0.0, one_law - factor * zeros_law)))


def krr_weak_pair(num_users, num_categories, local_epsilon):
  """KHH-KRR-WEAK by direct enumeration of (y, a, b) (MATH.md (B.1)-(B.4))."""
  k = num_categories
  gamma = k / (math.exp(local_epsilon) + k - 1)
  law_p, law_q = {}, {}
  for y in range(num_users):
    weight = stats.binom.pmf(y, num_users - 1, gamma)
    for a in range(y + 2):
      for b in range(y + 2 - a):
        r = y + 1 - a - b
        if k == 2 and r > 0:
          continue
        common = (weight * math.factorial(y) * (k - 2) ** r
                  / (k ** y * math.factorial(a) * math.factorial(b)
                     * math.factorial(r)))
        base = gamma * (y + 1) / k
        law_p[(y, a, b)] = common * ((1 - gamma) * a + base)
        law_q[(y, a, b)] = common * ((1 - gamma) * b + base)
  return law_p, law_q


def krr_strong_pair(num_users, num_categories, local_epsilon):
  """KHH-KRR-STRONG with its common atom, by enumerating (M1, M2)."""
  k = num_categories
  gamma = k / (math.exp(local_epsilon) + k - 1)
  cell = gamma / k
  law_p, law_q = {'random': gamma}, {'random': gamma}
  for m1 in range(num_users):
    for m2 in range(num_users - m1):
      mass = (1 - gamma) * stats.multinomial.pmf(
          [m1, m2, num_users - 1 - m1 - m2], num_users - 1,
          [cell, cell, 1 - 2 * cell])
      law_p[(m1 + 1, m2)] = law_p.get((m1 + 1, m2), 0.0) + mass
      law_q[(m1, m2 + 1)] = law_q.get((m1, m2 + 1), 0.0) + mass
  return law_p, law_q


def checkin_binary_rr_law(dataset, checkin_rate, local_epsilon):
  """Exact law of (k, number of 1s) for shuffled check-in of binary RR.

  Enumerates every participation pattern and every report of the
  participants (2^n * 2^k terms), independent of the library.
  """
  flip = 1 / (math.exp(local_epsilon) + 1)
  law = {}
  n = len(dataset)
  for pattern in itertools.product((0, 1), repeat=n):
    members = [x for x, inside in zip(dataset, pattern) if inside]
    k = len(members)
    weight = checkin_rate**k * (1 - checkin_rate)**(n - k)
    for reports in itertools.product((0, 1), repeat=k):
      mass = weight
      for value, report in zip(members, reports):
        mass *= (1 - flip) if report == value else flip
      key = (k, sum(reports))
      law[key] = law.get(key, 0.0) + mass
  return law


def checkin_binary_rr_pairs(num_users, checkin_rate, local_epsilon):
  """Yields (law_p, law_q) for every replace-one pair of binary datasets."""
  for rest in itertools.product((0, 1), repeat=num_users - 1):
    for x in (0, 1):
      yield (checkin_binary_rr_law((x,) + rest, checkin_rate, local_epsilon),
             checkin_binary_rr_law((1 - x,) + rest, checkin_rate,
                                   local_epsilon))


def aligned(law_p, law_q):
  keys = sorted(set(law_p) | set(law_q))
  return ([law_p.get(k, 0.0) for k in keys], [law_q.get(k, 0.0) for k in keys])


def shuffled_gaussian_eq8_by_compositions(num_users, noise_ratio, order):
  """eq. (8) by summing over every composition k_1 + ... + k_n = order."""
  total = 0.0
  for parts in itertools.product(range(order + 1), repeat=num_users):
    if sum(parts) != order:
      continue
    multinomial = math.factorial(order)
    for part in parts:
      multinomial //= math.factorial(part)
    total += multinomial * math.exp(sum(p * p for p in parts)
                                    / (2 * noise_ratio**2))
  log_value = (-order / (2 * noise_ratio**2) - order * math.log(num_users)
               + math.log(total))
  return log_value / (order - 1)


# ------------------------------------------- finite randomizers, 3+ outputs
#
# A randomizer is a row-stochastic matrix (inputs x outputs). The shuffled
# output of participants is their histogram of outputs; its total is the
# number of participants, which check-in reveals. Laws are dense numpy
# arrays indexed by the count of every output (shape (n + 1,) * outputs).


def krr_matrix(num_categories, local_epsilon):
  """k-ary randomized response as a matrix."""
  return np.array([krr_probabilities(x, num_categories, local_epsilon)
                   for x in range(num_categories)])


def random_ldp_matrix(num_inputs, num_outputs, spread, seed):
  """A random randomizer whose log-ratios lie within `spread`; with its eps0."""
  rng = np.random.default_rng(seed)
  matrix = np.exp(rng.uniform(0.0, spread, size=(num_inputs, num_outputs)))
  matrix /= matrix.sum(axis=1, keepdims=True)
  return matrix, matrix_local_epsilon(matrix)


def matrix_local_epsilon(matrix):
  """The LDP level of a randomizer matrix: its largest log-ratio per output."""
  log_matrix = np.log(matrix)
  return float(np.max(log_matrix.max(axis=0) - log_matrix.min(axis=0)))


def _add_user(law, report_probs, participation):
  """Law after one more user who reports w.p. `participation`."""
  new = (1 - participation) * law
  for output, prob in enumerate(report_probs):
    index = [slice(None)] * law.ndim
    source = list(index)
    index[output] = slice(1, None)
    source[output] = slice(None, -1)
    new[tuple(index)] += participation * prob * law[tuple(source)]
  return new


def checkin_histogram_law(dataset, matrix, checkin_rate):
  """Exact law of the histogram of check-in participants' reports."""
  law = np.zeros((len(dataset) + 1,) * matrix.shape[1])
  law[(0,) * matrix.shape[1]] = 1.0
  for value in dataset:
    law = _add_user(law, matrix[value], checkin_rate)
  return law


def _participant_totals(law):
  return np.sum(np.indices(law.shape), axis=0)


def neighbouring_laws(num_users, matrix, checkin_rate=1.0, sample_size=None):
  """Yields (law_p, law_q) for every replace-one pair, both orders.

  With `sample_size`, exactly that many of the users, uniformly at random,
  report (hidden fixed-size sample): the check-in law conditioned on the
  number of participants, which given that number is a uniform subset.
  """
  num_inputs = matrix.shape[0]
  rate = 0.5 if sample_size is not None else checkin_rate
  for rest in itertools.combinations_with_replacement(range(num_inputs),
                                                      num_users - 1):
    others = checkin_histogram_law(rest, matrix, rate)
    others = np.pad(others, [(0, 1)] * others.ndim)
    laws = {x: _add_user(others, matrix[x], rate) for x in range(num_inputs)}
    if sample_size is not None:
      keep = _participant_totals(others) == sample_size
      laws = {x: np.where(keep, law, 0.0) / law[keep].sum()
              for x, law in laws.items()}
    for x, y in itertools.permutations(range(num_inputs), 2):
      yield laws[x].ravel(), laws[y].ravel()


def composed(law, times):
  """The law of `times` independent runs (the pair used in every round)."""
  result = law
  for _ in range(times - 1):
    result = np.outer(result, law).ravel()
  return result


def worst_case(num_users, matrix, orders, epsilons, checkin_rate=1.0,
               sample_size=None, rounds=1):
  """max over replace-one pairs of the RDP at `orders` and H at `epsilons`.

  Also returns the laws of every pair (composed `rounds` times), so that an
  epsilon reported at some delta can be checked against each of them.
  """
  rdp = np.zeros(len(orders))
  delta = np.zeros(len(epsilons))
  pairs = []
  for law_p, law_q in neighbouring_laws(num_users, matrix, checkin_rate,
                                        sample_size):
    support = (law_p > 0) | (law_q > 0)
    law_p = composed(law_p[support], rounds)
    law_q = composed(law_q[support], rounds)
    pairs.append((law_p, law_q))
    rdp = np.maximum(rdp, [renyi(law_p, law_q, o) for o in orders])
    delta = np.maximum(delta, [np.sum(np.maximum(law_p - math.exp(e) * law_q,
                                                 0.0)) for e in epsilons])
  return rdp, delta, pairs


def largest_hockey_stick(pairs, epsilon):
  """max over the pairs of H_{e^eps}(P || Q)."""
  return max(float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0.0)))
             for p, q in pairs)


# ---------------------------------------------------------------------------
# Arbitrary finite randomizers, given as matrices built here from each
# randomizer's published definition (not from the library; krr_matrix
# above).


def unary_encoding_row(value, domain_size, on_true, on_other):
  """The law of one report, over the bit vectors in
  `itertools.product((0, 1), repeat=domain_size)` order: bit `value` is 1
  with probability on_true, every other bit with on_other (value None:
  the all-zero reference input, every bit on_other)."""
  row = []
  for bits in itertools.product((0, 1), repeat=domain_size):
    prob = 1.0
    for position, bit in enumerate(bits):
      on = on_true if position == value else on_other
      prob *= on if bit else 1 - on
    row.append(prob)
  return np.array(row)


def unary_encoding_matrix(domain_size, on_true, on_other):
  """Bits flipped independently: P[bit x = 1] = on_true, others on_other."""
  return np.array([unary_encoding_row(x, domain_size, on_true, on_other)
                   for x in range(domain_size)])


def local_hashing_matrix(domain_size, hash_range, local_epsilon):
  """Outputs (h, v) over all functions h: [d] -> [g], drawn uniformly."""
  e = math.exp(local_epsilon)
  functions = list(itertools.product(range(hash_range), repeat=domain_size))
  rows = []
  for x in range(domain_size):
    rows.append([(e if h[x] == v else 1.0) / (e + hash_range - 1)
                 / len(functions)
                 for h in functions for v in range(hash_range)])
  return np.array(rows)


def hadamard_matrix(domain_size, local_epsilon):
  """Acharya-Sun-Zhang: input x owns the +1 columns of Hadamard row x + 1."""
  size = 1
  while size <= domain_size:
    size *= 2
  hadamard = np.array([[1]])
  while hadamard.shape[0] < size:
    hadamard = np.block([[hadamard, hadamard], [hadamard, -hadamard]])
  e = math.exp(local_epsilon)
  return np.array([[(e if hadamard[x + 1, j] == 1 else 1.0) * 2
                    / (size * (e + 1)) for j in range(size)]
                   for x in range(domain_size)])


def subset_selection_matrix(domain_size, subset_size, local_epsilon):
  e = math.exp(local_epsilon)
  subsets = list(itertools.combinations(range(domain_size), subset_size))
  rows = np.array([[e if x in s else 1.0 for s in subsets]
                   for x in range(domain_size)])
  return rows / rows.sum(axis=1, keepdims=True)


def shuffled_law(dataset, matrix):
  """Exact law of the histogram of reports of `dataset` (input indices)."""
  law = {tuple([0] * matrix.shape[1]): 1.0}
  for value in dataset:
    new = {}
    for hist, mass in law.items():
      for output, prob in enumerate(matrix[value]):
        if prob == 0:
          continue
        key = list(hist)
        key[output] += 1
        key = tuple(key)
        new[key] = new.get(key, 0.0) + mass * prob
    law = new
  return law


def worst_case_delta(matrix, num_users, epsilons):
  """max over every replace-one pair (both orders) of H_{e^eps}."""
  inputs = matrix.shape[0]
  laws = {}

  def law(dataset):
    key = tuple(sorted(dataset))
    if key not in laws:
      laws[key] = shuffled_law(key, matrix)
    return laws[key]

  worst = np.zeros(len(epsilons))
  for rest in itertools.combinations_with_replacement(range(inputs),
                                                      num_users - 1):
    for x, y in itertools.permutations(range(inputs), 2):
      law_p, law_q = law(rest + (x,)), law(rest + (y,))
      worst = np.maximum(worst, [hockey_stick(law_p, law_q, e)
                                 for e in epsilons])
  return worst


def third_value_delta(matrix, num_users, epsilons, third=2):
  """H_{e^eps} of target 0 vs 1, every other user holding input `third`."""
  rest = (third,) * (num_users - 1)
  law_p = shuffled_law(rest + (0,), matrix)
  law_q = shuffled_law(rest + (1,), matrix)
  return np.array([hockey_stick(law_p, law_q, e) for e in epsilons])


def binary_rr_pair_log_delta_floor(num_users, local_epsilon, count, epsilon):
  """A lower bound on log delta(epsilon) of `count` shuffled binary RR rounds.

  One neighbouring pair of the mechanism: the others all hold 0, the target
  holds 1 or 0; the server sees the number of 1s. Its largest per-round
  loss L sits at some count c with P(c) = p. The event "c in every round"
  has P-mass p^T and Q-mass p^T e^{-TL}, so delta(epsilon) >=
  p^T (1 - e^{epsilon - TL}), kept in log space: -inf when epsilon >= TL.
  """
  keep = math.exp(local_epsilon) / (1 + math.exp(local_epsilon))
  counts = np.arange(num_users + 1)
  others = stats.binom.logpmf(counts - 1, num_users - 1, 1 - keep)
  others_same = stats.binom.logpmf(counts, num_users - 1, 1 - keep)
  log_p = np.logaddexp(math.log(keep) + others, math.log1p(-keep)
                       + others_same)
  log_q = np.logaddexp(math.log1p(-keep) + others, math.log(keep)
                       + others_same)
  best = int(np.argmax(log_p - log_q))
  loss = count * (log_p[best] - log_q[best])
  if epsilon >= loss:
    return -math.inf
  return count * log_p[best] + math.log(-math.expm1(epsilon - loss))


def binary_rr_count_pair(num_users, local_epsilon, ones_among_others):
  """(law of the count of ones, target at 1; target at 0) for shuffled
  binary RR with `ones_among_others` of the n - 1 others at input 1.

  The shuffle of bits is their count: Bin(a, p) + Bin(n - 1 - a, 1 - p) for
  the others, convolved exactly with the target's bit.
  """
  keep = 1 / (1 + math.exp(-local_epsilon))
  flip = 1 / (1 + math.exp(local_epsilon))
  others = np.convolve(
      stats.binom.pmf(np.arange(ones_among_others + 1), ones_among_others,
                      keep),
      stats.binom.pmf(np.arange(num_users - ones_among_others),
                      num_users - 1 - ones_among_others, flip))
  one_more = np.concatenate([[0.0], others])
  as_is = np.concatenate([others, [0.0]])
  return (keep * one_more + flip * as_is, flip * one_more + keep * as_is)


def composed_pair(pairs):
  """The product of the rounds' (P, Q) laws (one pair per round)."""
  law_p, law_q = np.ones(1), np.ones(1)
  for p, q in pairs:
    law_p, law_q = np.outer(law_p, p).ravel(), np.outer(law_q, q).ravel()
  return law_p, law_q


# ---------------------------------------------------------------------------
# Sums of independent-bit reports (secure aggregation), every report vector
# of every user enumerated.


def summed_reports_law(report_laws):
  """{count vector: probability} of the coordinate-wise sum of reports.

  `report_laws` holds one row per user: the probability of each bit vector
  in `itertools.product((0, 1), repeat=d)` order.
  """
  size = round(math.log2(len(report_laws[0])))
  vectors = list(itertools.product((0, 1), repeat=size))
  law = {(0,) * size: 1.0}
  for row in report_laws:
    grown = {}
    for counts, mass in law.items():
      for bits, prob in zip(vectors, row):
        key = tuple(c + b for c, b in zip(counts, bits))
        grown[key] = grown.get(key, 0.0) + mass * prob
    law = grown
  return law


def neighbouring_sum_laws(num_users, matrix, reference_row=None):
  """Yields aligned (law_p, law_q) of the sum for every neighbouring pair.

  Replace-one (`reference_row` None): target at x versus x', others at any
  values, both orders. Deletion: target at x versus the target's report
  drawn from `reference_row`, both orders.
  """
  num_inputs = matrix.shape[0]
  for rest in itertools.combinations_with_replacement(range(num_inputs),
                                                      num_users - 1):
    rows = [matrix[value] for value in rest]
    laws = {x: summed_reports_law(rows + [matrix[x]])
            for x in range(num_inputs)}
    if reference_row is None:
      pairs = itertools.permutations(laws.values(), 2)
    else:
      reference = summed_reports_law(rows + [reference_row])
      pairs = [(law, reference) for law in laws.values()]
      pairs += [(reference, law) for law in laws.values()]
    for first, second in pairs:
      yield aligned(first, second)
