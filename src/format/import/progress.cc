#include "format/import/progress.h"

#include <unistd.h>

#include <cstdio>

namespace lakerun::importer::internal {

Progress::Progress(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), tty_(::isatty(2) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() {
  if (!finished_ && enabled_ && tty_) std::fprintf(stderr, "\n");
}

void Progress::Add(int64_t done) {
  done_ += done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ > std::chrono::milliseconds(100) || done_ >= total_) {
      last_draw_ = now;
      Draw(false);
    }
    return;
  }
  const int decile = total_ > 0 ? static_cast<int>(done_ * 10 / total_) : 10;
  if (decile != last_decile_) {
    last_decile_ = decile;
    Draw(false);
  }
}

void Progress::Finish() {
  if (finished_) return;
  finished_ = true;
  if (enabled_ && (tty_ || last_decile_ < 10)) Draw(true);
}

void Progress::Draw(bool final_line) {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done_) / secs : 0.0;
  const int pct = total_ > 0 ? static_cast<int>(done_ * 100 / total_) : 100;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = pct * kWidth / 100;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %3d%% %lld/%lld rows %.0f rows/s%s", label_.c_str(), bar.c_str(), pct,
                 static_cast<long long>(done_), static_cast<long long>(total_), rate, final_line ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s: %d%% (%lld/%lld rows, %.0f rows/s)\n", label_.c_str(), pct,
                 static_cast<long long>(done_), static_cast<long long>(total_), rate);
  }
  std::fflush(stderr);
}

}  // namespace lakerun::importer::internal
