"""Generate ``sparsym/kernels/onednn/_enums.py`` from oneDNN's C headers.

The binding never types an enum value, a ``DNNL_*`` constant or a C signature by hand: a
wrong one is a silently wrong result (a float passed as a double, a format tag off by one).
This script reads ``dnnl_common_types.h``, ``dnnl_types.h``, ``dnnl_config.h``,
``dnnl_version.h``, ``dnnl_common.h``, ``dnnl.h`` and ``dnnl_debug.h`` (under
``oneapi/dnnl/``) from the ``onednn-devel-cpu-*`` wheel that matches the runtime wheel,
keeps what the C preprocessor keeps (the wheel's ``dnnl_config.h`` decides the optional
parts), and writes every enum constant, every integer ``#define DNNL_*``, every plain
``typedef struct`` layout and every ``DNNL_API`` function signature, with the version they
came from.

Usage::

    pip download --no-deps onednn-devel-cpu-gomp==2023.2.0 -d /tmp/d
    unzip -q /tmp/d/onednn_devel*.whl -d /tmp/d/x
    python tools/gen_onednn_enums.py /tmp/d/x/onednn_devel_cpu_gomp-2023.2.0.data/data/include \\
        --wheel onednn-devel-cpu-gomp==2023.2.0 [--check]

``--check`` compiles a C program with the same headers (needs a C compiler) that prints
every enum and define value, and fails unless each equals the parsed one.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

HEADERS = ("dnnl_config.h", "dnnl_version.h", "dnnl_common_types.h", "dnnl_types.h",
           "dnnl_common.h", "dnnl.h", "dnnl_debug.h")
OUT = os.path.join(os.path.dirname(__file__), os.pardir, "sparsym", "kernels", "onednn",
                   "_enums.py")

# C scalar types -> ctypes code used by the binding (p: pointer, i: int, I: unsigned,
# q: int64, Q: uint64, z: size_t, f: float, d: double, b: uint8, c: int8, v: void)
SCALARS = {"int": "i", "unsigned": "I", "unsigned int": "I", "int64_t": "q", "uint64_t": "Q",
           "size_t": "z", "float": "f", "double": "d", "uint8_t": "b", "int8_t": "c",
           "int32_t": "i", "uint32_t": "I", "void": "v", "char": "b"}


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _preprocess(text, macros):
    """Keep the lines a C preprocessor would keep; ``macros`` (name -> text) grows."""
    text = re.sub(r"\\\n", " ", text)
    out, stack = [], [True]  # stack: is each open branch active (and all outer ones)
    taken = []  # whether some branch of each open #if chain was taken

    def cond(expr):
        e = re.sub(r"defined\s*\(?\s*(\w+)\s*\)?",
                   lambda m: " 1 " if m.group(1) in macros else " 0 ", expr)
        e = e.replace("&&", " and ").replace("||", " or ")
        e = re.sub(r"!(?!=)", " not ", e)
        for _ in range(8):  # expand object-like macros, unknown identifiers are 0
            e = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: m.group(0) if m.group(0) in (
                "and", "or", "not") else f"({macros.get(m.group(0)) or 0})", e)
            e = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", e)
        return bool(eval(e, {"__builtins__": {}}))  # noqa: S307 - digits and operators

    for line in text.split("\n"):
        m = re.match(r"\s*#\s*(\w+)\s*(.*)", line)
        d, rest = (m.group(1), m.group(2).strip()) if m else (None, "")
        if d in ("if", "ifdef", "ifndef"):
            if not stack[-1]:
                stack.append(False)
                taken.append(True)
                continue
            ok = (rest.split()[0] in macros if d == "ifdef" else
                  rest.split()[0] not in macros if d == "ifndef" else cond(rest))
            stack.append(ok)
            taken.append(ok)
        elif d == "elif":
            ok = not taken[-1] and stack[-2] and cond(rest)
            stack[-1] = ok
            taken[-1] = taken[-1] or ok
        elif d == "else":
            stack[-1] = stack[-2] and not taken[-1]
            taken[-1] = True
        elif d == "endif":
            stack.pop()
            taken.pop()
        elif stack[-1]:
            if d == "define":
                dm = re.match(r"(\w+)(\([^)]*\))?\s*(.*)", rest)
                if not dm.group(2):
                    macros[dm.group(1)] = dm.group(3).strip()
            elif d == "undef":
                macros.pop(rest.split()[0], None)
            out.append(line)
    return "\n".join(out)


def _cexpr(expr, names):
    """Value of a C integer constant expression over already known names."""
    e = expr.strip()
    e = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", e)
    e = re.sub(r"\((?:unsigned|int|size_t|int64_t)\)", "", e)
    if not re.fullmatch(r"[\w\s()<>|&+\-*~^]+", e):
        raise ValueError(expr)
    for tok in set(re.findall(r"\b[A-Za-z_]\w*\b", e)):
        if tok not in names:
            raise KeyError(tok)
    return int(eval(e, {"__builtins__": {}}, dict(names)))  # noqa: S307 - checked tokens


def parse(include):
    """(enums, defines, structs, typedefs, functions, version) from the header folder."""
    base = os.path.join(include, "oneapi", "dnnl")
    macros = {"__GNUC__": "4"}  # the headers' GCC/Linux branches (the wheel is Linux's)
    texts = {h: _preprocess(_strip_comments(open(os.path.join(base, h)).read()), macros)
             for h in HEADERS}
    names, enums, defines, structs, typedefs, funcs = {}, {}, {}, {}, {}, {}
    for h in HEADERS:
        t = texts[h]
        # object-like integer defines first (enum bodies may use them), in file order
        for m in re.finditer(r"^\s*#\s*define\s+(DNNL_\w+)[ \t]+([^\n]+)$", t, flags=re.M):
            name, val = m.group(1), m.group(2).strip()
            if "(" in name or not val:
                continue
            try:
                names[name] = defines[name] = _cexpr(val, names)
            except (KeyError, ValueError, SyntaxError, TypeError):
                continue
        for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", t, flags=re.S):
            body, tname = m.group(1), m.group(2)
            vals, nxt = {}, 0
            for item in body.split(","):
                item = item.strip()
                if not item:
                    continue
                if "=" in item:
                    k, v = (s.strip() for s in item.split("=", 1))
                    nxt = _cexpr(v, names)
                else:
                    k = item
                vals[k] = names[k] = nxt
                nxt += 1
            enums[tname] = vals
            typedefs[tname] = "i"
        for m in re.finditer(r"typedef\s+(?:const\s+)?struct\s+\w+\s*\*\s*(\w+)\s*;", t):
            typedefs[m.group(1)] = "p"
        for m in re.finditer(r"typedef\s+([\w ]+?)\s+(\w+)\s*(\[[^\]]*\])?\s*;", t):
            src, name, arr = m.group(1).strip(), m.group(2), m.group(3)
            if src.startswith(("enum", "struct")):
                continue
            src = src.replace("const ", "")
            kind = SCALARS.get(src) or typedefs.get(src)
            if kind is None:
                continue
            typedefs[name] = "p" if arr else kind
        for m in re.finditer(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", t, flags=re.S):
            fields = []
            for decl in m.group(1).split(";"):
                decl = decl.strip()
                if not decl:
                    continue
                fm = re.fullmatch(r"(.+?)\s*(\*?)\s*(\w+)", decl, flags=re.S)
                ctype, star, fname = fm.group(1).replace("const ", "").strip(), fm.group(2), \
                    fm.group(3)
                kind = "p" if star else (SCALARS.get(ctype) or typedefs.get(ctype))
                if kind is None:
                    raise ValueError(f"struct {m.group(2)}: unknown field type {decl!r}")
                fields.append((fname, kind))
            structs[m.group(2)] = fields
            typedefs[m.group(2)] = "s"
        for m in re.finditer(r"([\w \t\*]+?)\s+DNNL_API\s+(\*?)\s*(\w+)\s*\(([^)]*)\)\s*;", t):
            ret, rstar, fname, params = m.group(1).strip(), m.group(2), m.group(3), m.group(4)
            rkind = "p" if rstar or ret.endswith("*") else _kind(ret, typedefs)
            args = []
            for p in params.split(","):
                p = " ".join(p.split())
                if not p or p == "void":
                    continue
                pm = re.fullmatch(r"(.+?)\s*(\**)\s*(\w+)", p)
                ptype, stars = pm.group(1), pm.group(2)
                args.append("p" if stars else _kind(ptype, typedefs))
            funcs[fname] = (rkind, tuple(args))
    ver = (defines["DNNL_VERSION_MAJOR"], defines["DNNL_VERSION_MINOR"],
           defines["DNNL_VERSION_PATCH"])
    vh = re.search(r'DNNL_VERSION_HASH\s+"(\w+)"', texts["dnnl_version.h"])
    return enums, defines, structs, typedefs, funcs, ver, vh.group(1) if vh else ""


def _kind(ctype, typedefs):
    t = ctype.replace("const ", "").strip()
    k = SCALARS.get(t) or typedefs.get(t)
    if k is None:
        raise ValueError(f"unknown C type {ctype!r}")
    return k


def _pack(items, indent="    ", width=96):
    lines, cur = [], indent
    for it in items:
        if len(cur) + len(it) + 1 > width and cur.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += it + " "
    if cur.strip():
        lines.append(cur.rstrip())
    return "\n".join(lines)


def render(enums, defines, structs, funcs, ver, vhash, wheel):
    """The text of _enums.py."""
    out = ['"""oneDNN\'s C constants, struct layouts and signatures, GENERATED: do not edit.',
           "",
           f"Written by tools/gen_onednn_enums.py from the headers of {wheel} (oneDNN",
           f"{ver[0]}.{ver[1]}.{ver[2]}, {vhash[:12]}). Signature codes: p pointer, i int,",
           "I unsigned, q int64, Q uint64, z size_t, f float, d double, b uint8, c int8,\nv void.",
           '"""',
           "# ruff: noqa: E501", "",
           f"VERSION = {ver!r}", f"HASH = {vhash!r}", f"SOURCE = {wheel!r}", "",
           "ENUMS = {"]
    for tname, vals in enums.items():
        out.append(f"  {tname!r}: {{")
        out.append(_pack([f"{k!r}: {v}," for k, v in vals.items()]))
        out.append("  },")
    out.append("}")
    out.append("")
    out.append("DEFINES = {")
    out.append(_pack([f"{k!r}: {v}," for k, v in defines.items()]))
    out.append("}")
    out.append("")
    out.append("STRUCTS = {")
    for s, fields in structs.items():
        out.append(f"    {s!r}: {tuple(fields)!r},")
    out.append("}")
    out.append("")
    out.append("FUNCTIONS = {")
    out.append(_pack([f"{k!r}: ({r!r}, {''.join(a)!r})," for k, (r, a) in funcs.items()]))
    out.append("}")
    return "\n".join(out) + "\n"


