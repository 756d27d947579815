// CRC-32 with the zlib / IEEE 802.3 polynomial (reflected 0xEDB88320, initial and final XOR 0xFFFFFFFF): the checksum
// of Parquet page headers, zip entries and Delta deletion vectors.
//
//   uint32_t crc = lakerun::Crc32(page);                 // == zlib's crc32(0, page, size)
//   crc = lakerun::Crc32(more, crc);                     // continues over concatenated bytes
//   crc = lakerun::Crc32Copy(dst, src, size);            // memcpy(dst, src, size) and Crc32 of the bytes, one pass
//
// On x86-64 with PCLMULQDQ (checked at run time) the bytes are folded with carry-less multiplication, 64 bytes a step
// (256 with AVX-512 and VPCLMULQDQ): several times zlib's table-driven speed. Other machines and inputs shorter than
// 64 bytes use zlib's crc32_z.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lakerun {

/// The CRC-32 of `size` bytes at `data`, continuing from `crc` (the CRC-32 of the bytes before them; 0 to start).
uint32_t Crc32(const void* data, size_t size, uint32_t crc = 0);
inline uint32_t Crc32(std::string_view bytes, uint32_t crc = 0) { return Crc32(bytes.data(), bytes.size(), crc); }

/// Copies `size` bytes from `src` to `dst` (which must not overlap) and returns their CRC-32, continuing from `crc`:
/// memcpy + Crc32 in one pass, each byte read from memory once (the folding kernels store what they load). For a
/// check that would otherwise be a second pass over bytes being copied anyway (an uncompressed Parquet page).
uint32_t Crc32Copy(void* dst, const void* src, size_t size, uint32_t crc = 0);

/// "0x" and 8 lowercase hex digits, as error messages print a CRC.
std::string Crc32Text(uint32_t crc);

/// Which implementation Crc32 uses on this machine, in words (benchmarks print it).
const char* Crc32Implementation();

}  // namespace lakerun
