"""scikit-learn estimators trained by sparsym on scipy CSR or NumPy input.

``SparseLinearClassifier``, ``SparseLinearRegressor`` and ``FactorizationMachineClassifier``
follow the scikit-learn estimator API (``fit``, ``predict``, ``predict_proba``, ``score``,
``get_params``/``set_params``), so they work in ``cross_val_score``, ``GridSearchCV`` and
pipelines. Each builds a small symbol (csr data times a row_sparse weight), trains it with
``Module.fit`` and lazy sparse optimizer updates, and predicts with ``mx.nd`` operators.

scikit-learn is an optional dependency (``pip install 'sparsym[sklearn]'``); it is
imported when one of the estimator classes is first used.
"""
from __future__ import annotations

import contextlib
import logging

import numpy as np

# defined on first access by the module __getattr__ below (scikit-learn is optional)
__all__ = ["SparseLinearClassifier", "SparseLinearRegressor",  # noqa: F822
           "FactorizationMachineClassifier"]

_logger = logging.getLogger("sparsym.sklearn")
_PREDICT_CHUNK = 8192   # rows per prediction batch
_OPTIMIZERS = ("sgd", "adam", "adagrad", "ftrl")


def _sklearn():
    """Import scikit-learn or fail with the install hint."""
    try:
        import sklearn  # noqa: F401
        import sklearn.base  # noqa: F401
        import sklearn.utils.validation  # noqa: F401
    except ImportError:
        raise ImportError("sparsym.sklearn needs scikit-learn, an optional dependency: "
                          "pip install 'sparsym[sklearn]' (or pip install scikit-learn)") from None
    import sklearn
    return sklearn


def _validate_data(est, X, y="no_validation", reset=True, **kw):
    """sklearn's validate_data (>= 1.6) or the older BaseEstimator._validate_data."""
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:  # scikit-learn < 1.6
        return est._validate_data(X, y, reset=reset, **kw)
    return validate_data(est, X, y, reset=reset, **kw)


def _as_csr(X):
    """float32 canonical CSR (sorted, no duplicates) without touching the caller's matrix."""
    import scipy.sparse as sps
    if sps.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float32:
            X = X.astype(np.float32)
        elif not X.has_canonical_format:
            X = X.copy()
        if not X.has_canonical_format:
            X.sum_duplicates()
        return X
    return sps.csr_matrix(np.asarray(X, dtype=np.float32))


@contextlib.contextmanager
def _seeded(random_state):
    """Run with sparsym's generator seeded from ``random_state``; restore it afterwards."""
    from sklearn.utils import check_random_state

    from . import random as mxrandom
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    saved = mxrandom._state["rng"]
    # the estimator must not disturb the user's mx.random stream (sklearn's contract)
    mxrandom.seed(seed)
    try:
        yield
    finally:
        mxrandom._state["rng"] = saved


def _check_hyper(est):
    """ParamError for hyper-parameters fit cannot use (checked at fit, as sklearn wants)."""
    from .base import ParamError
    who = type(est).__name__
    if est.optimizer not in _OPTIMIZERS:
        raise ParamError(f"{who}: optimizer must be one of {list(_OPTIMIZERS)}, "
                         f"got {est.optimizer!r}")
    for name in ("epochs", "batch_size"):
        v = getattr(est, name)
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ParamError(f"{who}: {name} must be a positive int, got {v!r}")
    for name, lowest in (("learning_rate", "positive"), ("l2", "non-negative")):
        v = getattr(est, name)
        number = isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
        if not number or v < 0 or (lowest == "positive" and v == 0):
            raise ParamError(f"{who}: {name} must be a {lowest} number, got {v!r}")


def _train(est, symbol, X, Y, label_name, initializer, metric):
    """Fit ``symbol`` on csr ``X`` and dense labels ``Y``; return {name: numpy array}."""
    from . import io, module
    from . import metric as metric_mod
    n = X.shape[0]
    bs = int(min(est.batch_size, n))
    it = io.NDArrayIter(X, Y, batch_size=bs, shuffle=True, last_batch_handle="roll_over",
                        label_name=label_name)
    mod = module.Module(symbol, data_names=["data"], label_names=[label_name], logger=_logger)
    params = {"learning_rate": float(est.learning_rate), "wd": float(est.l2),
              "rescale_grad": 1.0 / bs}
    mod.fit(it, num_epoch=int(est.epochs), optimizer=est.optimizer, optimizer_params=params,
            initializer=initializer, eval_metric=metric_mod.create(metric), progress_bar=False)
    arg_params, _ = mod.get_params()
    return {k: v.asnumpy().astype(np.float64) for k, v in arg_params.items()}


