#!/usr/bin/env python3
"""Python DDP reference for ddpbench's cross-checks.

Runs the loop `ddpbench run` measures (zero_grad -> forward -> cross-entropy ->
backward -> SGD step, synthetic batch generated once per rank, torchvision model,
torch.nn.parallel.DistributedDataParallel with its defaults; for a language model, gpt2* or
llama*, the torch.nn models of tests/tools/llm_reference.py on token ids with targets shifted
by one, cross-entropy over the vocabulary and AdamW at PyTorch's defaults) and prints one JSON line on
rank 0 with per-iteration percentiles pooled over ranks (numpy's linear interpolation,
as benchmark.py and ddpbench). Launch it with torchrun, e.g.

  OMP_NUM_THREADS=1 torchrun --standalone --nproc-per-node 2 \
      scripts/python_ddp_reference.py --model resnet18 --batch-size 8 --image-size 64

It is a measuring aid, not part of the product: ddpbench itself has no Python.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision

# The language models' published shapes, as src/engine/models/transformer.cpp lists them.
_GPT2 = dict(family="gpt2", vocab=50257, context=1024, norm_eps=1e-5, rope_theta=0.0, tied=True)
_LLAMA = dict(family="llama", vocab=128256, context=131072, heads=32, kv_heads=8, norm_eps=1e-5,
              rope_theta=500000.0)
LANGUAGE_MODELS = {
    "gpt2": dict(_GPT2, dim=768, layers=12, heads=12, kv_heads=12, ffn=3072),
    "gpt2-medium": dict(_GPT2, dim=1024, layers=24, heads=16, kv_heads=16, ffn=4096),
    "gpt2-large": dict(_GPT2, dim=1280, layers=36, heads=20, kv_heads=20, ffn=5120),
    "gpt2-xl": dict(_GPT2, dim=1600, layers=48, heads=25, kv_heads=25, ffn=6400),
    "llama3.2-1b": dict(_LLAMA, dim=2048, layers=16, ffn=8192, tied=True),
    "llama3.1-8b": dict(_LLAMA, dim=4096, layers=32, ffn=14336, tied=False),
}


def language_model(name, layers, width):
    """The torch.nn model of tests/tools/llm_reference.py for `name`, reduced as ddpbench's
    --model-layers/--model-width reduce it (the MLP width scales with the model width)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
    import llm_reference  # noqa: E402 (the reference the C++ models are tested against)
    cfg = dict(LANGUAGE_MODELS[name])
    if layers:
        cfg["layers"] = layers
    if width and width != cfg["dim"]:
        cfg["ffn"] = max(8, cfg["ffn"] * width // cfg["dim"] // 8 * 8)
        cfg["dim"] = width
    return llm_reference.build_model(cfg), cfg["vocab"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet18")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--no-ddp", action="store_true", help="train without DDP (baseline)")
    p.add_argument("--seq-len", type=int, default=64, help="language models: tokens per sequence")
    p.add_argument("--model-layers", type=int, default=0, help="language models: blocks (0: published)")
    p.add_argument("--model-width", type=int, default=0, help="language models: width (0: published)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp32-strict", "tf32", "bf16"],
                   help="fp32: PyTorch's default math (untouched); fp32-strict: TF32 off; tf32: TF32 on; "
                        "bf16: torch.autocast around forward and loss, as ddpbench --precision")
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    if args.precision in ("fp32-strict", "tf32"):
        tf32 = args.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True  # ddpbench's default (--no-cudnn-benchmark turns it off)
    autocast = torch.autocast(dev.type, dtype=torch.bfloat16, enabled=args.precision == "bf16")

    torch.manual_seed(0)
    lm = args.model in LANGUAGE_MODELS
    if lm:
        model, vocab = language_model(args.model, args.model_layers, args.model_width)
        model = model.to(dev)
    else:
        model = getattr(torchvision.models, args.model)(num_classes=1000).to(dev)
    if not args.no_ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    torch.manual_seed(1000 + rank)
    if lm:
        tokens = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), device=dev)
        x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous().view(-1)
        opt = torch.optim.AdamW(model.parameters())  # PyTorch's defaults, as ddpbench's language-model step
    else:
        x = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=dev)
        y = torch.randint(0, 1000, (args.batch_size,), device=dev)
        opt = torch.optim.SGD(model.parameters(), 0.001, momentum=0.9, weight_decay=1e-4)

    times = []
    for it in range(args.warmup + args.iters):
        t0 = time.perf_counter()
        opt.zero_grad()
        with autocast:
            out = model(x)
            loss = F.cross_entropy(out.view(-1, out.size(-1)) if lm else out, y)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter() - t0
        if it >= args.warmup:
            times.append(t)

    gathered = [None] * world
    dist.all_gather_object(gathered, times)
    if rank == 0:
        pooled = np.array([t for ts in gathered for t in ts])
        out = {"tool": "python-ddp", "torch": torch.__version__, "model": args.model, "world_size": world,
               "batch_per_rank": args.batch_size, "image_size": args.image_size,
               "seq_len": args.seq_len if lm else None, "ddp": not args.no_ddp,
               "threads": torch.get_num_threads(), "device": str(dev), "n": int(pooled.size),
               "precision": args.precision,
               "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
               "cublas_allow_tf32": torch.backends.cuda.matmul.allow_tf32}
        for q in (50, 75, 90, 95):
            out[f"p{q}_s"] = float(np.percentile(pooled, q))
        print(json.dumps(out), flush=True)
    dist.barrier()
    # Skip interpreter teardown: Debian's torch 1.13 can deadlock destroying the Gloo
    # process group from the Reducer's destructor at exit (seen: one rank spinning forever).
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
