"""data stage of nlivis."""
