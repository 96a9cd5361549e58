"""mx.viz: plot_network colours nodes by output stype and marks fallbacks; print_summary."""
import re
import shutil

import numpy as np
import pytest

import sparsym as mx

graphviz = pytest.importorskip("graphviz", reason="the graphviz Python package is not "
                               "installed (pip install graphviz)")

SHAPES = {"data": (4, 10), "weight": (10, 5)}


def _net():
    """csr data . row_sparse weight -> FC -> cast to row_sparse -> sigmoid (falls back)."""
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse")
    y = mx.sym.dot(x, w, name="dot")
    fc = mx.sym.FullyConnected(y, num_hidden=3, name="fc")
    rsp = mx.sym.cast_storage(fc, stype="row_sparse", name="cast")
    s = mx.sym.sigmoid(rsp, name="sig")
    return mx.sym.SoftmaxOutput(s, name="softmax")


def _nodes(dot):
    """{node name: its dot line} for the drawn (non-legend) nodes."""
    out = {}
    for line in dot.body:
        m = re.match(r'\s*(n\d+) \[label="([^"]*)"(.*)\]', line, re.S)
        if m:
            # variables: "name\nstype"; operators: "op\nname[\nparams]"
            lines = m.group(2).split("\n")
            out[lines[0] if "shape=oval" in line else lines[1]] = line
    return out


def _fill(line):
    return re.search(r'fillcolor="([^"]+)"', line).group(1)


def test_nodes_coloured_by_output_stype_and_fallback_marked():
    dot = mx.viz.plot_network(_net(), shape=SHAPES)
    assert isinstance(dot, graphviz.Digraph)
    nodes = _nodes(dot)
    # op nodes are labelled "<op>\n<name>"; variables by their name
    assert set(nodes) >= {"data", "weight", "dot", "fc", "cast", "sig", "softmax"}
    colors = mx.viz.STYPE_COLORS
    assert _fill(nodes["data"]) == colors["csr"]
    assert _fill(nodes["weight"]) == colors["row_sparse"]
    assert _fill(nodes["dot"]) == colors["default"]        # csr . rsp -> dense
    assert _fill(nodes["cast"]) == colors["row_sparse"]
    # sigmoid has no row_sparse kernel: dense fallback, outlined and labelled
    assert mx.viz.FALLBACK_COLOR in nodes["sig"] and "[fallback]" in nodes["sig"]
    assert "penwidth=3" in nodes["sig"]
    for name in ("dot", "fc", "cast", "softmax"):
        assert "[fallback]" not in nodes[name] and mx.viz.FALLBACK_COLOR not in nodes[name]
    # dense parameters are hidden like MXNet's hide_weights; the sparse weight is kept
    assert "fc_weight" not in nodes and "fc_bias" not in nodes
    src = dot.source
    assert 'label="4x10\ncsr"' in src          # edge: shape and non-default stype
    assert "legend_fallback" in src


def test_hide_weights_false_and_no_legend():
    dot = mx.viz.plot_network(_net(), shape=SHAPES, hide_weights=False, legend=False)
    nodes = _nodes(dot)
    assert "fc_weight" in nodes and "fc_bias" in nodes
    assert _fill(nodes["fc_weight"]) == mx.viz.STYPE_COLORS["default"]
    assert "legend" not in dot.source


def test_stype_dict_overrides_variables():
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    net = mx.sym.dot(x, w, transpose_a=True, name="d")
    plain = mx.viz.plot_network(net)
    # all dense and no stype given: MXNet's own drawing (node "d" in MXNet's "other" colour)
    assert '\td [label=d fillcolor="#fccde5"' in plain.source
    sparse = _nodes(mx.viz.plot_network(net, stype={"x": "csr"}))
    # MXNet: dot(csr.T, dense) -> row_sparse
    assert _fill(sparse["d"]) == mx.viz.STYPE_COLORS["row_sparse"]
    assert _fill(sparse["x"]) == mx.viz.STYPE_COLORS["csr"]


