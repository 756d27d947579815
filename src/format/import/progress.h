// Private: progress of an import on stderr: a redrawn bar on a terminal, a plain line per 10% otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace lakerun::importer::internal {

class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled);
  ~Progress();
  void Add(int64_t done);
  void Finish();

 private:
  void Draw(bool final_line);

  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool tty_;
  int last_decile_ = -1;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace lakerun::importer::internal
