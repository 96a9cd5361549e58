"""Operators whose body is a subgraph or user Python code: control flow (_foreach,
_while_loop, _cond), Custom and autograd.Function nodes."""
