#!/usr/bin/env python3
"""Writes generated result sets for tests/tools/check_claims.py (docs/METHODOLOGY.md "Claims and
their checker"): result files in ddpbench's schema, one folder per set, each with a
manifest.json naming the commands to run on it:

    {"report": [FILE...], "report_args": [ARG...],
     "diff": {"base": [FILE...], "test": [FILE...], "args": [ARG...]}}

(either part may be absent; FILE paths are relative to the set's folder).

    make_claim_sets.py OUTDIR [--seed N]

The sets (each folder's manifest.json repeats its docstring under "about"):
random_noise (a 1-16 GPU sweep with seeded noise, iterations and exposed comm, a straggler,
--target-ex-s), noise_diff_one (two launches of one configuration, one a side),
dup_same_file (a file given twice), dup_two_files (two launches of one configuration, and the
first launch written again with another argv: the same job id and start time),
mixed_launches (2-4 launches of one configuration with spreads, 1-3 of tf32, one of bf16),
mixed_schema (1.0-style rows without iterations, cv, warnings or iteration_means_s next to
1.3- and 1.17-style rows of the same configuration; report and diff), voided (oversubscribed
CPU ranks the file does not flag, negative_ddp_overhead, a throughput_drift baseline; priced;
a diff of void rows), diff_bucket_one / diff_bucket_many / diff_one_vs_many (a bucket A/B with
its no-DDP control, one launch a side, three a side, one against three with the base given
twice), diff_precision (fp32-strict against bf16: no control), strategies (ddp/zero2/fsdp with
and without activation checkpointing, bf16, peak memory: setup and memory claims), ddp_knobs
(bucket caps and comm hooks, the defaults measured by 1-3 launches), priced (weak 1-16 GPUs,
strong scaling, bf16; --gpu-hour-cost), priced_shared (two ranks on one GPU), diff_noise_floor
(--noise-floor), diff_few (3 and 4 iterations: too few samples), self_check (a row that failed
its self-check, grad_accum 2, --target-for).
Standard library only.
"""

import argparse
import json
import math
import os
import random
import statistics

H100 = "NVIDIA H100 80GB HBM3"
CPU_MODEL = "Generated CPU (claims)"
GiB = 2**30
DEFAULT_KNOBS = {"bucket_cap_mb": 25.0, "first_bucket_cap_mb": 1.0, "broadcast_buffers": True,
                 "gradient_as_bucket_view": False, "static_graph": False, "find_unused_parameters": False,
                 "comm_hook": "none"}


def percentile(xs, q):  # numpy's default (type 7), as `ddpbench run` writes it
    s = sorted(xs)
    h = (len(s) - 1) * q / 100
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def t975(df):  # Student's t, two-sided 95%: table to 30, then a good approximation
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
             2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
             2.052, 2.048, 2.045, 2.042]
    return table[df - 1] if df <= 30 else 1.96 + 2.4 / df


