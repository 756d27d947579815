#include "format/parquet/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "format/parquet/snappy_decoder.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

[[noreturn]] void Fail(const std::string& context, Codec codec, const std::string& what) {
  LAKERUN_THROW(CorruptDataError, context, ": ", ToString(codec), " decompression failed: ", what);
}

void CheckSize(const std::string& context, Codec codec, size_t got, size_t want) {
  if (got != want) {
    Fail(context, codec, StrCat("produced ", got, " bytes, the page header says ", want));
  }
}

void InflateGzip(std::string_view in, uint8_t* out, size_t out_size, const std::string& context) {
  z_stream z{};
  // 15 + 32: zlib or gzip header, detected automatically.
  if (inflateInit2(&z, 15 + 32) != Z_OK) LAKERUN_THROW(InternalError, "inflateInit2 failed");
  size_t produced = 0;
  size_t consumed = 0;
  int rc = Z_OK;
  try {
    while (true) {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
      z.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - consumed, 1u << 30));
      // Once the expected size is reached, a one-byte spill slot detects output beyond it.
      uint8_t spill = 0;
      const bool full = produced == out_size;
      z.next_out = full ? &spill : out + produced;
      z.avail_out = full ? 1 : static_cast<uInt>(std::min<size_t>(out_size - produced, 1u << 30));
      uInt in_before = z.avail_in, out_before = z.avail_out;
      rc = inflate(&z, Z_NO_FLUSH);
      consumed += in_before - z.avail_in;
      if (full && z.avail_out == 0) {
        Fail(context, Codec::kGzip, StrCat("output exceeds the ", out_size, " bytes the page header says"));
      }
      if (!full) produced += out_before - z.avail_out;
      if (rc == Z_STREAM_END) {
        // Multi-member gzip: another member may follow (skip trailing zero padding).
        size_t rest = consumed;
        while (rest < in.size() && in[rest] == 0) ++rest;
        if (rest >= in.size()) break;
        if (inflateReset(&z) != Z_OK) Fail(context, Codec::kGzip, "inflateReset failed");
        continue;
      }
      if (rc != Z_OK) {
        Fail(context, Codec::kGzip, StrCat("zlib error ", rc, z.msg ? std::string(" (") + z.msg + ")" : ""));
      }
      if (in_before == z.avail_in && out_before == z.avail_out) Fail(context, Codec::kGzip, "truncated stream");
    }
  } catch (...) {
    inflateEnd(&z);
    throw;
  }
  inflateEnd(&z);
  CheckSize(context, Codec::kGzip, produced, out_size);
}

uint32_t ReadBE32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

// Hadoop framing: repeated [BE32 uncompressed size][BE32 compressed size][LZ4 block]. Returns false if the input
// does not follow it.
bool TryLz4Hadoop(std::string_view in, uint8_t* out, size_t out_size) {
  size_t pos = 0, produced = 0;
  while (pos < in.size()) {
    if (in.size() - pos < 8) return false;
    uint32_t raw = ReadBE32(in.data() + pos);
    uint32_t comp = ReadBE32(in.data() + pos + 4);
    pos += 8;
    if (comp > in.size() - pos || raw > out_size - produced) return false;
    int n = LZ4_decompress_safe(in.data() + pos, reinterpret_cast<char*>(out + produced), static_cast<int>(comp),
                                static_cast<int>(raw));
    if (n < 0 || static_cast<uint32_t>(n) != raw) return false;
    pos += comp;
    produced += raw;
  }
  return produced == out_size;
}

bool TryLz4Frame(std::string_view in, uint8_t* out, size_t out_size) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) return false;
  size_t produced = 0, consumed = 0;
  bool ok = false;
  while (true) {
    size_t dst = out_size - produced, src = in.size() - consumed;
    size_t rc = LZ4F_decompress(ctx, out + produced, &dst, in.data() + consumed, &src, nullptr);
    if (LZ4F_isError(rc)) break;
    produced += dst;
    consumed += src;
    if (rc == 0) {
      ok = consumed == in.size() && produced == out_size;
      break;
    }
    if (src == 0 && dst == 0) break;  // no progress: truncated
  }
  LZ4F_freeDecompressionContext(ctx);
  return ok;
}

}  // namespace