def _chunks(X):
    """Yield csr NDArrays of at most _PREDICT_CHUNK rows."""
    from .ndarray import sparse
    for a in range(0, X.shape[0], _PREDICT_CHUNK):
        yield sparse.csr_matrix(X[a:a + _PREDICT_CHUNK])


def _linear_scores(X, coef, intercept):
    """X (csr) . coef.T + intercept computed with mx.nd.dot, as float64 (n, k)."""
    from . import ndarray as nd
    if X.shape[0] == 0:
        return np.zeros((0, coef.shape[0]))
    w = nd.array(np.ascontiguousarray(coef.T, dtype=np.float32))
    out = [nd.dot(x, w).asnumpy() for x in _chunks(X)]
    return np.concatenate(out).astype(np.float64) + intercept


def _linear_symbol(n_features, n_out, fit_intercept, head):
    """csr data . row_sparse weight (+ bias) -> ``head`` loss op."""
    from . import symbol as sym
    data = sym.Variable("data", stype="csr")
    weight = sym.Variable("linear_weight", stype="row_sparse", shape=(n_features, n_out))
    z = sym.dot(data, weight, name="linear_dot")
    if fit_intercept:
        z = sym.broadcast_add(z, sym.Variable("linear_bias", shape=(1, n_out)), name="linear")
    return head(z)


# ---------------------------------------------------------------------- implementations
class _LinearParams:
    """Hyper-parameters shared by the linear estimators (sklearn reads them from __init__)."""

    def __init__(self, optimizer="adam", learning_rate=0.05, epochs=20, batch_size=64, l2=0.0,
                 fit_intercept=True, random_state=None):
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.l2 = l2
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _scores(self, X):
        """csr X . coef.T + intercept for fitted estimators, float64 (n_samples, n_outputs)."""
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(self)
        X = _as_csr(_validate_data(self, X, accept_sparse="csr", reset=False,
                                   dtype=[np.float32, np.float64]))
        return _linear_scores(X, np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_))