class Gen:
    """Builds rows and files the way `ddpbench run --json` writes them."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.job = 5000 + 100 * seed
        self.day = 1 + seed

    # -- step times -----------------------------------------------------------------------
    def series(self, p50, world, iters, sigma, rank_sigma=0.002, spike=0.0):
        """Per-rank step times around p50: a common factor per iteration (the ranks of one DDP
        step wait for each other) with noise sigma, rare spikes, a little per-rank jitter."""
        rng = self.rng
        common = []
        for _ in range(iters):
            f = 1 + max(-0.3, min(0.3, rng.gauss(0, sigma)))
            if spike and rng.random() < spike:
                f *= 1 + rng.uniform(0.2, 1.0)
            common.append(f)
        med = statistics.median(common)
        return [[round(p50 * f / med * (1 + rng.gauss(0, rank_sigma)), 7) for f in common] for _ in range(world)]

    # -- a row ----------------------------------------------------------------------------
    def row(self, model, batch, world, ddp, per_rank, *, style="1.17", image=224, precision="fp32",
            scaling="weak", global_batch=None, knobs=None, strategy=None, ckpt=None, grad_accum=1,
            mode="train", exposed=None, peak=None, gpu=True, warnings=(), forget=(), launch=None,
            self_check=True, label=None):
        s = [x for xs in per_rank for x in xs]
        im = [statistics.fmean(col) for col in zip(*per_rank)]
        p50 = percentile(s, 50)
        ex = batch * grad_accum / p50
        summary = {"n": len(s), "p50_s": p50, "p75_s": percentile(s, 75), "p90_s": percentile(s, 90),
                   "p95_s": percentile(s, 95), "min_s": min(s), "max_s": max(s), "mean_s": statistics.fmean(s),
                   "stddev_s": statistics.stdev(s), "ex_per_s_per_gpu": ex, "ex_per_s_total": world * ex}
        cv = statistics.stdev(im) / statistics.fmean(im)
        # 1.0 and 1.2 wrote ci95_s (a normal interval of the pooled samples), no iterations or cv
        summary["ci95_s"] = t975(len(im) - 1) * statistics.stdev(im) / math.sqrt(len(im))
        if style != "1.0":
            summary.update({"iterations": len(im), "cv": cv})
        if style == "1.17":
            summary["p5_s"] = percentile(s, 5)
        unit = "G" if gpu else "C"
        nodes = max(1, math.ceil(world / 8)) if gpu else 1
        ranks = []
        for r in range(world):
            rk = {"rank": r, "host": f"node{r // 8}" if gpu else "node0", "local_rank": r % 8 if gpu else r,
                  "device": f"cuda:{r % 8}" if gpu else "cpu", "samples_s": per_rank[r], "telemetry": {}}
            if style == "1.17":
                xs = per_rank[r]
                rk["step"] = {"n": len(xs), "mean_s": statistics.fmean(xs), "p50_s": percentile(xs, 50),
                              "p95_s": percentile(xs, 95), "max_s": max(xs)}
            ranks.append(rk)
        if label is None:
            label = (f"{nodes}M/{min(world, 8) if gpu else world}{unit}" if ddp else "no ddp")
            if mode == "inference":
                label = f"infer 1M/{world}{unit}"
        out = {"model": model, "label": label, "batch_per_rank": batch, "image_size": image,
               "precision": precision, "world_size": world, "nodes": nodes, "ddp": ddp, "ranks": ranks,
               "summary": summary, "telemetry": {}, "checks": {}}
        if ddp:
            out["checks"] = {"grad_check_ran": True, "grad_check_passed": self_check,
                             "grad_max_abs_diff_across_ranks": 0.0 if self_check else 1.0}
        if style != "1.0":
            out["scaling"] = scaling
            out["global_batch"] = global_batch or batch * world
            out["compute"] = {}
            out["communication"] = {}
            out["stopping"] = {"mode": "fixed", "reason": "iterations", "target_ci_pct": 0, "achieved_ci_pct": 0}
            codes = []
            if cv > 0.05:
                codes.append("noisy")
            if len(im) < 20:
                codes.append("few_samples")
            codes += [w for w in warnings if w not in codes]
            codes = [c for c in codes if c not in forget]
            out["warnings"] = [{"code": c, "message": f"{c} (generated)"} for c in codes]
        if style == "1.17":
            out["iteration_means_s"] = im
            out["grad_accum"] = grad_accum
            # zero2 and fsdp rows record no DDP knobs (as `run` writes them)
            plain = ddp and (strategy or "ddp") == "ddp"
            out["ddp_options"] = dict(DEFAULT_KNOBS, **(knobs or {})) if plain else {}
            out["strategy"] = strategy or "ddp"
            out["activation_checkpointing"] = bool(ckpt)
            out["mode"] = mode
            out["group"] = f"{model}/{'ddp' if ddp else 'noddp'}{world}"
            out["launch"] = launch or {"job_id": str(self.job), "started_utc": f"2026-12-{self.day:02d}T10:00:00Z"}
        if exposed is not None and style != "1.0":
            step = statistics.fmean(s)
            e = exposed * step
            fwd, bwd, opt = 0.3 * step, 0.5 * step - e / 2, 0.05 * step
            other = step - fwd - bwd - e - opt
            comp = {"forward_s": fwd, "backward_compute_s": bwd, "backward_comm_s": e * 1.5, "overlap_s": e * 0.5,
                    "exposed_comm_s": e, "optimizer_s": opt, "other_s": other, "step_s": step}
            out["breakdown"] = {"mean_over_ranks": comp, "max_over_ranks": comp, "iterations": len(im),
                                "note": "generated"}
        if peak is not None:
            out["telemetry"]["peak_memory_bytes_max_over_ranks"] = int(peak)
            if style == "1.17":
                key = "peak_allocated_bytes" if gpu else "peak_rss_bytes"
                out["memory"] = {"per_rank": [{"rank": r, key: int(peak)} for r in range(world)],
                                 "max_over_ranks": {key: int(peak)}, "source": "generated"}
        return out

    # -- a file ---------------------------------------------------------------------------
    def env(self, world, gpu=True, threads=None, cpus=None, precision="fp32", backend=None, shared=False,
            math_flags=None):
        job = self.job
        if gpu:
            hosts = sorted({f"node{r // 8}" for r in range(world)})
            ranks = [{"rank": r, "local_rank": r % 8, "host": f"node{r // 8}", "device": f"cuda:{r % 8}",
                      "gpu_name": H100, "gpu_uuid": "GPU-shared-0" if shared else f"GPU-{job}-{r // 8}-{r % 8}",
                      "bus_id": f"00000000:{0x18 + (0 if shared else r % 8):02X}:00.0", "cpus": ""}
                     for r in range(world)]
            gpus = [{"rank": k["rank"], "host": k["host"], "index": k["rank"] % 8, "name": H100,
                     "uuid": k["gpu_uuid"], "bus_id": k["bus_id"]} for k in ranks]
            flags = math_flags or {"fp32-strict": (False, False), "tf32": (True, True)}.get(precision, (True, False))
            return {"torch": "2.11.0", "cuda": "13.0", "nccl": "2.28.9", "backend": backend or "nccl",
                    "device_type": "cuda", "cpu_model": "Generated host CPU", "launcher": "slurm",
                    "world_size": world, "threads_per_rank": threads or 8, "hosts": hosts, "ranks": ranks,
                    "gpus": gpus, "env": {"SLURM_JOB_ID": str(job)}, "slurm_job_id": str(job),
                    "math": {"cudnn_allow_tf32": flags[0], "cublas_allow_tf32": flags[1], "cudnn_benchmark": True}}
        ranks = [{"rank": r, "local_rank": r, "host": "node0", "device": "cpu", "gpu_name": "", "gpu_uuid": "",
                  "bus_id": "", "cpus": (cpus[r] if isinstance(cpus, list) else cpus) or "0-3"} for r in range(world)]
        return {"torch": "1.13.1", "cuda": "none", "nccl": "none", "backend": backend or "gloo",
                "device_type": "cpu", "cpu_model": CPU_MODEL, "launcher": "local", "world_size": world,
                "threads_per_rank": threads or 1, "hosts": ["node0"], "ranks": ranks, "gpus": [], "env": {},
                "malloc_tuning": {"applied": True}}

    def file(self, rows, env, *, style="1.17", config=None, stragglers=None, argv=None):
        schema = {"1.0": "1.0.0", "1.3": "1.3.0", "1.17": "1.17.0"}[style]
        models = sorted({r["model"] for r in rows})
        cfg = {"models": models, "iters": 20, "warmup": 5, "precision": rows[0]["precision"] if rows else "fp32",
               "channels_last": False, "num_classes": 1000}
        cfg.update(config or {})
        out = {"schema_version": schema,
               "tool": {"name": "ddpbench", "version": "0.1.0", "git_sha": f"gen{self.job}", "git_dirty": False},
               "created_utc": f"2026-12-{self.day:02d}T10:30:00Z",
               "argv": argv or ["ddpbench", "run", "--json", f"gen{self.job}.json"],
               "config": cfg, "environment": env, "results": rows}
        if style != "1.0":
            out["kind"] = "run"
            out["complete"] = True
            out["rows_planned"] = len(rows)
        if stragglers:
            out["stragglers"] = stragglers
        self.job += 1
        return out

    def stragglers(self, model, batch, world, slow_rank, score, gpu=True):
        ranks = []
        for r in range(world):
            sc = score if r == slow_rank else self.rng.uniform(0.96, 1.0)
            if r == 0 and slow_rank != 0:
                sc = 1.0
            ranks.append({"rank": r, "host": f"node{r // 8}" if gpu else "node0", "local_rank": r % 8,
                          "device": f"cuda:{r % 8}" if gpu else "cpu", "gpu_index": r % 8 if gpu else -1,
                          "gpu_uuid": "", "bus_id": "", "compute_step_s": 0.1 / sc, "ddp_step_s": 0.12,
                          "comm_wait_s": 0.01, "score": sc, "straggler": sc < 0.95})
        return [{"model": model, "batch_per_rank": batch, "threshold": 0.95, "world_size": world,
                 "ddp_world_size": world, "ranks": ranks, "named": [x["rank"] for x in ranks if x["straggler"]],
                 "note": "generated"}]

    # -- a weak-scaling sweep ---------------------------------------------------------------
    def sweep(self, model="resnet50", batch=32, sizes=(1, 2, 4, 8), base_p50=0.100, eff=0.93,
              sigma=None, iters=20, style="1.17", gpu=True, precision="fp32", nodp_frac=0.8,
              exposed=True, knobs=None, peak=None, strategy=None, ckpt=None, launch=None, nodp=True, shift=1.0,
              warnings_at=None, forget=(), image=224):
        """No-DDP row and DDP rows at sizes; the step grows so that efficiency(N) falls off."""
        rng = self.rng
        rows = []
        if nodp:
            sg = sigma if sigma is not None else rng.choice([0.004, 0.01, 0.03, 0.07])
            rows.append(self.row(model, batch, 1, False, self.series(base_p50 * nodp_frac * shift, 1, iters, sg),
                                 style=style, gpu=gpu, precision=precision, launch=launch, peak=peak, image=image,
                                 strategy=strategy, ckpt=ckpt))
        for n in sizes:
            e = 1.0 if n == 1 else eff ** math.log2(n) * rng.uniform(0.97, 1.03)
            sg = sigma if sigma is not None else rng.choice([0.004, 0.01, 0.03, 0.07])
            ws = (warnings_at or {}).get(n, ())
            rows.append(self.row(model, batch, n, True, self.series(base_p50 * shift / e, n, iters, sg),
                                 style=style, gpu=gpu, precision=precision, knobs=knobs, peak=peak,
                                 exposed=(rng.uniform(0.02, 0.25) if n > 1 else 0.0) if exposed else None,
                                 strategy=strategy, ckpt=ckpt, launch=launch, warnings=ws, forget=forget,
                                 image=image))
        return rows


# ==============================================================================================
# The sets. Each returns {file name: result object}, manifest.

def set_random_noise(g):
    """Random noise: one weak-scaling sweep on H100s (1 to 16 GPUs, two nodes at 16), noise,
    iterations and exposed comm drawn from the seed; a straggler; a target on ex/s."""
    rng = g.rng
    rows = g.sweep(sizes=(1, 2, 4, 8, 16), sigma=None, iters=rng.choice([12, 20, 30]),
                   eff=rng.uniform(0.86, 0.99))
    slow = rng.randrange(8)
    f = g.file(rows, g.env(16), stragglers=g.stragglers("resnet50", 32, 8, slow, rng.uniform(0.6, 0.9)))
    target = round(rng.uniform(250, 330), 1)
    return {"noise.json": f}, {"report": ["noise.json"], "report_args": ["--target-ex-s", str(target)]}


def set_noise_diff_one(g):
    """Two launches of one configuration, one launch a side: unconfirmed verdicts at most."""
    rng = g.rng
    a = g.file(g.sweep(sizes=(1, 2, 4), eff=0.95, iters=20), g.env(4))
    b = g.file(g.sweep(sizes=(1, 2, 4), eff=0.95, iters=20, shift=rng.choice([0.9, 0.98, 1.0, 1.05])), g.env(4))
    return {"a.json": a, "b.json": b}, {"diff": {"base": ["a.json"], "test": ["b.json"], "args": []}}


def set_dup_same_file(g):
    """The same file given twice: one launch, no spread of 0% between them."""
    f = g.file(g.sweep(sizes=(1, 2, 4), iters=20), g.env(4))
    return {"a.json": f}, {"report": ["a.json", "a.json"], "report_args": []}


def set_dup_two_files(g):
    """Two files of one configuration (two launches), and the first launch written again by
    another tool run (other argv, the same job id and start time: the same launch)."""
    rng = g.rng
    launch_a = {"job_id": str(g.job), "started_utc": "2026-12-01T08:00:00Z"}
    a = g.file(g.sweep(sizes=(1, 2), iters=20, launch=launch_a), g.env(2))
    again = json.loads(json.dumps(a))
    again["argv"] = ["ddpbench", "run", "--json", "again.json"]
    for r in again["results"]:
        r["checks"]["note"] = "written again"
    b = g.file(g.sweep(sizes=(1, 2), iters=20, shift=rng.uniform(1.02, 1.2)), g.env(2))
    return {"a.json": a, "b.json": b, "a_again.json": again}, \
        {"report": ["a.json", "b.json", "a_again.json", "b.json"], "report_args": []}


def set_mixed_launches(g):
    """2-4 launches of one configuration (fp32, cuDNN TF32) with spreads, 1-3 of tf32 and one of
    bf16: setup claims whose floors come from the launches."""
    rng = g.rng
    files, names = {}, []
    n = rng.randint(2, 4)
    for i in range(n):
        shift = 1.0 + rng.uniform(-0.12, 0.12)
        f = g.file(g.sweep(model="resnet18", sizes=(1, 2, 4), base_p50=0.040, iters=20, shift=shift,
                           sigma=rng.choice([0.003, 0.01])), g.env(4))
        files[f"fp32_{i}.json"] = f
        names.append(f"fp32_{i}.json")
    # every third seed: the setups within noise of each other ("choose by memory")
    close_call = g.seed % 3 == 0
    for i in range(rng.randint(1, 3)):
        tf32 = 1.0 if close_call else rng.choice([0.97, 0.9, 0.75])
        f = g.file(g.sweep(model="resnet18", sizes=(1, 2, 4), base_p50=0.040 * tf32,
                           iters=20, precision="tf32", sigma=0.005, shift=1 + rng.uniform(-0.05, 0.05)),
                   g.env(4, precision="tf32"), config={"precision": "tf32"})
        files[f"tf32_{i}.json"] = f
        names.append(f"tf32_{i}.json")
    bf16 = 0.995 if close_call else rng.choice([0.55, 0.6, 0.98])
    f = g.file(g.sweep(model="resnet18", sizes=(1, 2, 4), base_p50=0.040 * bf16,
                       iters=20, precision="bf16", sigma=0.003), g.env(4, precision="bf16"),
               config={"precision": "bf16"})
    files["bf16.json"] = f
    names.append("bf16.json")
    rng.shuffle(names)
    return files, {"report": names, "report_args": []}


def set_mixed_schema(g):
    """Schema 1.0 rows (no iterations, cv, warnings, scaling or iteration_means_s) next to 1.3 and
    1.17 rows of the same configuration: three launches of one configuration; a report and a
    diff of the 1.0 launch against the 1.17 one."""
    rng = g.rng
    files = {}
    for style in ("1.0", "1.3", "1.17"):
        rows = g.sweep(model="resnet50", sizes=(1,), base_p50=0.030, iters=20, style=style,
                       sigma=rng.choice([0.01, 0.08]), shift=1 + rng.uniform(-0.1, 0.1), exposed=style != "1.0")
        files[f"v{style.replace('.', '_')}.json"] = g.file(rows, g.env(1), style=style)
    names = list(files)
    return files, {"report": names, "report_args": [],
                   "diff": {"base": ["v1_0.json"], "test": ["v1_17.json"], "args": []}}


def set_voided(g):
    """Voided rows: CPU ranks oversubscribed (4 ranks of 1 thread on CPUs 0,1; the file does not
    flag it), a DDP row below its no-DDP row (negative_ddp_overhead), and a no-DDP baseline
    whose throughput drifted (throughput_drift) under a 2-rank table."""
    rng = g.rng
    over = g.file(g.sweep(model="resnet18", batch=16, sizes=(1, 2, 4), base_p50=0.2, gpu=False, image=64,
                          iters=20, eff=0.8, forget=("oversubscribed",), sigma=0.01),
                  g.env(4, gpu=False, cpus="0,1"), config={"image_size": 64})
    neg_rows = g.sweep(model="resnet18", batch=32, sizes=(2,), base_p50=0.4, gpu=False, image=64, iters=20,
                       nodp_frac=1.08, sigma=0.01, warnings_at={2: ("negative_ddp_overhead",)})
    neg = g.file(neg_rows, g.env(2, gpu=False, cpus="0-3"), config={"image_size": 64})
    drift_rows = g.sweep(model="resnet50", batch=8, sizes=(2,), base_p50=0.6, gpu=False, image=64, iters=20,
                         sigma=0.01, eff=rng.choice([0.7, 0.95]))
    drift_rows[0]["warnings"].append({"code": "throughput_drift", "message": "rank 0: -12% first to last window"})
    drift = g.file(drift_rows, g.env(2, gpu=False, cpus="0-3"), config={"image_size": 64})
    # a second launch of the oversubscribed configuration, for a diff whose rows are void
    over2 = g.file(g.sweep(model="resnet18", batch=16, sizes=(1, 2, 4), base_p50=0.2, gpu=False, image=64,
                           iters=20, eff=0.8, sigma=0.01, shift=1.05),
                   g.env(4, gpu=False, cpus="0,1"), config={"image_size": 64})
    return {"over.json": over, "neg.json": neg, "drift.json": drift, "over2.json": over2}, \
        {"report": ["over.json", "neg.json", "drift.json"], "report_args": ["--gpu-hour-cost", "0.1"],
         "diff": {"base": ["over.json"], "test": ["over2.json"], "args": []}}


def bucket_files(g, cap, n_launches, shift_of_test=1.0):
    rng = g.rng
    out = []
    for _ in range(n_launches):
        launch_shift = 1 + rng.uniform(-0.03, 0.03)
        rows = []
        rows.append(g.row("resnet50", 32, 1, False, g.series(0.097 * launch_shift, 1, 20, 0.004)))
        for n in (1, 2, 4, 8):
            slow = 1.0 if cap == 25 else shift_of_test * (1 + 0.004 * math.log2(n) if n > 1 else 1.0)
            rows.append(g.row("resnet50", 32, n, True,
                              g.series(0.100 * (1 + 0.01 * math.log2(n)) * slow * launch_shift, n, 20, 0.004),
                              knobs={"bucket_cap_mb": float(cap)}, exposed=0.1))
        out.append(g.file(rows, g.env(8), config={"bucket_cap_mb": float(cap)}))
    return out


def set_diff_bucket_one(g):
    """A bucket A/B (25 against 1 MiB), one launch a side, with its no-DDP control."""
    rng = g.rng
    b = bucket_files(g, 25, 1)
    t = bucket_files(g, 1, 1, rng.choice([1.0, 1.01, 1.03]))
    return {"b25.json": b[0], "b1.json": t[0]}, {"diff": {"base": ["b25.json"], "test": ["b1.json"], "args": []}}


def set_diff_bucket_many(g):
    """The bucket A/B with three launches a side (Welch's interval over launches)."""
    rng = g.rng
    b = bucket_files(g, 25, 3)
    t = bucket_files(g, 1, 3, rng.choice([1.0, 1.02, 1.06]))
    files = {f"b25_{i}.json": f for i, f in enumerate(b)}
    files.update({f"b1_{i}.json": f for i, f in enumerate(t)})
    return files, {"diff": {"base": [f"b25_{i}.json" for i in range(3)],
                            "test": [f"b1_{i}.json" for i in range(3)], "args": []}}


def set_diff_one_vs_many(g):
    """One launch on the base side, three on the test side; the base launch given twice."""
    rng = g.rng
    b = bucket_files(g, 25, 1)
    t = bucket_files(g, 1, 3, rng.choice([1.0, 1.04]))
    files = {"b25.json": b[0]}
    files.update({f"b1_{i}.json": f for i, f in enumerate(t)})
    return files, {"diff": {"base": ["b25.json", "b25.json"], "test": [f"b1_{i}.json" for i in range(3)],
                            "args": []}}


def set_diff_precision(g):
    """A precision A/B (fp32-strict against bf16): no control (the change moves every row); a
    report of both files compares the two setups."""
    rng = g.rng
    a = g.file(g.sweep(sizes=(1, 2), precision="fp32-strict", base_p50=0.044, iters=20, sigma=0.02),
               g.env(2, precision="fp32-strict"), config={"precision": "fp32-strict"})
    b = g.file(g.sweep(sizes=(1, 2), precision="bf16", base_p50=0.044 * rng.choice([0.5, 0.97, 1.0]), iters=20,
                       sigma=0.02), g.env(2, precision="bf16"), config={"precision": "bf16"})
    return {"strict.json": a, "bf16.json": b}, \
        {"report": ["strict.json", "bf16.json"], "report_args": [],
         "diff": {"base": ["strict.json"], "test": ["bf16.json"], "args": []}}


def set_strategies(g):
    """Several setups of one model: DDP, zero2 and fsdp with and without activation
    checkpointing at 2 and 4 GPUs (fp32), DDP in bf16, their peak memory; plain DDP measured by
    1-3 launches: setup and memory claims."""
    rng = g.rng
    files, names = {}, []
    speeds = {("ddp", False): 1.0, ("zero2", False): rng.uniform(0.9, 1.3), ("fsdp", False): rng.uniform(1.0, 1.5),
              ("ddp", True): rng.uniform(1.2, 1.4), ("zero2", True): rng.uniform(1.2, 1.6),
              ("fsdp", True): rng.uniform(1.3, 1.8)}
    peaks = {("ddp", False): 20 * GiB, ("zero2", False): 16 * GiB, ("fsdp", False): 13 * GiB,
             ("ddp", True): 12 * GiB, ("zero2", True): 9 * GiB, ("fsdp", True): 7 * GiB}
    for ck in (False, True):
        rows = [g.row("vit_b_16", 64, 1, False, g.series(0.2, 1, 20, 0.005), ckpt=ck, peak=peaks[("ddp", ck)] * 0.9)]
        for st in ("ddp", "zero2", "fsdp"):
            for n in (2, 4):
                rows.append(g.row("vit_b_16", 64, n, True,
                                  g.series(0.21 * speeds[(st, ck)] * (1 + 0.02 * n), n, 20, rng.choice([0.003, 0.02])),
                                  strategy=st, ckpt=ck, peak=peaks[(st, ck)] * rng.uniform(0.98, 1.02), exposed=0.05))
        name = f"ckpt_{'on' if ck else 'off'}.json"
        files[name] = g.file(rows, g.env(4))
        names.append(name)
    bf16 = [g.row("vit_b_16", 64, 1, False, g.series(0.12, 1, 20, 0.005), precision="bf16", peak=11 * GiB)]
    bf16 += [g.row("vit_b_16", 64, n, True, g.series(0.13 * (1 + 0.02 * n) * rng.uniform(0.9, 1.1), n, 20, 0.005),
                   precision="bf16", peak=rng.choice([11, 21]) * GiB, exposed=0.05) for n in (2, 4)]
    files["bf16.json"] = g.file(bf16, g.env(4, precision="bf16"), config={"precision": "bf16"})
    names.append("bf16.json")
    for i in range(rng.randint(0, 2)):
        rows = [g.row("vit_b_16", 64, n, True, g.series(0.21 * (1 + 0.02 * n) * rng.uniform(0.95, 1.1), n, 20, 0.004),
                      peak=peaks[("ddp", False)], exposed=0.05) for n in (2, 4)]
        files[f"ddp_again_{i}.json"] = g.file(rows, g.env(4))
        names.append(f"ddp_again_{i}.json")
    return files, {"report": names, "report_args": []}


def set_ddp_knobs(g):
    """DDP settings: a bucket-cap sweep and comm hooks at 2 GPUs, the defaults measured by 1-3
    launches, one variant sometimes more than 5% faster."""
    rng = g.rng
    files, names = {}, []
    # by seed: a variant 15% faster (one launch), one 4% slower (two launches), one 3% faster (three)
    gain = [0.97, 0.85, 1.04][g.seed % 3]
    for i in range(1 + (g.seed - 1) % 3):
        rows = [g.row("resnet50", 32, 1, False, g.series(0.09, 1, 20, 0.004))]
        for cap, speed in ((1.0, 1.08), (5.0, 1.02), (25.0, 1.0), (100.0, gain)):
            rows.append(g.row("resnet50", 32, 2, True,
                              g.series(0.1 * speed * (1 + rng.uniform(-0.01, 0.01)), 2, 20, rng.choice([0.003, 0.01])),
                              knobs={"bucket_cap_mb": cap}, exposed=0.08))
        if i == 0:
            for hook, speed in (("fp16", rng.uniform(1.05, 1.2)), ("powersgd:2", 1.5)):
                rows.append(g.row("resnet50", 32, 2, True, g.series(0.1 * speed, 2, 20, 0.005),
                                  knobs={"comm_hook": hook}, exposed=0.05))
        files[f"sweep_{i}.json"] = g.file(rows, g.env(2), config={"bucket_cap_mb": [1.0, 5.0, 25.0, 100.0]})
        names.append(f"sweep_{i}.json")
    return files, {"report": names, "report_args": []}


def set_priced(g):
    """A priced report (--gpu-hour-cost) with several world sizes: weak scaling on 1-16 H100s,
    strong scaling at a global batch of 256, and a second precision."""
    rng = g.rng
    weak = g.file(g.sweep(sizes=(1, 2, 4, 8, 16), iters=20, eff=rng.uniform(0.85, 0.97), sigma=0.006), g.env(16))
    rows = [g.row("resnet50", 256 // n, n, True, g.series(0.1 * 8 / n / (0.9 ** math.log2(n)) if n > 1 else 0.8,
                                                          n, 20, 0.005),
                  scaling="strong", global_batch=256, exposed=0.05 if n > 1 else 0.0) for n in (1, 2, 4, 8)]
    strong = g.file(rows, g.env(8), config={"scaling": "strong", "global_batch_size": 256})
    bf16 = g.file(g.sweep(sizes=(1, 4), precision="bf16", base_p50=0.06, iters=20, sigma=0.006),
                  g.env(4, precision="bf16"), config={"precision": "bf16"})
    price = rng.choice(["2.5", "1.1", "4"])
    return {"weak.json": weak, "strong.json": strong, "bf16.json": bf16}, \
        {"report": ["weak.json", "strong.json", "bf16.json"],
         "report_args": ["--gpu-hour-cost", price, "--epochs", str(rng.choice([1, 90]))]}


