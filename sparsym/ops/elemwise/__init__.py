"""Elementwise operators: unary, binary, broadcasting, array-scalar, logical and special
functions, with MXNet's storage rows."""
