"""Data map: every training pair of a checkpoint by how confidently and how consistently its run learned it."""
from nlivis.app import paths
from nlivis.app.components import datamap, frame

with frame.page(paths.DATA_MAP, title="Data map of the training pairs",
                caption="Dataset cartography (Swayamdipta et al., EMNLP 2020): each "
                "point is one training pair, placed by the mean (confidence) and the spread (variability) of the "
                "probability the model gave its gold label in each epoch's training pass, recorded by the training run. "
                "Easy pairs sit top left, ambiguous ones to the right, hard-to-learn ones — where mislabelled pairs "
                "collect — bottom left."):
    datamap.page()
