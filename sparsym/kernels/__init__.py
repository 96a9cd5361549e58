"""Kernels: pure functions over raw storage (np.ndarray, storage.CSR, storage.RSP)."""
