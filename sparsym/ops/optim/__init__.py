"""Optimizer update operators (one registration style: ``_update_op`` records in
``updates``), fused multi-weight updates, AMP and gradient-bookkeeping operators."""
