// lakerun's own decoder of raw Snappy blocks (the Parquet SNAPPY codec); libsnappy still compresses.
//
// Why not libsnappy's RawUncompress: it must assume that nothing past the output's last byte may be written, so
// every copy near a tag boundary takes careful paths. Here, while at least kSnappyFastMargin bytes of input and of
// output remain, every literal of at most 60 bytes and every copy (at most 64 bytes) is written as whole 16-byte
// (or, for offsets below 16, 8-byte) blocks that may run past the tag's end but never past the buffers; only the
// last bytes of a block take a byte-exact path. On blob pages (long zero runs and 160-byte literals) this decodes
// markedly faster than libsnappy 1.1.9.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lakerun::parquet {

/// Decompresses the raw Snappy block in[0, in_size) into exactly out[0, out_size). Returns false when the block is
/// corrupt (bad length header, a tag that overruns the input, a copy before the output's start or with offset 0)
/// or does not decompress to exactly out_size bytes. Never reads outside the input nor writes outside the output;
/// on failure out's contents are unspecified. Accepts exactly what libsnappy accepts, except a literal whose 4 length
/// bytes say 2^32 (libsnappy 1.1.9 wraps that length to 0).
bool SnappyDecompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size);

/// The uncompressed size a raw Snappy block declares (its varint header), or false if the header is malformed.
bool SnappyUncompressedLength(const uint8_t* in, size_t in_size, size_t* length, size_t* header_bytes);

}  // namespace lakerun::parquet
