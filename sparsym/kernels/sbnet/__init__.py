"""SBNet block-sparse convolution kernels on raw arrays: block geometry, gather/conv/scatter
pipelines, the fused bottleneck block and the density-aware dispatch with its block-size
autotuner. The operator records are in sparsym/ops/contrib/sbnet/, the user-facing helpers in
sparsym/contrib/sbnet/."""