def check(include, enums, defines):
    """Compile a C program that prints every value; raise unless all match."""
    names = [k for vals in enums.values() for k in vals]
    names += [k for k in defines if not k.startswith("DNNL_VERSION_HASH")]
    src = ["#include <stdio.h>", "#include <oneapi/dnnl/dnnl.h>",
           "#include <oneapi/dnnl/dnnl_version.h>", "int main(void) {"]
    src += [f'printf("%s %lld\\n", "{n}", (long long)({n}));' for n in names]
    src.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "c.c"), os.path.join(d, "c")
        open(c, "w").write("\n".join(src))
        subprocess.run(["cc", "-I", include, c, "-o", exe], check=True)
        got = dict(line.split() for line in subprocess.run(
            [exe], check=True, capture_output=True, text=True).stdout.splitlines())
    flat = {k: v for vals in enums.values() for k, v in vals.items()}
    flat.update(defines)
    bad = [(n, flat[n], got[n]) for n in names if int(got[n]) != flat[n]]
    if bad:
        raise SystemExit(f"parsed values differ from the compiler's: {bad[:10]}")
    return len(names)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("include", help="the devel wheel's include/ folder")
    ap.add_argument("--wheel", required=True, help="name==version of the devel wheel")
    ap.add_argument("--check", action="store_true", help="verify values with a C compiler")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args(argv)
    enums, defines, structs, _typedefs, funcs, ver, vhash = parse(a.include)
    if a.check:
        n = check(a.include, enums, defines)
        print(f"checked {n} values against the C compiler", file=sys.stderr)
    with open(a.out, "w") as f:
        f.write(render(enums, defines, structs, funcs, ver, vhash, a.wheel))
    print(f"wrote {a.out}: {sum(map(len, enums.values()))} enum values, {len(defines)} "
          f"defines, {len(structs)} structs, {len(funcs)} functions", file=sys.stderr)


if __name__ == "__main__":
    main()
