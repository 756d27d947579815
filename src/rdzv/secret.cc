#include "lakerun/rdzv/secret.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lakerun/base/crypto.h"
#include "lakerun/base/error.h"

namespace lakerun::rdzv {
namespace {

// Messages name the secret's source and length, never its bytes.
void CheckLength(const std::string& secret, const std::string& source) {
  LAKERUN_CHECK_AS(ConfigError, secret.size() >= kMinSecretBytes, "rendezvous secret from ", source, " is ",
                   secret.size(), " bytes long; at least ", kMinSecretBytes,
                   " are required (e.g. `head -c 32 /dev/urandom | base64 > FILE`)");
}

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%03o", static_cast<unsigned>(mode & 0777));
  return text;
}

}  // namespace

std::string GenerateSecret() { return HexLower(RandomBytes(32)); }

std::string ReadSecretFile(const std::string& path) {
  struct stat st{};
  LAKERUN_CHECK_AS(ConfigError, ::stat(path.c_str(), &st) == 0, "rendezvous secret file ", path,
                   " cannot be read: ", std::strerror(errno));
  LAKERUN_CHECK_AS(ConfigError, (st.st_mode & (S_IRWXG | S_IRWXO)) == 0, "rendezvous secret file ", path,
                   " is accessible to group or others (mode ", OctalMode(st.st_mode), "); `chmod 600 ", path, "`");
  std::ifstream in(path, std::ios::binary);
  LAKERUN_CHECK_AS(ConfigError, in.good(), "rendezvous secret file ", path, " cannot be read: ",
                   std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string secret = bytes.str();
  if (!secret.empty() && secret.back() == '\n') secret.pop_back();
  if (!secret.empty() && secret.back() == '\r') secret.pop_back();
  CheckLength(secret, "file " + path);
  return secret;
}

std::optional<std::string> SecretFromEnvironment(const EnvLookup& env) {
  if (std::optional<std::string> secret = env(kSecretVariable)) {
    CheckLength(*secret, kSecretVariable);
    return secret;
  }
  if (std::optional<std::string> path = env(kSecretFileVariable)) return ReadSecretFile(*path);
  return std::nullopt;
}

}  // namespace lakerun::rdzv
