"""viz stage of nlivis."""
