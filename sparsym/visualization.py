"""``mx.visualization`` (also ``mx.viz``): :func:`print_summary` and :func:`plot_network`
(implemented in viz.py)."""
from .viz import plot_network, print_summary

__all__ = ["plot_network", "print_summary"]
