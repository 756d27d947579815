#include "rdzv/store_auth.h"

#include <algorithm>

#include "lakerun/base/crypto.h"

namespace lakerun::rdzv::internal {
namespace {

constexpr std::string_view kKeyLabel = "lakerun rendezvous store v1";
constexpr std::string_view kClientLabel = "client";
constexpr std::string_view kServerLabel = "server";

std::string_view Magic() { return std::string_view(kAuthMagic, kAuthMagicBytes); }

std::string Proof(std::string_view secret, std::string_view label, std::string_view server_nonce,
                  std::string_view client_nonce) {
  const std::string key = DigestBytes(HmacSha256(secret, kKeyLabel));
  std::string message;
  message.reserve(label.size() + server_nonce.size() + client_nonce.size());
  message.append(label).append(server_nonce).append(client_nonce);
  return DigestBytes(HmacSha256(key, message));
}

std::string_view ClientNonceOf(std::string_view answer) { return answer.substr(kAuthMagicBytes, kNonceBytes); }

}  // namespace

std::string ServerHello(std::string_view server_nonce) {
  std::string hello(Magic());
  hello.append(server_nonce);
  return hello;
}

std::string ClientAnswer(std::string_view secret, std::string_view hello, std::string_view client_nonce) {
  if (hello.size() != kServerHelloBytes || hello.substr(0, kAuthMagicBytes) != Magic()) return "";
  const std::string_view server_nonce = hello.substr(kAuthMagicBytes);
  std::string answer(Magic());
  answer.append(client_nonce);
  answer += Proof(secret, kClientLabel, server_nonce, client_nonce);
  return answer;
}

AnswerCheck CheckClientAnswer(std::string_view secret, std::string_view server_nonce, std::string_view received) {
  const size_t prefix = std::min(received.size(), kAuthMagicBytes);
  if (received.substr(0, prefix) != Magic().substr(0, prefix)) return AnswerCheck::kNotLakerun;
  if (received.size() < kClientAnswerBytes) return AnswerCheck::kIncomplete;
  const std::string_view answer = received.substr(0, kClientAnswerBytes);
  const std::string expected = Proof(secret, kClientLabel, server_nonce, ClientNonceOf(answer));
  return ConstantTimeEqual(answer.substr(kAuthMagicBytes + kNonceBytes), expected) ? AnswerCheck::kValid
                                                                                    : AnswerCheck::kWrongProof;
}

std::string ServerProof(std::string_view secret, std::string_view server_nonce, std::string_view answer) {
  return Proof(secret, kServerLabel, server_nonce, ClientNonceOf(answer));
}

bool CheckServerProof(std::string_view secret, std::string_view hello, std::string_view answer,
                      std::string_view proof) {
  if (hello.size() != kServerHelloBytes || answer.size() != kClientAnswerBytes) return false;
  return ConstantTimeEqual(proof, ServerProof(secret, hello.substr(kAuthMagicBytes), answer));
}

}  // namespace lakerun::rdzv::internal
