#!/usr/bin/env python3
"""Independent torch.nn oracle for the C++ language-model tests.

Two decoder-only architectures are rebuilt here from torch.nn parts:

  * "gpt2"  follows nanoGPT's model.py (Andrej Karpathy): learned position
    table, pre-LayerNorm blocks with biases, fused c_attn projection, exact
    (erf) GELU MLP, optional weight tying of the LM head to wte.
  * "llama" follows Meta's llama3 model.py: RMSNorm, rotary position
    embeddings computed with complex numbers (precompute_freqs_cis /
    apply_rotary_emb), grouped-query attention via repeat_kv, SwiGLU feed
    forward, no biases anywhere.

A C++ program writes the weights and the token batch; this script runs the
forward pass in float32 on the CPU, the mean cross-entropy loss and its
backward pass, and writes the logits, the loss and every parameter gradient
back for the C++ side to compare against.

Usage:
  llm_reference.py DIR         read DIR/in.json + DIR/in.bin,
                               write DIR/out.json + DIR/out.bin
  llm_reference.py --self-test run tiny models end to end and check them

in.json: {"family", "vocab", "context", "dim", "layers", "heads", "kv_heads",
"ffn", "tied", "norm_eps", "rope_theta", "batch", "seq_len", "tensors": [{"name",
"dtype": "float32"|"int64", "shape", "offset", "bytes"}]}; in.bin holds the raw
little-endian, row-major tensors at those byte offsets: "tokens" and "targets"
(int64 [batch, seq_len]) and every parameter under its state_dict name.
out.json has the same "tensors" layout (all float32) plus "torch_version":
"logits" [batch, seq_len, vocab], "loss" [] and "grad.<name>" per parameter.

Exit status 0 on success; on any error one line goes to stderr and the status
is 1. Needs only torch (1.13 or newer) and the standard library.
"""

import argparse
import json
import math
import os
import shutil
import struct
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------
# Tensor file I/O: a JSON index plus one binary blob of little-endian tensors.
# --------------------------------------------------------------------------

# dtype name -> (torch dtype, bytes per element, struct format character)
DTYPES = {
    "float32": (torch.float32, 4, "f"),
    "int64": (torch.int64, 8, "q"),
}

# Elements per struct.pack call when writing, to bound temporary memory.
_PACK_CHUNK = 1 << 20


class CheckFailed(Exception):
    """An error in the input or a failed self-test check; reported in one line."""


def _check(cond, message):
    if not cond:
        raise CheckFailed(message)


def read_tensors(json_path, bin_path):
    """Returns (index dict, {name: tensor}) for a JSON index + binary blob."""
    with open(json_path, "r") as f:
        index = json.load(f)
    with open(bin_path, "rb") as f:
        blob = bytearray(f.read())  # writable, so torch.frombuffer does not warn
    _check(isinstance(index, dict) and isinstance(index.get("tensors"), list),
           "%s: expected an object with a \"tensors\" list" % json_path)
    tensors = {}
    for entry in index["tensors"]:
        name = entry.get("name")
        _check(isinstance(name, str), "%s: tensor entry without a name" % json_path)
        _check(name not in tensors, "tensor %r listed twice" % name)
        dtype_name = entry.get("dtype")
        _check(dtype_name in DTYPES, "tensor %r: unsupported dtype %r" % (name, dtype_name))
        dtype, size, fmt = DTYPES[dtype_name]
        shape = entry.get("shape")
        _check(isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape),
               "tensor %r: bad shape %r" % (name, shape))
        numel = 1
        for d in shape:
            numel *= d
        offset, nbytes = entry.get("offset"), entry.get("bytes")
        _check(isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0,
               "tensor %r: bad offset/bytes" % name)
        _check(nbytes == numel * size,
               "tensor %r: %d bytes for shape %s of %s (want %d)"
               % (name, nbytes, shape, dtype_name, numel * size))
        _check(offset + nbytes <= len(blob),
               "tensor %r: bytes %d..%d past the end of %s (%d bytes)"
               % (name, offset, offset + nbytes, bin_path, len(blob)))
        if numel == 0:
            t = torch.empty(shape, dtype=dtype)
        elif sys.byteorder == "little" and hasattr(torch, "frombuffer"):
            # clone(): the tensor must own its memory, not alias the blob.
            t = torch.frombuffer(blob, dtype=dtype, count=numel, offset=offset).clone()
        else:
            values = struct.unpack_from("<%d%s" % (numel, fmt), blob, offset)
            t = torch.tensor(values, dtype=dtype)
        tensors[name] = t.reshape(shape)
    return index, tensors


