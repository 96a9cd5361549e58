"""Vision architectures of mx.gluon.model_zoo.vision."""
from .resnet import *  # noqa: F401,F403
from .resnet import _MODELS


def get_model(name, **kwargs):
    """The model ``name`` (e.g. 'resnet18_v1') built with ``kwargs``."""
    name = name.lower()
    if name not in _MODELS:
        raise ValueError(f"Model {name} is not supported. Available options are\n\t"
                         + "\n\t".join(sorted(_MODELS)))
    return _MODELS[name](**kwargs)
