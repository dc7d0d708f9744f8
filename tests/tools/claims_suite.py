#!/usr/bin/env python3
"""Runs tests/tools/check_claims.py on every shipped result group and on generated sets
(docs/METHODOLOGY.md "Claims and their checker").

    claims_suite.py --ddpbench BIN --out DIR [--seeds 1,2,3] [--validate-dir DIR]... [-v]

The shipped groups: all docs/results/h100_*.json together, with and without
--gpu-hour-cost 2.5; each docs/examples group (the CPU weak/strong pair, each folder's files
that belong together, and every example file at once as docs/examples/report builds its CPU
report); three diffs (the bucket fixture pair, the H100 fp32-strict vs tf32 and the H100 repeat
launches). The generated groups: the sets of
tests/tools/make_claim_sets.py for each seed. For each group it runs BIN report/diff
--format json into DIR and checks the claims; prints every failure and the totals (claims per
kind, failures, unchecked rules); exits 1 if any claim failed or a command did not run.
Standard library only; run from anywhere (paths are taken relative to the repository).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import check_claims  # noqa: E402
import make_claim_sets  # noqa: E402


def shipped_groups():
    """(name, command kind, files or (base, test), extra args), paths relative to the repository."""
    ex = "docs/examples"
    h100 = sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs/results/h100_*.json")))
    every = sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, ex, "**", "*.json"), recursive=True)
                   if "/report/" not in p)
    smd, wtg, cv = f"{ex}/strategies-memory-data", f"{ex}/where-the-time-goes", f"{ex}/cluster-validation"
    g = [
        ("h100", "report", h100, []),
        ("h100_priced", "report", h100, ["--gpu-hour-cost", "2.5"]),
        ("cpu_weak_strong_priced", "report", [f"{ex}/cpu_weak_resnet18.json", f"{ex}/cpu_strong_resnet18.json"],
         ["--gpu-hour-cost", "2.5"]),
        ("sharded", "report", [f"{smd}/sharded-resnet50-ckpt-off.json", f"{smd}/sharded-resnet50-ckpt-on.json"], []),
        ("memory", "report", sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, smd, "memory-*.json"))), []),
        ("time_to_loss", "report", [f"{smd}/fashion_mnist_resnet18_ttl.json"], []),
        ("breakdown", "report", [f"{wtg}/breakdown_cpu.json"], []),
        ("sweeps", "report", [f"{wtg}/bucket_sweep_cpu.json", f"{wtg}/hook_sweep_cpu.json"], []),
        ("comm", "report", [f"{wtg}/comm_allreduce_cpu.json"], []),
        ("where_the_time_goes", "report", [f"{wtg}/breakdown_cpu.json", f"{wtg}/bucket_sweep_cpu.json",
                                           f"{wtg}/hook_sweep_cpu.json", f"{wtg}/comm_allreduce_cpu.json"], []),
        ("straggler", "report", [f"{cv}/straggler_cpu.json"], []),
        ("pairs", "report", [f"{cv}/pairs_netns_cpu.json"], []),
        ("burnin", "report", [f"{cv}/burnin_cpu.json"], []),
        ("cluster_validation", "report", sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, cv, "*.json"))), []),
        ("examples_cpu_report", "report", every, ["--gpu-hour-cost", "0.10"]),
        ("diff_bucket", "diff", (["tests/fixtures/diff_bucket25.json"], ["tests/fixtures/diff_bucket1.json"]), []),
        ("diff_h100_precision", "diff", (["docs/results/h100_resnet50_b32_fp32_strict.json"],
                                         ["docs/results/h100_resnet50_b32_tf32_all.json"]), []),
        ("diff_h100_repeat", "diff", (["docs/results/h100_resnet50_b32_fp32_default.json"],
                                      ["docs/results/h100_resnet50_b32_fp32_default_repeat.json"]), []),
    ]
    return g


def generated_groups(outdir, seeds):
    groups = []
    for seed in seeds:
        for d in make_claim_sets.write_sets(os.path.join(outdir, f"sets_seed{seed}"), seed):
            with open(os.path.join(d, "manifest.json")) as f:
                m = json.load(f)
            name = f"seed{seed}/{m['set']}"
            if "report" in m:
                groups.append((name + ":report", "report", [os.path.join(d, x) for x in m["report"]],
                               m.get("report_args") or []))
            if "diff" in m:
                df = m["diff"]
                groups.append((name + ":diff", "diff", ([os.path.join(d, x) for x in df["base"]],
                                                        [os.path.join(d, x) for x in df["test"]]), df.get("args") or []))
    return groups


def run_ddpbench(cmd, out_path, retries=4):
    """Runs ddpbench; if the binary cannot be executed (being relinked), waits 30 s and retries."""
    for attempt in range(retries + 1):
        try:
            p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
        except OSError as e:
            if attempt < retries:
                time.sleep(30)
                continue
            return None, f"cannot run {cmd[0]}: {e}"
        if p.returncode in (126, 127) and attempt < retries:
            time.sleep(30)
            continue
        if p.returncode not in (0, 1):
            return None, f"exit {p.returncode}: {p.stderr.strip()[:500]}"
        with open(out_path, "w") as f:
            f.write(p.stdout)
        return out_path, None
    return None, "gave up"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddpbench", required=True, help="the ddpbench binary")
    ap.add_argument("--out", required=True, help="folder for the JSON outputs and the generated sets")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--validate-dir", action="append", default=[],
                    help="a `ddpbench validate --out` folder to check too (repeatable; skipped without verdict.json)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the unchecked rules too")
    args = ap.parse_args()
    binary = os.path.abspath(args.ddpbench)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    start = time.time()

    total = check_claims.Outcome()
    errors = []
    groups = shipped_groups() + generated_groups(out, seeds)
    for name, kind, files, extra in groups:
        json_path = os.path.join(out, name.replace("/", "_").replace(":", "_") + ".json")
        if kind == "report":
            cmd = [binary, "report", *files, *extra, "--format", "json"]
        else:
            base, test = files
            cmd = [binary, "diff", *extra, "--format", "json", *base, "--", *test]
        path, err = run_ddpbench(cmd, json_path)
        shown = " ".join(os.path.relpath(x, REPO) if os.path.isabs(x) else x for x in cmd[1:])
        if err:
            errors.append(f"ERROR {name}: ddpbench {shown}: {err}")
            print(errors[-1])
            continue
        try:
            if kind == "report":
                res = check_claims.check_report(path, files)
            else:
                res = check_claims.check_diff(path, files[0], files[1])
        except check_claims.BadInput as e:
            errors.append(f"ERROR {name}: {e}")
            print(errors[-1])
            continue
        if res.failures or (args.verbose and res.unchecked):
            print(f"== {name}: ddpbench {shown}")
            for line in res.failures:
                print("  " + line)
            if args.verbose:
                for line in res.unchecked:
                    print("  " + line)
        total.merge(res)

    # validate (not finished in ddpbench): the folders given, each checked when it has a verdict
    for d in args.validate_dir:
        try:
            res = check_claims.check_validate(d)
        except check_claims.BadInput as e:
            errors.append(f"ERROR validate {d}: {e}")
            print(errors[-1])
            continue
        if res is None:
            print(f"validate {d}: no verdict.json, skipped")
            continue
        if res.failures:
            print(f"== validate {d}")
            for line in res.failures:
                print("  " + line)
        total.merge(res)

    print(f"{len(groups)} groups ({len(shipped_groups())} shipped, seeds {args.seeds}) in "
          f"{time.time() - start:.1f} s")
    print("totals: " + total.summary())
    if errors:
        print(f"{len(errors)} commands did not run")
    return 1 if total.failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
