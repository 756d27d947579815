// The precompiled header shared by every torch-using target (see LakerunTooling.cmake).
// Keep it to what lakerun's torch code actually includes; every target reusing it pays its parse once.
#pragma once
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
