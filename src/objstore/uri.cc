#include "objstore/uri.h"

#include <utility>

#include "lakerun/base/error.h"

namespace lakerun::objstore {
namespace {

struct Scheme {
  std::string_view prefix;
  StoreKind kind;
  bool account_in_host;  // container@account.<suffix>
};

constexpr Scheme kSchemes[] = {
    {"s3://", StoreKind::kS3, false},       {"s3a://", StoreKind::kS3, false},
    {"s3n://", StoreKind::kS3, false},      {"gs://", StoreKind::kGcs, false},
    {"abfss://", StoreKind::kAzure, true},  {"abfs://", StoreKind::kAzure, true},
    {"wasbs://", StoreKind::kAzure, true},  {"wasb://", StoreKind::kAzure, true},
    {"az://", StoreKind::kAzure, false},
};

const Scheme* FindScheme(std::string_view path) {
  for (const Scheme& scheme : kSchemes) {
    if (path.substr(0, scheme.prefix.size()) == scheme.prefix) return &scheme;
  }
  return nullptr;
}

}  // namespace

bool IsObjectStoreUri(std::string_view path) { return FindScheme(path) != nullptr; }

std::optional<ObjectUri> ParseObjectUri(std::string_view path) {
  const Scheme* scheme = FindScheme(path);
  if (scheme == nullptr) return std::nullopt;
  const std::string_view rest = path.substr(scheme->prefix.size());
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  ObjectUri uri;
  uri.kind = scheme->kind;
  uri.root = std::string(scheme->prefix) + std::string(authority);
  if (slash != std::string_view::npos) uri.key = std::string(rest.substr(slash + 1));
  while (!uri.key.empty() && uri.key.front() == '/') uri.key.erase(0, 1);
  if (scheme->account_in_host) {
    const size_t at = authority.find('@');
    LAKERUN_CHECK_AS(ConfigError, at != std::string_view::npos && at > 0 && at + 1 < authority.size(), "'",
                     std::string(path), "': expected ", std::string(scheme->prefix),
                     "CONTAINER@ACCOUNT.dfs.core.windows.net/PATH");
    uri.bucket = std::string(authority.substr(0, at));
    const std::string_view host = authority.substr(at + 1);
    uri.account = std::string(host.substr(0, host.find('.')));
  } else {
    uri.bucket = std::string(authority);
  }
  LAKERUN_CHECK_AS(ConfigError, !uri.bucket.empty(), "'", std::string(path), "' names no bucket or container");
  return uri;
}

}  // namespace lakerun::objstore
