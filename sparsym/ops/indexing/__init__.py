"""Indexing operators: slicing, take/pick/where, n-d gathers and scatters, sequences."""