def test_executor_plan_matches_inference():
    net = _net()
    exe = net.simple_bind(mx.cpu(), **SHAPES)
    from_plan = mx.viz.plot_network(net, executor=exe)
    inferred = mx.viz.plot_network(net, shape=SHAPES)
    assert from_plan.source == inferred.source
    fallbacks = {r.node for r in exe.storage_report().fallbacks}
    assert "sig" in fallbacks


def test_bad_arguments():
    with pytest.raises(mx.MXNetError, match="not an input"):
        mx.viz.plot_network(_net(), shape={"nope": (1, 2)})
    with pytest.raises(TypeError, match="Symbol"):
        mx.viz.plot_network("not a symbol")
    with pytest.raises(mx.base.StorageError):
        mx.viz.plot_network(_net(), stype={"data": "coo"})


def test_render_with_dot_binary(tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("graphviz 'dot' binary not found: install it (apt-get install graphviz) "
                    "to render plot_network output")
    dot = mx.viz.plot_network(_net(), shape=SHAPES, save_format="svg")
    svg = dot.pipe(format="svg").decode()
    assert "<svg" in svg and mx.viz.FALLBACK_COLOR in svg and "sig" in svg
    path = dot.render(filename="net", directory=tmp_path, cleanup=True)
    assert path.endswith(".svg") and (tmp_path / "net.svg").stat().st_size > 0


def test_print_summary_layers_shapes_params(capsys):
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    act = mx.sym.relu(fc1, name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    out = mx.sym.SoftmaxOutput(fc2, name="softmax")
    mx.viz.print_summary(out, shape={"data": (2, 5)})
    text = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split() for ln in text.splitlines() if "(" in ln.split()[0]
            if ln.strip()}
    # every output dense: MXNet's four columns, no Storage
    assert rows["fc1(FullyConnected)"][1:3] == ["8", str(5 * 8 + 8)]
    assert rows["fc2(FullyConnected)"][1:4] == ["3", str(8 * 3 + 3), "relu1"]
    assert rows["relu1(relu)"][2] == "0"
    assert f"Total params: {5 * 8 + 8 + 8 * 3 + 3}" in text
    assert "softmax_label" not in text


def test_print_summary_sparse_storage_column(capsys):
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("lin_weight", stype="row_sparse", shape=(100, 2))
    y = mx.sym.dot(x, w, transpose_a=False, name="dot")
    mx.viz.print_summary(y, shape={"data": (8, 100)})
    text = capsys.readouterr().out
    assert re.search(r"data\(null\)\s+100\s+csr\s+0", text)
    assert re.search(r"dot\(dot\)\s+2\s+default\s+200\s+data", text)
    assert "Total params: 200" in text
    with pytest.raises(ValueError, match="5 column edges"):
        mx.viz.print_summary(y, positions=(.5, 1.))


# MXNet 1.9.1's mx.viz.print_summary output for the same network; its columns end at
# .44, .64, .74 and 1.0 of 120 characters, each row padded to the full width
_MXNET_SUMMARY = "\n".join([
    "_" * 120,
    ("Layer (type)".ljust(52) + "Output Shape".ljust(24) + "Param #".ljust(12)
     + "Previous Layer").ljust(120),
    "=" * 120,
    ("data(null)".ljust(52) + "4".ljust(24) + "0").ljust(120),
    "_" * 120,
    ("fc(FullyConnected)".ljust(52) + "3".ljust(24) + "15".ljust(12) + "data").ljust(120),
    "=" * 120,
    "Total params: 15",
    "_" * 120]) + "\n"


def test_print_summary_mxnet_layout(capsys):
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    mx.viz.print_summary(fc, shape={"data": (2, 4)})
    assert capsys.readouterr().out == _MXNET_SUMMARY
    mx.viz.print_summary(fc, shape={"data": (2, 4)}, positions=[.44, .64, .74, 1.])
    assert capsys.readouterr().out == _MXNET_SUMMARY


def test_print_summary_batchnorm_counts_gamma_beta_only(capsys):
    # MXNet counts BatchNorm's gamma and beta, not its moving statistics (aux states)
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    mx.viz.print_summary(bn, shape={"data": (1, 4, 3, 3)})
    text = capsys.readouterr().out
    assert re.search(r"bn\(BatchNorm\)\s+4x3x3\s+8\s+data", text)
    assert "Total params: 8" in text


def test_docstring_examples():
    import doctest

    import sparsym.viz
    res = doctest.testmod(sparsym.viz, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_bound_module_as_executor():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("w", stype="row_sparse", shape=(10, 2))
    net = mx.sym.LinearRegressionOutput(mx.sym.dot(x, w, name="dot"), name="lro")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (4, 10))],
             label_shapes=[mx.io.DataDesc("lro_label", (4, 2))])
    nodes = _nodes(mx.viz.plot_network(net, executor=mod))
    assert _fill(nodes["data"]) == mx.viz.STYPE_COLORS["csr"]
    assert _fill(nodes["w"]) == mx.viz.STYPE_COLORS["row_sparse"]
    with pytest.raises(TypeError, match="bound Executor or Module"):
        mx.viz.plot_network(net, executor=object())


