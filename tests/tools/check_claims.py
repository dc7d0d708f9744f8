#!/usr/bin/env python3
"""Independent checker of the claims of `ddpbench report`, `diff` and `validate`.

Every verdict ddpbench prints is a typed claim in its JSON output (docs/METHODOLOGY.md
"Claims and their checker"). This script re-derives each claim from the raw result files,
with its own reading of the result schema (docs/result-schema.md, schema 1.0 to 1.17) and
the rules of docs/METHODOLOGY.md, and fails any claim its evidence does not support. It is
written apart from src/core/analysis: nothing here is copied from the C++ code.

    check_claims.py report OUTPUT.json FILE...            (FILE... as given to ddpbench report)
    check_claims.py diff OUTPUT.json --base FILE... --test FILE...
    check_claims.py validate DIR                          (DIR/verdict.json; skipped if absent)

Prints one line per failed claim ("FAIL kind subject: why"), one per rule it could not check
("UNCHECKED kind subject: rule"), and a summary "N claims checked (...), M failed, K rules
unchecked". Exit 1 when a claim failed, 0 otherwise, 2 on bad input.

Python 3.11, standard library only.
"""

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
from collections import Counter, defaultdict

# ----------------------------------------------------------------------------------------------
# Constants of docs/METHODOLOGY.md

TOL = 0.005            # relative tolerance of a recomputed number (the brief: 0.5%)
CI_TOL = 0.10          # a recomputed 95% CI may differ by 10% (t table vs. our t quantile)
NOISY_CV = 0.05        # Statistics: cv > 5% -> noisy
FEW_ITERATIONS = 20    # Statistics: fewer than 20 iterations -> few_samples
DIFF_FEW = 5           # diff: a launch with fewer than 5 iterations -> "too few samples"
MIN_KNOB_GAIN = 0.05   # Noise floors: kMinKnobGain
BOOTSTRAP_ROUNDS = 2000

# "Warnings that void a number": these void every number computed from step times
# (ex/s, p50, p95, exposed comm, epoch time, efficiency, DDP overhead) ...
TIME_VOIDING = {"oversubscribed", "negative_ddp_overhead", "throughput_drift", "gpu_throttled"}
# ... and these void p95 only.
P95_VOIDING = {"few_samples", "noisy"}

REPORT_KINDS = {"scope", "tally", "model", "data_quality", "not_measured", "target", "world_size",
                "ddp_setting", "setup", "memory", "cost", "straggler", "slow_node"}
DIFF_KINDS = {"diff_row"}
VALIDATE_KINDS = {"validate_check", "validate_tally"}

# "Same configuration": the fields a no-DDP row leaves empty (backend and the DDP knobs
# except grad_accum, which the baseline shares).
DDP_ONLY_FIELDS = {"backend", "bucket_cap_mb", "first_bucket_cap_mb", "broadcast_buffers",
                   "gradient_as_bucket_view", "static_graph", "find_unused_parameters",
                   "skip_all_reduce_unused_params", "comm_hook"}
# diff: "when only communication settings changed between the files (the DDP knobs, the comm
# hook, the backend, NCCL's version or variables)".
COMM_CHANGE_RE = re.compile(
    r"(^|[.\[])(bucket_cap_mb|first_bucket_cap_mb|broadcast_buffers|gradient_as_bucket_view|"
    r"static_graph|find_unused_parameters|skip_all_reduce_unused_params|comm_hook|backend|nccl)(\]|$)|NCCL_")


