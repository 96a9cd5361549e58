"""The optimizers behind SVRGModule's kvstore keys: ``<name>_full`` keys receive the full
gradient as is (:class:`_AssignmentOptimizer`); every other key is updated by the wrapped
optimizer (:class:`_SVRGOptimizer`)."""
from __future__ import annotations

from ...optimizer import optimizer as opt

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# Optimizer parameters the wrapper itself takes (the rest go to the wrapped optimizer only)
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """weight = grad (stores a pushed full gradient)."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Assign ``*_full`` keys, update the others with ``default_optimizer``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
    **kwargs
        The wrapped optimizer's parameters.
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_PARAMS})
        self.default_opt = (opt.create(default_optimizer, **kwargs)
                            if isinstance(default_optimizer, str) else default_optimizer)
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    def _name(self, index):
        return index if index in self.idx2name.values() else self.idx2name[index]

    def update(self, index, weight, grad, state):
        target = self.aux_opt if "full" in self._name(index) else self.default_opt
        target.update(index, weight, grad, state)

    def create_state(self, index, weight):
        target = self.aux_opt if "full" in self._name(index) else self.default_opt
        return target.create_state(index, weight)
