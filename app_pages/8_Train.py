"""Train: start a training run in a worker process, watch its curves live, stop or resume it."""
from nlivis.app.components import frame, train

with frame.page("train", "Train a model", f"{frame.NOTE_ICON} {frame.SMALL_PROTOCOL_NOTE} Curves below are the run's "
                "own metrics.jsonl.", icon=":material/model_training:"):
    train.start_form()
    train.runs()
