"""training stage of nlivis."""
