"""Calibration from the reader's own benchmarks: parsers of the engines' output into measured.csv rows."""
