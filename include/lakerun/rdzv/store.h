// The rendezvous store: one small interface for every party of a job (lakerun::rdzv).
//
// The launcher (or, without one, rank 0) hosts a StoreServer (store_server.h); ranks, node agents and the function
// API reach it through a StoreClient (store_client.h); lakerun::dist wraps either in c10d's Store for process groups
// (src/dist/c10d_store.h). Both ends speak c10d TCPStore's wire protocol without linking libtorch
// (src/rdzv/store_protocol.h); lakerun's own clients first prove that they know the job's secret (secret.h,
// src/rdzv/store_auth.h). Keys here are c10d API keys: a c10d client's key "k" and this interface's key "k" are the
// same entry.
//
// Values are byte strings. Every blocking call takes a timeout and throws CommTimeout when it passes; a broken
// connection throws DistError naming the store's address and the key.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::rdzv {

class Store {
 public:
  virtual ~Store() = default;
  virtual void Set(const std::string& key, const std::string& value) = 0;
  /// Waits up to `timeout` for `key` to exist, then returns its value. Throws CommTimeout naming the key.
  virtual std::string Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  /// The value of `key` if it exists now; never waits.
  virtual std::optional<std::string> TryGet(const std::string& key) = 0;
  /// Atomically adds `delta` to the integer at `key` (0 when absent) and returns the new value.
  virtual int64_t Add(const std::string& key, int64_t delta) = 0;
  /// c10d's compareSet: sets `key` to `desired` when its value is `expected`, or when it is absent and `expected` is
  /// empty; returns the value the key has afterwards (`expected` itself when it is absent and stays absent).
  virtual std::string CompareSet(const std::string& key, const std::string& expected, const std::string& desired) = 0;
  /// Removes `key`; false when it did not exist.
  virtual bool Delete(const std::string& key) = 0;
  /// Whether every key exists now.
  virtual bool Check(const std::vector<std::string>& keys) = 0;
  /// Waits up to `timeout` until every key exists. Throws CommTimeout naming the keys.
  virtual void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  /// Number of keys the store holds (all jobs' prefixes together).
  virtual int64_t NumKeys() = 0;
};

}  // namespace lakerun::rdzv
