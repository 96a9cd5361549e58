"""``import mxnet`` resolving to sparsym, for code you cannot edit (GluonCV, GluonNLP,
Keras-MXNet, MXNet's own scripts).

Three ways, from the most permanent::

    python -m sparsym.mxnet_alias install      # once per environment (venv or --user)
    python -m sparsym.mxnet_alias uninstall
    python -m sparsym.mxnet_alias status

    sparsym-run script.py [args]               # one run, nothing installed
    sparsym-run -m package.module [args]

    import sparsym.mxnet_alias                 # in your own code, before the library
    sparsym.mxnet_alias.activate()

``install`` writes two small files into site-packages: ``sparsym_mxnet_alias.pth`` and
the module it imports at interpreter start, ``sparsym_mxnet_alias.py``, which adds an import
finder and nothing else (sparsym itself is imported by the first ``import mxnet``).

Under the alias every submodule is sparsym's own module object (``mxnet.gluon.nn is
sparsym.gluon.nn``), so classes, isinstance checks, pickles and caches are shared. The top
module ``mxnet`` is a thin view of ``sparsym`` that differs in one thing: its
``__version__`` is ``'1.9.1'``, the MXNet API level sparsym implements, so version checks
in client code pass; ``mxnet.__sparsym_version__`` and ``sparsym.__version__`` give
sparsym's own version (``sparsym.__mxnet_version__`` gives the API level).

A real MXNet is never shadowed: ``install`` and ``sparsym-run`` refuse when one is
importable, and an installed alias steps aside (with a warning) if MXNet is installed later.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
import sysconfig
import types
import warnings

MXNET_API_VERSION = "1.9.1"
PTH_NAME = "sparsym_mxnet_alias.pth"
HOOK_NAME = "sparsym_mxnet_alias.py"

# the module written next to the .pth: it only registers a finder; sparsym loads when
# (and if) `import mxnet` runs
_HOOK_SOURCE = '''"""``import mxnet`` resolves to sparsym (written by
``python -m sparsym.mxnet_alias install``; ``... uninstall`` removes it)."""
import sys


class SparsymMXNetAlias:
    """Hands ``mxnet`` and ``mxnet.*`` imports to sparsym.mxnet_alias."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        """The sparsym module for an ``mxnet`` name, or None (other names, no sparsym)."""
        if name != "mxnet" and not name.startswith("mxnet."):
            return None
        try:
            from sparsym import mxnet_alias
        except ImportError:   # sparsym is gone: leave `import mxnet` alone
            return None
        return mxnet_alias.find_spec(name, path, target)


if not any(getattr(f, "__name__", "") == "SparsymMXNetAlias" for f in sys.meta_path):
    sys.meta_path.insert(0, SparsymMXNetAlias)
'''


class MXNetAliasError(RuntimeError):
    """The alias cannot be set up (a real MXNet is installed, or the target is unusable)."""


def real_mxnet_location():
    """Where a real MXNet would be imported from (a path), or None.

    Only the ordinary path finders are asked, so the alias itself is not counted.
    """
    spec = importlib.machinery.PathFinder.find_spec("mxnet", sys.path)
    if spec is None or spec.origin in (None, "namespace"):
        return None   # a plain folder named mxnet (data, fixtures) is not a package
    return spec.origin


class _MXNetModule(types.ModuleType):
    """The top module ``mxnet``: every attribute is read from and written to ``sparsym``
    except the version attributes."""

    def __getattr__(self, name):
        import sparsym
        return getattr(sparsym, name)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if not (name.startswith("__") and name.endswith("__")):
            import sparsym
            setattr(sparsym, name, value)

    def __dir__(self):
        import sparsym
        return sorted(set(dir(sparsym)) | set(self.__dict__))


def _top_module():
    """The ``mxnet`` view of sparsym (built once)."""
    mod = sys.modules.get("mxnet")
    if isinstance(mod, _MXNetModule):
        return mod
    import sparsym
    mod = _MXNetModule("mxnet", sparsym.__doc__)
    object.__setattr__(mod, "__version__", MXNET_API_VERSION)
    object.__setattr__(mod, "__sparsym_version__", sparsym.__version__)
    object.__setattr__(mod, "__path__", [])
    return mod


class _TopLoader(importlib.abc.Loader):
    """Creates the ``mxnet`` view module."""

    def create_module(self, spec):
        return _top_module()

    def exec_module(self, module):
        return None


class _SubLoader(importlib.abc.Loader):
    """Returns sparsym's own module for ``mxnet.<sub>`` (not a copy)."""

    def __init__(self, target):
        self.target = target
        self._spec = None

    def create_module(self, spec):
        mod = importlib.import_module(self.target)
        self._spec = mod.__spec__
        return mod

    def exec_module(self, module):
        # the import system stamped the `mxnet.*` spec on the module: give sparsym's back,
        # so relative imports and reloads inside it keep resolving to sparsym
        if self._spec is not None:
            module.__spec__ = self._spec


