"""SBNet block-sparse operators (``mx.nd.contrib`` / ``mx.sym.contrib``), with gradients.

- ``reduce_mask``: active blocks of a mask, SBNet's fixed-size form (valid prefix + count).
- ``sparse_gather`` / ``sparse_scatter`` / ``sparse_scatter_var``: block copies and their
  adjoints (gather <-> scatter-add); ``sparse_scatter_var`` writes into ``base`` in place
  (``OpDef.mutates``) and still has a gradient (blocks.py).
- ``SparseBlockConvolution`` and ``SparseBottleneck``: fused gather -> conv -> scatter ops
  with density-aware dispatch and block-size autotuning (fused.py; kernels in
  sparsym/kernels/sbnet/).

Block geometry follows SBNet (shared/reference/sbnet.md): block (n, i, j) starts at pixel
``(boffset[0] + i*bstride[0], boffset[1] + j*bstride[1])`` and spans ``bsize``; blocks are
[M,bh,bw,C], or [M,C,bh,bw] with ``transpose=True``, whatever the dense ``layout``.
Index rows whose batch entry is negative are padding: they gather zeros and scatter
nothing (``reduce_mask`` pads its fixed-size output with -1 rows).
"""