def test_dense_graph_is_drawn_as_mxnet_draws_it():
    data = mx.sym.Variable("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")
    act = mx.sym.Activation(conv, act_type="relu", name="relu")
    pool = mx.sym.Pooling(act, kernel=(2, 2), pool_type="max", stride=(2, 2), name="pool")
    fc = mx.sym.FullyConnected(mx.sym.flatten(pool, name="flat"), num_hidden=3, name="fc")
    out = mx.sym.SoftmaxOutput(fc, name="softmax")
    src = mx.viz.plot_network(out, shape={"data": (1, 3, 8, 8)}).source
    # MXNet 1.9.1's lines for this network (nodes by name, edges from op back to input)
    assert '\tconv [label="Convolution\n3x3/1, 4" fillcolor="#fb8072" fixedsize=true ' \
           'height=0.8034 shape=box style=filled width=1.3]' in src
    assert 'pool [label="Pooling\nmax, 2x2/2x2" fillcolor="#80b1d3"' in src
    assert '\tconv -> data [label="3x8x8" arrowtail=open dir=back]' in src
    assert '\tfc -> flat [label=36 arrowtail=open dir=back]' in src
    assert "conv_weight" not in src and "legend" not in src
    typed = mx.viz.plot_network(out, shape={"data": (1, 3, 8, 8)},
                                dtype={"data": np.float32}).source
    assert 'relu -> conv [label="4x6x6(float32)"' in typed


def test_print_summary_lists_variables_as_mxnet_does(capsys):
    # MXNet shows only the graph's first variable as a row (and as a previous layer), with
    # or without shapes
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    emb = mx.sym.Embedding(mx.sym.Variable("tok"), input_dim=10, output_dim=3, name="emb")
    cat = mx.sym.concat(fc, mx.sym.sum(emb, axis=1, name="esum"), dim=1, name="cat")
    mx.viz.print_summary(cat, shape={"data": (1, 4), "tok": (1, 5)})
    text = capsys.readouterr().out
    assert "tok(null)" not in text
    assert re.search(r"emb\(Embedding\)\s+5x3\s+30\s*\n", text)      # no previous layer
    assert re.search(r"fc\(FullyConnected\)\s+3\s+15\s+data", text)
    mx.viz.print_summary(fc)
    text = capsys.readouterr().out
    assert re.search(r"data\(null\)\s+0\s*\n", text)
    assert re.search(r"fc\(FullyConnected\)\s+3\s+data", text)   # the bias, as MXNet counts
