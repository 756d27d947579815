// Hashes, encodings and random bytes for object-store request signing (lakerun::objstore) and the rendezvous
// store's authentication (lakerun::rdzv): SHA-256, HMAC-SHA256, hex, base64, a constant-time comparison and the
// kernel's random bytes. Small and dependency-free, so neither needs a TLS library of its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lakerun {

using Sha256Digest = std::array<uint8_t, 32>;

/// FIPS 180-4 SHA-256 of `data`.
Sha256Digest Sha256(std::string_view data);

/// SHA-256 over bytes that arrive in pieces (a body streamed from a file): Update() any number of times, then
/// Finish() once. Sha256Hasher h; h.Update(a); h.Update(b); h.Finish() == Sha256(a + b).
class Sha256Hasher {
 public:
  Sha256Hasher();
  void Update(std::string_view bytes);
  /// The digest of everything passed to Update(); the hasher must not be used afterwards.
  Sha256Digest Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// RFC 2104 HMAC with SHA-256.
Sha256Digest HmacSha256(std::string_view key, std::string_view message);
/// The digest's 32 bytes as a string (for chaining HMACs, as SigV4's key derivation does).
std::string DigestBytes(const Sha256Digest& digest);
/// Lower-case hex of `bytes`.
std::string HexLower(std::string_view bytes);
std::string HexLower(const Sha256Digest& digest);
/// RFC 4648 base64 with padding.
std::string Base64Encode(std::string_view bytes);
/// Decodes RFC 4648 base64 (padding optional, no whitespace). Throws ConfigError naming `what` on a bad character
/// or length; `what` must not be the secret itself.
std::string Base64Decode(std::string_view text, std::string_view what);

/// Whether a == b, in a time that depends on their lengths only (for comparing MACs: no early exit at the first
/// differing byte).
bool ConstantTimeEqual(std::string_view a, std::string_view b);
/// `n` bytes from the kernel's CSPRNG (getrandom(2)); throws IoError if it fails.
std::string RandomBytes(size_t n);

}  // namespace lakerun
