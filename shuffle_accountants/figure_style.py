"""Figure conventions shared by `shuffle-accountant plot` and the examples.

Every method gets its own colour and marker (hollow, so that overlapping
series stay visible); the line style says the kind of bound: solid for a
certified upper bound, dashed for a lower bound. Legends sit outside the
data, titled with that key. Needs matplotlib only when a figure is drawn.
"""

from typing import Dict, Iterable, Sequence

__all__ = [
    'UPPER', 'LOWER', 'COLORS', 'MARKERS', 'LINE_STYLES', 'series_style',
    'legend_title', 'legend_outside', 'parameter_title', 'save',
]

UPPER = 'upper bound'
LOWER = 'lower bound'
# Okabe and Ito's colour-blind-safe palette (without its yellow), then grey.
COLORS = ('#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9',
          '#000000', '#888888')
MARKERS = ('o', 's', '^', 'D', 'v', 'P', 'X', '*')
LINE_STYLES = {UPPER: '-', LOWER: '--'}


def series_style(index: int, kind: str = UPPER) -> Dict[str, object]:
  """Keyword arguments of `Axes.plot` for the `index`-th method of a figure."""
  if kind not in LINE_STYLES:
    raise ValueError(f'kind must be {UPPER!r} or {LOWER!r}; got {kind!r}.')
  return dict(color=COLORS[index % len(COLORS)],
              marker=MARKERS[index % len(MARKERS)],
              linestyle=LINE_STYLES[kind], linewidth=1.4, markersize=6,
              markerfacecolor='none', markeredgewidth=1.3)


def legend_title(kinds: Iterable[str]) -> str:
  """The legend's key to the line styles of the kinds drawn."""
  kinds = set(kinds)
  lines = []
  if UPPER in kinds:
    lines.append('solid: certified upper bound')
  if LOWER in kinds:
    lines.append('dashed: lower bound')
  return '\n'.join(lines)


def legend_outside(axes, kinds: Iterable[str], all_axes: Sequence = ()):
  """A legend right of `axes`, with the entries of `all_axes` (deduplicated)."""
  handles, labels = [], []
  for panel in list(all_axes) or [axes]:
    for handle, label in zip(*panel.get_legend_handles_labels()):
      if label not in labels:
        handles.append(handle)
        labels.append(label)
  return axes.legend(handles, labels, loc='upper left',
                     bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=8, title=legend_title(kinds), title_fontsize=8,
                     alignment='left', frameon=False)


def parameter_title(parameters: Dict[str, object]) -> str:
  """'n = 100000, eps0 = 1, ...' from the parameters that are set."""
  return ', '.join(f'{name} = {value:g}' if isinstance(value, float)
                   else f'{name} = {value}'
                   for name, value in parameters.items() if value is not None)


def save(figure, path: str, **options) -> None:
  """Saves with the outside legend inside the image."""
  figure.savefig(path, bbox_inches='tight', **options)
