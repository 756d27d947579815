// Sum-all-reduce of fixed CPU buffers through one shared-memory segment, for jobs whose ranks all run on this host.
//
// Gloo moves even a 100 KB gradient over loopback TCP with a worker thread and a device thread per rank: on a
// machine with one core per rank that is a dozen context switches and milliseconds of CPU per step. Here every rank
// writes its contribution into its own slot of a segment that all ranks map, and the ranks sum disjoint chunks of
// the slots into a shared result: no copies through the kernel, no extra threads, one pass over the data.
//
//   auto ar = SharedMemoryAllReduce::Create(ctx, {{at::kFloat, 21840}}, &why_not);  // collective
//   ar->input(0).copy_(gradient);    // this rank's slot
//   ar->Start(0);                    // publish it (never blocks)
//   ar->Finish(0);                   // wait for every rank, reduce, wait again
//   use(ar->sum(0));                 // the element-wise sum over ranks, identical bits on every rank
//
// Contract:
// - Every rank calls Create with the same buffer specs, and then Start(i) / Finish(i) alternately for each buffer.
//   Start never blocks, so several buffers may be in flight (Start(1) before Finish(0)); Finish waits for the other
//   ranks' Finish of the same buffer, so every rank must finish buffers in the same order, like any collective.
//   The k-th Finish(i) on every rank returns the sum of every rank's k-th contribution to buffer i.
// - input(i) may be written only outside a Start(i)..Finish(i) pair; sum(i) is valid from Finish(i) until this rank's
//   next Start(i).
// - Each chunk is summed by one rank in rank order, so every rank reads the same bits.
// - Waits spin briefly, then sleep on a futex; they are bounded by the context's timeout (CommTimeout naming the
//   ranks that did not arrive) and notice a peer process that exited (DistError naming it).
// - The segment is unlinked from /dev/shm as soon as every rank has mapped it: nothing is left behind, even when a
//   rank is killed.
// - FinishGather(i, out) pairs with Start(i) like Finish(i) but gathers instead of summing: every rank's input(i),
//   in rank order, into `out` (ShardedDataParallel's all-gather). Finish(i, numel) sums only the first numel elements,
//   so one buffer serves buckets of several sizes.
#pragma once

#include <lakerun/dist/init.h>

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lakerun::dist {

struct SharedBufferSpec {
  at::ScalarType dtype;  // kFloat or kDouble
  int64_t numel;
};

class SharedMemoryAllReduce {
 public:
  /// Whether a buffer of this dtype can be reduced here.
  static bool Supports(at::ScalarType dtype);

  /// Collective over ctx. Returns null on every rank when shared memory cannot serve this job: world size 1, ranks
  /// on several hosts, a rank that cannot map rank 0's segment, or /dev/shm without room; `why_not` then says why.
  /// Throws DistError on every rank when the ranks disagree on the buffer specs (different models).
  /// `what` names the user in errors ("DDP gradient all_reduce").
  static std::unique_ptr<SharedMemoryAllReduce> Create(Context& ctx, const std::vector<SharedBufferSpec>& buffers,
                                                       std::string* why_not,
                                                       const std::string& what = "DDP gradient all_reduce");
  ~SharedMemoryAllReduce();
  SharedMemoryAllReduce(const SharedMemoryAllReduce&) = delete;
  SharedMemoryAllReduce& operator=(const SharedMemoryAllReduce&) = delete;

  /// This rank's slot of buffer i: 1-D, `numel` elements of its dtype, inside the shared segment.
  at::Tensor& input(std::size_t i) { return inputs_[i]; }
  /// The sum over ranks of buffer i, after Finish(i).
  const at::Tensor& sum(std::size_t i) const { return sums_[i]; }

  /// Publishes this rank's input(i). Never blocks.
  void Start(std::size_t i);
  /// Waits until every rank published buffer i, sums this rank's chunk, waits until every chunk is summed. With
  /// numel >= 0 only the first numel elements are summed (the rest of sum(i) is left as it was).
  void Finish(std::size_t i, int64_t numel = -1);
  /// Waits until every rank published buffer i, copies every rank's input(i) into `out` (world * numel elements,
  /// rank r's at r * numel), and waits until every rank has copied.
  void FinishGather(std::size_t i, const at::Tensor& out);

  /// Bytes of the mapped segment (all ranks' slots and the results).
  std::size_t segment_bytes() const { return bytes_; }

 private:
  struct Layout;
  SharedMemoryAllReduce(Context& ctx, std::vector<SharedBufferSpec> buffers, void* base, std::size_t bytes,
                        bool check_peer_pids, std::string what);
  void WaitForAll(std::size_t i, bool reduced, uint32_t round);
  void Publish(std::size_t i, bool reduced, uint32_t round);
  void SumChunk(std::size_t i, int64_t numel);
  uint32_t EndRound(std::size_t i);

  Context& ctx_;
  std::vector<SharedBufferSpec> buffers_;
  std::unique_ptr<Layout> layout_;
  void* base_;
  std::size_t bytes_;
  bool check_peer_pids_;
  std::vector<uint32_t> rounds_;   // per buffer: the round of the last Start
  std::vector<bool> started_;      // per buffer: Start without its Finish yet
  std::vector<at::Tensor> inputs_, sums_;
  std::string what_;
};

}  // namespace lakerun::dist
