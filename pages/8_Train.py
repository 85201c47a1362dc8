"""Train: start a training run in a worker process, watch its curves live, stop or resume it; judge a changed
checkpoint against its compute-matched control (the before → after report)."""
from nlivis.app import paths
from nlivis.app.components import frame, train

with frame.page(paths.TRAIN, title="Train a model",
                caption=f"{frame.NOTE_ICON} {frame.SMALL_PROTOCOL_NOTE} Curves below are the run's "
                "own metrics.jsonl."):
    train.page()
