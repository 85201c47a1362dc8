"""The use cases nlivis offers — evaluate a split or a file, explain a pair, faithfulness over a split, probes,
edit runs, projections, data maps, bench — as one floor shared by the app, the CLI, notebooks and the tests.

A workflow reads data and loads checkpoints through callables it is handed (`read`, `load`), runs the models,
and returns a typed result (a dataclass); `analysis/` below it keeps the pure maths over arrays and frames, and
the app and the CLI above it only parse their input and show what a workflow returned."""

from nlivis.workflows import specs  # noqa: F401  (any workflow's import registers the shipped analyses)
