"""Reductions (sum, mean, norm...), ordering (topk, sort) and statistics (cumsum, moments)."""
