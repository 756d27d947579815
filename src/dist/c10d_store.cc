#include "dist/c10d_store.h"

namespace lakerun::dist {
namespace {

std::string Text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }
std::vector<uint8_t> Bytes(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

}  // namespace

RdzvC10dStore::RdzvC10dStore(std::shared_ptr<rdzv::Store> store, std::chrono::milliseconds timeout)
    : ::c10d::Store(timeout), store_(std::move(store)) {}

std::chrono::milliseconds RdzvC10dStore::Bound(std::chrono::milliseconds timeout) const {
  if (timeout != kNoTimeout) return timeout;
  return timeout_ != kNoTimeout ? timeout_ : kDefaultTimeout;
}

void RdzvC10dStore::set(const std::string& key, const std::vector<uint8_t>& value) { store_->Set(key, Text(value)); }

std::vector<uint8_t> RdzvC10dStore::compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                               const std::vector<uint8_t>& desired) {
  return Bytes(store_->CompareSet(key, Text(expected), Text(desired)));
}

std::vector<uint8_t> RdzvC10dStore::get(const std::string& key) { return Bytes(store_->Get(key, Bound(timeout_))); }

int64_t RdzvC10dStore::add(const std::string& key, int64_t value) { return store_->Add(key, value); }

bool RdzvC10dStore::deleteKey(const std::string& key) { return store_->Delete(key); }

bool RdzvC10dStore::check(const std::vector<std::string>& keys) { return store_->Check(keys); }

int64_t RdzvC10dStore::getNumKeys() { return store_->NumKeys(); }

void RdzvC10dStore::wait(const std::vector<std::string>& keys) { store_->Wait(keys, Bound(timeout_)); }

void RdzvC10dStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  store_->Wait(keys, Bound(timeout));
}

}  // namespace lakerun::dist
