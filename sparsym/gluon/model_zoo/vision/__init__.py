"""Vision architectures of mx.gluon.model_zoo.vision, with MXNet's names and layer names
(MXNet's pretrained parameter files load into them)."""
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403

_B = globals()

# get_model's names (MXNet's model-store names) and their builders
_MODELS = {
    **{f"resnet{n}_v{v}": _B[f"resnet{n}_v{v}"]
       for v in (1, 2) for n in (18, 34, 50, 101, 152)},
    **{f"vgg{n}{bn}": _B[f"vgg{n}{bn}"] for n in (11, 13, 16, 19) for bn in ("", "_bn")},
    "alexnet": _B["alexnet"],
    **{f"densenet{n}": _B[f"densenet{n}"] for n in (121, 161, 169, 201)},
    "squeezenet1.0": _B["squeezenet1_0"], "squeezenet1.1": _B["squeezenet1_1"],
    "inceptionv3": _B["inception_v3"],
    **{f"mobilenet{m}": _B[f"mobilenet{m.replace('.', '_')}"]
       for m in ("1.0", "0.75", "0.5", "0.25")},
    **{f"mobilenetv2_{m}": _B[f"mobilenet_v2_{m.replace('.', '_')}"]
       for m in ("1.0", "0.75", "0.5", "0.25")},
}


def get_model(name, **kwargs):
    """The model ``name`` (MXNet's names: 'resnet18_v1', 'vgg16_bn', 'mobilenetv2_0.5'...).

    Parameters
    ----------
    name : str
        Case-insensitive model name.
    **kwargs
        Passed to the model's builder (``classes``, ``pretrained``, ``ctx``, ``root``...).

    Returns
    -------
    HybridBlock
    """
    name = name.lower()
    if name not in _MODELS:
        raise ValueError(f"Model {name} is not supported. Available options are\n\t"
                         + "\n\t".join(sorted(_MODELS)))
    return _MODELS[name](**kwargs)
