"""``import mxnet`` resolving to sparsym: ``python -m sparsym.mxnet_alias install`` into a
fresh virtual environment, ``sparsym-run``, and the refusal to shadow a real MXNet."""
import os
import subprocess
import sys
import sysconfig
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_CHECK = textwrap.dedent("""
    import sys
    assert "sparsym" not in sys.modules          # nothing loaded before `import mxnet`
    import mxnet as mx
    import mxnet.gluon.nn
    from mxnet.gluon.data.vision import transforms
    from mxnet.contrib.amp import amp
    import sparsym
    assert mx.__version__ == "1.9.1", mx.__version__
    assert mx.__sparsym_version__ == sparsym.__version__ != "1.9.1"
    assert sparsym.__mxnet_version__ == "1.9.1"
    assert mxnet.gluon.nn is sparsym.gluon.nn and mx.nd is sparsym.nd
    assert transforms is sparsym.gluon.data.vision.transforms
    assert sys.modules["mxnet.gluon"] is sparsym.gluon
    assert sparsym.gluon.__spec__.name == "sparsym.gluon"
    assert amp is sparsym.contrib.amp.amp and amp._amp_initialized is False
    assert isinstance(mx.nd.ones((2,)), sparsym.nd.NDArray)
    mx.my_flag = 3                               # writes reach sparsym
    assert sparsym.my_flag == 3
    try:
        import mxnet.no_such_module
    except ModuleNotFoundError as e:
        assert "mxnet.no_such_module" in str(e)
    print("alias ok", mx.nd.array([1, 2]).sum().asscalar())
""")


def _venv(tmp_path):
    """A virtual environment that sees the project and its dependencies (no pip)."""
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    py = env_dir / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    site = site.stdout.strip()
    with open(os.path.join(site, "deps.pth"), "w") as f:
        f.write(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
    return str(py), site


def _run(py, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([py, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")
def test_install_status_uninstall_in_a_fresh_venv(tmp_path):
    py, site = _venv(tmp_path)
    work = str(tmp_path)
    assert _run(py, "-c", "import mxnet", cwd=work).returncode != 0
    out = _run(py, "-m", "sparsym.mxnet_alias", "install", cwd=work)
    assert out.returncode == 0 and "installed" in out.stdout, out.stderr
    assert os.path.exists(os.path.join(site, "sparsym_mxnet_alias.pth"))
    assert "gives sparsym" in _run(py, "-m", "sparsym.mxnet_alias", "status", cwd=work).stdout
    out = _run(py, "-c", _CHECK, cwd=work)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "alias ok 3.0" in out.stdout
    # an interpreter that never imports mxnet does not load sparsym either
    out = _run(py, "-c", "import sys; print('sparsym' in sys.modules)", cwd=work)
    assert out.stdout.strip() == "False"
    out = _run(py, "-m", "sparsym.mxnet_alias", "uninstall", cwd=work)
    assert out.returncode == 0 and "removed" in out.stdout
    assert _run(py, "-c", "import mxnet", cwd=work).returncode != 0


def test_a_real_mxnet_is_never_shadowed(tmp_path):
    py, site = _venv(tmp_path)
    work = str(tmp_path)
    assert _run(py, "-m", "sparsym.mxnet_alias", "install", cwd=work).returncode == 0
    # the user installs MXNet afterwards: the alias steps aside and says so
    real = os.path.join(site, "mxnet")
    os.makedirs(real)
    with open(os.path.join(real, "__init__.py"), "w") as f:
        f.write("__version__ = 'real'\n")
    out = _run(py, "-c", "import mxnet; print(mxnet.__version__)", cwd=work)
    assert out.stdout.strip() == "real" and "a real MXNet is installed" in out.stderr
    assert "real MXNet at" in _run(py, "-m", "sparsym.mxnet_alias", "status", cwd=work).stdout
    # install and sparsym-run refuse
    _run(py, "-m", "sparsym.mxnet_alias", "uninstall", cwd=work)
    out = _run(py, "-m", "sparsym.mxnet_alias", "install", cwd=work)
    assert out.returncode == 1 and "would shadow it" in out.stderr
    assert not os.path.exists(os.path.join(site, "sparsym_mxnet_alias.pth"))
    script = tmp_path / "s.py"
    script.write_text("import mxnet\n")
    out = _run(py, "-m", "sparsym.mxnet_alias", "run", str(script), cwd=work)
    assert out.returncode == 1 and "will not shadow it" in out.stderr


def test_sparsym_run_launcher(tmp_path):
    py, _ = _venv(tmp_path)
    script = tmp_path / "prog.py"
    body = _CHECK.replace('assert "sparsym" not in sys.modules', "pass  # the launcher loaded it")
    script.write_text(body + "import sys\nprint('argv', sys.argv[1:])\n")
    out = _run(py, "-m", "sparsym.mxnet_alias", "run", str(script), "a", "--b",
               cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "alias ok 3.0" in out.stdout and "argv ['a', '--b']" in out.stdout
    assert _run(py, "-c", "import mxnet", cwd=str(tmp_path)).returncode != 0   # nothing left


def test_activate_in_process_refuses_after_a_foreign_mxnet(monkeypatch):
    import types

    from sparsym import mxnet_alias
    monkeypatch.setitem(sys.modules, "mxnet", types.ModuleType("mxnet"))
    with pytest.raises(mxnet_alias.MXNetAliasError, match="already imported"):
        mxnet_alias.activate()
