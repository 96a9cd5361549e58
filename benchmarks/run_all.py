"""Run every benchmark in benchmarks/ (against MXNet 1.9.1 when it is installed), collect
their JSON lines into one results file and render docs/benchmarks.md from it.

    python benchmarks/run_all.py                      # everything, full sizes
    python benchmarks/run_all.py --quick              # small sizes (minutes, not hours)
    python benchmarks/run_all.py --only first_run,blas_threads
    python benchmarks/run_all.py --render-only        # re-render from the results file

Each script runs as its own process; every line of its stdout that is a JSON object is a
record. The results file (``--results``, JSON lines) starts with a description of the
machine, then per script one ``run`` record (its command, exit code, seconds) and its
``record`` lines. ``--only`` re-runs the named scripts and keeps the other scripts' records
from the existing file. MXNet's side runs through ``--mxnet-python`` (the oracle venv,
``~/mxref/bin/python`` by default); when it does not exist, each script is told to skip
MXNet and the page says so. A script not listed in ``SPECS`` runs with no arguments and
its records are rendered as a generic table.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import subprocess
import sys
import time

from _quiet import QUIET_OTHER_CORES, Watch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_RESULTS = os.path.join(ROOT, "docs", "benchmarks_results.jsonl")
DEFAULT_PAGE = os.path.join(ROOT, "docs", "benchmarks.md")
NOT_BENCHMARKS = {"run_all", "gen_avazu"}
MX = "{mx}"  # replaced by the oracle's path

# name -> title, what the table shows, full/quick arguments, the arguments that point it at
# MXNet (``with_mx``) or tell it to skip MXNet (``no_mx``), and an optional renderer.
SPECS = {
    "first_run": dict(
        title="First run: cold vs warm Numba cache vs MXNet",
        about="Sparse logistic regression (1M features, 200k rows, batch 2048, one epoch, "
              "parse included), each run a fresh process timed end to end; cold = an empty "
              "Numba cache. Ratios compare runs of the same round.",
        full=["--repeat", "2"], quick=["--quick"],
        with_mx=["--mxnet-python", MX], no_mx=["--mxnet-python", "/nonexistent"]),
    "train_sparse_logreg": dict(
        title="Sparse logistic regression training and LibSVMIter throughput",
        about="LibSVMIter passes (MB/s) and Module training (samples/s) over an Avazu-shaped "
              "file, 1M features.",
        full=[], quick=["--rows", "50000", "--epochs", "1"],
        with_mx=["--mxnet-python", MX], no_mx=["--mxnet-python", "/nonexistent"]),
    "libsvm_parse": dict(
        title="LibSVM parsing",
        about="The parse kernel on a file in memory, the streaming reader, MXNet's iterator.",
        full=[], quick=["--rows", "50000", "--repeat", "1"],
        with_mx=["--mxnet-python", MX], no_mx=["--mxnet-python", "/nonexistent"]),
    "blas_threads": dict(
        title="Dense training under load (BLAS thread policy)",
        about="Matrix factorization example and a Module MLP, quiet and with two busy "
              "background processes, with sparsym's BLAS policy and with BLAS's default "
              "threads (training seconds, best of the repeats).",
        full=["--repeat", "2"], quick=["--quick", "--repeat", "1"], with_mx=[], no_mx=[]),
    "ops_vs_mxnet": dict(
        title="Every operator against MXNet",
        about="Median call time of each operator MXNet 1.9.1 also has (ratio = MXNet's time "
              "/ sparsym's; > 1: sparsym is faster).",
        full=[], quick=["--quick"], with_mx=["--mxnet-python", MX], no_mx=["--no-mxnet"],
        render="ops"),
    "gluon_vs_mxnet": dict(
        title="Gluon training", about="Samples/s of Gluon training loops.",
        full=[], quick=["--batches", "20"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "/nonexistent"]),
    "rnn_vs_mxnet": dict(
        title="Fused recurrent layers in training",
        about="Milliseconds per Gluon training step of a 2-layer LSTM and GRU (200 units, "
              "sequence 35, batch 32); speedup = MXNet's time / sparsym's.",
        full=[], quick=["--steps", "3", "--repeats", "1"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "/nonexistent"]),
    "cnn_vs_mxnet": dict(
        title="Dense convolutional networks (ResNet-18, LeNet)",
        about="Samples/s of Gluon model_zoo resnet18_v1 (32x32, batch 32) and LeNet (28x28, "
              "batch 64), hybridized, training (SGD, momentum) and inference, against MXNet "
              "and, when $TORCH_PYTHON names a Python with torch, PyTorch eager; medians of "
              "interleaved fresh processes, with the load average each figure saw.",
        full=[], quick=["--repeats", "1", "--seconds", "1"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "/nonexistent"]),
    "onednn_primitives": dict(
        title="Dense primitives on oneDNN, on the Numba kernels and on MXNet",
        about="Median milliseconds of each primitive through the public nd API (forward; "
              "forward + data gradient; forward + parameter gradients) over ResNet-18's, "
              "LeNet's and SBNet's shapes, one fresh process per engine and round; "
              "*_over_mxnet < 1: sparsym is faster.",
        full=[], quick=["--quick"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", ""]),
    "sbnet_vs_mxnet": dict(
        title="SBNet block-sparse convolution against MXNet's dense convolution",
        about="3x3 conv on 400x704x24 with a mask of random disks at 10% density: the public "
              "SparseBlockConvolution (mask included) against MXNet 1.9.1's dense "
              "Convolution, forward and forward + backward; speedup = MXNet / sparsym.",
        full=[], quick=["--rounds", "1", "--reps", "2"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", ""]),
    "seed_tutorial": dict(
        title="Seed tutorial training loop", about="Batches/s of the seed script.",
        full=["--repeat", "2"], quick=["--repeat", "1", "--epochs", "2"],
        with_mx=["--mxnet", MX], no_mx=["--mxnet", "/nonexistent"]),
    "sparse_vs_mxnet": dict(
        title="The sparse path end to end against MXNet (and PyTorch)",
        about="LibSVMIter passes (MB/s of a fresh process's first pass, and steady), sparse "
              "logistic regression with Module + kvstore + prepare (SGD, Adam), a Gluon "
              "sparse-embedding model (against MXNet and, with $TORCH_PYTHON, PyTorch's "
              "EmbeddingBag), the seed tutorial loop and the seed binding benchmark; "
              "interleaved fresh-process pairs, medians, the load average each run saw and "
              "the share of cores other processes used, ratios flagged under_load when "
              "other work shared the machine.",
        full=["--pairs", "3"],
        quick=["--pairs", "1", "--rows", "50000", "--bind-repeat", "10"],
        with_mx=["--mxnet-python", MX], no_mx=["--mxnet-python", "/nonexistent"]),
    "sparse_ops": dict(
        title="Sparse operators", about="Per-call milliseconds of the sparse products, casts "
                                        "and updates against scipy and MXNet.",
        full=["--repeat", "15"], quick=["--repeat", "3", "--rounds", "1"],
        with_mx=[], no_mx=["--no-mxnet"]),
    "kernels_sparse": dict(
        title="Sparse kernels", about="Per-call times of the raw sparse kernels.",
        full=[], quick=["--repeat", "5"], with_mx=[], no_mx=[]),
    "bind": dict(
        title="Binding", about="simple_bind and bind times.",
        full=[], quick=["--repeat", "10", "--rounds", "1"], with_mx=[], no_mx=["--no-mxnet"]),
    "bind_groups": dict(
        title="Binding executor groups", about="Bind times of data-parallel groups.",
        full=[], quick=["--runs", "1", "--repeat", "10"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "/nonexistent"]),
    "conv": dict(
        title="Convolution", about="Forward and backward convolution times.",
        full=[], quick=["--reps", "3"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "none"]),
    "conv_layouts": dict(
        title="Convolution layouts", about="NCHW vs NHWC convolution.",
        full=[], quick=["--quick"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", ""]),
    "sbnet": dict(
        title="Block-sparse convolution", about="SBNet-style sparse convolution by density.",
        full=[], quick=["--quick"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", ""]),
    "examples": dict(
        title="Examples", about="Wall time of every example at its default size.",
        full=[], quick=["--only", "matrix_factorization,sparse_linear_classification"],
        with_mx=[], no_mx=[]),
    "examples_vs_mxnet": dict(
        title="Examples against MXNet", about="The examples' training loops in both engines.",
        full=[], quick=["--epochs", "1"], with_mx=["--mxnet-python", MX],
        no_mx=["--mxnet-python", "/nonexistent"]),
    "dist_kvstore": dict(
        title="Distributed KVStore", about="Push/pull times of the Ray-backed kvstore.",
        full=[], quick=["--reps", "5", "--no-e2e"], with_mx=[], no_mx=["--no-mxnet"]),
}


# ----------------------------------------------------------------------------- running
def scripts():
    """Benchmark names: every benchmarks/*.py but this one and the data generator."""
    names = [os.path.splitext(os.path.basename(p))[0]
             for p in glob.glob(os.path.join(HERE, "*.py"))]
    return sorted(n for n in names if n not in NOT_BENCHMARKS and not n.startswith("_"))


def command(name, quick, mx_python):
    """The argument list that runs benchmark ``name``."""
    spec = SPECS.get(name, {})
    args = list(spec.get("quick" if quick else "full", []))
    if mx_python and os.path.exists(mx_python):
        args += [mx_python if a == MX else a for a in spec.get("with_mx", [])]
    else:
        args += spec.get("no_mx", [])
    return [sys.executable, os.path.join("benchmarks", name + ".py")] + args


def _records(stdout):
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


def portable(cmd):
    """The command as the docs show it: the oracle's interpreter as ``$MXNET_PYTHON``, not
    the path of one machine."""
    return re.sub(r"(--mxnet(?:-python)? )(/\S+|~\S*)", r"\1$MXNET_PYTHON", cmd)


def run_one(name, quick, mx_python, timeout):
    """Run one benchmark; its ``run`` record and its records."""
    cmd = command(name, quick, mx_python)
    shown = " ".join(["python"] + cmd[1:])
    print(f"[run_all] {shown}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    watch = Watch()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                           env=dict(os.environ, PYTHONPATH=ROOT, SPARSYM_COMPILE_NOTICE="0"))
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", f"timed out after {timeout} s"
        out = out.decode() if isinstance(out, bytes) else out
    seen = watch.done()
    run = {"script": name, "run": {"command": shown, "returncode": rc,
                                   "seconds": round(time.perf_counter() - t0, 1),
                                   "load_avg": round(os.getloadavg()[0], 1),
                                   "other_cores": seen.get("other_cores")}}
    if rc != 0:
        tail = [ln for ln in (err or "").strip().splitlines() if ln.strip()]
        run["run"]["error"] = tail[-1][:300] if tail else f"exit code {rc}"
    return [run] + [{"script": name, "record": r} for r in _records(out)]


def _version(python, module):
    try:
        p = subprocess.run([python, "-c", f"import {module}; print({module}.__version__)"],
                           capture_output=True, text=True, timeout=120)
        return p.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def machine(mx_python):
    """CPU, cores, memory, versions and BLAS of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(ln for ln in f if ln.startswith("MemTotal")).split()[1])
            mem = f"{kb / 2**20:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    info = {"cpu": cpu, "cores": os.cpu_count(), "memory": mem,
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}
    for mod in ("numpy", "scipy", "numba"):
        info[mod] = _version(sys.executable, mod)
    try:
        import numpy  # noqa: F401  (loads the BLAS that threadpoolctl then describes)
        from threadpoolctl import threadpool_info
        blas = [f"{i['internal_api']} {i.get('version') or ''} ({i['num_threads']} threads)"
                for i in threadpool_info() if i["user_api"] == "blas"]
        info["blas"] = ", ".join(blas) or None
    except ImportError:
        info["blas"] = None
    info["mxnet"] = (_version(mx_python, "mxnet") if mx_python and os.path.exists(mx_python)
                     else None)
    return info


def read_results(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def write_results(path, machine_rec, entries):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps({"machine": machine_rec}) + "\n")
        for e in entries:
            f.write(json.dumps(e) + "\n")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- rendering
def _fmt(v):
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v).lower()
    if isinstance(v, float):
        if v != v:
            return "nan"
        a = abs(v)
        return f"{v:.3g}" if a < 100 else f"{v:.0f}" if a < 1e6 else f"{v:.3g}"
    if isinstance(v, (list, dict)):
        s = json.dumps(v, separators=(",", ":"))
        return s if len(s) <= 60 else s[:57] + "..."
    return str(v).replace("|", "\\|").replace("\n", " ")


def table(recs, columns=None):
    """A markdown table of ``recs`` (columns: the union of their keys, in order seen)."""
    if columns is None:
        columns = []
        for r in recs:
            columns += [k for k in r if k not in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in recs]
    return "\n".join(lines)


def _group_key(rec):
    for k in ("bench", "example", "case", "test"):
        if isinstance(rec.get(k), str):
            return rec[k]
    return ""


def render_generic(recs):
    """One table per kind of record (its ``bench`` value, else one table)."""
    groups = {}
    for r in recs:
        groups.setdefault(_group_key(r), []).append(r)
    out = []
    for key, rs in groups.items():
        rows = [{k: v for k, v in r.items() if k != "bench"} for r in rs]
        if len(groups) > 1 and key:
            out.append(f"`{key}`:\n")
        out.append(table(rows) + "\n")
    return "\n".join(out)


def render_ops(recs):
    """ops_vs_mxnet: its summary line (geometric means) and its ten slowest operators."""
    summ = next((r["summary"] for r in reversed(recs) if isinstance(r.get("summary"), dict)),
                None)
    if summ is None:
        return "No summary line (the run did not finish).\n"
    out = [table([{k: summ.get(k) for k in ("geomean", "geomean_fwd", "geomean_fwd_bwd",
                                            "ops", "timed", "skipped")}]), ""]
    below = summ.get("below_0.33") or []
    out.append(f"Operators below 0.33x: {len(below)}" +
               (f" ({', '.join(below)})." if below else ".") + "\n")
    if summ.get("slowest"):
        out.append("The ten slowest against MXNet:\n")
        out.append(table(summ["slowest"]) + "\n")
    return "\n".join(out)


RENDERERS = {"ops": render_ops}


def _section_under_load(run, recs, mach):
    """Whether other work shared the machine while a section ran (benchmarks/_quiet.py)."""
    if run.get("other_cores") is not None or any("under_load" in r for r in recs):
        return ((run.get("other_cores") or 0.0) > QUIET_OTHER_CORES
                or any(r.get("under_load") is True for r in recs))
    # a run record without the other-core share: more runnable processes than cores
    load = run.get("load_avg")
    return load is not None and load > (mach.get("cores") or os.cpu_count() or 1)


def render(results, quick_note=False):
    """The markdown page for a results list (as read by :func:`read_results`)."""
    mach = next((e["machine"] for e in results if "machine" in e), {})
    runs, recs = {}, {}
    for e in results:
        if "run" in e:
            runs[e["script"]] = e["run"]
        elif "record" in e:
            recs.setdefault(e["script"], []).append(e["record"])
    out = ["# Benchmarks", "",
           "Generated by `python benchmarks/run_all.py` from "
           "`docs/benchmarks_results.jsonl` (re-render with `--render-only`; re-run one "
           "section with `--only NAME`). Each section names the command that produced it "
           "(`$MXNET_PYTHON`: an interpreter with MXNet 1.9.1, `--mxnet-python`). "
           "Figures compared with MXNet 1.9.1 come from the same run on the same machine; "
           "on a shared machine absolute times move with the load, ratios much less. "
           "A figure is a quiet-machine figure when other processes used under "
           f"{QUIET_OTHER_CORES} cores on average while it ran (benchmarks/_quiet.py): the "
           "1-minute load average also counts the benchmark's own threads, so a run that "
           "keeps both cores busy on an idle machine reads close to 2.", "",
           "## Machine", ""]
    for k in ("cpu", "cores", "memory", "os", "python", "numpy", "scipy", "numba", "blas",
              "mxnet"):
        v = mach.get(k)
        if k == "mxnet" and v is None:
            v = "not installed (MXNet columns are empty)"
        out.append(f"- {k}: {v}")
    out.append("")
    order = [n for n in SPECS if n in runs] + sorted(n for n in runs if n not in SPECS)
    for name in order:
        spec, run = SPECS.get(name, {}), runs[name]
        out += [f"## {spec.get('title', name)}", ""]
        if spec.get("about"):
            out += [spec["about"], ""]
        out += ["```sh", portable(run["command"]), "```", ""]
        load, other = run.get("load_avg"), run.get("other_cores")
        out += [f"Ran {run['seconds']} s"
                + (f", load average {load} at the end" if load is not None else "")
                + (f", other processes used {other} cores on average" if other is not None
                   else "") + ".", ""]
        if _section_under_load(run, recs.get(name, []), mach):
            out += ["**Under load**: other work shared the machine during this run, so these "
                    "are not quiet figures; re-run the command on a quiet machine before "
                    "comparing.", ""]
        if run.get("returncode") != 0:
            out += [f"The run failed ({run.get('returncode')}): {run.get('error', '')}", ""]
        rs = recs.get(name, [])
        if rs:
            out.append(RENDERERS.get(spec.get("render"), render_generic)(rs))
        elif run.get("returncode") == 0:
            out += ["No records.", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="each script's small sizes")
    ap.add_argument("--only", default="", help="comma-separated script names (no .py)")
    ap.add_argument("--render-only", action="store_true",
                    help="render the page from the results file without running anything")
    ap.add_argument("--results", default=DEFAULT_RESULTS)
    ap.add_argument("--page", default=DEFAULT_PAGE)
    ap.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    ap.add_argument("--timeout", type=float, default=4 * 3600.0, help="seconds per script")
    ap.add_argument("--list", action="store_true", help="print the commands and exit")
    args = ap.parse_args(argv)
    names = scripts()
    if args.only:
        want = [n.strip().removesuffix(".py") for n in args.only.split(",") if n.strip()]
        unknown = [n for n in want if n not in names]
        if unknown:
            ap.error(f"--only: no benchmark named {', '.join(unknown)} (have: "
                     f"{', '.join(names)})")
        names = want
    if args.list:
        for n in names:
            print(" ".join(["python"] + command(n, args.quick, args.mxnet_python)[1:]))
        return
    if not args.render_only:
        old = read_results(args.results) if args.only and os.path.exists(args.results) else []
        kept = [e for e in old if "machine" not in e and e.get("script") not in names]
        mach = machine(args.mxnet_python)
        entries = list(kept)
        for n in names:
            entries += run_one(n, args.quick, args.mxnet_python, args.timeout)
            write_results(args.results, mach, entries)  # a partial file survives a crash
        write_results(args.results, mach, entries)
    if not os.path.exists(args.results):
        ap.error(f"no results file at {args.results}: run without --render-only first")
    page = render(read_results(args.results))
    with open(args.page, "w") as f:
        f.write(page)
    print(f"[run_all] wrote {args.page}", file=sys.stderr)


if __name__ == "__main__":
    main()
