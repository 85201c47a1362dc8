"""nlivis: train, load and look inside the sentence-matching models of five papers."""
__version__ = "0.1.0"
