"""The figure conventions: a colour and marker per method, a style per bound
kind."""

import pytest

from shuffle_accountants import figure_style


def test_each_method_gets_its_own_colour_and_marker():
  styles = [figure_style.series_style(index) for index in range(7)]
  assert len({style['color'] for style in styles}) == 7
  assert len({style['marker'] for style in styles}) == 7


def test_upper_bounds_are_solid_and_lower_bounds_dashed():
  assert figure_style.series_style(0, figure_style.UPPER)['linestyle'] == '-'
  assert figure_style.series_style(0, figure_style.LOWER)['linestyle'] == '--'
  assert figure_style.legend_title([figure_style.UPPER]) == (
      'solid: certified upper bound')
  assert 'dashed: lower bound' in figure_style.legend_title(
      [figure_style.UPPER, figure_style.LOWER])
  with pytest.raises(ValueError, match='kind'):
    figure_style.series_style(0, 'exact')


def test_legend_sits_outside_the_data(tmp_path):
  matplotlib = pytest.importorskip('matplotlib')
  matplotlib.use('Agg')
  from matplotlib import pyplot
  figure, axes = pyplot.subplots()
  axes.plot([1, 2], [1, 2], label='pld', **figure_style.series_style(0))
  legend = figure_style.legend_outside(axes, [figure_style.UPPER])
  figure.canvas.draw()
  renderer = figure.canvas.get_renderer()
  assert (legend.get_window_extent(renderer).x0
          >= axes.get_window_extent(renderer).x1)
  figure_style.save(figure, str(tmp_path / 'f.png'))
  pyplot.close(figure)
  assert figure_style.parameter_title({'n': 10, 'delta': 1e-6, 'x': None}) == (
      'n = 10, delta = 1e-06')
