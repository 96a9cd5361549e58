"""MXNet's Python wrappers of the AdamW and LAMB update operators in ``nd.contrib`` and
``sym.contrib`` (``adamw_update``, ``multi_lamb_update``...): they turn a scalar
``rescale_grad`` into the one-element array the operators take and flatten per-tensor lists
into the operators' interleaved inputs. ``F`` is the front end (``ndarray`` or ``symbol``).
"""
from __future__ import annotations

__all__ = ["wrappers"]


def _interleave(*lists):
    return [x for group in zip(*lists) for x in group]


def wrappers(F, rescale):
    """The six wrappers for front end ``F``; ``rescale(value, like)`` gives the
    ``rescale_grad`` input (an array or symbol) for a scalar or passes one through."""

    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                     epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
        """AdamW step of one tensor (``_adamw_update``); ``rescale_grad`` may be a scalar."""
        return F._internal._adamw_update(
            weight=weight, grad=grad, mean=mean, var=var,
            rescale_grad=rescale(rescale_grad, weight), lr=lr, eta=eta, beta1=beta1,
            beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out,
            name=name, **kwargs)

    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                        beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None,
                        name=None, **kwargs):
        """Mixed-precision AdamW step with the float32 master ``weight32``."""
        return F._internal._mp_adamw_update(
            weight=weight, grad=grad, mean=mean, var=var, weight32=weight32,
            rescale_grad=rescale(rescale_grad, weight), lr=lr, eta=eta, beta1=beta1,
            beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out,
            name=name, **kwargs)

    def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas,
                           out=None, name=None, size=0, **kwargs):
        """AdamW steps of several tensors in one call (``_multi_adamw_update``)."""
        ins = _interleave(weights, grads, mean, var) + [rescale(rescale_grad, weights[0])]
        return F._internal._multi_adamw_update(*ins, out=out, num_weights=size or len(weights),
                                            lrs=lrs, wds=wds, etas=etas, name=name, **kwargs)

    def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds,
                              etas, out=None, name=None, size=0, **kwargs):
        """Mixed-precision AdamW steps of several tensors in one call."""
        ins = _interleave(weights, grads, mean, var, weights32) + \
            [rescale(rescale_grad, weights[0])]
        return F._internal._multi_mp_adamw_update(*ins, out=out,
                                               num_weights=size or len(weights), lrs=lrs,
                                               wds=wds, etas=etas, name=name, **kwargs)

    def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None,
                          num_tensors=0, **kwargs):
        """LAMB steps of several tensors in one call (``_multi_lamb_update``)."""
        return F._internal._multi_lamb_update(*_interleave(weights, grads, mean, var), out=out,
                                           num_tensors=num_tensors or len(weights),
                                           step_count=step_count, learning_rates=lrs,
                                           wds=wds, **kwargs)

    def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds,
                             out=None, num_tensors=0, **kwargs):
        """Mixed-precision LAMB steps of several tensors in one call."""
        return F._internal._multi_mp_lamb_update(
            *_interleave(weights, grads, mean, var, weights32), out=out,
            num_tensors=num_tensors or len(weights), step_count=step_count,
            learning_rates=lrs, wds=wds, **kwargs)

    return {f.__name__: f for f in (adamw_update, mp_adamw_update, multi_adamw_update,
                                     multi_mp_adamw_update, multi_lamb_update,
                                     multi_mp_lamb_update)}
