"""Fitting the cost model to measurements, and reading engines' benchmark outputs."""