def _tensor_bytes(t, fmt):
    """Little-endian raw bytes of tensor t (row-major)."""
    values = t.detach().contiguous().reshape(-1).tolist()
    parts = []
    for start in range(0, len(values), _PACK_CHUNK):
        chunk = values[start:start + _PACK_CHUNK]
        parts.append(struct.pack("<%d%s" % (len(chunk), fmt), *chunk))
    return b"".join(parts)


def write_tensors(json_path, bin_path, named, extra=None):
    """Writes [(name, tensor)] as a JSON index + binary blob.

    float tensors are written as float32, integer tensors as int64. The blob
    is written first, the index last, so a present index means complete output.
    """
    entries = []
    offset = 0
    with open(bin_path, "wb") as f:
        for name, t in named:
            dtype_name = "float32" if t.is_floating_point() else "int64"
            dtype, _, fmt = DTYPES[dtype_name]
            data = _tensor_bytes(t.to(dtype), fmt)
            f.write(data)
            entries.append({"name": name, "dtype": dtype_name, "shape": list(t.shape),
                            "offset": offset, "bytes": len(data)})
            offset += len(data)
    index = dict(extra or {})
    index["tensors"] = entries
    with open(json_path, "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


# --------------------------------------------------------------------------
# GPT-2, after nanoGPT's model.py.
# --------------------------------------------------------------------------

def causal_softmax(scores):
    """Softmax over the last dim of [B, H, T, T] scores with keys after the query
    masked out (masked_fill with -inf above the diagonal), computed in float32."""
    t = scores.size(-1)
    future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=scores.device), diagonal=1)
    scores = scores.masked_fill(future, float("-inf"))
    return F.softmax(scores.float(), dim=-1).type_as(scores)


class GPT2Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg["heads"]
        self.n_embd = cfg["dim"]
        self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd)
        self.c_proj = nn.Linear(self.n_embd, self.n_embd)

    def forward(self, x):
        B, T, C = x.size()
        hd = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)  # [B, H, T, hd]
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = causal_softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)))
        y = att @ v                                          # [B, H, T, hd]
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPT2MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg["dim"], cfg["ffn"])
        self.gelu = nn.GELU()  # exact erf GELU (approximate="none")
        self.c_proj = nn.Linear(cfg["ffn"], cfg["dim"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg["dim"], eps=cfg["norm_eps"])
        self.attn = GPT2Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg["dim"], eps=cfg["norm_eps"])
        self.mlp = GPT2MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT2(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.context = cfg["context"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab"], cfg["dim"]),
            wpe=nn.Embedding(cfg["context"], cfg["dim"]),
            h=nn.ModuleList([GPT2Block(cfg) for _ in range(cfg["layers"])]),
            ln_f=nn.LayerNorm(cfg["dim"], eps=cfg["norm_eps"]),
        ))
        # Tied: the head reuses wte.weight and is no parameter of its own, so
        # the state dict has no lm_head.weight key (nanoGPT would list both).
        self.lm_head = None if cfg["tied"] else nn.Linear(cfg["dim"], cfg["vocab"], bias=False)

    def forward(self, idx):
        _, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if self.lm_head is None:
            return F.linear(x, self.transformer.wte.weight)
        return self.lm_head(x)