def set_priced_shared(g):
    """Ranks sharing one GPU next to 1-GPU rows, priced: the shared row is not priced and not a
    scaling point."""
    f = g.file([g.row("resnet18", 32, 1, False, g.series(0.010, 1, 20, 0.004)),
                g.row("resnet18", 32, 1, True, g.series(0.0125, 1, 20, 0.004)),
                g.row("resnet18", 32, 2, True, g.series(0.032, 2, 20, 0.004))],
               g.env(2, shared=True, backend="gloo"))
    return {"shared.json": f}, {"report": ["shared.json"], "report_args": ["--gpu-hour-cost", "2.5"]}


def set_diff_noise_floor(g):
    """One launch a side with --noise-floor: the interval is widened by the given floor and a
    change beyond it is confirmed."""
    rng = g.rng
    a = g.file(g.sweep(sizes=(1, 2), iters=20, sigma=0.004), g.env(2))
    b = g.file(g.sweep(sizes=(1, 2), iters=20, sigma=0.004, shift=rng.choice([0.9, 0.99, 1.04])), g.env(2))
    return {"a.json": a, "b.json": b}, \
        {"diff": {"base": ["a.json"], "test": ["b.json"], "args": ["--noise-floor", str(rng.choice([1, 2.5, 5]))]}}


