"""Sparse-specific operators: _sparse_retain, _square_sum, getnnz, quadratic."""
