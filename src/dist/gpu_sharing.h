// Finding ranks that would share one GPU, before NCCL does. NCCL refuses two ranks of a communicator on the same
// device, but only at the first collective ("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60"),
// which names neither the host nor a way out. A single-GPU workstation running `lakerun launch -n 2` hits it.
//
// Protocol, two steps around the rendezvous (WaitForPeers), O(1) store requests per rank:
//   1. before arriving, every rank adds itself to a counter keyed by its GPU's UUID; the first user records its
//      rank, and any later user writes one shared verdict naming itself, the first user and the GPU;
//   2. once every rank has arrived (so every rank's step 1 is done), each rank reads the verdict: all ranks see
//      the same answer and take the same decision.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <string>

namespace lakerun::dist {

/// Step 1: records that `rank` uses the GPU `gpu_id` (unique to one physical GPU across the job: its UUID), which
/// messages call `gpu_name` (e.g. "0000:3c:00.0 of host n1"). Call before the rendezvous. Waits (up to the store's
/// timeout) only when another rank uses the same GPU.
void PublishRankGpu(::c10d::Store& store, int rank, const std::string& gpu_id, const std::string& gpu_name);

/// Step 2: after the rendezvous, "" when every rank published a different GPU, else a sentence naming two ranks
/// and the GPU they share ("ranks 0 and 1 both use GPU 0000:3c:00.0 of host n1").
std::string SharedGpuVerdict(::c10d::Store& store);

}  // namespace lakerun::dist
