// SHA-256 as FIPS 180-4 section 6.2 gives it (64 rounds over 512-bit blocks, big-endian words), HMAC as RFC 2104
// gives it, base64 with RFC 4648's standard alphabet. Plain portable code, not tuned for speed: signing hashes a few
// hundred bytes per request.
#include "lakerun/base/crypto.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun {
namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr size_t kBlockSize = 64;

inline uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of a base64 character, or -1.
int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

Sha256Hasher::Sha256Hasher() : state_(kInitialState), buffer_{} {}

void Sha256Hasher::Compress(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) {
    w[t] = (uint32_t{block[4 * t]} << 24) | (uint32_t{block[4 * t + 1]} << 16) | (uint32_t{block[4 * t + 2]} << 8) |
           uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = RotateRight(w[t - 15], 7) ^ RotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = RotateRight(w[t - 2], 17) ^ RotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t sum1 = RotateRight(e, 6) ^ RotateRight(e, 11) ^ RotateRight(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + sum1 + choose + kRoundConstants[t] + w[t];
    const uint32_t sum0 = RotateRight(a, 2) ^ RotateRight(a, 13) ^ RotateRight(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = sum0 + majority;
    h = g, g = f, f = e, e = d + t1;
    d = c, c = b, b = a, a = t1 + t2;
  }
  state_[0] += a, state_[1] += b, state_[2] += c, state_[3] += d;
  state_[4] += e, state_[5] += f, state_[6] += g, state_[7] += h;
}

void Sha256Hasher::Update(std::string_view bytes) {
  auto p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  total_bytes_ += n;
  if (buffered_ > 0) {
    const size_t take = std::min(n, kBlockSize - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take, p += take, n -= take;
    if (buffered_ < kBlockSize) return;
    Compress(buffer_.data());
    buffered_ = 0;
  }
  for (; n >= kBlockSize; p += kBlockSize, n -= kBlockSize) Compress(p);
  std::memcpy(buffer_.data(), p, n);
  buffered_ = n;
}

// Padding (FIPS 180-4 5.1.1): a 1 bit, zeros up to 56 bytes mod 64, then the message length in bits, big-endian.
Sha256Digest Sha256Hasher::Finish() {
  const uint64_t bit_length = total_bytes_ * 8;
  buffer_[buffered_++] = 0x80;
  if (buffered_ > kBlockSize - 8) {
    std::memset(buffer_.data() + buffered_, 0, kBlockSize - buffered_);
    Compress(buffer_.data());
    buffered_ = 0;
  }
  std::memset(buffer_.data() + buffered_, 0, kBlockSize - 8 - buffered_);
  for (int i = 0; i < 8; ++i) buffer_[kBlockSize - 1 - i] = static_cast<uint8_t>(bit_length >> (8 * i));
  Compress(buffer_.data());
  Sha256Digest digest;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return digest;
}

Sha256Digest Sha256(std::string_view data) {
  Sha256Hasher hasher;
  hasher.Update(data);
  return hasher.Finish();
}

// HMAC(K, m) = H((K' ^ opad) || H((K' ^ ipad) || m)), K' the key padded with zeros to the block size (hashed first
// when longer than a block).
Sha256Digest HmacSha256(std::string_view key, std::string_view message) {
  std::array<uint8_t, kBlockSize> padded{};
  if (key.size() > kBlockSize) {
    const Sha256Digest hashed = Sha256(key);
    std::memcpy(padded.data(), hashed.data(), hashed.size());
  } else {
    std::memcpy(padded.data(), key.data(), key.size());
  }
  std::string inner_pad(kBlockSize, '\0'), outer_pad(kBlockSize, '\0');
  for (size_t i = 0; i < kBlockSize; ++i) {
    inner_pad[i] = static_cast<char>(padded[i] ^ 0x36);
    outer_pad[i] = static_cast<char>(padded[i] ^ 0x5c);
  }
  Sha256Hasher inner;
  inner.Update(inner_pad);
  inner.Update(message);
  Sha256Hasher outer;
  outer.Update(outer_pad);
  outer.Update(DigestBytes(inner.Finish()));
  return outer.Finish();
}

std::string DigestBytes(const Sha256Digest& digest) {
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::string HexLower(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

std::string HexLower(const Sha256Digest& digest) { return HexLower(DigestBytes(digest)); }

std::string Base64Encode(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t j = 0; j < 3; ++j) group = (group << 8) | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0);
    for (size_t j = 0; j < 4; ++j) text += j <= n ? kBase64Alphabet[(group >> (18 - 6 * j)) & 0x3f] : '=';
  }
  return text;
}

// Characters are checked one by one so that the error can give an offset instead of the text (which may be a key).
std::string Base64Decode(std::string_view text, std::string_view what) {
  size_t data_size = text.size();
  while (data_size > 0 && text.size() - data_size < 2 && text[data_size - 1] == '=') --data_size;
  LAKERUN_CHECK_AS(ConfigError, data_size == text.size() || text.size() % 4 == 0, what,
                   " is not valid base64: padded text must be a multiple of 4 characters long, got ", text.size());
  LAKERUN_CHECK_AS(ConfigError, data_size % 4 != 1, what, " is not valid base64: ", data_size,
                   " characters cannot encode whole bytes");
  std::string bytes;
  bytes.reserve(data_size / 4 * 3 + 2);
  uint32_t bits = 0;
  int bit_count = 0;
  for (size_t i = 0; i < data_size; ++i) {
    const int value = Base64Value(text[i]);
    LAKERUN_CHECK_AS(ConfigError, value >= 0, what, " is not valid base64: the character at offset ", i,
                     " is not in the base64 alphabet");
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      bytes += static_cast<char>((bits >> bit_count) & 0xff);
    }
  }
  return bytes;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string RandomBytes(size_t n) {
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(bytes.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    LAKERUN_CHECK_AS(IoError, r > 0, "getrandom(", n, " bytes) failed: ", std::strerror(errno));
    got += static_cast<size_t>(r);
  }
  return bytes;
}

}  // namespace lakerun
