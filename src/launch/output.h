// Routes the ranks' output (private to lakerun::launch).
//
// Each rank's stdout and stderr arrive through their own pipe. Complete lines go to the launcher's stdout/stderr
// with a "[rankN] " prefix, several lines of one read in one write(2) so lines of different ranks never
// interleave mid-line. A line longer than kMaxLineBytes is emitted in pieces; a partial last line is emitted (with
// a newline added) when its pipe closes. Ranks outside the filter are not shown, but their log files and stderr
// tails are kept. Log files get the raw bytes: DIR/rank<N>.stdout and DIR/rank<N>.stderr.
//
// Carriage returns (progress bars): a line shows what a terminal would, the text after its last '\r'. With
// Options::live (the launcher's console is a terminal), a partial line that a '\r' rewrote is shown at once as
// "\r[rankN] <text>" and rewritten in place by the next update; any other output first ends it with a newline.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::launch::internal {

enum class Stream { kStdout = 0, kStderr = 1 };

class OutputRouter {
 public:
  static constexpr size_t kMaxLineBytes = 64 * 1024;
  static constexpr size_t kTailLines = 20;

  struct Options {
    int ranks = 1;
    /// The global rank of local rank 0: prefixes, log file names and show_ranks use global ranks, the methods
    /// local ones.
    int first_rank = 0;
    int stdout_fd = 1;
    int stderr_fd = 2;
    std::vector<int> show_ranks;  ///< empty = all
    std::string log_dir;          ///< empty = no files
    bool live = false;            ///< show '\r'-rewritten partial lines as they change
  };

  /// Creates log_dir (and parents) and truncates the log files; throws IoError naming the path.
  explicit OutputRouter(Options options);
  ~OutputRouter();
  OutputRouter(const OutputRouter&) = delete;
  OutputRouter& operator=(const OutputRouter&) = delete;

  void Feed(int rank, Stream stream, std::string_view data);
  /// The pipe closed: emits a pending partial line.
  void Finish(int rank, Stream stream);
  /// Forgets the stderr tails (a new attempt starts).
  void ResetTails();
  /// The last kTailLines lines of the rank's stderr (a partial line included).
  std::vector<std::string> StderrTail(int rank) const;
  /// Writes "[lakerun] message\n" to the launcher's stderr.
  void Note(const std::string& message);
  /// Writes a note into every rank's log files too (restart markers).
  void NoteInLogs(const std::string& message) const;

 private:
  struct Channel {
    std::string pending;
    int log_fd = -1;
  };
  // The partial line shown live (Options::live), rewritten in place until it ends.
  struct LiveLine {
    int rank = -1;
    Stream stream = Stream::kStdout;
    size_t width = 0;  // bytes of text shown after the prefix
  };
  Channel& At(int rank, Stream stream) { return channels_[rank * 2 + static_cast<int>(stream)]; }
  int Fd(Stream stream) const { return stream == Stream::kStdout ? options_.stdout_fd : options_.stderr_fd; }
  bool Shown(int rank) const;
  void Emit(int rank, Stream stream, std::string_view lines_with_newlines);
  void ShowLive(int rank, Stream stream);
  void EndLive();  // ends the live line (a newline), if any
  void RememberTail(int rank, std::string_view line);

  Options options_;
  std::vector<Channel> channels_;
  std::vector<std::deque<std::string>> tails_;
  std::optional<LiveLine> live_;
};

/// write(2) all of `data`, retrying on EINTR and short writes. Returns false on another error.
bool WriteAll(int fd, std::string_view data);

}  // namespace lakerun::launch::internal
