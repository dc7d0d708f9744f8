#!/usr/bin/env python3
"""Checks an install of ddpbench the way a cluster admin uses one (run by ctest).

  check_install.py module  --build BUILD --source SRC   # cmake --install, moved, loaded with Lmod
  check_install.py manpages --build BUILD               # one man page per command, --help's options

`module`: installs the build tree with `cmake --install` to a temporary prefix, moves that prefix
elsewhere (an install must be relocatable), then in a bash with Debian's Lmod: `module use
PREFIX/modulefiles; module load ddpbench`, and checks that ddpbench on the PATH is the moved one,
that MANPATH, DDPBENCH_PLANS and DDPBENCH_SLURM point into it, that the plans, Slurm templates,
baselines and docs are the source's bytes, and that from a folder without a checkout `ddpbench
validate quick --dry-run` and `validate plans/quick.yaml --dry-run` take the installed plan.

`manpages`: for every command `ddpbench --help` lists, build/share/man/man1/ddpbench-CMD.1 exists
and the long options it documents (read from the roff source) are exactly those `ddpbench CMD
--help` prints; the same for ddpbench.1 and `ddpbench --help`.

Exit 0 pass, 1 fail, 77 skip (Lmod or help2man missing: the reason is printed).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

LMOD_INIT = "/usr/share/lmod/lmod/init/bash"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def subcommands(binary):
    out = sh([binary, "--help"]).stdout
    cmds, on = [], False
    for line in out.splitlines():
        if line.lower().startswith("subcommands:"):
            on = True
            continue
        if on and line and not line.startswith(" "):
            on = False
        if on and line.strip():
            cmds.append(line.split()[0])
    return cmds


def help_long_options(text):
    """Long options in a --help text: each option line starts with blanks then '-'."""
    opts = set()
    for line in text.splitlines():
        if not re.match(r"^\s+-", line):
            continue
        head = line.strip().split("  ")[0]  # the option column, before the description
        opts.update(re.findall(r"--[A-Za-z0-9][A-Za-z0-9-]*", head))
    return opts


def man_long_options(roff):
    """Long options help2man wrote: the tagged paragraphs (.TP) whose tag line names options."""
    opts = set()
    lines = roff.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".TP") and i + 1 < len(lines):
            tag = lines[i + 1].replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
            if tag.lstrip().startswith("-"):
                opts.update(re.findall(r"--[A-Za-z0-9][A-Za-z0-9-]*", tag.split("  ")[0]))
    return opts


def manpages(args):
    binary = os.path.join(args.build, "ddpbench")
    mandir = os.path.join(args.build, "share", "man", "man1")
    if not shutil.which("help2man"):
        print("SKIP: help2man is not installed (apt-get install help2man): the build made no man pages")
        return 77
    cmds = subcommands(binary)
    check(len(cmds) >= 10, f"ddpbench --help lists the commands ({', '.join(cmds)})")
    pages = sorted(p for p in os.listdir(mandir) if p.endswith(".1")) if os.path.isdir(mandir) else []
    want = sorted(["ddpbench.1"] + [f"ddpbench-{c}.1" for c in cmds])
    check(pages == want, f"{mandir} holds one page per command: {pages}")
    for c in [None] + cmds:
        page = os.path.join(mandir, "ddpbench.1" if c is None else f"ddpbench-{c}.1")
        if not os.path.exists(page):
            continue
        help_text = sh([binary, "--help"] if c is None else [binary, c, "--help"]).stdout
        h, m = help_long_options(help_text), man_long_options(open(page, encoding="utf-8").read())
        name = "ddpbench" if c is None else f"ddpbench {c}"
        check(len(h) > 0 and h == m,
              f"{os.path.basename(page)}: its {len(m)} long options equal '{name} --help''s {len(h)}"
              + ("" if h == m else f" (only in --help: {sorted(h - m)}; only in the page: {sorted(m - h)})"))
    return 1 if failures else 0


def module(args):
    if not os.path.exists(LMOD_INIT):
        print(f"SKIP: Lmod is not installed ({LMOD_INIT} missing: apt-get install lmod)")
        return 77
    tmp = tempfile.mkdtemp(prefix="ddpbench-install-")
    try:
        first, moved, elsewhere = os.path.join(tmp, "first"), os.path.join(tmp, "moved", "prefix"), os.path.join(tmp, "cwd")
        r = sh(["cmake", "--install", args.build, "--prefix", first])
        check(r.returncode == 0, "cmake --install BUILD --prefix PREFIX exits 0" + ("" if r.returncode == 0 else ": " + r.stderr[-2000:]))
        if r.returncode:
            return 1
        os.makedirs(os.path.dirname(moved))
        shutil.move(first, moved)
        os.makedirs(elsewhere)
        version = sh([os.path.join(moved, "bin", "ddpbench"), "--version"]).stdout.split()[1]
        check(os.path.isfile(os.path.join(moved, "modulefiles", "ddpbench", version + ".lua")),
              f"modulefiles/ddpbench/{version}.lua installed")
        script = f"""
