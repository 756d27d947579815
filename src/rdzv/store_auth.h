// The store's challenge-response handshake (private to lakerun::rdzv), before any c10d request on a connection to a
// StoreAccess::kSecret server:
//
//   server -> client   ServerHello  = kAuthMagic (8) | Ns (32 random bytes)
//   client -> server   ClientAnswer = kAuthMagic (8) | Nc (32 random bytes) | HMAC(K, "client" | Ns | Nc) (32)
//   server -> client   ServerProof  = HMAC(K, "server" | Ns | Nc) (32)
//
// K = HMAC-SHA256(secret, kKeyLabel) keeps the proofs apart from any other use of the secret. Ns is fresh per
// connection, so an answer captured from one connection is worthless on another (replay); Nc is fresh per client, so
// the server's proof cannot be replayed to a client either; the labels differ, so neither side's proof can be
// reflected as the other's. The client checks the server's proof before it sends any request, so a rank never hands
// its keys to an impostor that does not know the secret. Nothing here encrypts or signs the requests that follow:
// an attacker on the path of an authenticated TCP connection could still alter it (docs/launch.md says so).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lakerun::rdzv::internal {

inline constexpr char kAuthMagic[] = "LKRDZV1";  // with its terminating NUL: 8 bytes
inline constexpr size_t kAuthMagicBytes = sizeof(kAuthMagic);
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;
inline constexpr size_t kServerHelloBytes = kAuthMagicBytes + kNonceBytes;
inline constexpr size_t kClientAnswerBytes = kAuthMagicBytes + kNonceBytes + kProofBytes;
inline constexpr size_t kServerProofBytes = kProofBytes;

enum class AnswerCheck {
  kIncomplete,  // fewer bytes than an answer, all consistent with one so far
  kValid,
  kNotLakerun,  // does not start with kAuthMagic: e.g. a c10d TCPStore client's first request
  kWrongProof,  // a lakerun client with another secret, or a replayed answer
};

/// ServerHello for the nonce `server_nonce` (kNonceBytes).
std::string ServerHello(std::string_view server_nonce);
/// The client's answer to `hello` (kServerHelloBytes), with the fresh nonce `client_nonce`. Empty when `hello` is
/// not a ServerHello.
std::string ClientAnswer(std::string_view secret, std::string_view hello, std::string_view client_nonce);
/// Checks the first bytes of a connection against the answer expected for `server_nonce`. Constant time in the proof.
AnswerCheck CheckClientAnswer(std::string_view secret, std::string_view server_nonce, std::string_view received);
/// The server's proof for an answer that CheckClientAnswer found valid.
std::string ServerProof(std::string_view secret, std::string_view server_nonce, std::string_view answer);
/// Whether `proof` is the server's proof for this client's `answer` to `hello`.
bool CheckServerProof(std::string_view secret, std::string_view hello, std::string_view answer,
                      std::string_view proof);

}  // namespace lakerun::rdzv::internal
