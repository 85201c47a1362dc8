"""Projection: the pooled pair representations of one model, in 2-D (UMAP or PCA), coloured by what you ask."""
from nlivis.app import paths
from nlivis.app.components import frame, projection

with frame.page(paths.PROJECTION, title="Projection of pooled representations",
                caption="Each point is one pair: the vector the model "
                "pools before its classifier, laid out in 2-D. Hover a point to read the pair. Vectors, predictions and "
                "projections are computed once per checkpoint and sample and cached on disk, so changing the colouring "
                "never runs the model again."):
    projection.page(frame.require_models("projection", weights=False))
