"""viz stage of nlivis: plotly figures built from typed trace entries and analysis tables.

Every figure carries the data it draws, so `figure_data` / `figure_data_csv` give it back as a table
for download; `PLOTLY_CONFIG` makes the modebar camera save SVG.
"""
from nlivis.viz.channel_grid import SELECTIONS, channel_grid, real_maps, select_channels
from nlivis.viz.charts import (accuracy_by_tag_bars, accuracy_interval_bars, comparison_bars, delta_bars, difference_intervals,
                               probability_bars, projection_scatter, training_curves)
from nlivis.viz.common import (PLOTLY_CONFIG, PLOTLY_CONFIG_PNG, empty_figure, figure_data, figure_data_csv,
                               plotly_config)
from nlivis.viz.drawable import MISSING_MESSAGES, VIEW_TYPES, drawable
from nlivis.viz.gate_strips import gate_strip, gate_summary_bars, gate_values
from nlivis.viz.heatmaps import alignment_heatmap, alignment_matrix, confusion_matrix_heatmap, memory_keys_heatmap
from nlivis.viz.overview import ModelReading, overview_grid

__all__ = [
    "SELECTIONS", "channel_grid", "real_maps", "select_channels", "accuracy_by_tag_bars", "accuracy_interval_bars", "comparison_bars",
    "delta_bars", "difference_intervals", "probability_bars", "projection_scatter", "training_curves", "PLOTLY_CONFIG", "PLOTLY_CONFIG_PNG",
    "empty_figure", "figure_data", "figure_data_csv", "plotly_config", "MISSING_MESSAGES", "VIEW_TYPES", "drawable",
    "gate_strip", "gate_summary_bars", "gate_values", "alignment_heatmap", "alignment_matrix",
    "confusion_matrix_heatmap", "memory_keys_heatmap", "ModelReading", "overview_grid",
]
