// Object-store emulators that tests start on loopback: s3rver (S3) and Azurite (Azure Blob), both npm packages
// pinned in tests/interop/package-lock.json (scripts/setup.sh runs `npm ci` there).
//
//   std::string why_not;
//   auto s3 = testing::StartS3Emulator(temp.Join("s3"), {"bucket"}, &why_not);
//   if (!s3) GTEST_SKIP() << why_not;   // node or the package is missing
//   ... s3->endpoint() ...              // "http://127.0.0.1:PORT"
//
// Each emulator runs in its own process group (a testing::Child) on a free loopback port and is SIGKILLed with its
// group when the object goes out of scope. Its data lives in `dir`/data and its output in `dir`/emulator.log.
// Missing node or package: nullopt with the reason, so a test can skip. Installed but failing to start (exits, or
// does not listen within 20 s): an IoError naming the emulator and the end of its log, so the test fails.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::testing {

class Child;

/// A running emulator process. Movable, not copyable.
class EmulatorProcess {
 public:
  /// Takes over a started `child` (StartS3Emulator and StartAzureEmulator make these).
  EmulatorProcess(std::unique_ptr<Child> child, int port, std::string endpoint, std::string log_path);
  EmulatorProcess(EmulatorProcess&&) noexcept;
  EmulatorProcess& operator=(EmulatorProcess&&) noexcept;
  ~EmulatorProcess();

  /// "http://127.0.0.1:PORT" (s3rver) or "http://127.0.0.1:PORT/devstoreaccount1" (Azurite's blob endpoint).
  const std::string& endpoint() const { return endpoint_; }
  int port() const { return port_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const;
  /// Whether the process is still running.
  bool Running();
  /// SIGTERM, then waits at most 5 s for it to end (after which its group is SIGKILLed). Idempotent.
  void Stop();
  /// SIGKILL at once (a store dying mid-request), and reaps it. Idempotent.
  void Kill();

 private:
  std::unique_ptr<Child> child_;
  int port_ = 0;
  std::string endpoint_;
  std::string log_path_;
};

/// s3rver: buckets path-style under endpoint(); accepts SigV4 signed with the fixed key below (region any).
class S3Emulator : public EmulatorProcess {
 public:
  using EmulatorProcess::EmulatorProcess;
  std::string access_key_id() const { return "S3RVER"; }
  std::string secret_access_key() const { return "S3RVER"; }
};

/// Azurite's blob service. Its account is fixed: devstoreaccount1 with the well-known development key.
class AzureEmulator : public EmulatorProcess {
 public:
  using EmulatorProcess::EmulatorProcess;
  std::string account() const { return "devstoreaccount1"; }
  std::string account_key_base64() const {
    return "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
  }
};

/// Starts s3rver on a free loopback port with `dir`/data as its store (created when missing, kept if it exists, so
/// a second emulator on the same dir sees the first one's objects) and `buckets` created at start. Waits (at most
/// 20 s) until the port accepts connections.
std::optional<S3Emulator> StartS3Emulator(const std::string& dir, std::vector<std::string> buckets,
                                          std::string* why_not);

/// Starts Azurite's blob service on a free loopback port, data in `dir`/data (--loose, --skipApiVersionCheck, no
/// telemetry). It starts with no container: create them through the store under test
/// (objstore::AzureBlobStore::CreateContainer, a signed PUT ?restype=container). lakerun::testing cannot sign
/// requests itself (it does not link lakerun::objstore) and Azurite has no option to create containers at start.
std::optional<AzureEmulator> StartAzureEmulator(const std::string& dir, std::string* why_not);

}  // namespace lakerun::testing