def set_diff_few(g):
    """Launches of 3 and 4 iterations: "too few samples", whatever the interval."""
    a = g.file(g.sweep(sizes=(1, 2), iters=3, sigma=0.01), g.env(2))
    b = g.file(g.sweep(sizes=(1, 2), iters=4, sigma=0.01, shift=0.8), g.env(2))
    return {"a.json": a, "b.json": b}, {"diff": {"base": ["a.json"], "test": ["b.json"], "args": []},
                                        "report": ["a.json", "b.json"], "report_args": []}


def set_self_check(g):
    """The largest row of a sweep failed its self-check (the run stopped after writing it):
    its targets are "FAIL (self-check failed)" and no recommendation rests on it; grad_accum 2
    and a per-model target (--target-for)."""
    rng = g.rng
    rows = g.sweep(sizes=(1, 2, 4), iters=20, sigma=0.005, eff=0.97)
    last = rows[-1]
    last["checks"]["grad_check_passed"] = False
    last["warnings"].append({"code": "self_check_failed", "message": "gradients differ across ranks"})
    f = g.file(rows, g.env(4))
    f["complete"] = False
    f["rows_planned"] = len(rows) + 1
    acc = [g.row("resnet18", 16, 1, False, g.series(0.05, 1, 20, 0.004), grad_accum=2)]
    acc += [g.row("resnet18", 16, n, True, g.series(0.055 * (1 + 0.05 * n), n, 20, 0.004), grad_accum=2,
                  exposed=0.05 if n > 1 else 0.0) for n in (1, 2, 4)]
    ga = g.file(acc, g.env(4), config={"grad_accum": [2]})
    eff = rng.choice(["0.8", "0.9", "0.95"])
    return {"stopped.json": f, "accum.json": ga}, \
        {"report": ["stopped.json", "accum.json"], "report_args": ["--target-for", f"resnet18:efficiency={eff}"]}


