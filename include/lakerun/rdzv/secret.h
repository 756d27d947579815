// The per-job rendezvous secret: where it comes from, and how it reaches the ranks.
//
// Sources, first found wins: `lakerun launch --rdzv-secret-file PATH`, LAKERUN_RDZV_SECRET (the secret itself),
// LAKERUN_RDZV_SECRET_FILE (a path); else the launcher of a single-node job generates one. The launcher passes it to
// its ranks in LAKERUN_RDZV_SECRET (which therefore wins over an inherited LAKERUN_RDZV_SECRET_FILE). A secret is
// never printed: errors name its source and length, never its bytes.
#pragma once

#include <optional>
#include <string>

#include "lakerun/base/rank_environment.h"

namespace lakerun::rdzv {

inline constexpr char kSecretVariable[] = "LAKERUN_RDZV_SECRET";
inline constexpr char kSecretFileVariable[] = "LAKERUN_RDZV_SECRET_FILE";
/// The port of the launcher's authenticated store when MASTER_PORT names its compatibility listener.
inline constexpr char kStorePortVariable[] = "LAKERUN_RDZV_PORT";
/// Shortest secret accepted, in bytes.
inline constexpr size_t kMinSecretBytes = 16;

/// 32 random bytes as 64 hex digits (printable, so it can travel in an environment variable).
std::string GenerateSecret();

/// The contents of `path` without one trailing newline. Throws ConfigError naming the path when it cannot be read,
/// is empty or shorter than kMinSecretBytes, or is readable by group or others (chmod 600 it).
std::string ReadSecretFile(const std::string& path);

/// LAKERUN_RDZV_SECRET, else LAKERUN_RDZV_SECRET_FILE's file, else nothing. Throws ConfigError naming the variable
/// when the secret is too short.
std::optional<std::string> SecretFromEnvironment(const EnvLookup& env);

}  // namespace lakerun::rdzv