void Decompress(Codec codec, std::string_view in, uint8_t* out, size_t out_size, const std::string& context) {
  switch (codec) {
    case Codec::kUncompressed:
      CheckSize(context, codec, in.size(), out_size);
      if (out_size) std::memcpy(out, in.data(), out_size);
      return;
    case Codec::kSnappy: {
      // lakerun's decoder (snappy_decoder.h), faster than libsnappy's on blob pages; same checks.
      const auto* src = reinterpret_cast<const uint8_t*>(in.data());
      size_t n = 0, header = 0;
      if (!SnappyUncompressedLength(src, in.size(), &n, &header)) Fail(context, codec, "bad length header");
      CheckSize(context, codec, n, out_size);
      if (!SnappyDecompress(src, in.size(), out, out_size)) Fail(context, codec, "corrupt input");
      return;
    }
    case Codec::kGzip: InflateGzip(in, out, out_size, context); return;
    case Codec::kZstd: {
      // One decompression context per thread, reused: ZSTD_decompress would create (allocate and initialise) a
      // context of ~100 KB for every page.
      struct DCtx {
        ZSTD_DCtx* ctx = ZSTD_createDCtx();
        ~DCtx() { ZSTD_freeDCtx(ctx); }
      };
      thread_local DCtx dctx;
      if (dctx.ctx == nullptr) LAKERUN_THROW(InternalError, "ZSTD_createDCtx failed");
      size_t n = ZSTD_decompressDCtx(dctx.ctx, out, out_size, in.data(), in.size());
      if (ZSTD_isError(n)) Fail(context, codec, ZSTD_getErrorName(n));
      CheckSize(context, codec, n, out_size);
      return;
    }
    case Codec::kLz4Raw: {
      if (in.size() > INT32_MAX || out_size > INT32_MAX) Fail(context, codec, "block larger than 2 GiB");
      int n = LZ4_decompress_safe(in.data(), reinterpret_cast<char*>(out), static_cast<int>(in.size()),
                                  static_cast<int>(out_size));
      if (n < 0) Fail(context, codec, "corrupt input");
      CheckSize(context, codec, static_cast<size_t>(n), out_size);
      return;
    }
    case Codec::kLz4: {
      if (TryLz4Hadoop(in, out, out_size) || TryLz4Frame(in, out, out_size)) return;
      if (in.size() <= INT32_MAX && out_size <= INT32_MAX) {
        int n = LZ4_decompress_safe(in.data(), reinterpret_cast<char*>(out), static_cast<int>(in.size()),
                                    static_cast<int>(out_size));
        if (n >= 0 && static_cast<size_t>(n) == out_size) return;
      }
      Fail(context, codec, "input is neither Hadoop-framed LZ4, an LZ4 frame nor a raw LZ4 block of the page size");
    }
    case Codec::kBrotli: {
      size_t n = out_size;
      BrotliDecoderResult rc = BrotliDecoderDecompress(in.size(), reinterpret_cast<const uint8_t*>(in.data()), &n, out);
      if (rc != BROTLI_DECODER_RESULT_SUCCESS) Fail(context, codec, "corrupt or oversized input");
      CheckSize(context, codec, n, out_size);
      return;
    }
    default:
      LAKERUN_THROW(NotImplemented, context, ": compression codec ", ToString(codec), " is not supported");
  }
}

bool CanCompress(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed:
    case Codec::kSnappy:
    case Codec::kGzip:
    case Codec::kZstd:
    case Codec::kLz4Raw:
    case Codec::kLz4:
    case Codec::kBrotli: return true;
    default: return false;
  }
}

void Compress(Codec codec, int level, std::string_view in, std::string* out) {
  const size_t base = out->size();
  switch (codec) {
    case Codec::kUncompressed: out->append(in); return;
    case Codec::kSnappy: {
      out->resize(base + snappy::MaxCompressedLength(in.size()));
      size_t n = 0;
      snappy::RawCompress(in.data(), in.size(), out->data() + base, &n);
      out->resize(base + n);
      return;
    }
    case Codec::kGzip: {
      z_stream z{};
      if (deflateInit2(&z, level > 0 ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK) {
        LAKERUN_THROW(InternalError, "deflateInit2 failed");
      }
      out->resize(base + deflateBound(&z, in.size()));
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z.avail_in = static_cast<uInt>(in.size());
      z.next_out = reinterpret_cast<Bytef*>(out->data() + base);
      z.avail_out = static_cast<uInt>(out->size() - base);
      int rc = deflate(&z, Z_FINISH);
      size_t n = z.total_out;
      deflateEnd(&z);
      if (rc != Z_STREAM_END) LAKERUN_THROW(InternalError, "gzip compression failed: ", rc);
      out->resize(base + n);
      return;
    }
    case Codec::kZstd: {
      out->resize(base + ZSTD_compressBound(in.size()));
      size_t n = ZSTD_compress(out->data() + base, out->size() - base, in.data(), in.size(), level > 0 ? level : 3);
      if (ZSTD_isError(n)) LAKERUN_THROW(InternalError, "zstd compression failed: ", ZSTD_getErrorName(n));
      out->resize(base + n);
      return;
    }
    case Codec::kLz4Raw:
    case Codec::kLz4: {
      LAKERUN_CHECK(in.size() <= LZ4_MAX_INPUT_SIZE, "page of ", in.size(), " bytes too large for LZ4");
      const size_t header = codec == Codec::kLz4 ? 8 : 0;
      out->resize(base + header + static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
      int n = LZ4_compress_default(in.data(), out->data() + base + header, static_cast<int>(in.size()),
                                   static_cast<int>(out->size() - base - header));
      if (n <= 0 && !in.empty()) LAKERUN_THROW(InternalError, "lz4 compression failed");
      if (codec == Codec::kLz4) {
        // One Hadoop block: big-endian uncompressed and compressed sizes.
        auto put = [&](size_t at, uint32_t v) {
          for (int i = 0; i < 4; ++i) (*out)[at + i] = static_cast<char>(v >> (24 - 8 * i));
        };
        put(base, static_cast<uint32_t>(in.size()));
        put(base + 4, static_cast<uint32_t>(n));
      }
      out->resize(base + header + static_cast<size_t>(n));
      return;
    }
    case Codec::kBrotli: {
      size_t n = BrotliEncoderMaxCompressedSize(in.size());
      if (n == 0) n = in.size() + 1024;
      out->resize(base + n);
      if (!BrotliEncoderCompress(level > 0 ? level : 4, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, in.size(),
                                 reinterpret_cast<const uint8_t*>(in.data()), &n,
                                 reinterpret_cast<uint8_t*>(out->data() + base))) {
        LAKERUN_THROW(InternalError, "brotli compression failed");
      }
      out->resize(base + n);
      return;
    }
    default: LAKERUN_THROW(InvalidArgument, "cannot compress with codec ", ToString(codec));
  }
}

}  // namespace lakerun::parquet
