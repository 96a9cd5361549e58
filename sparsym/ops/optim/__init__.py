"""Optimizer update operators (``register(OpDef(...))`` as in every family), fused
multi-weight updates, AMP and gradient-bookkeeping operators; ``service`` holds the update
kernels' table, the one lazy-update policy and the optimizers' door to the kernels."""
