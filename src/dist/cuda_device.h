// Which CUDA device a rank uses (private to lakerun::dist). Plain integers: compiled and tested without CUDA.
#pragma once

#include <string>

namespace lakerun::dist {

/// The CUDA device index for the rank with `local_rank`, given the `visible` devices it sees and the value of
/// CUDA_VISIBLE_DEVICES (`visible_devices_env`; empty when unset, for error messages only):
/// - one device visible: 0. `lakerun launch --use-gpu` gives each rank its own GPU through CUDA_VISIBLE_DEVICES, so
///   inside the rank it is cuda:0 whatever LOCAL_RANK says;
/// - several visible: cuda:LOCAL_RANK, torchrun's convention (every GPU of the node visible to every rank);
/// - a local rank with no device of its own (LOCAL_RANK >= visible > 1) is a ConfigError naming both counts, since
///   two ranks on one GPU would fail later inside NCCL ("Duplicate GPU detected").
/// `visible` must be > 0.
int ChooseCudaDevice(int local_rank, int visible, const std::string& visible_devices_env);

}  // namespace lakerun::dist
