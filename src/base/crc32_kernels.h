// The kernels behind lakerun::Crc32, one by one: tests check each kernel this CPU can run against zlib, whichever
// one Crc32 picks here (a machine with AVX-512 would otherwise never run the 128-bit path).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lakerun {

/// Crc32's implementations, each able to run where the next one can.
enum class Crc32Kernel { kZlib, kClmul128, kClmul512 };

/// Whether this CPU (and build) can run `kernel`.
bool Crc32KernelAvailable(Crc32Kernel kernel);
/// Crc32 computed by `kernel`, which must be available.
uint32_t Crc32With(Crc32Kernel kernel, const void* data, size_t size, uint32_t crc);
/// Crc32Copy computed by `kernel`, which must be available.
uint32_t Crc32CopyWith(Crc32Kernel kernel, void* dst, const void* src, size_t size, uint32_t crc);

}  // namespace lakerun
