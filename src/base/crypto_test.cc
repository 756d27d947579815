#include "lakerun/base/crypto.h"

#include <gtest/gtest.h>

#include <string>

#include "lakerun/base/error.h"

namespace lakerun {
namespace {

std::string Sha256Hex(std::string_view data) { return HexLower(Sha256(data)); }

std::string HmacHex(std::string_view key, std::string_view message) { return HexLower(HmacSha256(key, message)); }

// FIPS 180-2 appendix B / NIST's published SHA-256 examples.
TEST(Sha256Test, NistVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundary: 55 bytes pad into one block, 56 need a second one.
TEST(Sha256Test, PaddingBoundaries) {
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(63, 'a')), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(Sha256Hex(std::string(119, 'a')), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST(Sha256Test, HasherAgreesWithOneShotAtEverySplit) {
  std::string bytes(300, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + 7);
  const Sha256Digest whole = Sha256(bytes);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    for (size_t second = cut; second <= bytes.size(); second += 37) {
      Sha256Hasher hasher;
      const std::string_view all(bytes);
      hasher.Update(all.substr(0, cut));
      hasher.Update(all.substr(cut, second - cut));
      hasher.Update(all.substr(second));
      ASSERT_EQ(hasher.Finish(), whole) << cut << " " << second;
    }
  }
}

// RFC 4231 section 4 (test case 5, a truncated output, does not apply).
TEST(HmacSha256Test, Rfc4231Vectors) {
  EXPECT_EQ(HmacHex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(HmacHex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HmacHex(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (char c = 1; c <= 25; ++c) key4 += c;
  EXPECT_EQ(HmacHex(key4, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  const std::string long_key(131, '\xaa');
  EXPECT_EQ(HmacHex(long_key, "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(HmacHex(long_key,
                    "This is a test using a larger than block-size key and a larger than block-size data. The key "
                    "needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HexTest, LowerCaseTwoDigitsPerByte) {
  EXPECT_EQ(HexLower(std::string_view("")), "");
  EXPECT_EQ(HexLower(std::string_view("\x00\x0f\xa0\xff", 4)), "000fa0ff");
  EXPECT_EQ(DigestBytes(Sha256("abc")).size(), 32u);
  EXPECT_EQ(HexLower(DigestBytes(Sha256("abc"))), HexLower(Sha256("abc")));
}

// RFC 4648 section 10.
TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded, "test"), plain);
  }
}

TEST(Base64Test, PaddingIsOptionalOnDecode) {
  EXPECT_EQ(Base64Decode("Zg", "test"), "f");
  EXPECT_EQ(Base64Decode("Zm8", "test"), "fo");
  EXPECT_EQ(Base64Decode("Zm9vYmE", "test"), "fooba");
}

TEST(Base64Test, RoundTripsEveryByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (size_t n = 0; n <= bytes.size(); n += 7) {
    EXPECT_EQ(Base64Decode(Base64Encode(bytes.substr(0, n)), "test"), bytes.substr(0, n)) << n;
  }
  EXPECT_EQ(Base64Encode("\xfb\xff"), "+/8=");
}

std::string DecodeError(std::string_view text) {
  try {
    Base64Decode(text, "AZURE_STORAGE_KEY");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Base64Test, DecodeErrorsNameWhatButNotTheText) {
  const std::string bad_char = DecodeError("Zm9v*mFy");
  EXPECT_NE(bad_char.find("AZURE_STORAGE_KEY"), std::string::npos) << bad_char;
  EXPECT_NE(bad_char.find("offset 4"), std::string::npos) << bad_char;
  EXPECT_EQ(bad_char.find("Zm9v"), std::string::npos) << bad_char;
  EXPECT_NE(DecodeError("Z").find("cannot encode whole bytes"), std::string::npos);
  EXPECT_NE(DecodeError("Zm9vY").find("cannot encode whole bytes"), std::string::npos);
  EXPECT_NE(DecodeError("Zg=").find("multiple of 4"), std::string::npos);
  EXPECT_NE(DecodeError("Zg=a").find("offset 2"), std::string::npos);  // '=' only at the end
  EXPECT_NE(DecodeError("Z===").find("offset 1"), std::string::npos);  // at most two '='
  EXPECT_NE(DecodeError("Zm9v Zm9").find("offset 4"), std::string::npos);  // no whitespace
  EXPECT_NE(DecodeError("Zm9v\nZg=").find("offset 4"), std::string::npos);
}

TEST(ConstantTimeEqualTest, ComparesContentAndLength) {
  EXPECT_TRUE(ConstantTimeEqual("", ""));
  EXPECT_TRUE(ConstantTimeEqual(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
}

TEST(RandomBytesTest, GivesTheLengthAskedAndDiffers) {
  EXPECT_EQ(RandomBytes(0).size(), 0u);
  const std::string a = RandomBytes(32);
  const std::string b = RandomBytes(32);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);  // 2^-256
}

}  // namespace
}  // namespace lakerun
