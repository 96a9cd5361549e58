"""dot / batch_dot with sparse rows and MXNet's linalg_* operators."""