SETS = [("random_noise", set_random_noise), ("noise_diff_one", set_noise_diff_one),
        ("dup_same_file", set_dup_same_file), ("dup_two_files", set_dup_two_files),
        ("mixed_launches", set_mixed_launches), ("mixed_schema", set_mixed_schema), ("voided", set_voided),
        ("diff_bucket_one", set_diff_bucket_one), ("diff_bucket_many", set_diff_bucket_many),
        ("diff_one_vs_many", set_diff_one_vs_many), ("diff_precision", set_diff_precision),
        ("strategies", set_strategies), ("ddp_knobs", set_ddp_knobs), ("priced", set_priced),
        ("priced_shared", set_priced_shared), ("diff_noise_floor", set_diff_noise_floor),
        ("diff_few", set_diff_few), ("self_check", set_self_check)]


def write_sets(outdir, seed=1):
    """Writes every set under OUTDIR/<name>/; returns the folders written."""
    g = Gen(seed)
    folders = []
    for name, fn in SETS:
        files, manifest = fn(g)
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        for fname, obj in files.items():
            with open(os.path.join(d, fname), "w") as f:
                json.dump(obj, f, indent=1)
                f.write("\n")
        manifest = dict(manifest, set=name, seed=seed, about=(fn.__doc__ or "").strip())
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        folders.append(d)
    return folders


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for d in write_sets(args.outdir, args.seed):
        print(d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
