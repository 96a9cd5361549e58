"""sparsym.sklearn: scikit-learn's estimator checks, model selection, sparse/dense input."""
import doctest
import sys

import numpy as np
import pytest

import sparsym as mx

pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install scikit-learn)")
import scipy.sparse as sps  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MaxAbsScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import sparsym.sklearn as sk  # noqa: E402

# Every applicable check passes: nothing is expected to fail. sklearn itself skips
# check_array_api_input (needs SCIPY_ARRAY_API=1 and an array-API library) and the
# *_data_not_an_array checks when pandas is absent. FactorizationMachineClassifier is binary
# (tag multi_class=False): sklearn runs its classifier checks on two classes and
# check_classifier_not_supporting_multiclass verifies the ValueError on three.
EXPECTED_FAILED = {}


# fewer epochs than the defaults keep the ~170 checks fast; they still pass sklearn's
# accuracy thresholds (check_classifiers_train, check_regressors_train)
_FAST = {"epochs": 8, "random_state": 0}


def _estimators():
    return [sk.SparseLinearClassifier(**_FAST), sk.SparseLinearRegressor(**_FAST),
            sk.FactorizationMachineClassifier(**_FAST)]


@parametrize_with_checks(_estimators(), expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _sparse_binary(n=300, f=100, seed=0):
    """Binary csr data (10% dense, 0/1 values) labelled by a linear rule over 20 features."""
    rng = np.random.default_rng(seed)
    X = sps.random(n, f, density=0.1, format="csr", random_state=seed, dtype=np.float64)
    X.data[:] = 1.0
    w = np.zeros(f)
    w[rng.choice(f, 20, replace=False)] = 3 * rng.normal(size=20)
    s = X @ w
    return X, (s > np.median(s)).astype(int)


def test_grid_search_over_linear_classifier():
    X, y = _sparse_binary()
    grid = GridSearchCV(sk.SparseLinearClassifier(epochs=15, random_state=0),
                        {"learning_rate": [0.001, 0.1], "l2": [0.0, 1e-3]}, cv=3)
    grid.fit(X, y)
    assert set(grid.cv_results_["params"][0]) == {"learning_rate", "l2"}
    assert len(grid.cv_results_["mean_test_score"]) == 4
    # a learning rate of 1e-3 barely moves the weights in 15 epochs
    assert grid.best_params_["learning_rate"] == 0.1
    assert grid.best_score_ > 0.72  # LogisticRegression: 0.83
    assert grid.best_estimator_.coef_.shape == (2, X.shape[1])


def test_cross_val_score_in_pipeline():
    X, y = _sparse_binary(seed=1)
    pipe = make_pipeline(MaxAbsScaler(), sk.SparseLinearClassifier(epochs=15, random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.72


def test_csr_and_dense_input_agree():
    X, y = _sparse_binary(n=120, f=60, seed=2)
    a = sk.SparseLinearClassifier(epochs=5, random_state=3).fit(X, y)
    b = sk.SparseLinearClassifier(epochs=5, random_state=3).fit(X.toarray(), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X.toarray()), rtol=1e-5)
    # unsorted, duplicated csr indices are canonicalised without touching the caller's matrix
    data, indices, indptr = [], [], [0]
    for r in range(X.shape[0]):
        cols = X.indices[X.indptr[r]:X.indptr[r + 1]][::-1]
        vals = X.data[X.indptr[r]:X.indptr[r + 1]][::-1]
        if len(cols):   # split the first value of each row into two duplicate entries
            cols, vals = np.r_[cols, cols[0]], np.r_[vals[0] / 2, vals[1:], vals[0] / 2]
        data.append(vals)
        indices.append(cols)
        indptr.append(indptr[-1] + len(cols))
    messy = sps.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                           shape=X.shape)
    assert not messy.has_canonical_format
    before = messy.indices.copy()
    np.testing.assert_allclose(a.decision_function(messy), a.decision_function(X), rtol=1e-5)
    np.testing.assert_array_equal(messy.indices, before)


def test_predict_proba_multiclass_and_string_labels():
    rng = np.random.default_rng(0)
    centers = np.eye(3, 5) * 4
    lab = rng.integers(0, 3, 150)
    X = centers[lab] + rng.normal(size=(150, 5))
    y = np.array(["ant", "bee", "cat"])[lab]
    clf = sk.SparseLinearClassifier(random_state=0).fit(X, y)
    p = clf.predict_proba(X)
    assert p.shape == (150, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert list(clf.classes_) == ["ant", "bee", "cat"]
    assert clf.score(X, y) > 0.9
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[p.argmax(axis=1)])


def test_regressor_recovers_coefficients_multi_target():
    rng = np.random.default_rng(0)
    X = sps.random(400, 30, density=0.2, format="csr", random_state=0)
    W = rng.normal(size=(30, 2))
    Y = X @ W + 0.5
    reg = sk.SparseLinearRegressor(optimizer="adam", learning_rate=0.05, epochs=60,
                                   batch_size=32, random_state=0).fit(X, Y)
    assert reg.coef_.shape == (2, 30) and reg.intercept_.shape == (2,)
    assert reg.score(X, Y) > 0.95
    r1 = sk.SparseLinearRegressor(epochs=60, batch_size=32, random_state=0).fit(X, Y[:, 0])
    assert np.ndim(r1.intercept_) == 0 and r1.predict(X).shape == (400,)


def test_fm_learns_pairwise_interactions():
    # the label is an XOR-like product of two features: no linear model can fit it
    rng = np.random.default_rng(0)
    n, f = 600, 20
    X = (rng.random((n, f)) < 0.3).astype(np.float64)
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] > 0).astype(int)
    fm = sk.FactorizationMachineClassifier(num_factors=4, epochs=40, learning_rate=0.05,
                                           init_scale=0.1, random_state=0)
    fm.fit(sps.csr_matrix(X), y)
    lin = sk.SparseLinearClassifier(epochs=40, random_state=0).fit(X, y)
    assert fm.V_.shape == (f, 4) and fm.w_.shape == (f,)
    assert fm.score(X, y) > 0.95
    assert fm.score(X, y) > lin.score(X, y) + 0.03
    with pytest.raises(ValueError, match="Only binary classification"):
        fm.fit(X, np.arange(n) % 3)