set -e
source {LMOD_INIT}
module use {moved}/modulefiles
module load ddpbench
echo "which=$(command -v ddpbench)"
echo "plans=$DDPBENCH_PLANS"
echo "slurm=$DDPBENCH_SLURM"
echo "root=$DDPBENCH_ROOT"
echo "manpath=$MANPATH"
echo "loaded=$(module -t list 2>&1 | tr '\\n' ' ')"
echo "manpage=$(command -v man >/dev/null && man -w ddpbench-run 2>/dev/null || echo no-man)"
cd {elsewhere}
ddpbench validate quick --dry-run > quick.out 2>&1; echo "quick_rc=$?"
ddpbench validate plans/quick.yaml --dry-run > plans.out 2>&1; echo "plans_rc=$?"
ddpbench validate no-such-plan --dry-run > missing.out 2>&1 || echo "missing_rc=$?"
module unload ddpbench
echo "after=$(command -v ddpbench || echo none)"
"""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DDPBENCH_", "LMOD", "MODULE"))}
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        r = sh(["bash", "-c", script], env=env)
        kv = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
        check(r.returncode == 0, "module use / module load ddpbench in bash with Lmod" + ("" if r.returncode == 0 else ": " + r.stderr[-2000:]))
        check(kv.get("which") == os.path.join(moved, "bin", "ddpbench"), f"ddpbench on the PATH is the moved install's ({kv.get('which')})")
        check(kv.get("root") == moved, f"DDPBENCH_ROOT is the moved prefix ({kv.get('root')})")
        check(kv.get("plans") == os.path.join(moved, "share", "ddpbench", "plans"), f"DDPBENCH_PLANS ({kv.get('plans')})")
        check(kv.get("slurm") == os.path.join(moved, "share", "ddpbench", "slurm"), f"DDPBENCH_SLURM ({kv.get('slurm')})")
        check(os.path.join(moved, "share", "man") in kv.get("manpath", "").split(":"), f"MANPATH has PREFIX/share/man ({kv.get('manpath')})")
        check("ddpbench" in kv.get("loaded", ""), f"module list names ddpbench ({kv.get('loaded')})")
        check(kv.get("after") == "none", "module unload ddpbench takes it off the PATH")
        if kv.get("manpage") == "no-man":
            print("note: man is not installed; `man -w ddpbench-run` not tried")
        else:
            check(kv.get("manpage") == os.path.join(moved, "share", "man", "man1", "ddpbench-run.1"),
                  f"man -w ddpbench-run finds the moved install's page ({kv.get('manpage')})")
        installed_plan = os.path.join(moved, "share", "ddpbench", "plans", "quick.yaml")
        for name in ("quick", "plans"):
            text = open(os.path.join(elsewhere, name + ".out")).read()
            check(kv.get(name + "_rc") == "0" and installed_plan in text,
                  f"validate {'quick' if name == 'quick' else 'plans/quick.yaml'} --dry-run from a folder without a checkout "
                  f"exits 0 and takes {installed_plan} (exit {kv.get(name + '_rc')}; {text.strip().splitlines()[:2]})")
        text = open(os.path.join(elsewhere, "missing.out")).read()
        check(kv.get("missing_rc") == "2" and len(text.strip().splitlines()) == 1 and "no-such-plan" in text,
              f"an unknown plan is a one-line error with exit 2 ({kv.get('missing_rc')}: {text.strip()[:200]})")
        # The data files are the source's own bytes.
        pairs = [(f"plans/{p}", f"share/ddpbench/plans/{p}") for p in ("quick.yaml", "acceptance.yaml", "one-gpu.yaml")]
        pairs += [(f"scripts/slurm/{t}", f"share/ddpbench/slurm/{t}")
                  for t in ("ddpbench-node.sbatch", "ddpbench-weak-scaling.sbatch", "ddpbench-validate.sbatch")]
        pairs += [("benchmark/baselines.json", "share/ddpbench/baselines.json"), ("README.md", "share/doc/ddpbench/README.md"),
                  ("docs/CLUSTER.md", "share/doc/ddpbench/docs/CLUSTER.md"),
                  ("docs/guide/cluster-validation.md", "share/doc/ddpbench/docs/guide/cluster-validation.md")]
        for src, dst in pairs:
            d = os.path.join(moved, dst)
            same = os.path.isfile(d) and open(d, "rb").read() == open(os.path.join(args.source, src), "rb").read()
            check(same, f"{dst} is {src}")
        for t in ("ddpbench-node.sbatch", "ddpbench-weak-scaling.sbatch", "ddpbench-validate.sbatch"):
            check(os.access(os.path.join(moved, "share", "ddpbench", "slurm", t), os.X_OK), f"share/ddpbench/slurm/{t} is executable")
        check(not os.path.exists(os.path.join(moved, "share", "doc", "ddpbench", "docs", "results")),
              "the GPU result folders (docs/results) are not installed")
        if shutil.which("help2man"):
            pages = os.listdir(os.path.join(moved, "share", "man", "man1")) if os.path.isdir(os.path.join(moved, "share", "man", "man1")) else []
            check("ddpbench.1" in pages and "ddpbench-run.1" in pages, f"share/man/man1 holds the pages ({len(pages)})")
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["module", "manpages"])
    p.add_argument("--build", required=True)
    p.add_argument("--source", default=".")
    args = p.parse_args()
    rc = module(args) if args.what == "module" else manpages(args)
    print(f"{len(failures)} failed")
    return rc


if __name__ == "__main__":
    sys.exit(main())
