#!/usr/bin/env python3
"""Binding audit: is every symbol a program imports from libstdc++ bound to libstdc++?

PyTorch's pip wheels export their own copies of some libstdc++ functions from libtorch.so and
libc10.so (e.g. std::filesystem::remove_all). A program that imports such a symbol and finds the
wheel's copy first calls code built against another libstdc++'s layouts: ddpbench's ranks
crashed on exit that way on a GPU machine. This runs the program once with the dynamic linker
resolving every symbol at load (LD_BIND_NOW=1) and reporting each library it loads and each
binding (LD_DEBUG=bindings,libs),
then checks each symbol the program itself imports: when libstdc++ defines it and it was bound
to a library matching --libs instead, that is a clash. Prints a summary line and one line per
clash; exit 0 when there is none, 1 when there is one, 2 when the audit could not run.

  scripts/binding-audit.py BINARY [--libs REGEX] [-- ARGS]     # ARGS default: --version

--libs (default 'libtorch|libc10'): the libraries whose copies are looked for. The program's run
needs only to start: with LD_BIND_NOW the bindings are made before main.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: (?:normal|protected|weak) symbol `([^']+)'")


def defined_symbols(lib):
    """The dynamic symbols `lib` defines (nm -D --defined-only), without their version."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nm -D {lib} failed: {out.stderr.strip()}")
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--libs", default="libtorch|libc10")
    p.add_argument("args", nargs="*")
    a = p.parse_args()
    binary = os.path.realpath(a.binary)
    if not os.access(binary, os.X_OK):
        print(f"binding audit: {a.binary} is not an executable; give the built program (build/ddpbench)")
        return 2
    with tempfile.TemporaryDirectory(prefix="ddpbench-bindings-") as tmp:
        env = dict(os.environ, LD_BIND_NOW="1", LD_DEBUG="bindings,libs", LD_DEBUG_OUTPUT=os.path.join(tmp, "ld"))
        subprocess.run([binary] + (a.args or ["--version"]), env=env, capture_output=True, timeout=120)
        text = "".join(open(os.path.join(tmp, f), errors="replace").read() for f in os.listdir(tmp))
    own = []  # (symbol, target) for the bindings the program itself asked for
    for m in BINDING.finditer(text):
        if os.path.realpath(m.group(1)) == binary:
            own.append((m.group(3), m.group(2)))
    if not own:
        print(f"binding audit: the dynamic linker reported no binding of {a.binary} (LD_DEBUG unsupported?)")
        return 2
    libstdcxx = sorted({t for _, t in own if "libstdc++" in os.path.basename(t)})
    if not libstdcxx:
        print(f"binding audit: {a.binary} binds nothing to libstdc++ (is it C++ and dynamically linked?)")
        return 2
    std_syms = set().union(*(defined_symbols(l) for l in libstdcxx))
    wanted = re.compile(a.libs)
    loaded = set(re.findall(r"calling init: (\S+)", text)) | {t for _, t in own}
    copies = sorted({l for l in loaded if wanted.search(os.path.basename(l))})
    copy_syms = set().union(*(defined_symbols(l) for l in copies)) if copies else set()
    both = {s for s, _ in own if s in std_syms and s in copy_syms}
    clashes = sorted({(s, t) for s, t in own if s in std_syms and wanted.search(os.path.basename(t))})
    print(f"binding audit of {a.binary}: {len(own)} bindings, {len({s for s, _ in own if s in std_syms})} symbols "
          f"from libstdc++ ({', '.join(libstdcxx)}); {len(both | {s for s, _ in clashes})} of them also defined by "
          f"{len(copies)} librar{'y' if len(copies) == 1 else 'ies'} matching '{a.libs}'; "
          + (f"{len(clashes)} bound there instead of libstdc++:" if clashes else "every one bound to libstdc++"))
    for s, t in clashes:
        name = subprocess.run(["c++filt", s], capture_output=True, text=True).stdout.strip() or s
        print(f"  CLASH {name} ({s}) bound to {t}")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
