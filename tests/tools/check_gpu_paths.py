#!/usr/bin/env python3
"""Every device command the guides show has a gpu-check path (run by ctest).

Reads the fenced code blocks of README.md, docs/CLUSTER.md and docs/guide/*.md; a line that runs
`ddpbench run|comm|find-max-bs|dataparallel|validate` is a device command. Its features are its
long options, less those that only size or name the run (NEUTRAL). It is covered when a path of
`scripts/gpu-check.sh --list` runs the same command with every one of those features. A command
whose feature cannot run on the one-GPU machine (ONE_GPU_CANNOT: why) is listed as such, not
skipped in silence. Exit 0 when every other command is covered, 1 otherwise (each one named).

  check_gpu_paths.py SOURCE_DIR
"""
import pathlib
import re
import subprocess
import sys

DEVICE = {"run", "comm", "find-max-bs", "dataparallel", "validate"}
# Options that size, name or place a run; they do not choose a code path.
NEUTRAL = {"--json", "--out", "--model", "--overwrite", "--world-sizes", "--image-size", "--batch-size", "--iters",
           "--warmup", "--memory-limit", "--precision", "--seq-len", "--nproc-per-node", "--backend", "--gpus"}
# Features a single GPU cannot show, and why.
ONE_GPU_CANNOT = {
    "--pairs": "pairs of nodes or ranks need two or more GPUs (NCCL takes one rank per GPU)",
    "--pair-unit": "pairs of nodes or ranks need two or more GPUs (NCCL takes one rank per GPU)",
    "--compare": "validate --compare reads two folders; it runs nothing on a device",
    "--data": "needs the Fashion-MNIST IDX files (Debian's dataset-fashion-mnist), which the GPU machine lacks",
}


def documented(src):
    files = [src / "README.md", src / "docs" / "CLUSTER.md"] + sorted((src / "docs" / "guide").glob("*.md"))
    for f in files:
        block = False
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if line.startswith("```"):
                block = not block
                continue
            m = re.search(r"(?:^|\s)(?:build/)?ddpbench\s+([a-z][a-z-]*)(.*)", line) if block else None
            if not m or m.group(1) not in DEVICE or "..." in m.group(2):
                continue
            opts = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(2).split("#")[0]))
            yield f"{f.relative_to(src)}:{n}", m.group(1), opts, line.strip()


def paths(src):
    out = subprocess.run([str(src / "scripts" / "gpu-check.sh"), "--list"], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        step, name, cmd = line.split(None, 2)
        m = re.search(r"build-gpu/ddpbench\s+([a-z][a-z-]*)(.*)", cmd)
        if m:
            yield name, m.group(1), set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(2)))


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    ps = list(paths(src))
    missing, cannot, covered = [], [], 0
    for where, cmd, opts, text in documented(src):
        features = opts - NEUTRAL
        why = sorted({ONE_GPU_CANNOT[o] for o in features if o in ONE_GPU_CANNOT})
        if why:
            cannot.append(f"{where}: `{text}`: {'; '.join(why)}")
            continue
        by = [n for n, c, o in ps if c == cmd and features <= o]
        if by:
            covered += 1
            print(f"ok   {where}: ddpbench {cmd} {' '.join(sorted(features))} -> {by[0]}")
        else:
            missing.append(f"{where}: `{text}` (features {sorted(features)}): no gpu-check path runs them")
    for c in cannot:
        print(f"ONE GPU CANNOT {c}")
    for m in missing:
        print(f"FAIL {m}")
    print(f"{covered} documented device commands have a gpu-check path, {len(cannot)} cannot run on one GPU, "
          f"{len(missing)} have none")
    return 1 if missing or covered == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
