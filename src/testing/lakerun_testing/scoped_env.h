// Environment variables set or removed for one scope, restored when it ends (tests only; not thread-safe, as
// setenv is not).
//
//   testing::ScopedEnv env;
//   env.Set("AWS_REGION", "us-east-1");
//   env.Unset("AWS_PROFILE");
//   testing::ScopedEnv one("MLFLOW_TRACKING_URI", nullptr);   // one variable, removed
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace lakerun::testing {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  /// Sets `name` to `value`, or removes it when `value` is null.
  ScopedEnv(const char* name, const char* value) {
    if (value != nullptr) {
      Set(name, value);
    } else {
      Unset(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

  void Set(const std::string& name, const std::string& value) {
    Save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void Unset(const std::string& name) {
    Save(name);
    ::unsetenv(name.c_str());
  }

 private:
  // Keeps the value from before the first change only.
  void Save(const std::string& name) {
    if (saved_.count(name)) return;
    const char* old = std::getenv(name.c_str());
    saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
  }

  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace lakerun::testing