def test_random_state_keeps_sparsym_stream():
    X, y = _sparse_binary(n=60, f=40)
    mx.random.seed(7)
    expected = mx.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(7)
    a = sk.SparseLinearClassifier(epochs=2, random_state=0).fit(X, y)
    got = mx.random.uniform(shape=(3,)).asnumpy()
    np.testing.assert_array_equal(got, expected)
    b = sk.SparseLinearClassifier(epochs=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("params,match", [
    ({"optimizer": "lbfgs"}, "optimizer must be one of"),
    ({"epochs": 0}, "epochs must be a positive int"),
    ({"batch_size": 2.5}, "batch_size must be a positive int"),
    ({"learning_rate": 0}, "learning_rate must be a positive"),
    ({"l2": -1.0}, "l2 must be a non-negative"),
])
def test_bad_hyperparameters_raise_param_error(params, match):
    X, y = _sparse_binary(n=20, f=30)
    with pytest.raises(mx.base.ParamError, match=match):
        sk.SparseLinearClassifier(**params).fit(X, y)


def test_missing_scikit_learn_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setattr(sk, "_BUILT", {})
    with pytest.raises(ImportError, match=r"pip install 'sparsym\[sklearn\]'"):
        sk.__getattr__("SparseLinearClassifier")
    with pytest.raises(AttributeError):
        sk.__getattr__("NoSuchEstimator")


def test_docstring_examples():
    res = doctest.run_docstring_examples  # noqa: F841  (documented examples run below)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for t in finder.find(sk.SparseLinearClassifier, "SparseLinearClassifier",
                         globs={"__name__": "doc"}):
        runner.run(t)
    assert runner.tries > 0 and runner.failures == 0