class _LinearClassifierImpl(_LinearParams):
    """Multinomial logistic regression: softmax(csr X . W + b) trained with lazy updates."""

    def fit(self, X, y):
        """Train on ``X`` (n_samples, n_features; scipy sparse or array) and labels ``y``.

        Returns
        -------
        self
        """
        from sklearn.utils.multiclass import check_classification_targets

        from . import initializer, symbol
        _check_hyper(self)
        X, y = _validate_data(self, X, y, accept_sparse="csr", dtype=[np.float32, np.float64])
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in "
                             f"the data, but the data contains only one class: "
                             f"{self.classes_[0]!r}")
        X = _as_csr(X)
        k = len(self.classes_)
        sym_ = _linear_symbol(X.shape[1], k, self.fit_intercept,
                              lambda z: symbol.SoftmaxOutput(z, name="softmax"))
        with _seeded(self.random_state):
            p = _train(self, sym_, X, y_idx.astype(np.float32), "softmax_label",
                       initializer.Zero(), "acc")
        self.coef_ = p["linear_weight"].T.copy()
        self.intercept_ = p["linear_bias"].ravel() if self.fit_intercept else np.zeros(k)
        return self

    def decision_function(self, X):
        """Class scores: (n_samples,) for two classes (positive favours ``classes_[1]``),
        else (n_samples, n_classes)."""
        s = self._scores(X)
        return s[:, 1] - s[:, 0] if s.shape[1] == 2 else s

    def predict_proba(self, X):
        """Softmax probabilities, (n_samples, n_classes) in the order of ``classes_``."""
        d = self.decision_function(X)
        if d.ndim == 1:
            p1 = 1.0 / (1.0 + np.exp(-d))
            return np.column_stack([1.0 - p1, p1])
        e = np.exp(d - d.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class of each row (from the same scores as decision_function)."""
        d = self.decision_function(X)
        idx = (d > 0).astype(int) if d.ndim == 1 else d.argmax(axis=1)
        return self.classes_[idx]


class _LinearRegressorImpl(_LinearParams):
    """Least squares: csr X . W + b with LinearRegressionOutput, one or several targets."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y):
        """Train on ``X`` and targets ``y`` of shape (n_samples,) or (n_samples, n_targets).

        Returns
        -------
        self
        """
        from . import initializer, symbol
        _check_hyper(self)
        X, y = _validate_data(self, X, y, accept_sparse="csr", dtype=[np.float32, np.float64],
                              multi_output=True, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        self._y_1d = y.ndim == 1
        Y = y.reshape(len(y), -1)
        X = _as_csr(X)
        sym_ = _linear_symbol(X.shape[1], Y.shape[1], self.fit_intercept,
                              lambda z: symbol.LinearRegressionOutput(z, name="lro"))
        with _seeded(self.random_state):
            p = _train(self, sym_, X, Y.astype(np.float32), "lro_label", initializer.Zero(),
                       "mse")
        w = p["linear_weight"].T
        b = p["linear_bias"].ravel() if self.fit_intercept else np.zeros(Y.shape[1])
        self.coef_ = w[0].copy() if self._y_1d else w.copy()
        self.intercept_ = float(b[0]) if self._y_1d else b
        return self

    def predict(self, X):
        """Predicted targets, float64, shaped like the ``y`` given to :meth:`fit`."""
        s = self._scores(X)
        return s[:, 0] if self._y_1d else s


class _FMClassifierImpl:
    """Binary factorization machine (Rendle 2010), MXNet's factorization_machine example.

    score = w0 + x.w + 1/2 sum_f ((x.V)_f^2 - (x^2).(V^2)_f), with csr x, row_sparse w and
    V, the square-sum term computed by ``_square_sum(V, axis=1, keepdims=True)``.
    """

    def __init__(self, num_factors=8, optimizer="adam", learning_rate=0.05, epochs=20,
                 batch_size=64, l2=0.0, init_scale=0.01, random_state=None):
        self.num_factors = num_factors
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.l2 = l2
        self.init_scale = init_scale
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Train on ``X`` and binary labels ``y``.

        Returns
        -------
        self
        """
        from sklearn.utils.multiclass import check_classification_targets, type_of_target

        from . import initializer
        from .base import ParamError
        _check_hyper(self)
        if not isinstance(self.num_factors, (int, np.integer)) or self.num_factors < 1:
            raise ParamError(f"FactorizationMachineClassifier: num_factors must be a positive "
                             f"int, got {self.num_factors!r}")
        X, y = _validate_data(self, X, y, accept_sparse="csr", dtype=[np.float32, np.float64])
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            # sklearn's wording, which its check for binary-only classifiers looks for
            raise ValueError("Only binary classification is supported. The type of the target "
                             f"is {y_type}.")
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(f"FactorizationMachineClassifier needs samples of 2 classes, but "
                             f"the data contains only one class: {self.classes_[0]!r}")
        X = _as_csr(X)
        sym_ = fm_symbol(X.shape[1], int(self.num_factors), float(self.init_scale))
        with _seeded(self.random_state):
            p = _train(self, sym_, X, y_idx.astype(np.float32).reshape(-1, 1), "out_label",
                       initializer.Normal(float(self.init_scale)), "log_loss")
        self.w0_ = float(p["w0_weight"].ravel()[0])
        self.w_ = p["w1_weight"].ravel().copy()
        self.V_ = p["v_weight"].copy()
        return self

    def decision_function(self, X):
        """The FM score; positive favours ``classes_[1]``."""
        from sklearn.utils.validation import check_is_fitted

        from . import ndarray as nd
        check_is_fitted(self)
        X = _as_csr(_validate_data(self, X, accept_sparse="csr", reset=False,
                                   dtype=[np.float32, np.float64]))
        if X.shape[0] == 0:
            return np.zeros(0)
        w = nd.array(self.w_.reshape(-1, 1).astype(np.float32))
        v = nd.array(self.V_.astype(np.float32))
        v2 = nd.array((self.V_ ** 2).sum(axis=1, keepdims=True).astype(np.float32))
        out = []
        for x in _chunks(X):
            xv = nd.dot(x, v).asnumpy().astype(np.float64)
            lin = nd.dot(x, w).asnumpy().ravel()
            sq = nd.dot(nd.square(x), v2).asnumpy().ravel()
            out.append(lin + 0.5 * ((xv ** 2).sum(axis=1) - sq))
        return np.concatenate(out).astype(np.float64) + self.w0_

    def predict_proba(self, X):
        """(n_samples, 2): probabilities of ``classes_[0]`` and ``classes_[1]``."""
        p1 = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        """``classes_[1]`` where the score is positive, else ``classes_[0]``."""
        d = self.decision_function(X)       # checks fitted-ness before classes_ is read
        return self.classes_[(d > 0).astype(int)]


def fm_symbol(n_features, num_factors, init_scale=0.01):
    """The factorization machine symbol: csr ``data``, row_sparse ``v_weight`` (F, k) and
    ``w1_weight`` (F, 1), dense ``w0_weight``; LogisticRegressionOutput head ``out``.

    Parameters
    ----------
    n_features : int
    num_factors : int
    init_scale : float
        Standard deviation of the normal initialisation of the factors.

    Returns
    -------
    Symbol
    """
    from . import initializer
    from . import symbol as sym
    x = sym.Variable("data", stype="csr")
    v = sym.Variable("v_weight", shape=(n_features, num_factors), stype="row_sparse",
                     init=initializer.Normal(init_scale))
    w1 = sym.Variable("w1_weight", shape=(n_features, 1), stype="row_sparse",
                      init=initializer.Zero())
    w0 = sym.Variable("w0_weight", shape=(1, 1), init=initializer.Zero())
    linear = sym.broadcast_add(sym.dot(x, w1), w0, name="linear")
    # (x.V)^2 summed over factors minus x^2 . (sum_f V^2): the O(nnz * k) FM identity
    xv = sym.dot(x, v, name="xv")
    pair = sym.sum(sym.square(xv), axis=1, keepdims=True, name="xv_sq")
    v_s = sym._square_sum(v, axis=1, keepdims=True, name="v_sq")
    x_s = sym.dot(sym.square(x), v_s, name="x2v2")
    score = linear + 0.5 * (pair - x_s)
    return sym.LogisticRegressionOutput(score, name="out")


# ---------------------------------------------------------------------- public classes
_BUILT = {}


def _build():
    """Create the public classes on scikit-learn's base classes (first use only)."""
    if _BUILT:
        return
    _sklearn()
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    specs = [("SparseLinearClassifier", _LinearClassifierImpl, ClassifierMixin),
             ("SparseLinearRegressor", _LinearRegressorImpl, RegressorMixin),
             ("FactorizationMachineClassifier", _FMClassifierImpl, ClassifierMixin)]
    for name, impl, mixin in specs:
        doc = (f"{impl.__doc__}\n\n    scikit-learn estimator: see :mod:`sparsym.sklearn`.\n\n"
               f"{_PARAM_DOC[name]}")
        cls = type(name, (impl, mixin, BaseEstimator),
                   {"__module__": __name__, "__qualname__": name, "__doc__": doc})
        _BUILT[name] = cls
        globals()[name] = cls


_COMMON_DOC = """    optimizer : {'adam', 'sgd', 'adagrad', 'ftrl'}
        sparsym optimizer (lazy row_sparse updates).
    learning_rate : float
    epochs : int
        Passes over the training data.
    batch_size : int
        Rows per update (capped at the number of samples).
    l2 : float
        Weight decay (MXNet's ``wd``) on the weights; biases are not decayed.
"""
_PARAMS_HEAD = "    Parameters\n    ----------\n"
_PARAM_DOC = {
    "SparseLinearClassifier": _PARAMS_HEAD + _COMMON_DOC + """    fit_intercept : bool
    random_state : int, RandomState or None
        Seeds shuffling (sparsym's own random stream is left untouched).

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    coef_ : ndarray (n_classes, n_features)
    intercept_ : ndarray (n_classes,)

    Examples
    --------
    >>> import scipy.sparse as sps, numpy as np
    >>> from sparsym.sklearn import SparseLinearClassifier
    >>> X = sps.random(200, 50, density=0.1, format='csr', random_state=0)
    >>> y = (X @ np.arange(50) > X @ np.arange(50)[::-1]).astype(int)
    >>> clf = SparseLinearClassifier(epochs=30, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
""",
    "SparseLinearRegressor": _PARAMS_HEAD + _COMMON_DOC + """    fit_intercept : bool
    random_state : int, RandomState or None

    Attributes
    ----------
    coef_ : ndarray (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray (n_targets,)
""",
    "FactorizationMachineClassifier": """    Parameters
    ----------
    num_factors : int
        Rank k of the pairwise interaction factors V (n_features, k).
""" + _COMMON_DOC + """    init_scale : float
        Standard deviation of V's normal initialisation.
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray (2,)
    w0_ : float
    w_ : ndarray (n_features,)
    V_ : ndarray (n_features, num_factors)
""",
}


def __getattr__(name):
    # scikit-learn is optional: the classes exist once it can be imported
    if name in __all__:
        _build()
        return _BUILT[name]
    raise AttributeError(f"module 'sparsym.sklearn' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