# --------------------------------------------------------------------------
# Llama, after Meta's llama3 model.py.
# --------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def precompute_freqs_cis(dim, end, theta):
    """Complex rotations e^{i t f_j}, [end, dim // 2], as Meta computes them."""
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Rotates interleaved pairs (x[2j], x[2j+1]) of q [B,T,H,hd] and k [B,T,KV,hd]."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    """[B, T, KV, hd] -> [B, T, KV * n_rep, hd]; kv head j serves query heads
    j*n_rep .. j*n_rep + n_rep - 1."""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :]
            .expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class LlamaAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg["heads"]
        self.n_kv_heads = cfg["kv_heads"]
        self.n_rep = self.n_heads // self.n_kv_heads
        self.head_dim = cfg["dim"] // cfg["heads"]
        self.wq = nn.Linear(cfg["dim"], self.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(cfg["dim"], self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(cfg["dim"], self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.n_heads * self.head_dim, cfg["dim"], bias=False)

    def forward(self, x, freqs_cis):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        keys = repeat_kv(xk, self.n_rep)      # [B, T, H, hd]
        values = repeat_kv(xv, self.n_rep)
        xq = xq.transpose(1, 2)               # [B, H, T, hd]
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = causal_softmax(scores)
        output = torch.matmul(scores, values)  # [B, H, T, hd]
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg["dim"], cfg["ffn"], bias=False)
        self.w2 = nn.Linear(cfg["ffn"], cfg["dim"], bias=False)
        self.w3 = nn.Linear(cfg["dim"], cfg["ffn"], bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = LlamaAttention(cfg)
        self.feed_forward = FeedForward(cfg)
        self.attention_norm = RMSNorm(cfg["dim"], eps=cfg["norm_eps"])
        self.ffn_norm = RMSNorm(cfg["dim"], eps=cfg["norm_eps"])

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.head_dim = cfg["dim"] // cfg["heads"]
        self.rope_theta = cfg["rope_theta"]
        self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["dim"])
        self.layers = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["layers"])])
        self.norm = RMSNorm(cfg["dim"], eps=cfg["norm_eps"])
        # Tied: the head reuses tok_embeddings.weight (no output.weight key).
        self.output = None if cfg["tied"] else nn.Linear(cfg["dim"], cfg["vocab"], bias=False)

    def forward(self, tokens):
        _, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = precompute_freqs_cis(self.head_dim, seqlen, self.rope_theta)
        for layer in self.layers:
            h = layer(h, freqs_cis)
        h = self.norm(h)
        if self.output is None:
            return F.linear(h, self.tok_embeddings.weight).float()
        return self.output(h).float()


# --------------------------------------------------------------------------
# The reference run.
# --------------------------------------------------------------------------

CONFIG_KEYS = {
    "family": str, "vocab": int, "context": int, "dim": int, "layers": int, "heads": int,
    "kv_heads": int, "ffn": int, "tied": bool, "norm_eps": (int, float),
    "rope_theta": (int, float), "batch": int, "seq_len": int,
}


def parse_config(index):
    cfg = {}
    for key, kind in CONFIG_KEYS.items():
        value = index.get(key)
        # bool is an int subclass in Python; reject it where a number is meant.
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        _check(ok, "in.json: %r missing or not %s" % (key, getattr(kind, "__name__", "a number")))
        cfg[key] = float(value) if kind == (int, float) else value
    _check(cfg["family"] in ("gpt2", "llama"), "in.json: unknown family %r" % cfg["family"])
    for key in ("vocab", "dim", "layers", "heads", "ffn", "batch", "seq_len"):
        _check(cfg[key] > 0, "in.json: %s must be positive" % key)
    _check(cfg["dim"] % cfg["heads"] == 0, "dim %d not divisible by heads %d"
           % (cfg["dim"], cfg["heads"]))
    _check(cfg["norm_eps"] > 0, "in.json: norm_eps must be positive")
    if cfg["family"] == "gpt2":
        _check(cfg["seq_len"] <= cfg["context"], "seq_len %d exceeds context %d"
               % (cfg["seq_len"], cfg["context"]))
    else:
        _check(cfg["kv_heads"] > 0 and cfg["heads"] % cfg["kv_heads"] == 0,
               "heads %d not a multiple of kv_heads %d" % (cfg["heads"], cfg["kv_heads"]))
        _check((cfg["dim"] // cfg["heads"]) % 2 == 0, "llama head dim %d is odd"
               % (cfg["dim"] // cfg["heads"]))
        _check(cfg["rope_theta"] > 0, "in.json: rope_theta must be positive")
    return cfg


def build_model(cfg):
    return GPT2(cfg) if cfg["family"] == "gpt2" else Llama(cfg)


def load_model(cfg, tensors):
    """Builds the model and loads every parameter from tensors (strictly)."""
    model = build_model(cfg)
    expected = model.state_dict()
    params = {k: v for k, v in tensors.items() if k not in ("tokens", "targets")}
    missing = [k for k in expected if k not in params]
    extra = [k for k in params if k not in expected]
    _check(not missing, "missing parameters: %s" % ", ".join(missing))
    _check(not extra, "unexpected tensors: %s" % ", ".join(extra))
    for name, want in expected.items():
        got = params[name]
        _check(got.dtype == torch.float32, "parameter %s is not float32" % name)
        _check(tuple(got.shape) == tuple(want.shape), "parameter %s has shape %s, want %s"
               % (name, list(got.shape), list(want.shape)))
    model.load_state_dict(params, strict=True)  # copies into the parameters
    return model


def token_batch(cfg, tensors, name):
    _check(name in tensors, "missing tensor %r" % name)
    t = tensors[name]
    _check(t.dtype == torch.int64, "%s is not int64" % name)
    _check(tuple(t.shape) == (cfg["batch"], cfg["seq_len"]), "%s has shape %s, want %s"
           % (name, list(t.shape), [cfg["batch"], cfg["seq_len"]]))
    lo, hi = int(t.min()), int(t.max())
    _check(0 <= lo and hi < cfg["vocab"], "%s out of range [0, %d): min %d max %d"
           % (name, cfg["vocab"], lo, hi))
    return t


def run_reference(directory):
    """The main path: DIR/in.{json,bin} -> DIR/out.{json,bin}."""
    index, tensors = read_tensors(os.path.join(directory, "in.json"),
                                  os.path.join(directory, "in.bin"))
    cfg = parse_config(index)
    tokens = token_batch(cfg, tensors, "tokens")
    targets = token_batch(cfg, tensors, "targets")
    model = load_model(cfg, tensors).float().train()
    model.zero_grad()

    logits = model(tokens)
    loss = F.cross_entropy(logits.view(-1, cfg["vocab"]), targets.view(-1))
    loss.backward()

    out = [("logits", logits.detach()), ("loss", loss.detach())]
    for name, p in model.named_parameters():
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        out.append(("grad." + name, grad))
    _check(len(out) == 2 + len(model.state_dict()), "parameters and state dict disagree")
    write_tensors(os.path.join(directory, "out.json"), os.path.join(directory, "out.bin"),
                  out, extra={"torch_version": torch.__version__})


# --------------------------------------------------------------------------
# Self-test.
# --------------------------------------------------------------------------

def _close(a, b, what, atol=1e-6):
    _check(a.shape == b.shape and torch.allclose(a, b, rtol=0.0, atol=atol),
           "self-test: %s (max diff %g)" % (what, (a - b).abs().max().item()
                                            if a.shape == b.shape else float("nan")))


def _random_case(cfg, gen):
    """Random parameters (by state_dict name) plus tokens and targets."""
    named = []
    for name, p in build_model(cfg).state_dict().items():
        if ("ln_" in name or "norm" in name) and name.endswith(".weight"):
            t = 1.0 + 0.1 * torch.randn(p.shape, generator=gen)  # norm gains near 1
        else:
            t = 0.3 * torch.randn(p.shape, generator=gen)
        named.append((name, t))
    shape = (cfg["batch"], cfg["seq_len"])
    named.append(("tokens", torch.randint(0, cfg["vocab"], shape, generator=gen)))
    named.append(("targets", torch.randint(0, cfg["vocab"], shape, generator=gen)))
    return named


def _self_test_case(cfg, gen, workdir):
    case_dir = os.path.join(workdir, "%s-%s" % (cfg["family"], "tied" if cfg["tied"] else "untied"))
    os.makedirs(case_dir)
    named = _random_case(cfg, gen)
    write_tensors(os.path.join(case_dir, "in.json"), os.path.join(case_dir, "in.bin"),
                  named, extra=cfg)
    run_reference(case_dir)
    index, out = read_tensors(os.path.join(case_dir, "out.json"),
                              os.path.join(case_dir, "out.bin"))
    label = case_dir.rsplit(os.sep, 1)[-1]
    _check(index.get("torch_version") == torch.__version__, "self-test: torch_version missing")

    # The input round-trips through the writer and the reader unchanged.
    _, back = read_tensors(os.path.join(case_dir, "in.json"), os.path.join(case_dir, "in.bin"))
    for name, t in named:
        _check(torch.equal(back[name], t), "self-test: %s: %s did not round-trip" % (label, name))

    # Shapes, a finite loss and a finite gradient for every parameter.
    B, T, V = cfg["batch"], cfg["seq_len"], cfg["vocab"]
    _check(tuple(out["logits"].shape) == (B, T, V), "self-test: %s: logits shape" % label)
    _check(tuple(out["loss"].shape) == (), "self-test: %s: loss not 0-dim" % label)
    loss = out["loss"].item()
    _check(math.isfinite(loss) and loss > 0, "self-test: %s: loss %r" % (label, loss))
    params = {n: t for n, t in named if n not in ("tokens", "targets")}
    grads = {n[len("grad."):]: t for n, t in out.items() if n.startswith("grad.")}
    _check(sorted(grads) == sorted(params), "self-test: %s: gradient names %s != %s"
           % (label, sorted(grads), sorted(params)))
    for name, p in params.items():
        g = grads[name]
        _check(g.shape == p.shape, "self-test: %s: grad.%s shape" % (label, name))
        _check(bool(torch.isfinite(g).all()) and g.abs().sum().item() > 0,
               "self-test: %s: grad.%s not finite or all zero" % (label, name))
    # Token embedding rows of unseen tokens get no gradient (untied models
    # only: tied heads touch every row).
    tokens = dict(named)["tokens"]
    emb = "transformer.wte.weight" if cfg["family"] == "gpt2" else "tok_embeddings.weight"
    if not cfg["tied"]:
        for row in range(V):
            if not bool((tokens == row).any()):
                _check(grads[emb][row].abs().max().item() == 0.0,
                       "self-test: %s: unseen token row %d has gradient" % (label, row))

    # The loss matches a by-hand cross-entropy of the written logits.
    targets = dict(named)["targets"]
    logp = torch.log_softmax(out["logits"].double(), dim=-1)
    by_hand = -logp.gather(-1, targets.unsqueeze(-1)).mean().item()
    _check(abs(by_hand - loss) < 1e-5, "self-test: %s: loss %r vs by hand %r"
           % (label, loss, by_hand))

    # Causality: changing the token at the last position changes no logits
    # at earlier positions (and does change the last position's).
    model = load_model(cfg, dict(named))
    with torch.no_grad():
        _close(model(tokens), out["logits"], "%s: logits not reproducible" % label)
        changed = tokens.clone()
        changed[:, -1] = (changed[:, -1] + 1) % V
        before, after = model(tokens), model(changed)
        _close(after[:, :-1], before[:, :-1], "%s: later token leaks into earlier logits" % label)
        _check(not torch.allclose(after[:, -1], before[:, -1]),
               "self-test: %s: last token does not affect its own logits" % label)

    if cfg["family"] == "llama":
        _llama_checks(model, cfg, tokens, gen, label)


def _llama_checks(model, cfg, tokens, gen, label):
    hd = cfg["dim"] // cfg["heads"]
    B, T = cfg["batch"], cfg["seq_len"]
    with torch.no_grad():
        # RoPE at position 0 is the identity; later positions do rotate.
        freqs_cis = precompute_freqs_cis(hd, T, cfg["rope_theta"])
        xq = torch.randn(B, T, cfg["heads"], hd, generator=gen)
        xk = torch.randn(B, T, cfg["kv_heads"], hd, generator=gen)
        rq, rk = apply_rotary_emb(xq, xk, freqs_cis)
        _close(rq[:, 0], xq[:, 0], "%s: RoPE at position 0 is not identity (q)" % label, 0.0)
        _close(rk[:, 0], xk[:, 0], "%s: RoPE at position 0 is not identity (k)" % label, 0.0)
        _check(not torch.allclose(rq[:, 1], xq[:, 1]),
               "self-test: %s: RoPE at position 1 is identity" % label)
        # A rotation preserves the norm of every pair.
        _close(rq.norm(dim=-1), xq.norm(dim=-1), "%s: RoPE changes norms" % label, 1e-5)

        # Attention at position 0 sees only itself: its output is wo applied
        # to v of position 0, each kv head copied to its n_rep query heads.
        layer = model.layers[0]
        x = layer.attention_norm(model.tok_embeddings(tokens))
        attn = layer.attention(x, freqs_cis)
        n_rep = cfg["heads"] // cfg["kv_heads"]
        v0 = layer.attention.wv(x[:, 0]).view(B, cfg["kv_heads"], 1, hd)
        v0 = v0.expand(B, cfg["kv_heads"], n_rep, hd).reshape(B, cfg["heads"] * hd)
        _close(attn[:, 0], layer.attention.wo(v0),
               "%s: attention at position 0 is not wo(v_0)" % label, 1e-5)


SELF_TEST_CASES = [
    dict(family="gpt2", vocab=11, context=8, dim=8, layers=2, heads=2, kv_heads=2, ffn=32,
         tied=True, norm_eps=1e-5, rope_theta=10000.0, batch=2, seq_len=6),
    dict(family="gpt2", vocab=11, context=8, dim=8, layers=2, heads=2, kv_heads=2, ffn=32,
         tied=False, norm_eps=1e-5, rope_theta=10000.0, batch=2, seq_len=8),
    dict(family="llama", vocab=13, context=8, dim=8, layers=2, heads=4, kv_heads=2, ffn=16,
         tied=False, norm_eps=1e-5, rope_theta=10000.0, batch=2, seq_len=5),
    dict(family="llama", vocab=13, context=8, dim=8, layers=2, heads=4, kv_heads=2, ffn=16,
         tied=True, norm_eps=1e-5, rope_theta=500000.0, batch=2, seq_len=5),
]


def self_test():
    gen = torch.Generator().manual_seed(1234)
    workdir = tempfile.mkdtemp(prefix="llm_reference.")
    try:
        for cfg in SELF_TEST_CASES:
            _self_test_case(cfg, gen, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("self-test ok")


# --------------------------------------------------------------------------

class _ArgParser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr and status 1, not argparse's 2
        raise CheckFailed("usage: llm_reference.py DIR | --self-test: " + message)


def main(argv):
    parser = _ArgParser(description="torch.nn reference for GPT-2 / Llama logits, loss "
                                    "and gradients (see the module docstring).")
    parser.add_argument("dir", nargs="?", help="directory holding in.json and in.bin")
    parser.add_argument("--self-test", action="store_true", help="run the built-in checks")
    args = parser.parse_args(argv)
    if args.self_test == (args.dir is not None):
        parser.error("give exactly one of DIR and --self-test")
    if args.self_test:
        self_test()
    else:
        run_reference(args.dir)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # noqa: BLE001 - every failure becomes one stderr line
        message = " ".join(str(e).split()) or type(e).__name__
        print("llm_reference: error: %s" % message, file=sys.stderr)
        sys.exit(1)
