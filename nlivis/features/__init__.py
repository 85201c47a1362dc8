"""features stage of nlivis."""
