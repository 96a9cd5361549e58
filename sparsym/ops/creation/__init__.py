"""Creation operators: zeros/ones/full/arange, eye, linspace."""
