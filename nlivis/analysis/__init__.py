"""analysis stage of nlivis."""