class BadInput(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# Statistics (METHODOLOGY "Statistics")

def percentile(xs, q):
    """numpy.percentile's default, type 7 of Hyndman & Fan."""
    s = sorted(xs)
    if not s:
        return None
    h = (len(s) - 1) * q / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def _betacf(a, b, x):
    # continued fraction of the incomplete beta function (modified Lentz)
    fpmin = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > fpmin else fpmin)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > fpmin else fpmin)
        c = 1.0 + aa / c
        c = c if abs(c) > fpmin else fpmin
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > fpmin else fpmin)
        c = 1.0 + aa / c
        c = c if abs(c) > fpmin else fpmin
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    bt = math.exp(lbt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


_T_CACHE = {}


def t_quantile(q, df):
    """Student's t quantile (q > 0.5), by bisection on the CDF."""
    key = (q, df)
    if key not in _T_CACHE:
        lo, hi = 0.0, 1e4
        for _ in range(200):
            mid = (lo + hi) / 2.0
            if t_cdf(mid, df) < q:
                lo = mid
            else:
                hi = mid
        _T_CACHE[key] = (lo + hi) / 2.0
    return _T_CACHE[key]


def ci_fraction(xs):
    """95% CI half-width of the mean as a fraction of the mean: t(0.975, n-1) s / sqrt(n) / mean."""
    n = len(xs)
    if n < 2:
        return None
    m = statistics.fmean(xs)
    if m <= 0:
        return None
    return t_quantile(0.975, n - 1) * statistics.stdev(xs) / math.sqrt(n) / m


def close(a, b, rel=TOL, abs_=1e-12):
    if a is None or b is None:
        return a is None and b is None
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    if math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def fmt(x):
    if x is None:
        return "none"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def parse_cpulist(s):
    """'0-3,5' -> {0,1,2,3,5}; None when unparsable."""
    if s is None:
        return None
    if isinstance(s, list):
        try:
            return {int(v) for v in s}
        except (TypeError, ValueError):
            return None
    out = set()
    for part in str(s).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                out.update(range(int(a), int(b) + 1))
            else:
                out.add(int(part))
        except ValueError:
            return None
    return out or None


# ----------------------------------------------------------------------------------------------
# Reading result files (docs/result-schema.md)

def _num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _single(v):
    """A config value that may be a list (a sweep): its only element, else None."""
    if isinstance(v, list):
        return v[0] if len(v) == 1 else None
    return v


class ResultFile:
    """One result file, one launch (METHODOLOGY "Several launches of one configuration")."""

    def __init__(self, path, label):
        self.path = path
        self.label = label
        try:
            with open(path, encoding="utf-8") as f:
                self.data = json.load(f)
        except (OSError, ValueError) as e:
            raise BadInput(f"{path}: {e}")
        if not isinstance(self.data, dict):
            raise BadInput(f"{path}: not a result file (top level is not an object)")
        self.kind = self.data.get("kind") or "run"
        self.env = self.data.get("environment") or {}
        self.config = self.data.get("config") or {}
        results = self.data.get("results") or []
        if not isinstance(results, list):
            raise BadInput(f"{path}: results is not a list")
        self.duplicate_of = None
        self.is_gpu = self._is_gpu()
        self.rows = [Row(self, i, r) for i, r in enumerate(results)]

    def _is_gpu(self):
        dt = self.env.get("device_type")
        if dt:
            return dt == "cuda"
        if self.env.get("gpus"):
            return True
        for r in self.data.get("results") or []:
            for k in r.get("ranks") or []:
                if str(k.get("device", "")).startswith("cuda"):
                    return True
        return False

    def rank_info(self, rank):
        """Where a rank ran: environment.ranks first, environment.gpus for what it lacks."""
        info = {}
        for e in self.env.get("ranks") or []:
            if isinstance(e, dict) and e.get("rank") == rank:
                info = {"host": e.get("host"), "uuid": e.get("gpu_uuid"), "bus_id": e.get("bus_id"),
                        "gpu_name": e.get("gpu_name"), "cpus": e.get("cpus")}
                break
        for g in self.env.get("gpus") or []:
            if isinstance(g, dict) and g.get("rank") == rank:
                for mine, theirs in (("host", "host"), ("uuid", "uuid"), ("bus_id", "bus_id"), ("gpu_name", "name")):
                    if not info.get(mine):
                        info[mine] = g.get(theirs)
                break
        return info


class Row:
    """One results[] row with everything the rules need, recomputed from its raw data."""

    def __init__(self, file, index, raw):
        self.file = file
        self.index = index
        self.raw = raw if isinstance(raw, dict) else {}
        r = self.raw
        s = r.get("summary") or {}
        self.model = r.get("model")
        self.label = r.get("label")
        self.world = r.get("world_size") if isinstance(r.get("world_size"), int) else 1
        self.ddp = bool(r.get("ddp"))
        self.batch = r.get("batch_per_rank") if isinstance(r.get("batch_per_rank"), int) else 0
        ga = r.get("grad_accum")
        self.grad_accum = ga if isinstance(ga, int) and ga >= 1 else 1
        # examples one rank processes per optimizer step
        self.examples = self.batch * self.grad_accum
        self.scaling = r.get("scaling") or "weak"
        self.mode = r.get("mode") or "train"
        self.strategy = r.get("strategy") or "ddp"
        self.ranks = [k for k in (r.get("ranks") or []) if isinstance(k, dict)]

        # pooled step times: every rank's samples_s
        per_rank = [[x for x in (k.get("samples_s") or []) if _num(x) is not None] for k in self.ranks]
        self.samples = [x for xs in per_rank for x in xs]
        self.all_ranks_have_samples = bool(self.ranks) and all(per_rank)
        if self.samples and self.all_ranks_have_samples:
            self.p50 = percentile(self.samples, 50)
            self.p75 = percentile(self.samples, 75)
            self.p95 = percentile(self.samples, 95)
        else:  # a 1.10+ row keeping only some ranks in full: the pooled percentiles it recorded
            self.p50, self.p75, self.p95 = _num(s.get("p50_s")), _num(s.get("p75_s")), _num(s.get("p95_s"))
        # the step statistic of every duration and price: the mean, the p50 without one
        self.mean_step = _num(s.get("mean_s")) or self.p50

        # per-iteration means across ranks
        im = r.get("iteration_means_s")
        if isinstance(im, list) and im and all(_num(x) is not None for x in im):
            self.iter_means = list(im)
        else:
            cols = [xs for xs in per_rank if xs]
            n = min((len(xs) for xs in cols), default=0)
            self.iter_means = [statistics.fmean(xs[i] for xs in cols) for i in range(n)]
        it = s.get("iterations")
        self.iterations = it if isinstance(it, int) and it > 0 else len(self.iter_means)
        self.cv = None
        if len(self.iter_means) >= 2 and statistics.fmean(self.iter_means) > 0:
            self.cv = statistics.stdev(self.iter_means) / statistics.fmean(self.iter_means)
        self.ci = ci_fraction(self.iter_means)

        # distinct devices (METHODOLOGY "Devices, not ranks")
        keys = set()
        for k in self.ranks:
            rank = k.get("rank")
            if not file.is_gpu:
                keys.add(("rank", rank))
                continue
            info = file.rank_info(rank)
            if info.get("uuid"):
                keys.add(("uuid", info["uuid"]))
            elif info.get("bus_id"):
                keys.add(("bus", info.get("host") or k.get("host"), info["bus_id"]))
            else:
                keys.add(("rank", rank))
        self.devices = max(len(keys), 1)
        self.shared = file.is_gpu and self.devices < max(self.world, len(self.ranks))
        self.per_device_ex_s = self.examples * self.world / self.devices / self.p50 if self.p50 else None
        self.aggregate_ex_s = self.examples * self.world / self.p50 if self.p50 else None

        # exposed comm = E / S of breakdown.mean_over_ranks
        self.exposed = None
        bd = (r.get("breakdown") or {}).get("mean_over_ranks") or {}
        e, st = _num(bd.get("exposed_comm_s")), _num(bd.get("step_s"))
        if e is not None and st:
            self.exposed = e / st
        self.has_breakdown = self.exposed is not None

        # the self-check verdict: grad_check_passed, else param_check_passed, else dp_check_passed
        checks = r.get("checks") or {}
        self.self_check = None
        for k in ("grad_check_passed", "param_check_passed", "dp_check_passed"):
            if isinstance(checks.get(k), bool):
                self.self_check = checks[k]
                break

        # warnings: the recorded ones plus what the data implies
        self.recorded = set()
        for w in r.get("warnings") or []:
            code = w.get("code") if isinstance(w, dict) else w
            if isinstance(code, str):
                self.recorded.add(code)
        self.warnings = set(self.recorded)
        if self.cv is not None and self.cv > NOISY_CV:
            self.warnings.add("noisy")
        if 0 < self.iterations < FEW_ITERATIONS:
            self.warnings.add("few_samples")
        if self._oversubscribed():
            self.warnings.add("oversubscribed")
        self.voiding = self.warnings & TIME_VOIDING

        launch = r.get("launch") or {}
        self.launch_id = (launch.get("job_id"), launch.get("started_utc")) \
            if launch.get("job_id") and launch.get("started_utc") else None
        self.content = json.dumps(r, sort_keys=True)
        self.counts, self.problem = self._validate()
        self.key = self._config_key()
        self.keystr = json.dumps(self.key, sort_keys=True)

    def __repr__(self):
        return f"{self.file.label} row {self.index}"

    def _oversubscribed(self):
        """CPU ranks: a host's ranks' threads beyond the CPUs their masks cover together, or one
        rank's threads beyond its own mask (METHODOLOGY "Statistics", warnings)."""
        f = self.file
        tpr = f.env.get("threads_per_rank")
        if f.is_gpu or not isinstance(tpr, int) or tpr < 1:
            return False
        per_host = defaultdict(lambda: [0, set()])
        for k in self.ranks:
            info = f.rank_info(k.get("rank"))
            cpus = parse_cpulist(info.get("cpus"))
            if cpus is None:
                return False
            if tpr > len(cpus):
                return True
            host = info.get("host") or k.get("host")
            per_host[host][0] += tpr
            per_host[host][1] |= cpus
        return any(threads > len(cpus) for threads, cpus in per_host.values())

    def _validate(self):
        """METHODOLOGY "Which rows count": rows report, check, diff and predict leave out."""
        r, s = self.raw, self.raw.get("summary") or {}
        if not (1 <= self.world <= 10_000_000):
            return False, "world size out of range"
        nodes = r.get("nodes", 1)
        if isinstance(nodes, int) and not (1 <= nodes <= self.world):
            return False, "nodes out of range"
        if not (1 <= self.batch <= 10**9):
            return False, "batch per rank out of range"
        p50 = _num(s.get("p50_s"))
        if p50 is None or not (1e-9 <= p50 <= 1e6):
            return False, "p50 not a step time"
        mean = s.get("mean_s")
        if mean is not None and (_num(mean) is None or not (0 <= mean <= 1e6)):
            return False, "mean not a step time"
        per = _num(s.get("ex_per_s_per_gpu"))
        want = self.examples / p50
        if per is not None and abs(per - want) > 0.01 * want:
            return False, "stored ex_per_s_per_gpu disagrees with batch / p50"
        tot = _num(s.get("ex_per_s_total"))
        if tot is not None and abs(tot - want * self.world) > 0.01 * want * self.world:
            return False, "stored ex_per_s_total disagrees"
        return True, ""

    def _config_key(self):
        """ConfigKey (METHODOLOGY "Same configuration"), from the row and its file."""
        r, f = self.raw, self.file
        cfg, env = f.config, f.env
        key = {}
        if f.is_gpu:
            names = set()
            for k in self.ranks:
                names.add(f.rank_info(k.get("rank")).get("gpu_name") or "")
            names.discard("")
            key["device"] = " + ".join(sorted(names)) if names else "GPU"
        else:
            key["device"] = "CPU (" + str(env.get("cpu_model") or "") + ")"
        key["model"] = self.model
        prec = r.get("precision") or cfg.get("precision") or "fp32"
        family = "fp32" if prec in ("fp32", "fp32-strict", "tf32") else prec
        key["precision"] = family
        math_key = ""
        if family == "fp32" and f.is_gpu:
            m = env.get("math") or {}
            cd, cb = m.get("cudnn_allow_tf32"), m.get("cublas_allow_tf32")
            if not isinstance(cd, bool) or not isinstance(cb, bool):
                math_key = "unrecorded"
            else:
                math_key = {(False, False): "no-tf32", (True, False): "cudnn-tf32",
                            (True, True): "tf32", (False, True): "cublas-tf32"}[(cd, cb)]
        key["math"] = math_key
        key["channels_last"] = bool(cfg.get("channels_last"))
        key["frozen_backbone"] = (cfg.get("head") or "head") if cfg.get("freeze_backbone") else ""
        key["image_size"] = r.get("image_size")
        key["scaling"] = self.scaling
        key["batch_per_rank"] = self.batch
        key["global_batch"] = r.get("global_batch") if isinstance(r.get("global_batch"), int) else self.batch * self.world
        key["world_size"] = self.world
        key["ddp"] = self.ddp
        opts = r.get("ddp_options") or {}

        def knob(name, default):
            if name in opts:
                return opts[name]
            v = _single(cfg.get(name))
            return default if v is None else v
        if self.ddp:
            key["backend"] = env.get("backend") or ""
            key["bucket_cap_mb"] = float(knob("bucket_cap_mb", 25.0))
            key["first_bucket_cap_mb"] = float(knob("first_bucket_cap_mb", 1.0))
            key["broadcast_buffers"] = bool(knob("broadcast_buffers", True))
            key["gradient_as_bucket_view"] = bool(knob("gradient_as_bucket_view", False))
            key["static_graph"] = bool(knob("static_graph", False))
            key["find_unused_parameters"] = bool(knob("find_unused_parameters", False))
            key["skip_all_reduce_unused_params"] = bool(knob("skip_all_reduce_unused_params", False))
            key["comm_hook"] = str(knob("comm_hook", "none"))
        else:
            for name, empty in (("backend", ""), ("bucket_cap_mb", 0.0), ("first_bucket_cap_mb", 0.0),
                                ("broadcast_buffers", False), ("gradient_as_bucket_view", False),
                                ("static_graph", False), ("find_unused_parameters", False),
                                ("skip_all_reduce_unused_params", False), ("comm_hook", "")):
                key[name] = empty
        key["grad_accum"] = self.grad_accum
        # fields the key holds beyond the METHODOLOGY table (config_key.hpp's field list)
        nc = cfg.get("num_classes")
        key["num_classes"] = nc if isinstance(nc, int) else 1000
        if f.is_gpu:
            cb = (env.get("math") or {}).get("cudnn_benchmark")
            key["cudnn_benchmark"] = ("on" if cb else "off") if isinstance(cb, bool) else "unrecorded"
            key["malloc_tuning"] = ""
        else:
            key["cudnn_benchmark"] = ""
            mt = env.get("malloc_tuning")
            applied = mt.get("applied") if isinstance(mt, dict) else None
            key["malloc_tuning"] = ("on" if applied else "off") if isinstance(applied, bool) else "unrecorded"
        tpr = env.get("threads_per_rank")
        key["threads_per_rank"] = tpr if isinstance(tpr, int) else 0
        key["strategy"] = self.strategy
        key["activation_checkpointing"] = bool(r.get("activation_checkpointing"))
        key["cpu_offload"] = bool(r.get("cpu_offload", cfg.get("cpu_offload", False)))
        key["mode"] = self.mode
        conv = r.get("convergence") or {}
        key["data"] = conv.get("dataset") or "synthetic" if conv else "synthetic"
        key["zero_grad"] = "set_to_none" if cfg.get("zero_grad_set_to_none") is True else "zeros"
        return key


def key_without(row, fields):
    return json.dumps({k: v for k, v in row.key.items() if k not in fields}, sort_keys=True)


class Evidence:
    """The files of one command, their rows grouped into configurations and launches."""

    def __init__(self, paths, label_prefix="F", start=1):
        self.files = []
        for i, p in enumerate(paths):
            self.files.append(ResultFile(p, f"{label_prefix}{start + i}"))
        self.by_path = {}
        for f in self.files:
            self.by_path.setdefault(f.path, f)
        self.by_label = {f.label: f for f in self.files}
        # A launch counts once: a file wholly equal to an earlier one is left out everywhere; a
        # row with the config of an earlier row and its content or its launch is that launch again.
        for i, f in enumerate(self.files):
            for g in self.files[:i]:
                if g.duplicate_of is None and f.data == g.data:
                    f.duplicate_of = g
                    break
        self.groups = defaultdict(list)
        self.repeat_of = {}
        for f in self.files:
            if f.duplicate_of is not None:
                continue
            for r in f.rows:
                if not r.counts:
                    continue
                for q in self.groups[r.keystr]:
                    if q.file is not f and (q.content == r.content or (r.launch_id and r.launch_id == q.launch_id)):
                        self.repeat_of[r] = q
                        break
                else:
                    self.groups[r.keystr].append(r)

    def all_rows(self):
        return [r for f in self.files for r in f.rows]

    def canonical(self, row):
        """The row as the launch it is: the earlier row it repeats, or itself."""
        if row.file.duplicate_of is not None:
            g = row.file.duplicate_of
            if row.index < len(g.rows):
                return self.canonical(g.rows[row.index])
        return self.repeat_of.get(row, row)

    def launches(self, row):
        row = self.canonical(row)
        return self.groups.get(row.keystr, [row])

    def chosen(self, row):
        """The launch whose p50 is the median, the slower middle one for an even count."""
        ls = sorted(self.launches(row), key=lambda r: r.p50)
        return ls[len(ls) // 2]

    def spread(self, row):
        ls = self.launches(row)
        if len(ls) < 2:
            return None
        ps = [r.p50 for r in ls]
        return (max(ps) - min(ps)) / self.chosen(row).p50

    def chosen_rows(self):
        return [self.chosen(g[0]) for g in self.groups.values() if g]

    def distinct_launches(self):
        """Files that are launches of their own: not a copy, not made only of repeated rows."""
        n = 0
        for f in self.files:
            if f.duplicate_of is not None:
                continue
            if f.rows and all(r in self.repeat_of for r in f.rows if r.counts) and any(r.counts for r in f.rows):
                continue
            n += 1
        return n


# ----------------------------------------------------------------------------------------------
# The checker

class Outcome:
    def __init__(self):
        self.counts = Counter()
        self.failures = []     # "FAIL kind subject: why"
        self.unchecked = []    # "UNCHECKED kind subject: rule"

    def merge(self, other):
        self.counts.update(other.counts)
        self.failures += other.failures
        self.unchecked += other.unchecked

    def summary(self):
        per_kind = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return (f"{sum(self.counts.values())} claims checked ({per_kind or 'none'}), "
                f"{len(self.failures)} failed, {len(self.unchecked)} rules unchecked")


class Claim:
    """One claim and the verdict of the checker on it."""

    def __init__(self, checker, raw):
        self.ck = checker
        self.raw = raw if isinstance(raw, dict) else {}
        self.kind = self.raw.get("kind")
        self.subject = self.raw.get("subject")
        self.verdict = self.raw.get("verdict") or ""
        self.problems = []
        self.unchecked = []
        self.skip_rules = False

    # access
    def num(self, name, numbers=None):
        v = (numbers if numbers is not None else self.raw.get("numbers") or {}).get(name)
        if isinstance(v, dict):
            return _num(v.get("value"))
        return _num(v)

    def word(self, name):
        v = (self.raw.get("words") or {}).get(name)
        return v if isinstance(v, str) else None

    def rows(self, refs=None, role=None, prefix=None):
        out = []
        for ref in (self.raw.get("rows") if refs is None else refs) or []:
            rl = ref.get("role") or ""
            if role is not None and rl != role:
                continue
            if prefix is not None and not rl.startswith(prefix):
                continue
            r = self.ck.resolve(ref)
            if r is not None:
                out.append(r)
        return out

    def one(self, role, refs=None, need=True):
        rs = self.rows(refs, role=role)
        if not rs:
            if need:
                self.fail(f"no row with role '{role}'")
            return None
        return rs[0]

    # verdicts
    def fail(self, why):
        self.problems.append(why)

    def cannot(self, rule):
        self.unchecked.append(rule)

    def need(self, names, numbers=None, what="claim"):
        """Numbers a claim of its kind must carry: a verdict is never without its numbers."""
        for name in names:
            if self.num(name, numbers) is None:
                self.fail(f"{what} has no number '{name}'")

    def expect(self, name, claimed, mine, rel=TOL, abs_=1e-9):
        if claimed is None:
            return
        if mine is None:
            self.cannot(f"{name}: not recomputable")
            return
        if not close(claimed, mine, rel, abs_):
            self.fail(f"{name} {fmt(claimed)} but the rows give {fmt(mine)}")

    def warnings_cover(self, listed, rows, what="claim"):
        """Rule: a claim carries the warnings of the rows it rests on (recomputed)."""
        listed = set(listed or [])
        for r in rows:
            missing = r.warnings - listed
            if missing:
                self.fail(f"{what} warnings {sorted(listed)} leave out {sorted(missing)} of {r}")


def verdict_class(v):
    v = (v or "").strip()
    for c in ("PASS", "FAIL", "VOID"):
        if v.startswith(c):
            return c
    return "not evaluated"


class Checker:
    def __init__(self, mode, evidence, output, base=None, test=None):
        self.mode = mode
        self.ev = evidence          # report and validate: the files; diff: the base side (DiffChecker.sides)
        self.base = base
        self.test = test
        self.out = output
        self.outcome = Outcome()
        self.claims = self._claims()

    # -- input -----------------------------------------------------------------------------
    def _claims(self):
        out = self.out if isinstance(self.out, dict) else {}
        raw = list(out.get("claims") or [])
        head = out.get("headline")
        if isinstance(head, dict):
            raw += head.get("claims") or []
        seen, claims = set(), []
        for c in raw:
            s = json.dumps(c, sort_keys=True)
            if s not in seen:
                seen.add(s)
                claims.append(c)
        return claims

    def resolve(self, ref):
        """The row a claim's rows[] entry names, or None (row -1, or an error noted by common())."""
        f = self.ev.by_path.get(ref.get("file"))
        row = ref.get("row")
        if f is None or not isinstance(row, int) or row < 0 or row >= len(f.rows):
            return None
        # the label picks among files given twice
        lf = self.ev.by_label.get(ref.get("label"))
        if lf is not None and lf.path == f.path:   # a file given twice: the label picks the copy
            f = lf
        return f.rows[row]

    def claims_of(self, kind):
        return [c for c in self.claims if isinstance(c, dict) and c.get("kind") == kind]

    def table_kinds(self):
        kinds = {t.get("kind") for t in (self.out.get("tables") or []) if isinstance(t, dict)}
        if self.out.get("findings"):
            kinds.add("findings")
        return kinds

    def price(self):
        """--gpu-hour-cost: from a cost claim, else the title of a cost table."""
        for c in self.claims_of("cost"):
            v = Claim(self, c).num("gpu_hour_usd")
            if v:
                return v
        for t in self.out.get("tables") or []:
            if isinstance(t, dict) and t.get("kind") == "cost":
                m = re.search(r"([0-9.]+) USD per (?:GPU|rank|device)-hour", str(t.get("title", "")))
                if m:
                    return float(m.group(1))
        return None

    # -- driver ----------------------------------------------------------------------------
    def run(self):
        for raw in self.claims:
            c = Claim(self, raw)
            self.outcome.counts[c.kind or "(no kind)"] += 1
            self.common(c)
            fn = getattr(self, "check_" + str(c.kind), None)
            if c.skip_rules:
                pass
            elif fn is None:
                c.cannot(f"no rule for kind {c.kind}")
            else:
                try:
                    fn(c)
                except Exception as e:  # a checker bug must not pass a claim silently
                    c.cannot(f"checker error {type(e).__name__}: {e}")
            tag = f"{c.kind} {c.subject}"
            if c.problems:
                self.outcome.failures.append(f"FAIL {tag}: " + "; ".join(dict.fromkeys(c.problems)))
            for u in dict.fromkeys(c.unchecked):
                self.outcome.unchecked.append(f"UNCHECKED {tag}: {u}")
        self.completeness()
        return self.outcome

    # -- every claim ("Claims and their checker", rules every claim keeps) -----------------
    def common(self, c):
        known = {"report": REPORT_KINDS, "diff": DIFF_KINDS, "validate": VALIDATE_KINDS | REPORT_KINDS}[self.mode]
        if c.kind not in known:
            c.fail(f"kind {c.kind!r} is not a {self.mode} claim kind")
        if not isinstance(c.raw.get("text"), str) or not c.raw["text"].strip():
            c.fail("empty text")
        else:
            m = re.search(r", ;|,,|\(\s*[,;]|[,;]\s*\)", c.raw["text"])
            if m:  # a part of the sentence rendered from a number the claim does not have
                c.fail(f"text renders an empty part ('{m.group(0)}')")
        if not isinstance(c.raw.get("warnings", []), list):
            c.fail("warnings is not a list")
        refs = list(c.raw.get("rows") or [])
        for it in c.raw.get("items") or []:
            refs += it.get("rows") or []
        for ref in refs:
            if not isinstance(ref, dict):
                c.fail("a rows[] entry is not an object")
                continue
            self.check_ref(c, ref, self.ev)
        table = c.word("table")
        if table and self.mode == "report" and table not in self.table_kinds():
            c.fail(f"cites table '{table}' the report does not print")

    def check_ref(self, c, ref, ev):
        """rows[].file is a file as given, label its label, row a 0-based index into its
        results (-1: the file as a whole)."""
        path, label, row = ref.get("file"), ref.get("label"), ref.get("row")
        f = ev.by_path.get(path)
        if f is None:
            c.fail(f"row names {path!r}, not a file given")
            return
        lf = ev.by_label.get(label)
        if lf is None or (lf is not f and lf.path != f.path):
            c.fail(f"label {label} is not the label of {path}")
        if not isinstance(row, int) or row < -1 or row >= len(f.rows):
            c.fail(f"{label} row {row} does not exist ({len(f.rows)} rows)")
        elif row >= 0 and not f.rows[row].counts:
            c.fail(f"{label} row {row} rests on a row every command leaves out ({f.rows[row].problem})")

    # -- the launch roles -------------------------------------------------------------------
    def check_launch_roles(self, c, refs, rested=()):
        """Rows with role '... launch of L' must be launches of the configuration of a row of
        the claim (any other role) from file L."""
        by_label = defaultdict(list)
        for r in rested:
            by_label[r.file.label].append(r)
        for ref in refs or []:
            if "launch of " not in (ref.get("role") or ""):
                r = self.resolve(ref)
                if r is not None:
                    by_label[r.file.label].append(r)
        for ref in refs or []:
            m = re.search(r"launch of (\S+)$", ref.get("role") or "")
            if not m:
                continue
            r = self.resolve(ref)
            if r is None:
                continue
            owners = by_label.get(m.group(1), [])
            if not any(self.ev.canonical(r) in self.ev.launches(o) for o in owners):
                c.fail(f"{r} ({ref.get('role')}) is not a launch of the configuration of a row of {m.group(1)}")

    def require_chosen(self, c, row, what):
        if row is None:
            return
        ch = self.ev.chosen(row)
        if self.ev.canonical(row) is not ch:
            n = len(self.ev.launches(row))
            c.fail(f"{what} {row} is not the median launch of its {n} launches ({ch} is)")

    # -- table helpers (weak / strong scaling tables) -----------------------------------------
    def table_rows(self, row):
        """The chosen launches of the scaling table a row belongs to: DDP rows that share every
        field but world_size (and global_batch; strong scaling: and batch_per_rank)."""
        drop = {"world_size", "global_batch"} | ({"batch_per_rank"} if row.scaling == "strong" else set())
        k = key_without(row, drop)
        return [r for r in self.ev.chosen_rows() if r.ddp and key_without(r, drop) == k]

    def efficiency(self, measured, baseline):
        if measured is None or baseline is None or not baseline.per_device_ex_s:
            return None
        return measured.per_device_ex_s / baseline.per_device_ex_s

    def check_largest(self, c, measured):
        """Targets and the world-size rule: the largest row whose ranks did not share a GPU."""
        rows = [r for r in self.table_rows(measured) if not r.shared]
        if not rows:
            return
        top = max(r.devices for r in rows)
        if measured.devices != top and not measured.shared:
            c.fail(f"{measured} has {measured.devices} devices but its table's largest trusted row has {top}")

    def check_baseline(self, c, measured, baseline):
        """Efficiency's baseline: the 1-GPU DDP row, else the no-DDP row, else the smallest group."""
        if baseline is None:
            return
        ones = [r for r in self.table_rows(measured) if r.devices == 1 and not r.shared]
        if ones and not (baseline.ddp and baseline.devices == 1):
            c.fail(f"baseline {baseline} is not the table's 1-GPU DDP row ({ones[0]})")
        if baseline.ddp:
            self.require_chosen(c, baseline, "baseline")

    # ============================================================================================
    # report kinds

    def check_scope(self, c):
        """Headline, Scope: the launches (a launch given twice counts once), the most ranks,
        devices and nodes of a row."""
        c.expect("files", c.num("files"), float(len(self.ev.files)))
        c.expect("launches", c.num("launches"), float(self.ev.distinct_launches()))
        files_named = {ref.get("label") for ref in c.raw.get("rows") or [] if ref.get("row") == -1}
        missing = [f.label for f in self.ev.files if f.label not in files_named]
        if missing:
            c.fail(f"scope leaves out files {missing}")
        rows = [r for r in self.ev.all_rows() if r.counts]
        c.need(["files", "launches", "ranks", "gpus", "nodes"])
        if rows:
            lo_ranks = max(r.world for r in rows)
            lo_gpus = max(r.devices for r in rows)
            hi = max([lo_ranks] + [f.env.get("world_size") or 0 for f in self.ev.files])
            lo_nodes = max(len({k.get("host") for k in r.ranks}) for r in rows)
            hi_nodes = max([lo_nodes] + [len(set(f.env.get("hosts") or [])) for f in self.ev.files])
            for name, lo, top in (("ranks", lo_ranks, hi), ("gpus", lo_gpus, hi), ("nodes", lo_nodes, hi_nodes)):
                v = c.num(name)
                if v is not None and (v != int(v) or not (lo <= v <= top)):
                    c.fail(f"{name} {fmt(v)} outside what the files measured ({lo}..{top})")

    def target_value(self, c, metric, measured, baseline):
        if "efficiency" in metric:
            return self.efficiency(measured, baseline)
        if "exposed comm" in metric:
            return measured.exposed
        if "ex/s" in metric:
            return measured.per_device_ex_s
        return None

    def check_target(self, c):
        """Executive summary, Targets: PASS, FAIL, FAIL (self-check failed) or VOID when a warning
        of a row the number rests on voids it; efficiency and exposed comm only above one GPU."""
        metric = c.word("metric") or ""
        measured = c.one("measured")
        if measured is None:
            return
        baseline = c.one("baseline", need=False)
        if "efficiency" in metric and baseline is None and c.num("measured") is not None:
            c.fail("efficiency without its baseline row")
        rested = [measured] + ([baseline] if baseline is not None else [])
        c.warnings_cover(c.raw.get("warnings"), rested)
        self.check_launch_roles(c, c.raw.get("rows"), rested)
        self.require_chosen(c, measured, "measured row")
        if measured.ddp and measured.scaling == "weak":
            self.check_largest(c, measured)
        if "efficiency" in metric:
            self.check_baseline(c, measured, baseline)
        c.expect("gpus", c.num("gpus"), float(measured.devices))
        c.expect("ranks", c.num("ranks"), float(measured.world))
        self.check_required(c, c.num("threshold"), c.word("comparison"))

        known = any(k in metric for k in ("efficiency", "exposed comm", "ex/s"))
        mine = self.target_value(c, metric, measured, baseline) if known else None
        if "p95" in metric:
            voids = set().union(*(r.warnings & (TIME_VOIDING | P95_VOIDING) for r in rested))
        elif "memory" in metric:
            voids = set()
        else:
            voids = set().union(*(r.voiding for r in rested))
        self_failed = any(r.self_check is False for r in rested)
        v = c.verdict
        claimed = c.num("measured")

        if claimed is None and verdict_class(v) != "not evaluated":
            c.fail(f"verdict '{v}' without the measured number")
            return
        if v.startswith("not measured") or v.startswith("MISSING") or claimed is None:
            if "1 GPU only" in v:
                if measured.devices > 1:
                    c.fail(f"'{v}' but {measured} ran on {measured.devices} devices")
            elif "breakdown" in v:
                if measured.has_breakdown:
                    c.fail(f"'{v}' but {measured} has a breakdown")
            elif known and mine is not None and not v.startswith("not"):
                c.fail(f"verdict '{v}' without a measured number the rows give ({fmt(mine)})")
            if ("efficiency" in metric or "exposed comm" in metric) and measured.devices == 1 \
                    and not measured.shared and not v.startswith("not measured"):
                c.fail("a 1-GPU table's efficiency/comm target must be not evaluated")
            return
        if not known:
            c.cannot(f"metric '{metric}' is not recomputed")
        else:
            c.expect("measured", claimed, mine)
        if ("efficiency" in metric or "exposed comm" in metric) and measured.devices == 1:
            c.fail(f"{metric} evaluated on 1 GPU")
        threshold = c.num("threshold")
        comp = c.word("comparison")
        value = mine if mine is not None else claimed
        cls = verdict_class(v)
        allowed = set()
        if self_failed:
            allowed.add("FAIL (self-check failed)")
        if voids:
            allowed.add("VOID")
        if not allowed:
            if threshold is None or comp not in (">=", "<"):
                c.cannot("threshold or comparison missing")
                return
            meets = value >= threshold if comp == ">=" else value < threshold
            allowed.add("PASS" if meets else "FAIL")
            if close(value, threshold, TOL):       # on the line: either side is the rows' word
                allowed |= {"PASS", "FAIL"}
        if v.startswith("FAIL (self-check failed)"):
            got = "FAIL (self-check failed)"
        else:
            got = cls
        if got not in allowed:
            why = f"voided by {sorted(voids)}" if voids else \
                ("a row failed its self-check" if self_failed else f"{fmt(value)} {comp} {fmt(threshold)}")
            c.fail(f"verdict '{v}' but expected {' or '.join(sorted(allowed))} ({why})")
        if got == "VOID":
            m = re.match(r"VOID \(([^)]*)\)", v)
            if m and not set(re.split(r"[ ,]+", m.group(1))) & voids:
                c.fail(f"'{v}' names a warning the rows do not carry as voiding ({sorted(voids)})")

    def check_required(self, c, threshold, comp):
        """The threshold is the one the sentence states ('required >= 85.0%')."""
        m = re.match(r"\s*(>=|<|<=|>)\s*([0-9.]+)\s*(%?)", c.word("required") or "")
        if not m or threshold is None:
            return
        stated = float(m.group(2)) / (100 if m.group(3) else 1)
        digits = len(m.group(2).split(".")[1]) if "." in m.group(2) else 0
        if abs(stated - threshold) > 0.51 * 10 ** -digits / (100 if m.group(3) else 1) + 1e-12:
            c.fail(f"threshold {fmt(threshold)} but the sentence requires {m.group(0).strip()}")
        if comp and m.group(1) != comp:
            c.fail(f"comparison '{comp}' but the sentence requires '{m.group(1)}'")

    def check_tally(self, c):
        """Headline, Targets: the verdicts counted, each FAIL and VOID named."""
        # the report's targets, and under validate its own checks (its tally adds them)
        targets = [Claim(self, t) for t in self.claims_of("target") + self.claims_of("validate_check")]
        count = Counter(verdict_class(t.verdict) for t in targets)
        for name, cls in (("pass", "PASS"), ("fail", "FAIL"), ("void", "VOID"), ("not_evaluated", "not evaluated")):
            v = c.num(name)
            if v is None:
                c.fail(f"tally has no {name} count")
            elif v != count[cls]:
                c.fail(f"{name} {fmt(v)} but {count[cls]} target claims are {cls}")
        if count["FAIL"] and verdict_class(c.verdict) != "FAIL":
            c.fail(f"verdict '{c.verdict}' with {count['FAIL']} FAIL targets")
        if not count["FAIL"] and not count["VOID"] and count["PASS"] and c.verdict != "PASS":
            c.fail(f"verdict '{c.verdict}' but every evaluated target passed")
        if not (count["FAIL"] or count["VOID"] or count["PASS"]) and verdict_class(c.verdict) != "not evaluated":
            c.fail(f"verdict '{c.verdict}' but no target was evaluated")
        items = c.raw.get("items") or []

        def sig(refs):
            return sorted((r.get("file"), r.get("row"), r.get("role")) for r in refs or [])
        used = set()
        for t in targets:
            cls = verdict_class(t.verdict)
            if cls not in ("FAIL", "VOID"):
                continue
            found = None
            for i, it in enumerate(items):
                if i in used or verdict_class(it.get("verdict")) != cls:
                    continue
                if sig(it.get("rows")) == sig(t.raw.get("rows")) and \
                        close(t.num("measured"), c.num("measured", it.get("numbers") or {})) and \
                        close(t.num("threshold"), c.num("threshold", it.get("numbers") or {})):
                    found = i
                    break
            if found is None:
                c.fail(f"{cls} target '{t.subject}' ({t.word('metric')}) is not an item")
            else:
                used.add(found)
                it = items[found]
                for name in ("gpus", "ranks"):
                    c.expect(f"{name} of item '{it.get('name')}'", c.num(name, it.get("numbers") or {}), t.num(name))
                rested = [r for ref in t.raw.get("rows") or [] if "launch of" not in (ref.get("role") or "")
                          for r in [self.resolve(ref)] if r is not None]
                c.warnings_cover(it.get("warnings"), rested, what=f"item '{it.get('name')}'")
        for i, it in enumerate(items):
            if i not in used:
                c.fail(f"item '{it.get('name')}' is no FAIL or VOID target")

    def check_model(self, c):
        """Headline, one line per model: best per-GPU ex/s (not a shared GPU, a voided row only
        when no clean row exists) with its warnings; the efficiency at the largest size measured
        (VOID with its warning); the exposed comm there; the lowest USD per 1M samples."""
        model = c.subject
        refs = c.raw.get("rows") or []
        c.need(["best_per_gpu_ex_s", "best_gpus"])
        best = c.one("best")
        if best is not None:
            if best.model != model or not best.ddp:
                c.fail(f"best row {best} is not a DDP row of {model}")
            if best.shared:
                c.fail(f"best row {best} measures ranks sharing a GPU")
            c.expect("best_per_gpu_ex_s", c.num("best_per_gpu_ex_s"), best.per_device_ex_s)
            c.expect("best_gpus", c.num("best_gpus"), float(best.devices))
            if c.word("best_file") not in (None, best.file.label):
                c.fail(f"best_file {c.word('best_file')} but the best row is in {best.file.label}")
            c.warnings_cover(c.raw.get("warnings"), [best])
            self.require_chosen(c, best, "best row")
            cands = [r for r in self.ev.chosen_rows() if r.model == model and r.ddp and not r.shared]
            clean = [r for r in cands if not r.voiding]
            pool = clean or cands
            if clean and best.voiding:
                c.fail(f"best row {best} is voided ({sorted(best.voiding)}) while clean rows exist")
            if pool:
                top = max(pool, key=lambda r: r.per_device_ex_s)
                if top.per_device_ex_s > best.per_device_ex_s * (1 + TOL):
                    c.fail(f"best {fmt(best.per_device_ex_s)} ex/s but {top} gives {fmt(top.per_device_ex_s)}")
        eff_row = c.one("efficiency", need=False)
        eff_base = c.one("efficiency baseline", need=False)
        if c.num("efficiency") is not None:
            if eff_row is None or eff_base is None:
                c.fail("efficiency without its rows")
            else:
                c.expect("efficiency", c.num("efficiency"), self.efficiency(eff_row, eff_base))
                c.expect("efficiency_gpus", c.num("efficiency_gpus"), float(eff_row.devices))
                voids = eff_row.voiding | eff_base.voiding
                named = c.word("efficiency_void") or ""
                if voids and not named:
                    c.fail(f"efficiency {fmt(c.num('efficiency'))} rests on rows voided by {sorted(voids)} "
                           f"but is not VOID")
                if named and named not in voids:
                    c.fail(f"efficiency VOID by '{named}' but the rows' voiding warnings are {sorted(voids)}")
                self.check_launch_roles(c, refs, [eff_row, eff_base])
                self.check_largest(c, eff_row)
            if c.num("exposed_comm") is not None and eff_row is not None:
                c.expect("exposed_comm", c.num("exposed_comm"), eff_row.exposed)
        multi = [r for r in self.ev.chosen_rows() if r.model == model and r.ddp and not r.shared and r.devices > 1]
        if c.verdict == "one device" and multi:
            c.fail(f"'one device' but {multi[0]} ran on {multi[0].devices} devices")
        if (c.word("efficiency_void") or "") and c.verdict != "VOID":
            c.fail(f"the efficiency is VOID but the verdict is '{c.verdict}'")
        if c.num("trusted_efficiency") is not None:
            trusted = [r for r in refs if "trusted" in (r.get("role") or "")]
            if trusted:
                t_row = c.one(trusted[0].get("role"))
                c.expect("trusted_efficiency", c.num("trusted_efficiency"), self.efficiency(t_row, eff_base))
                if t_row is not None and t_row.voiding:
                    c.fail(f"the trusted efficiency rests on {t_row}, voided by {sorted(t_row.voiding)}")
            else:
                mine = self.trusted_efficiency(eff_row, eff_base)
                c.fail(f"trusted_efficiency {fmt(c.num('trusted_efficiency'))} is rendered without the rows it "
                       f"comes from (the rows give {fmt(mine)})")
        if c.num("usd_per_million") is not None:
            cheap = c.one("cheapest")
            price = self.price()
            if cheap is not None:
                c.expect("usd_gpus", c.num("usd_gpus"), float(cheap.devices))
                if cheap.shared:
                    c.fail(f"the cheapest row {cheap} measures ranks sharing a GPU, which are not priced")
            if cheap is not None and price:
                c.expect("usd_per_million", c.num("usd_per_million"), usd_per_million(cheap, price))
                priced = [r for r in self.ev.chosen_rows() if r.model == model and r.ddp and not r.shared
                          and not r.voiding and r.mean_step]
                low = min(priced, key=lambda r: usd_per_million(r, price), default=None)
                if low is not None and usd_per_million(low, price) < usd_per_million(cheap, price) * (1 - TOL):
                    c.fail(f"cheapest {fmt(usd_per_million(cheap, price))} USD per 1M samples but {low} costs "
                           f"{fmt(usd_per_million(low, price))}")
            elif cheap is not None:
                c.cannot("usd_per_million: no price in the report's cost claims")

    def trusted_efficiency(self, eff_row, eff_base):
        """The efficiency at the largest size no warning voids (for the message only)."""
        if eff_row is None or eff_base is None:
            return None
        rows = [r for r in self.table_rows(eff_row) if not r.shared and not r.voiding and r.devices > 1]
        if not rows:
            return None
        top = max(rows, key=lambda r: r.devices)
        return self.efficiency(top, eff_base)

    def check_data_quality(self, c):
        """Headline, Data quality: noisy rows (cv > 5%), fewer than 20 iterations, voided, sharing
        a GPU, stopped before the CI target; the largest launch-to-launch spread."""
        items = c.raw.get("items") or []
        shown, baselines = [], []
        for it in items:
            if it.get("verdict") == "baseline":  # a no-DDP row the weak tables' overheads rest on
                rs = c.rows(it.get("rows"), role="baseline")
                if not rs:
                    c.fail(f"item '{it.get('name')}' has no baseline row")
                    continue
                r = rs[0]
                if r.ddp:
                    c.fail(f"baseline item '{it.get('name')}' names {r}, a DDP row")
                baselines.append(r)
                nums = it.get("numbers") or {}
                c.expect(f"cv of {r}", c.num("cv", nums), r.cv)
                c.warnings_cover(it.get("warnings"), [r], what=f"item {r}")
                continue
            rs = c.rows(it.get("rows"), role="shown")
            if not rs:
                c.fail(f"item '{it.get('name')}' has no shown row")
                continue
            r = rs[0]
            shown.append(r)
            nums = it.get("numbers") or {}
            c.need(["cv", "iterations"], nums, f"item '{it.get('name')}'")
            c.expect(f"cv of {r}", c.num("cv", nums), r.cv)
            c.expect(f"iterations of {r}", c.num("iterations", nums), float(r.iterations), rel=0, abs_=0.5)
            c.warnings_cover(it.get("warnings"), [r], what=f"item {r}")
            self.require_chosen(c, r, "shown row")
        counts = {
            "rows": len(shown),
            "noisy": sum(1 for r in shown if r.cv is not None and r.cv > NOISY_CV),
            "few_samples": sum(1 for r in shown if 0 < r.iterations < FEW_ITERATIONS),
            "voided": sum(1 for r in shown if r.voiding),
            "shared": sum(1 for r in shown if r.shared),
            "capped": sum(1 for r in shown if capped(r)),
        }
        counts["baseline_rows"] = len(baselines)
        counts["baseline_noisy"] = sum(1 for r in baselines if r.cv is not None and r.cv > NOISY_CV)
        for name, mine in counts.items():
            v = c.num(name)
            if v is not None and int(round(v)) != mine:
                c.fail(f"{name} {int(v)} but {mine} of the shown rows are")
        spreads = [self.ev.spread(r) for r in shown]
        spreads = [s for s in spreads if s is not None]
        ms = c.num("max_spread")
        if ms is not None:
            if not spreads:
                c.fail(f"max_spread {fmt(ms)} but no shown row has two launches")
            else:
                c.expect("max_spread", ms, max(spreads))
        elif spreads and max(spreads) > 0:
            c.fail(f"no launch-to-launch spread named but the rows spread up to {fmt(max(spreads))}")
        # each launch given twice is named, and only those
        repeats = c.word("repeats")
        if repeats is not None:
            named = set(re.findall(r"\b([FBT]\d+) repeats ([FBT]\d+)", repeats))
            mine = set()
            for f in self.ev.files:
                if f.duplicate_of is not None:
                    mine.add((f.label, f.duplicate_of.label))
                    continue
                origs = {self.ev.repeat_of[r].file.label for r in f.rows if r in self.ev.repeat_of}
                if f.rows and origs and all(r in self.ev.repeat_of for r in f.rows if r.counts):
                    mine |= {(f.label, o) for o in origs}
            for pair in mine - named:
                c.fail(f"{pair[0]} repeats {pair[1]}, which the data quality line does not say")
            for pair in named - mine:
                c.fail(f"says {pair[0]} repeats {pair[1]}, but it is a launch of its own")
        noisy = [r for r in shown if r.cv is not None and r.cv > NOISY_CV]
        worst = c.word("worst_noisy")
        if noisy and worst is not None:
            w = max(noisy, key=lambda r: r.cv)
            if not re.search(rf"\b{w.file.label}\b", worst):
                c.fail(f"worst noisy '{worst}' but the worst is {w} (cv {w.cv:.3f})")
        noisy_base = [r for r in baselines if r.cv is not None and r.cv > NOISY_CV]
        worst_base = c.word("baseline_noisy_rows")
        if noisy_base and worst_base is not None:
            w = max(noisy_base, key=lambda r: r.cv)
            if not re.search(rf"\b{w.file.label}\b", worst_base):
                c.fail(f"worst noisy baseline '{worst_base}' but the worst is {w} (cv {w.cv:.3f})")

    def check_not_measured(self, c):
        """Headline, Not measured: each section the files could not fill."""
        subject = c.subject or ""
        if subject.startswith("Scaling beyond one"):
            multi = [r for r in self.ev.chosen_rows() if r.ddp and r.devices > 1]
            if multi:
                c.fail(f"says scaling beyond one device is not measured, but {multi[0]} ran on "
                       f"{multi[0].devices} devices")
        elif subject == "Cost":
            if "cost" in self.table_kinds() or self.claims_of("cost"):
                c.fail("says cost is not measured, but the report prices rows")
        elif subject == "Communication":
            comm = [f for f in self.ev.files if f.kind == "comm" or f.data.get("comm_pairs")]
            if comm:
                c.fail(f"says communication is not measured, but {comm[0].label} is a collective/pairs file")
        elif subject == "Where the time goes":
            m = re.search(r"on (\d+) (?:ranks?|GPUs?)", c.word("why") or "")
            if not m:
                c.cannot("where the time goes: the size is not named")
                return
            n = int(m.group(1))
            have = [r for r in self.ev.chosen_rows() if r.ddp and (r.devices == n or r.world == n) and r.has_breakdown]
            if have:
                c.fail(f"says no row on {n} has the breakdown, but {have[0]} has")
        else:
            c.cannot(f"section '{subject}'")

    def check_world_size(self, c):
        """Recommendations, world size: "scaling holds to N" when the largest count meets the
        efficiency target; nothing when a deciding row failed its self-check or is voided."""
        measured = c.one("measured")
        baseline = c.one("baseline")
        c.need(["efficiency", "devices", "target"])
        if measured is None or baseline is None:
            return
        eff = self.efficiency(measured, baseline)
        c.expect("efficiency", c.num("efficiency"), eff)
        c.expect("devices", c.num("devices"), float(measured.devices))
        c.warnings_cover(c.raw.get("warnings"), [measured, baseline])
        if c.num("exposed_comm") is not None:
            c.expect("exposed_comm", c.num("exposed_comm"), measured.exposed)
        for r in (measured, baseline):
            if r.voiding:
                c.fail(f"a deciding row {r} carries {sorted(r.voiding)}, which voids its throughput: the rule "
                       f"must say nothing")
            if r.self_check is False:
                c.fail(f"a deciding row {r} failed its self-check")
        self.check_launch_roles(c, c.raw.get("rows"), [measured, baseline])
        self.require_chosen(c, measured, "measured row")
        self.check_largest(c, measured)
        self.check_baseline(c, measured, baseline)
        target = c.num("target")
        same = [Claim(self, t) for t in self.claims_of("target") if t.get("subject") == c.subject and
                "efficiency" in ((t.get("words") or {}).get("metric") or "")]
        if same and target is not None and not close(target, same[0].num("threshold")):
            c.fail(f"target {fmt(target)} but the efficiency target of this table is {fmt(same[0].num('threshold'))}")
        if target is None or eff is None:
            c.cannot("world size verdict: no target")
            return
        v = c.verdict
        meets = eff >= target
        on_line = close(eff, target)
        if v == "holds" and not meets and not on_line:
            c.fail(f"'holds' but efficiency {fmt(eff)} < target {fmt(target)}")
        if v != "holds" and meets and not on_line:
            c.fail(f"'{v}' but efficiency {fmt(eff)} meets the target {fmt(target)}")
        if v == "at_most":
            ok = c.one("meets target")
            if ok is not None:
                e_ok = self.efficiency(ok, baseline)
                c.expect("ok_efficiency", c.num("ok_efficiency"), e_ok)
                c.expect("ok_devices", c.num("ok_devices"), float(ok.devices))
                if e_ok is not None and e_ok < target and not close(e_ok, target):
                    c.fail(f"'at most {ok.devices}' but {ok} reaches {fmt(e_ok)} < target {fmt(target)}")
                if ok.devices >= measured.devices:
                    c.fail(f"the size that meets the target ({ok.devices}) is not below the largest")
                if ok.voiding:
                    c.fail(f"the size that meets the target rests on {ok}, voided by {sorted(ok.voiding)}")
                for r in self.table_rows(measured):
                    e = self.efficiency(r, baseline)
                    if ok.devices < r.devices < measured.devices and not r.shared and e is not None \
                            and e >= target * (1 + TOL) and not r.voiding:
                        c.fail(f"'at most {ok.devices}' but {r} ({r.devices} devices) also meets it ({fmt(e)})")
        if v == "none":
            others = [r for r in self.table_rows(measured) if not r.shared and 1 < r.devices and r is not measured]
            for r in others:
                e = self.efficiency(r, baseline)
                if e is not None and e >= target * (1 + TOL) and not r.voiding:
                    c.fail(f"'no size meets the target' but {r} ({r.devices} devices) reaches {fmt(e)}")

    # -- setup and ddp_setting (METHODOLOGY "Noise floors") ----------------------------------
    def comparison_items(self, c, ref_verdict):
        """Each item: its compared row, recomputed aggregate ex/s, CI, launches and spread."""
        out = []
        for it in c.raw.get("items") or []:
            nums = it.get("numbers") or {}
            row = c.one("compared", refs=it.get("rows"))
            if row is None:
                continue
            name = it.get("name")
            c.need(["aggregate_ex_s", "launches", "ci"], nums, f"item '{name}'")
            c.expect(f"aggregate_ex_s of '{name}'", c.num("aggregate_ex_s", nums), row.aggregate_ex_s)
            ls = self.ev.launches(row)
            c.expect(f"launches of '{name}'", c.num("launches", nums), float(len(ls)), rel=0, abs_=0.5)
            listed = {self.ev.canonical(r) for r in c.rows(it.get("rows"), prefix="launch of ")}
            if len(ls) >= 2 and listed != set(ls):
                c.fail(f"'{name}' lists launches {sorted(map(repr, listed))}, its configuration has "
                       f"{sorted(map(repr, ls))}")
            self.check_launch_roles(c, it.get("rows"), [row])
            self.require_chosen(c, row, f"'{name}'")
            sp = self.ev.spread(row)
            if sp is not None and c.num("spread", nums) is None:
                c.fail(f"'{name}' has {len(ls)} launches but no spread")
            elif sp is None and c.num("spread", nums) is not None:
                c.fail(f"'{name}' gives a spread but its configuration has one launch")
            else:
                c.expect(f"spread of '{name}'", c.num("spread", nums), sp)
            ci_claimed = c.num("ci", nums)
            if ci_claimed is not None and row.ci is not None:
                c.expect(f"ci of '{name}'", ci_claimed, row.ci, rel=CI_TOL)
            c.warnings_cover(it.get("warnings"), [row], what=f"item '{name}'")
            if row.voiding:
                c.fail(f"deciding row {row} ('{name}') carries {sorted(row.voiding)}, which voids its throughput")
            if row.self_check is False:
                c.fail(f"deciding row {row} ('{name}') failed its self-check")
            out.append({"item": it, "name": name, "row": row, "nums": nums,
                        "ci": ci_claimed if ci_claimed is not None else row.ci,
                        "launches": len(ls), "spread": sp, "verdict": it.get("verdict") or ""})
        refs = [x for x in out if x["verdict"] == ref_verdict]
        if ref_verdict == "baseline" and not refs:
            # an unmeasured comparison names no baseline item: the claim's baseline row is it
            base = c.one("baseline", need=False)
            refs = [x for x in out if base is not None and x["row"] is base] or \
                [x for x in out if x["name"] == "DDP's defaults"]
        if len(refs) != 1:
            c.fail(f"{len(refs)} items are '{ref_verdict}'")
            return out, None
        return out, refs[0]

    def noise_verdict(self, c, ref, x):
        """Noise floors 1-4: the gap against the two rows' own CIs, else the larger spread of
        launches of the two configurations, else unmeasured. Returns (verdicts allowed, floor)."""
        a, b = ref["row"].aggregate_ex_s, x["row"].aggregate_ex_s
        gap = max(a, b) / min(a, b) - 1          # Noise floors 1: fast / slow - 1
        claimed = c.num("gap", x["nums"])
        if claimed is not None and claimed < 0:  # a slower variant: its signed change b / a - 1
            c.expect(f"gap of '{x['name']}'", claimed, b / a - 1, abs_=1e-6)
        else:
            c.expect(f"gap of '{x['name']}'", claimed, gap, abs_=1e-6)
        allowed = set()
        spreads = [y["spread"] for y in (ref, x) if y["launches"] >= 2]
        floor = max(spreads) if spreads else None
        ci_sum = (ref["ci"] or 0) + (x["ci"] or 0)
        if gap <= ci_sum or close(gap, ci_sum, 1e-3):
            allowed.add("within noise")
            if gap <= ci_sum * (1 - 1e-3):
                return allowed, floor
        if spreads:
            if gap > floor or close(gap, floor, 1e-3):
                allowed.add("beyond noise")
            if gap <= floor or close(gap, floor, 1e-3):
                allowed.add("within noise")
        else:
            allowed.add("unmeasured")
        return allowed, floor

    def check_floor(self, c, items):
        """A noise floor comes only from launches of the configurations compared."""
        nf = c.num("noise_floor")
        if nf is None:
            return
        spreads = [(x["spread"], x) for x in items if x["launches"] >= 2]
        match = [x for s, x in spreads if close(s, nf)]
        if not match:
            c.fail(f"noise_floor {fmt(nf)} is no spread of launches of the configurations compared "
                   f"({[fmt(s) for s, _ in spreads]})")
            return
        ff = c.word("floor_from")
        if ff:
            labels = set(re.findall(r"[FBT]\d+", ff))
            want = {r.file.label for r in self.ev.launches(match[0]["row"])}
            if labels != want:
                c.fail(f"floor_from '{ff}' but that spread is of {sorted(want)}")

    def check_setup(self, c):
        """Recommendations, setup: the fastest setup against the others, within or beyond the
        noise floor ("Noise floors"); "fastest" names every setup within noise of it."""
        items, fastest = self.comparison_items(c, "fastest")
        if fastest is None:
            return
        top = max(items, key=lambda x: x["row"].aggregate_ex_s)
        if top["row"].aggregate_ex_s > fastest["row"].aggregate_ex_s * (1 + TOL):
            c.fail(f"'{fastest['name']}' is called fastest but '{top['name']}' is faster")
        c.warnings_cover(c.raw.get("warnings"), [fastest["row"]])
        mine = self.compare_items(c, items, fastest)
        # "the N setups measured are within F of each other; choose by memory" needs every one within
        if c.word("choose_by_memory") == "yes":
            beyond = [n for n, a in mine.items() if "within noise" not in a]
            if beyond:
                c.fail(f"'choose by memory' but {beyond} are not within noise of the fastest")

    def compare_items(self, c, items, ref):
        mine = {}
        for x in items:
            if x is ref:
                continue
            allowed, floor = self.noise_verdict(c, ref, x)
            mine[x["name"]] = allowed
            v = x["verdict"]
            if v not in allowed:
                c.fail(f"'{x['name']}' is '{v}' but the rule gives {' or '.join(sorted(allowed))}")
            pf = c.num("pair_floor", x["nums"])
            if floor is not None and pf is not None:
                c.expect(f"pair_floor of '{x['name']}'", pf, floor)
            if pf is not None and floor is None and "unmeasured" in allowed:
                c.fail(f"'{x['name']}' carries a pair floor {fmt(pf)} but neither configuration has two launches")
        self.check_floor(c, items)
        v = c.verdict
        if "unmeasured" in v and not any("unmeasured" in a for a in mine.values()):
            c.fail(f"verdict '{v}' but no comparison has an unmeasured floor")
        for word in ("within noise", "beyond noise"):
            if word in v and not any(word in a for a in mine.values()):
                c.fail(f"verdict '{v}' but no comparison is {word}")
        return mine

    def check_ddp_setting(self, c):
        """Recommendations, DDP setting: the fastest variant against DDP's defaults, only when it
        beats them by more than 5% (kMinKnobGain) and beyond the noise floor."""
        items, base = self.comparison_items(c, "baseline")
        if base is None:
            return
        variants = [x for x in items if x is not base]
        c.expect("base_ex_s", c.num("base_ex_s"), base["row"].aggregate_ex_s)
        if not variants:
            c.cannot("no variant")
            return
        best = max(variants, key=lambda x: x["row"].aggregate_ex_s)
        c.expect("best_ex_s", c.num("best_ex_s"), best["row"].aggregate_ex_s)
        gain = best["row"].aggregate_ex_s / base["row"].aggregate_ex_s - 1
        c.expect("gain", c.num("gain"), gain, abs_=1e-6)
        mine = self.compare_items(c, items, base)
        if base["verdict"] != "baseline" and base["verdict"] != best["verdict"]:
            c.fail(f"the defaults' item is '{base['verdict']}', neither 'baseline' nor the comparison's "
                   f"'{best['verdict']}'")
        min_gain = c.num("min_gain")
        if min_gain is not None and not close(min_gain, MIN_KNOB_GAIN):
            c.fail(f"min_gain {fmt(min_gain)}, the rule asks {MIN_KNOB_GAIN}")
        beyond = "beyond noise" in mine.get(best["name"], set()) and gain > 0
        recommends = c.verdict not in ("below_gain", "keep", "within_noise", "within noise", "unmeasured",
                                       "noise unmeasured")
        if recommends and not (gain > MIN_KNOB_GAIN and beyond):
            c.fail(f"recommends a setting ('{c.verdict}') with gain {fmt(gain)} "
                   f"({'beyond' if beyond else 'not beyond'} noise)")
        if c.verdict == "below_gain" and gain > MIN_KNOB_GAIN * (1 + TOL) and beyond:
            c.fail(f"'below_gain' but the best variant gains {fmt(gain)} beyond noise")
        c.warnings_cover(c.raw.get("warnings"), [base["row"]] + ([best["row"]] if recommends else []))

    def check_memory(self, c):
        """Recommendations, memory: the technique that saves the most peak memory per rank."""
        items = c.raw.get("items") or []
        saved = []
        for it in items:
            nums = it.get("numbers") or {}
            row = c.one("technique", refs=it.get("rows"))
            if row is None:
                continue
            peak = c.num("peak_bytes", nums)
            cands = peak_candidates(row)
            if peak is not None and not any(close(peak, x) for x in cands):
                c.fail(f"peak of '{it.get('name')}' {fmt(peak)} is none of {row}'s peaks {cands}")
            bp = c.num("baseline_peak_bytes", nums)
            if peak is not None and bp:
                c.expect(f"saved of '{it.get('name')}'", c.num("saved", nums), 1 - peak / bp, abs_=1e-6)
                saved.append((1 - peak / bp, it, row))
        if c.num("baseline_peak_bytes") is not None and not c.rows(role="baseline") and \
                not any(c.rows(it.get("rows"), role="baseline") for it in items):
            c.fail("baseline_peak_bytes is rendered without the row it comes from")
        if saved:
            best = max(saved, key=lambda s: s[0])
            most = [s for s in saved if s[1].get("verdict") == "saves the most"]
            if c.verdict == "use":
                if best[0] <= 0:
                    c.fail("'use' but no technique lowered the peak")
                if not most or not close(most[0][0], best[0], abs_=1e-6):
                    c.fail(f"'saves the most' is not the largest saving ({best[1].get('name')})")
                else:
                    c.expect("saved", c.num("saved"), most[0][0], abs_=1e-6)
                    row = most[0][2]
                    if c.num("time_paid") is not None and row.voiding:
                        c.fail(f"time_paid rests on {row}, voided by {sorted(row.voiding)}")
                    base = self.memory_baseline(row, c.num("baseline_peak_bytes"))
                    if base is None:
                        c.cannot("time_paid: the plain DDP row the peak is compared with is not found")
                    else:
                        # the step time paid, per example: the baseline's throughput over the technique's
                        c.expect("time_paid", c.num("time_paid"), base.aggregate_ex_s / row.aggregate_ex_s - 1,
                                 abs_=1e-6)
                        if base.voiding:
                            c.fail(f"time_paid rests on {base}, voided by {sorted(base.voiding)}")
            elif best[0] > 0 and not close(best[0], 0, abs_=1e-9):
                c.fail(f"'{c.verdict}' but {best[1].get('name')} lowers the peak by {fmt(best[0])}")

    def memory_baseline(self, row, peak):
        """The memory table's baseline: the plain DDP row (strategy ddp, no checkpointing, fp32)
        of the technique's model, batch, size and device whose peak the claim names."""
        same = {"device", "model", "image_size", "scaling", "batch_per_rank", "world_size", "mode", "data"}
        for r in self.ev.chosen_rows():
            if r.ddp and r.strategy == "ddp" and not r.key["activation_checkpointing"] and \
                    r.key["precision"] == "fp32" and all(r.key[k] == row.key[k] for k in same) and \
                    (peak is None or any(close(peak, x) for x in peak_candidates(r))):
                return r
        return None

    def check_cost(self, c):
        """Cost: USD per 1M samples = P N t / S 1e6 / 3600 at the mean step time; the cheapest."""
        c.need(["gpu_hour_usd", "usd_per_million", "world_size"])
        price = c.num("gpu_hour_usd")
        items = []
        for it in c.raw.get("items") or []:
            nums = it.get("numbers") or {}
            row = c.one("priced", refs=it.get("rows"))
            if row is None:
                continue
            name = it.get("name")
            c.need(["usd_per_million", "devices", "mean_step_s"], nums, f"item '{name}'")
            if row.shared:
                c.fail(f"'{name}' prices {row}, whose ranks shared a GPU")
            self.require_chosen(c, row, f"'{name}'")
            c.expect(f"devices of '{name}'", c.num("devices", nums), float(row.devices))
            c.expect(f"mean_step_s of '{name}'", c.num("mean_step_s", nums), row.mean_step)
            if row.mean_step:
                c.expect(f"ex_s_mean_step of '{name}'", c.num("ex_s_mean_step", nums),
                         row.examples * row.world / row.mean_step)
            mine = usd_per_million(row, price) if price else None
            c.expect(f"usd_per_million of '{name}'", c.num("usd_per_million", nums), mine)
            items.append((mine if mine is not None else c.num("usd_per_million", nums), it, row))
        if not items:
            c.fail("cost claim without priced items")
            return
        cheapest = [x for x in items if x[1].get("verdict") == "cheapest"]
        if len(cheapest) != 1:
            c.fail(f"{len(cheapest)} items are 'cheapest'")
            return
        usd, it, row = cheapest[0]
        if row.voiding:
            c.fail(f"the cheapest row {row} is voided by {sorted(row.voiding)}: its price is no number")
        clean = [x for x in items if not x[2].voiding] or items
        low = min(clean, key=lambda x: x[0])
        if low[0] < usd * (1 - TOL):
            c.fail(f"cheapest is '{it.get('name')}' at {fmt(usd)} but '{low[1].get('name')}' costs {fmt(low[0])}")
        for u, x, r in items:
            rel = c.num("relative", x.get("numbers") or {})
            if rel is not None and u:
                c.expect(f"relative of '{x.get('name')}'", rel, usd / u)
        c.expect("usd_per_million", c.num("usd_per_million"), usd)
        c.expect("world_size", c.num("world_size"), float(row.world))
        c.warnings_cover(c.raw.get("warnings"), [row])
        epochs, dataset = c.num("epochs"), c.num("dataset_size")
        if price and epochs and dataset and row.mean_step:
            s = row.examples * row.world
            hours = epochs * math.ceil(dataset / s) * row.mean_step / 3600
            c.expect("usd", c.num("usd"), hours * row.devices * price)

    def straggler_file(self, c, role):
        rs = [r for r in c.raw.get("rows") or [] if r.get("role") == role]
        if rs:
            return self.ev.by_path.get(rs[0].get("file"))
        m = re.search(r"\b(F\d+)\b", c.word("from") or "")
        return self.ev.by_label.get(m.group(1)) if m else None

    def check_straggler(self, c):
        """Recommendations, node: a rank flagged in its file's stragglers with score < threshold."""
        f = self.straggler_file(c, "stragglers")
        if f is None:
            c.fail("names no file")
            return
        c.need(["rank", "score", "threshold"])
        rank, score, thr = c.num("rank"), c.num("score"), c.num("threshold")
        model = c.word("model")
        m = re.search(r"batch (\d+) per", c.subject or "")
        batch = int(m.group(1)) if m else None
        for entry in f.data.get("stragglers") or []:
            if model and entry.get("model") != model:
                continue
            if batch is not None and entry.get("batch_per_rank") != batch:
                continue
            for rk in entry.get("ranks") or []:
                if rk.get("rank") == rank:
                    if not rk.get("straggler"):
                        c.fail(f"rank {fmt(rank)} is not flagged a straggler in {f.label}")
                    c.expect("score", score, rk.get("score"))
                    c.expect("threshold", thr, entry.get("threshold"))
                    if _num(rk.get("score")) is not None and _num(entry.get("threshold")) is not None \
                            and not rk["score"] < entry["threshold"]:
                        c.fail(f"score {rk['score']} is not below the threshold {entry['threshold']}")
                    return
        c.fail(f"no stragglers entry of {f.label} has rank {fmt(rank)} for this model and batch")

    def check_slow_node(self, c):
        """Recommendations, node: a slow node of comm --pairs."""
        f = self.straggler_file(c, "comm_pairs")
        if f is None:
            c.fail("names no file")
            return
        nodes = ((f.data.get("comm_pairs") or {}).get("slow_nodes")) or []
        if not any(n.get("name") == c.subject for n in nodes):
            c.fail(f"{c.subject} is not a slow node of {f.label}")

    # -- what must have a claim -------------------------------------------------------------
    def completeness(self):
        if self.mode != "report":
            return
        have = Counter()
        for c in self.claims_of("straggler"):
            have[(Claim(self, c).num("rank"), (c.get("words") or {}).get("model"))] += 1
        for f in self.ev.files:
            if f.duplicate_of is not None:
                continue
            for e in f.data.get("stragglers") or []:
                for rk in e.get("ranks") or []:
                    if rk.get("straggler") and not have[(float(rk.get("rank")), e.get("model"))]:
                        self.outcome.failures.append(
                            f"FAIL straggler {e.get('model')}: rank {rk.get('rank')} of {f.label} is named slow "
                            f"in the file but has no claim")
            for n in ((f.data.get("comm_pairs") or {}).get("slow_nodes")) or []:
                if not any(c.get("subject") == n.get("name") for c in self.claims_of("slow_node")):
                    self.outcome.failures.append(
                        f"FAIL slow_node {n.get('name')}: a slow node of {f.label} has no claim")

    # ============================================================================================
    # diff (METHODOLOGY "diff: noise and launches")

    def side_of(self, c, role):
        rows = c.rows(role=role)
        distinct = []
        for r in rows:
            r = self.ev.canonical(r)
            if r not in distinct:
                distinct.append(r)
        return distinct

    def check_diff_row(self, c):
        base, test = self.side_of(c, "base"), self.side_of(c, "test")
        if not base or not test:
            c.fail("a side has no row")
            return
        for side, rows, ev in (("base", base, self.base), ("test", test, self.test)):
            if any(r.file.label[0] != side[0].upper() for r in rows):
                c.fail(f"a {side} row comes from the other side's files")
            keys = {r.keystr for r in rows}
            if len(keys) > 1:
                c.fail(f"the {side} launches are not one configuration")
            # every launch of that configuration on this side counts
            group = [r for r in ev.groups.get(rows[0].keystr, [])]
            if group and {(r.file.path, r.index) for r in group} != {(r.file.path, r.index) for r in rows}:
                c.fail(f"{side} launches {sorted(map(repr, rows))} but the side has {sorted(map(repr, group))}")
        # pairing: the fields diff matched on
        match = [m for m in str(self.out.get("match") or "").split(",") if m]
        for field in match:
            if field in base[0].key and base[0].key[field] != test[0].key.get(field):
                c.fail(f"paired rows differ in {field} ({base[0].key[field]} vs {test[0].key.get(field)})")
        c.need(["base_s", "test_s", "diff", "base_launches", "test_launches", "base_p50_s", "test_p50_s"])
        c.expect("base_launches", c.num("base_launches"), float(len(base)), rel=0, abs_=0.5)
        c.expect("test_launches", c.num("test_launches"), float(len(test)), rel=0, abs_=0.5)

        # the statistic: per launch the median of the per-iteration means, mean over launches
        def stat(rows):
            meds = [statistics.median(r.iter_means) for r in rows if r.iter_means]
            return statistics.fmean(meds) if meds else None
        b, t = stat(base), stat(test)
        c.expect("base_s", c.num("base_s"), b)
        c.expect("test_s", c.num("test_s"), t)
        d = -(t - b) / b if b and t else None
        c.expect("diff", c.num("diff"), d, abs_=1e-4)
        for q in (50, 75, 95):
            bq = statistics.fmean(percentile(r.samples, q) for r in base) if all(r.samples for r in base) else None
            tq = statistics.fmean(percentile(r.samples, q) for r in test) if all(r.samples for r in test) else None
            c.expect(f"base_p{q}_s", c.num(f"base_p{q}_s"), bq)
            c.expect(f"test_p{q}_s", c.num(f"test_p{q}_s"), tq)
            if bq and tq:
                c.expect(f"diff_p{q}", c.num(f"diff_p{q}"), -(tq - bq) / bq, abs_=1e-4)
        # n per side: launches x iterations (several launches: the iterations of all of them)
        c.expect("base_iterations", c.num("base_iterations"), float(sum(r.iterations for r in base)), rel=0, abs_=0.5)
        c.expect("test_iterations", c.num("test_iterations"), float(sum(r.iterations for r in test)), rel=0, abs_=0.5)
        if b:
            c.expect("base_ex_s", c.num("base_ex_s"), base[0].examples * base[0].world / base[0].devices / b)
        if t:
            c.expect("test_ex_s", c.num("test_ex_s"), test[0].examples * test[0].world / test[0].devices / t)
        c.warnings_cover(c.raw.get("warnings"), base + test)

        # the verdict
        v = c.verdict
        voids = set().union(*(r.voiding for r in base + test))
        few = any(r.iterations < DIFF_FEW for r in base + test)
        lo, hi = c.num("ci_lo"), c.num("ci_hi")
        floor = c.num("noise_floor")
        method = c.word("method") or ""
        is_control = v == "control"
        if voids:
            m = re.match(r"void \(([^)]*)\)", v)
            if not m:
                c.fail(f"'{v}' but {sorted(voids)} void the p50 of a side: must be 'void (CODE)'")
            elif not set(re.split(r"[ ,]+", m.group(1))) & voids:
                c.fail(f"'{v}' names no voiding warning of the rows ({sorted(voids)})")
            return
        if v.startswith("void"):
            c.fail(f"'{v}' but no row of either side carries a voiding warning")
            return
        if few:
            if v != "too few samples":
                c.fail(f"'{v}' but a launch has fewer than {DIFF_FEW} iterations")
            return
        comm_only = self.comm_only()
        no_ddp = not base[0].ddp and not test[0].ddp
        if is_control and not (no_ddp and comm_only):
            c.fail("'control' on a row with DDP or in a diff whose changes are not communication settings only"
                   if not no_ddp else "'control' but the files changed more than communication settings")
        if not is_control and no_ddp and comm_only and v in ("faster", "slower", "within noise",
                                                              "faster, unconfirmed", "slower, unconfirmed"):
            c.fail(f"'{v}' on a no-DDP row of a communication-only A/B, which is a control")
        if lo is None or hi is None:
            c.fail("no interval (ci_lo, ci_hi)")
            return
        if lo > hi:
            c.fail(f"interval [{fmt(lo)}, {fmt(hi)}] is reversed")
        base_v = v.replace(", unconfirmed", "")
        if base_v == "faster" and not lo > 0:
            c.fail(f"'{v}' but the interval's low end {fmt(lo)} is not above 0 (+ is faster)")
        if base_v == "slower" and not hi < 0:
            c.fail(f"'{v}' but the interval's high end {fmt(hi)} is not below 0")
        if base_v == "within noise" and not (lo <= 0 <= hi):
            c.fail(f"'within noise' but the interval [{fmt(lo)}, {fmt(hi)}] excludes 0")
        if base_v in ("faster", "slower") and d is not None and (d > 0) != (base_v == "faster") and abs(d) > 1e-9:
            c.fail(f"'{v}' but the change is {fmt(d)} (+ is faster)")
        # confirmed only against launch-to-launch noise: several launches, a control or a given floor
        several = len(base) >= 2 or len(test) >= 2
        has_floor = floor is not None or "control" in method or "noise floor" in method or \
            self.out.get("noise_floor") is not None
        if base_v in ("faster", "slower") and not is_control:
            if v.endswith("unconfirmed") and (several or has_floor):
                c.fail(f"'{v}' but the launch-to-launch noise is measured "
                       f"({'several launches' if several else 'a floor'})")
            if not v.endswith("unconfirmed") and not (several or has_floor):
                c.fail(f"'{v}' on one launch a side without a control or --noise-floor: must be unconfirmed")
        if floor is not None and not is_control:
            self.check_diff_floor(c, base[0], floor)
        elif not is_control and not several and self.control_reach(base[0]) is not None:
            # one launch a side: the control's reach widens the other rows' intervals
            c.fail("a control row of this benchmark moved, but this row's interval is not widened by it")
        self.check_interval(c, base, test, b, t, floor, is_control)

    def comm_only(self):
        """Only communication settings changed between the files ("changes" and the rows' keys)."""
        changes = self.out.get("changes") or []
        if not changes:
            return False
        for ch in changes:
            if not COMM_CHANGE_RE.search(str(ch.get("key", ""))):
                return False
        # the paired rows' configurations differ in DDP-only fields at most
        for raw in self.claims_of("diff_row"):
            c = Claim(self, raw)
            bs, ts = c.rows(role="base"), c.rows(role="test")
            if bs and ts:
                diff = {k for k in bs[0].key if bs[0].key[k] != ts[0].key.get(k)}
                if diff - DDP_ONLY_FIELDS:
                    return False
        return True

    def control_reach(self, row):
        """The reach of the control rows of a row's benchmark: max(|change|, ends of its interval)."""
        reach = None
        for raw in self.claims_of("diff_row"):
            c = Claim(self, raw)
            if c.verdict != "control":
                continue
            bs = c.rows(role="base")
            if not bs or (bs[0].model, bs[0].batch, bs[0].key.get("image_size")) != \
                    (row.model, row.batch, row.key.get("image_size")):
                continue
            vals = [abs(x) for x in (c.num("diff"), c.num("ci_lo"), c.num("ci_hi")) if x is not None]
            if vals:
                reach = max([reach or 0.0] + vals)
        return reach

    def check_diff_floor(self, c, row, floor):
        """No floor measured on another configuration is ever borrowed: a control of this
        benchmark, or --noise-floor."""
        given = _num(self.out.get("noise_floor"))
        reach = self.control_reach(row)
        ok = (reach is not None and close(floor, reach, 0.01, 1e-6)) or \
             (given is not None and (close(floor, given, 0.01) or close(floor, given / 100, 0.01)))
        if not ok:
            c.fail(f"noise_floor {fmt(floor)} is neither a control of this benchmark ({fmt(reach)}) nor "
                   f"--noise-floor ({fmt(given)})")

    def check_interval(self, c, base, test, b, t, floor, is_control):
        """Recompute the interval: Welch's t over launches (several a side), Student's t with
        the other side's variance (one launch on one side), or a percentile bootstrap of
        median(test) - median(base) over the per-iteration means (one launch a side)."""
        lo, hi = c.num("ci_lo"), c.num("ci_hi")
        widen = 0.0 if is_control or floor is None else floor
        if not b or not t:
            return
        cands = []
        bm = [statistics.median(r.iter_means) for r in base]
        tm = [statistics.median(r.iter_means) for r in test]
        dsec = t - b
        if len(base) >= 2 and len(test) >= 2:
            vb, vt = statistics.variance(bm), statistics.variance(tm)
            se2 = vb / len(bm) + vt / len(tm)
            if se2 > 0:
                df = se2 ** 2 / ((vb / len(bm)) ** 2 / (len(bm) - 1) + (vt / len(tm)) ** 2 / (len(tm) - 1))
                q = t_quantile(0.975, max(1, math.floor(df)))
                cands.append((dsec - q * math.sqrt(se2), dsec + q * math.sqrt(se2)))
            exact = True
        elif len(base) >= 2 or len(test) >= 2:
            many = bm if len(base) >= 2 else tm
            v = statistics.variance(many)
            q = t_quantile(0.975, len(many) - 1)
            for se in (math.sqrt(v / len(many) + v), math.sqrt(v / len(many)), math.sqrt(v)):
                cands.append((dsec - q * se, dsec + q * se))
            exact = True
        else:
            cands.append(bootstrap(base[0].iter_means, test[0].iter_means))
            exact = False
        # in diff's sign (+ faster), as fractions of base, widened by the floor
        mine = [(-(h) / b - widen, -(l) / b + widen) for l, h in cands if l is not None]
        if not mine:
            c.cannot("interval not recomputable")
            return
        if exact:
            if not any(close(lo, m_lo, 0.01, 1e-4) and close(hi, m_hi, 0.01, 1e-4) for m_lo, m_hi in mine):
                c.fail(f"interval [{fmt(lo)}, {fmt(hi)}] but the launches give "
                       f"{' or '.join(f'[{fmt(a)}, {fmt(z)}]' for a, z in mine)}")
        else:
            # 2000 resamples each: the two Monte Carlo estimates of an end agree to a few % of
            # the interval's width (measured on the shipped and generated diffs: at most 8%)
            m_lo, m_hi = mine[0]
            width = max(m_hi - m_lo, 1e-6)
            if abs(lo - m_lo) > 0.2 * width + 5e-4 or abs(hi - m_hi) > 0.2 * width + 5e-4:
                c.fail(f"bootstrap interval [{fmt(lo)}, {fmt(hi)}] but resampling the per-iteration means "
                       f"gives about [{fmt(m_lo)}, {fmt(m_hi)}]")

    # ============================================================================================
    # validate (not finished in ddpbench: only what holds for any claim, and the tally)

    def check_validate_check(self, c):
        """Validation plans: env, comm, pairs and a failed step are PASS, FAIL or not evaluated."""
        if verdict_class(c.verdict) == "not evaluated" and not c.verdict.startswith("not evaluated"):
            c.fail(f"verdict '{c.verdict}' is none of PASS, FAIL, VOID, not evaluated")
        c.cannot("validate_check: the step's own evidence (env, comm, pairs) is not re-derived")

    def check_validate_tally(self, c):
        """Validation plans: the tally adds the report's verdict counts to validate's checks."""
        self.check_tally(c)


def capped(row):
    st = row.raw.get("stopping") or {}
    return st.get("mode") == "auto" and st.get("reason") in ("max_iters", "max_time")


def peak_candidates(row):
    out = []
    mem = (row.raw.get("memory") or {}).get("max_over_ranks") or {}
    for k in ("peak_allocated_bytes", "peak_reserved_bytes", "peak_rss_bytes"):
        if _num(mem.get(k)) is not None:
            out.append(mem[k])
    tel = _num((row.raw.get("telemetry") or {}).get("peak_memory_bytes_max_over_ranks"))
    if tel is not None:
        out.append(tel)
    return out


def usd_per_million(row, price):
    """Cost: USD per 1M samples = P * N * t_mean / S * 1e6 / 3600 (N devices, S examples of one
    optimizer step over all ranks)."""
    s = row.examples * row.world
    if not s or not row.mean_step:
        return None
    return price * row.devices * row.mean_step / s * 1e6 / 3600


def bootstrap(base, test, rounds=BOOTSTRAP_ROUNDS, seed=20261122):
    """95% percentile bootstrap of median(test) - median(base) (Efron & Tibshirani, ch. 13)."""
    if len(base) < 2 or len(test) < 2:
        return (None, None)
    rng = random.Random(seed)
    nb, nt = len(base), len(test)
    diffs = []
    for _ in range(rounds):
        diffs.append(statistics.median(rng.choices(test, k=nt)) - statistics.median(rng.choices(base, k=nb)))
    return percentile(diffs, 2.5), percentile(diffs, 97.5)


# ----------------------------------------------------------------------------------------------
# Entry points (also used by claims_suite.py)

def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}")


def check_report(output_path, files):
    out = load_json(output_path)
    if not isinstance(out, dict):
        raise BadInput(f"{output_path}: not report JSON")
    named = [f.get("name") for f in out.get("files") or [] if isinstance(f, dict)]
    if named and named != list(files):
        raise BadInput(f"{output_path} was made from {named}, not the files given (same files, same order)")
    return Checker("report", Evidence(files), out).run()


def check_diff(output_path, base_files, test_files):
    out = load_json(output_path)
    if not isinstance(out, dict):
        raise BadInput(f"{output_path}: not diff JSON")
    for side, given in (("base_files", base_files), ("test_files", test_files)):
        if out.get(side) is not None and list(out[side]) != list(given):
            raise BadInput(f"{output_path} compares {side} {out[side]}, not {list(given)}")
    return DiffChecker(Evidence(base_files, "B"), Evidence(test_files, "T"), out).run()


class DiffChecker(Checker):
    """diff: the base files are labelled B1.., the test files T1..; a row resolves by its label
    (a file may be given on both sides), and its launches are those of its own side."""

    def __init__(self, base_ev, test_ev, out):
        self.sides = {"B": base_ev, "T": test_ev}
        super().__init__("diff", base_ev, out, base=base_ev, test=test_ev)

    def side(self, ref):
        return self.sides.get(str(ref.get("label") or "")[:1])

    def resolve(self, ref):
        ev = self.side(ref)
        row = ref.get("row")
        f = ev.by_label.get(ref.get("label")) if ev else None
        if f is None or f.path != ref.get("file") or not isinstance(row, int) or not 0 <= row < len(f.rows):
            return None
        return f.rows[row]

    def check_ref(self, c, ref, ev):
        ev = self.side(ref)
        if ev is None:
            c.fail(f"label {ref.get('label')} is neither a base (B) nor a test (T) file")
            return
        super().check_ref(c, ref, ev)

    def side_of(self, c, role):
        ev = self.base if role == "base" else self.test
        out = []
        for r in c.rows(role=role):
            r = ev.canonical(r)
            if r not in out:
                out.append(r)
        return out


class ValidateChecker(Checker):
    """validate: DIR/verdict.json holds the report's claims (over the steps' result files,
    `files`, labelled F1.. in that order), validate's own checks (validate_check, rows naming
    the step's file) and the verdict (validate_tally); DIR/report.json the report's tables."""

    def __init__(self, directory, verdict):
        self.dir = directory
        files = [os.path.join(directory, f) for f in verdict.get("files") or []]
        ev = Evidence(files)
        report_json = os.path.join(directory, "report.json")
        out = load_json(report_json) if os.path.exists(report_json) else {}
        out = dict(out) if isinstance(out, dict) else {}
        out.pop("headline", None)
        out["claims"] = list(verdict.get("claims") or []) + \
            ([verdict["verdict"]] if isinstance(verdict.get("verdict"), dict) else [])
        # the claims name a file as validate opened it (its --out folder + the step's file)
        by_base = {os.path.basename(f.path): f for f in ev.files}
        for c in out["claims"]:
            for ref in (c.get("rows") or []) if isinstance(c, dict) else []:
                name = ref.get("file")
                if isinstance(name, str) and name not in ev.by_path and os.path.basename(name) in by_base:
                    ev.by_path[name] = by_base[os.path.basename(name)]
        super().__init__("validate", ev, out)

    def check_ref(self, c, ref, ev):
        if c.kind in REPORT_KINDS:
            return super().check_ref(c, ref, ev)
        name = ref.get("file")
        path = name if isinstance(name, str) and os.path.exists(name) else \
            os.path.join(self.dir, os.path.basename(str(name)))
        if not os.path.exists(path):
            c.fail(f"row names {name!r}, which does not exist")
        elif ref.get("row") != -1:
            f = ev.by_path.get(name)
            if f is None or not isinstance(ref.get("row"), int) or not 0 <= ref["row"] < len(f.rows):
                c.fail(f"{name} row {ref.get('row')} does not exist")


def check_validate(directory):
    path = os.path.join(directory, "verdict.json")
    if not os.path.exists(path):
        return None
    out = load_json(path)
    if not isinstance(out, dict) or "claims" not in out:
        raise BadInput(f"{path}: not a validate verdict")
    return ValidateChecker(directory, out).run()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", help="do not print the unchecked rules")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("report", parents=[quiet], help="check `ddpbench report --format json`")
    rp.add_argument("output")
    rp.add_argument("files", nargs="+")
    dp = sub.add_parser("diff", parents=[quiet], help="check `ddpbench diff --format json`")
    dp.add_argument("output")
    dp.add_argument("--base", nargs="+", required=True)
    dp.add_argument("--test", nargs="+", required=True)
    vp = sub.add_parser("validate", parents=[quiet], help="check DIR/verdict.json of `ddpbench validate`")
    vp.add_argument("dir")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if args.cmd == "report":
            res = check_report(args.output, args.files)
        elif args.cmd == "diff":
            res = check_diff(args.output, args.base, args.test)
        else:
            res = check_validate(args.dir)
            if res is None:
                print(f"skipped: {os.path.join(args.dir, 'verdict.json')} does not exist")
                return 0
    except BadInput as e:
        print(f"check_claims: bad input: {e}", file=sys.stderr)
        return 2
    for line in res.failures:
        print(line)
    if not args.quiet:
        for line in res.unchecked:
            print(line)
    print(res.summary())
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
