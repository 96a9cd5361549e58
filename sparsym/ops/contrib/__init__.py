"""Contrib operators: detection, deformable convolution, ROI align, signal, SBNet."""
