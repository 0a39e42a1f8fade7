"""Exploration of NUM-BLANKET's open worst-pair step (iv) for plain clipping.

Scalar Gaussian reports x + N(0, sigma^2), x in [-1, 1]; blanket
u(y) = phi_sigma(|y| + 1), omega = u / gamma; blanket loss
L = rho_x - a rho_x' with rho = R / omega. The conjecture: for every a > 0
and t, E_omega[(L - t)_+] is largest at (x, x') = (1, -1). In y-terms,
with tau = t / gamma,

  S(x, x', a, tau) = int (phi(y - x) - a phi(y - x') - tau u(y))_+ dy.

Prints three tables (docs/mathematics.md NUM-BLANKET (iv)):
1. the largest relative excess of S over the extreme pair's, over a grid of
   pairs, a and tau (negative: the conjecture holds on the grid);
2. the single-crossing (cut) criterion, which would prove it, failing:
   omega[L > t] of an interior pair above the extreme pair's, for
   t >= gamma (1 - a), where the extreme pair's upper tail is one-sided;
3. S along lines of fixed x peaking inside (x', a, tau): no coordinate-wise
   argument either.
Not a test (nothing here is a certificate): run `python
tools/worst_pair_exploration.py [sigma ...]`; a few CPU-minutes.
"""

import sys

import numpy as np
from scipy import stats


def _setup(sigma, points=40001):
  y = np.linspace(-1 - 12 * sigma, 1 + 12 * sigma, points)
  return y, y[1] - y[0], stats.norm.pdf(np.abs(y) + 1, scale=sigma)


def stop_loss_table(sigma, inputs, scales=(0.05, 0.5, 1.0, 2.0, 10.0)):
  """(a, largest relative excess over the extreme pair, where) per a."""
  y, step, u = _setup(sigma)
  densities = {x: stats.norm.pdf(y - x, scale=sigma) for x in inputs}
  rows = []
  for a in scales:
    taus = (1 - a) + np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 25)])
    corner = np.array([np.sum(np.maximum(
        densities[1.0] - a * densities[-1.0] - tau * u, 0)) * step
                       for tau in taus])
    worst, where = -np.inf, None
    for x in inputs:
      for other in inputs:
        if abs(x) == 1 and other == -x:
          continue  # the extreme pair and its mirror image
        values = np.array([np.sum(np.maximum(
            densities[x] - a * densities[other] - tau * u, 0)) * step
                           for tau in taus])
        excess = (values - corner) / np.maximum(corner, 1e-300)
        if excess.max() > worst:
          worst = excess.max()
          where = (x, other, taus[excess.argmax()])
    rows.append((a, worst, where))
  return rows


def single_crossing_failure(sigma, a, tau, x, other):
  """(omega[L > t] of (x, x'), the extreme pair's), t = gamma tau."""
  y, step, u = _setup(sigma, 200001)
  gamma = 2 * stats.norm.sf(1 / sigma)
  omega = u / gamma * step

  def tail(first, second):
    loss = stats.norm.pdf(y - first, scale=sigma) - a * stats.norm.pdf(
        y - second, scale=sigma) - tau * u
    return float(np.sum(omega[loss > 0]))
  return tail(x, other), tail(1.0, -1.0)


def line_maximum(sigma, a, tau, x, inputs):
  """S along x' for fixed x: (argmax x', max, ends, extreme pair's S)."""
  y, step, u = _setup(sigma)
  values = [np.sum(np.maximum(stats.norm.pdf(y - x, scale=sigma) - a
                              * stats.norm.pdf(y - o, scale=sigma)
                              - tau * u, 0)) * step for o in inputs]
  corner = np.sum(np.maximum(stats.norm.pdf(y - 1, scale=sigma) - a
                             * stats.norm.pdf(y + 1, scale=sigma) - tau * u,
                             0)) * step
  best = int(np.argmax(values))
  return inputs[best], values[best], (values[0], values[-1]), corner


def main(sigmas):
  inputs = tuple(np.round(np.linspace(-1, 1, 11), 3))
  print('1. largest relative excess of S over the extreme pair '
        '(11 x 11 pairs, 26 taus)')
  print('| sigma | a | largest excess | at (x, x\', tau) |')
  print('|---|---|---|---|')
  for sigma in sigmas:
    for a, worst, where in stop_loss_table(sigma, inputs):
      print(f'| {sigma:g} | {a:g} | {worst:.3g} | '
            f'({where[0]:g}, {where[1]:g}, {where[2]:.4g}) |')
  print('\n2. the cut criterion fails (sigma = 0.3, a = 0.05, '
        'tau = 100.95, (x, x\') = (-0.3, -0.4))')
  interior, corner = single_crossing_failure(0.3, 0.05, 100.95, -0.3, -0.4)
  print(f'omega[L > t]: interior {interior:.3g}, extreme pair {corner:.3g}')
  print('\n3. S along x\' for fixed x (sigma = 1, a = 0.05)')
  print('| x | tau | argmax x\' | max | at x\' = -1, 1 | extreme pair |')
  print('|---|---|---|---|---|---|')
  for x, tau in ((-0.45, 1.95), (-0.3, 3.95), (-0.1, 10.95)):
    other, value, ends, corner = line_maximum(
        1.0, 0.05, tau, x, tuple(np.round(np.linspace(-1, 1, 41), 3)))
    print(f'| {x:g} | {tau:g} | {other:g} | {value:.6g} | '
          f'{ends[0]:.6g}, {ends[1]:.6g} | {corner:.6g} |')


if __name__ == '__main__':
  main([float(s) for s in sys.argv[1:]] or [0.3, 1.0, 2.0])
