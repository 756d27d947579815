#include "launch/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun::launch::internal {
namespace {

void MakeDirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      LAKERUN_THROW(IoError, "launch: --log-dir: cannot create directory '", partial, "': ", std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    LAKERUN_THROW(IoError, "launch: --log-dir: '", dir, "' is not a directory");
  }
}

// What a terminal shows of a line that carriage returns rewrote: the text after its last '\r' (trailing ones, as in
// "\r\n" line ends, do not count).
std::string_view Visible(std::string_view line) {
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t cr = line.rfind('\r');
  return cr == std::string_view::npos ? line : line.substr(cr + 1);
}

}  // namespace

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

OutputRouter::OutputRouter(Options options)
    : options_(std::move(options)), channels_(static_cast<size_t>(options_.ranks) * 2), tails_(options_.ranks) {
  if (options_.log_dir.empty()) return;
  MakeDirs(options_.log_dir);
  for (int rank = 0; rank < options_.ranks; ++rank) {
    for (Stream stream : {Stream::kStdout, Stream::kStderr}) {
      const std::string path = options_.log_dir + "/rank" + std::to_string(options_.first_rank + rank) +
                               (stream == Stream::kStdout ? ".stdout" : ".stderr");
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0) LAKERUN_THROW(IoError, "launch: --log-dir: cannot open '", path, "': ", std::strerror(errno));
      At(rank, stream).log_fd = fd;
    }
  }
}

OutputRouter::~OutputRouter() {
  for (auto& channel : channels_) {
    if (channel.log_fd >= 0) ::close(channel.log_fd);
  }
}

bool OutputRouter::Shown(int rank) const {
  return options_.show_ranks.empty() ||
         std::find(options_.show_ranks.begin(), options_.show_ranks.end(), options_.first_rank + rank) !=
             options_.show_ranks.end();
}

void OutputRouter::RememberTail(int rank, std::string_view line) {
  auto& tail = tails_[rank];
  tail.emplace_back(line);
  while (tail.size() > kTailLines) tail.pop_front();
}

void OutputRouter::Emit(int rank, Stream stream, std::string_view lines) {
  // `lines` holds whole lines, each ending in '\n'.
  std::string out;
  const std::string prefix = "[rank" + std::to_string(options_.first_rank + rank) + "] ";
  const bool shown = Shown(rank);
  // The first line completes the live line of this channel, if it has one: rewritten in place.
  bool completes_live = live_.has_value() && live_->rank == rank && live_->stream == stream;
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    std::string_view line = Visible(lines.substr(start, end - start));
    if (stream == Stream::kStderr) RememberTail(rank, line);
    if (shown) {
      if (completes_live) out += '\r';
      out += prefix;
      out.append(line.data(), line.size());
      if (completes_live && line.size() < live_->width) out.append(live_->width - line.size(), ' ');
      out += '\n';
    }
    if (completes_live) live_.reset();
    completes_live = false;
    start = end + 1;
  }
  if (out.empty()) return;
  EndLive();
  WriteAll(Fd(stream), out);
}

void OutputRouter::EndLive() {
  if (!live_.has_value()) return;
  WriteAll(Fd(live_->stream), "\n");
  live_.reset();
}

void OutputRouter::ShowLive(int rank, Stream stream) {
  Channel& channel = At(rank, stream);
  const std::string text(Visible(channel.pending));
  // What came before the last '\r' will never show again: keep only the current text (the '\r' marks it).
  channel.pending = "\r" + text;
  if (!Shown(rank) || text.empty()) return;
  std::string out = "\r[rank" + std::to_string(options_.first_rank + rank) + "] " + text;
  if (live_.has_value() && live_->rank == rank && live_->stream == stream) {
    if (text.size() < live_->width) out.append(live_->width - text.size(), ' ');
  } else {
    EndLive();
  }
  live_ = LiveLine{rank, stream, text.size()};
  WriteAll(Fd(stream), out);
}

void OutputRouter::Feed(int rank, Stream stream, std::string_view data) {
  Channel& channel = At(rank, stream);
  if (channel.log_fd >= 0) WriteAll(channel.log_fd, data);
  channel.pending.append(data.data(), data.size());
  const size_t last_newline = channel.pending.rfind('\n');
  if (last_newline != std::string::npos) {
    Emit(rank, stream, std::string_view(channel.pending).substr(0, last_newline + 1));
    channel.pending.erase(0, last_newline + 1);
  }
  if (options_.live && channel.pending.find('\r') != std::string::npos) ShowLive(rank, stream);
  while (channel.pending.size() >= kMaxLineBytes) {
    std::string piece = channel.pending.substr(0, kMaxLineBytes) + "\n";
    channel.pending.erase(0, kMaxLineBytes);
    Emit(rank, stream, piece);
  }
}

void OutputRouter::Finish(int rank, Stream stream) {
  Channel& channel = At(rank, stream);
  if (channel.pending.empty()) return;
  std::string last = channel.pending + "\n";
  channel.pending.clear();
  Emit(rank, stream, last);
}

void OutputRouter::ResetTails() {
  for (auto& tail : tails_) tail.clear();
}

std::vector<std::string> OutputRouter::StderrTail(int rank) const {
  std::vector<std::string> lines(tails_[rank].begin(), tails_[rank].end());
  const std::string_view pending = Visible(channels_[rank * 2 + 1].pending);
  if (!pending.empty()) {
    lines.emplace_back(pending);
    if (lines.size() > kTailLines) lines.erase(lines.begin());
  }
  return lines;
}

void OutputRouter::Note(const std::string& message) {
  EndLive();
  WriteAll(options_.stderr_fd, "[lakerun] " + message + "\n");
}

void OutputRouter::NoteInLogs(const std::string& message) const {
  const std::string line = "[lakerun] " + message + "\n";
  for (const auto& channel : channels_) {
    if (channel.log_fd >= 0) WriteAll(channel.log_fd, line);
  }
}

}  // namespace lakerun::launch::internal
