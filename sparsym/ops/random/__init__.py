"""Samplers: uniform/normal and the other distributions, drawn from ``sparsym._rng``."""
