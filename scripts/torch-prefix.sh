#!/usr/bin/env bash
# Prints the CMake prefix of python3's PyTorch when that PyTorch ships libtorch's CMake
# files (pip wheels do; Debian's python3-torch does not). Prints nothing otherwise.
p=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || exit 0
if [ -f "$p/Torch/TorchConfig.cmake" ]; then echo "$p"; fi
