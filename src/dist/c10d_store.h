// c10d's Store over lakerun's rendezvous store (lakerun/rdzv/store.h), so process groups (Gloo, NCCL) rendezvous
// through lakerun's authenticated client, or through the store this rank hosts, instead of c10d's TCPStore.
// Private to lakerun::dist: c10d types stay out of public headers.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "dist/c10d_compat.h"
#include "lakerun/rdzv/store.h"

namespace lakerun::dist {

/// Every c10d operation maps to one rdzv::Store call. get() and wait() without a timeout wait up to the store's
/// timeout (setTimeout); c10d's kNoTimeout (0) also means that timeout here, so nothing waits forever. Errors are
/// lakerun's (CommTimeout, DistError), which derive from std::exception as c10d's callers expect.
class RdzvC10dStore final : public ::c10d::Store {
 public:
  RdzvC10dStore(std::shared_ptr<rdzv::Store> store, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  rdzv::Store& store() { return *store_; }

 private:
  std::chrono::milliseconds Bound(std::chrono::milliseconds timeout) const;

  std::shared_ptr<rdzv::Store> store_;
};

}  // namespace lakerun::dist
