"""Layers shared by more than one model. A layer used by one model only lives in that model's file."""
