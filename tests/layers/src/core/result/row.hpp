// Allowed: result may use util. Not allowed: libtorch in a torch-free layer.
#pragma once
#include "core/util/fine.hpp"
#include <torch/torch.h>
