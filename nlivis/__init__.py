"""nlivis: train, load and look inside the sentence-matching models of five papers."""
from pathlib import Path

__version__ = "0.1.0"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The checkout nlivis runs from (it is not installed as a package): configs/, checkpoints/, pages/."""
SHIPPED_CHECKPOINTS = PROJECT_ROOT / "checkpoints"
"""Where the shipped checkpoints live; the app scans it unless NLIVIS_CHECKPOINTS names other folders."""