def find_spec(name, path=None, target=None):
    """The import spec that maps ``mxnet`` / ``mxnet.<sub>`` to sparsym, or None.

    None too when a real MXNet is importable: it is never shadowed.
    """
    if name != "mxnet" and not name.startswith("mxnet."):
        return None
    where = real_mxnet_location()
    if where is not None:
        warnings.warn(f"a real MXNet is installed ({where}): `import mxnet` imports it, not "
                      "sparsym; `python -m sparsym.mxnet_alias uninstall` removes the alias",
                      stacklevel=2)
        return None
    if name == "mxnet":
        return importlib.machinery.ModuleSpec("mxnet", _TopLoader(), is_package=True)
    sub = "sparsym" + name[len("mxnet"):]
    if sub in sys.modules:
        found = True
    else:
        try:
            found = importlib.util.find_spec(sub) is not None
        except ModuleNotFoundError:
            found = False
    if not found:
        return None
    return importlib.machinery.ModuleSpec(name, _SubLoader(sub))


class _Finder:
    """The in-process finder :func:`activate` adds."""

    find_spec = staticmethod(find_spec)


def activate():
    """Make ``import mxnet`` in this process give sparsym (see the module docstring).

    Raises
    ------
    MXNetAliasError
        When a real MXNet is importable, or ``mxnet`` is already imported from elsewhere.
    """
    where = real_mxnet_location()
    if where is not None:
        raise MXNetAliasError(
            f"a real MXNet is installed ({where}); sparsym will not shadow it. Run "
            "sparsym code with `import sparsym as mx`, or use an environment without MXNet")
    loaded = sys.modules.get("mxnet")
    if loaded is not None and not isinstance(loaded, _MXNetModule):
        raise MXNetAliasError(f"`mxnet` is already imported from {loaded!r}; activate the "
                              "alias before anything imports mxnet")
    if _Finder not in sys.meta_path:
        sys.meta_path.insert(0, _Finder)


def site_dir(user=False, target=None):
    """The directory ``install`` writes to: ``target``, the user site, or this
    interpreter's site-packages."""
    if target:
        return os.path.abspath(target)
    if user:
        import site
        return site.getusersitepackages()
    return sysconfig.get_paths()["purelib"]


def install(user=False, target=None):
    """Write the alias files into a site directory; returns the .pth path.

    Raises
    ------
    MXNetAliasError
        When a real MXNet is importable (it would be shadowed) or the directory holds an
        ``mxnet`` package.
    """
    where = real_mxnet_location()
    d = site_dir(user, target)
    if where is None and os.path.exists(os.path.join(d, "mxnet")):
        where = os.path.join(d, "mxnet")
    if where is not None:
        raise MXNetAliasError(
            f"a real MXNet is installed ({where}); the alias would shadow it, so nothing was "
            "written. Uninstall it first (pip uninstall mxnet) or use another environment")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, HOOK_NAME), "w") as f:
        f.write(_HOOK_SOURCE)
    pth = os.path.join(d, PTH_NAME)
    with open(pth, "w") as f:
        f.write("import sparsym_mxnet_alias\n")
    return pth


def uninstall(user=False, target=None):
    """Remove the alias files; returns the paths removed."""
    d = site_dir(user, target)
    removed = []
    for name in (PTH_NAME, HOOK_NAME):
        p = os.path.join(d, name)
        if os.path.exists(p):
            os.remove(p)
            removed.append(p)
    return removed


def status(user=False, target=None):
    """A one-line description of the alias in a site directory."""
    d = site_dir(user, target)
    on = os.path.exists(os.path.join(d, PTH_NAME))
    where = real_mxnet_location()
    if where is not None:
        return f"real MXNet at {where}" + (" (alias installed but inactive)" if on else "")
    return (f"alias installed in {d}: `import mxnet` gives sparsym" if on
            else f"alias not installed in {d}")


def run(argv):
    """``sparsym-run``: run a script (or ``-m module``) with the alias active."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: sparsym-run script.py [args...] | sparsym-run -m module [args...]\n"
              "Runs the program with `import mxnet` resolving to sparsym.")
        return 0 if argv else 2
    try:
        activate()
    except MXNetAliasError as e:
        print(f"sparsym-run: {e}", file=sys.stderr)
        return 1
    if argv[0] == "-m":
        if len(argv) < 2:
            print("sparsym-run: -m needs a module name", file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


def run_main():
    """Console entry point of ``sparsym-run``."""
    sys.exit(run(sys.argv[1:]))


def main(argv=None):
    """``python -m sparsym.mxnet_alias {install,uninstall,status,run}``."""
    p = argparse.ArgumentParser(prog="python -m sparsym.mxnet_alias",
                                description="Make `import mxnet` give sparsym.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("install", "uninstall", "status"):
        q = sub.add_parser(name)
        q.add_argument("--user", action="store_true", help="the user site directory")
        q.add_argument("--target", help="this site directory (default: site-packages)")
    q = sub.add_parser("run", help="run a script with the alias active")
    q.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.cmd == "run":
        return run(a.args)
    try:
        if a.cmd == "install":
            print(f"installed: {install(a.user, a.target)}; `import mxnet` now gives sparsym "
                  f"(mxnet.__version__ = {MXNET_API_VERSION!r})")
        elif a.cmd == "uninstall":
            gone = uninstall(a.user, a.target)
            print("removed: " + ", ".join(gone) if gone else "the alias was not installed")
        else:
            print(status(a.user, a.target))
    except MXNetAliasError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
