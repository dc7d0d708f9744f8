#!/usr/bin/env python3
"""Prints torchvision's view of ddpbench's models as JSON, for tests/engine/test_models.cpp:
{model: {"parameters": N, "params": [[name, shape], ...], "buffers": [[name, shape], ...]}}
in named_parameters() / named_buffers() order. Usage: torchvision_reference.py MODEL..."""
import json
import sys

import torch
import torchvision

out = {}
for name in sys.argv[1:]:
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(num_classes=1000)
    out[name] = {
        "parameters": sum(p.numel() for p in m.parameters()),
        "params": [[n, list(p.shape)] for n, p in m.named_parameters()],
        "buffers": [[n, list(b.shape)] for n, b in m.named_buffers()],
    }
print(json.dumps(out))
