// The precompiled header of the libtorch layers, the binary and the engine tests (CMake
// target_precompile_headers, option DDPBENCH_PCH): libtorch's headers that most engine files
// include, parsed once per build instead of once per file (about 10 s of every file's compile
// on 2 cores; docs/guide/build-and-test.md). Every header here exists in each libtorch ddpbench
// builds against (1.13 through 2.x). The build adds it to every compile; never include it by hand.
#pragma once

#include "core/util/pch.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
