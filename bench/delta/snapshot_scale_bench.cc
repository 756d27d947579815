// delta_snapshot_scale_bench: opening the latest snapshot of a 300,000-file Delta table and planning filtered scans.
//
//   delta_snapshot_scale_bench [--table DIR] [--files N] [--commits N] [--parts N] [--rounds R] [--regenerate]
//
// The table's log (scale_table.h: a multi-part checkpoint of N files with stats on every add, then N commits of a
// few adds and removes) is written into DIR when DIR has no _delta_log yet (default DIR:
// $TMPDIR/lakerun_delta_scale_<N>; --regenerate rewrites it). Data files are not written: opening a snapshot and
// planning a scan never read them.
//
// Each round runs in a fresh child process (so no round inherits another's heap or peak), which measures in order:
//   open   DeltaTable(DIR).Latest()
//   plan   delta::PruneFiles(snapshot, filter) for an id range keeping ~1% of the files, for part = 7, and both
//          (PruneFiles parses each add's stats lazily, only the filter's columns, through delta::ParseFileStats)
//   lazy   the same id range judged by calling ParseFileStats directly: the floor of the plan's stats work
// and after each step the wall time, the process CPU time and the process's peak RSS so far (VmHWM; ru_maxrss
// agrees). The summary gives the median time over rounds and the largest peak, against the targets:
// <= 3 s and <= 1 GB (10^9 bytes) on this machine.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/file_stats.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/table.h"
#include "scale_table.h"

namespace {

using Clock = std::chrono::steady_clock;
using lakerun::delta::Filter;
using lakerun::parquet::Value;

constexpr double kTargetSeconds = 3.0;
constexpr double kTargetBytes = 1e9;

struct Flags {
  std::string table;
  lakerun::bench::ScaleTableOptions table_options;
  int rounds = 3;
  bool regenerate = false;
};

// One measured step of one round.
struct Step {
  double wall_s = 0;
  double cpu_s = 0;
  int64_t count = 0;      ///< live files (open) or files kept (plans)
  int64_t peak_bytes = 0;  ///< VmHWM after the step
  int64_t rss_bytes = 0;   ///< VmRSS after the step
};

constexpr int kSteps = 5;
const char* const kStepNames[kSteps] = {"open latest snapshot", "plan: id range (~1%)", "plan: part = 7",
                                        "plan: part = 7 and id range", "ParseFileStats: id range"};

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A "VmHWM:" style line of /proc/self/status, in bytes (0 when absent).
int64_t StatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::atoll(line.c_str() + n) * 1024;
  }
  return 0;
}

template <typename F>
Step Measure(F&& step) {
  Step out;
  const double cpu = ProcessCpuSeconds();
  const auto start = Clock::now();
  out.count = step();
  out.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  out.cpu_s = ProcessCpuSeconds() - cpu;
  out.peak_bytes = StatusBytes("VmHWM:");
  out.rss_bytes = StatusBytes("VmRSS:");
  return out;
}

// The files whose id stats overlap [lo, hi], found with ParseFileStats (only the `id` entries are decoded): what a
// planner spends on lazy, column-selective stats parsing alone, next to PruneFiles above.
int64_t CountByLazyStats(const lakerun::delta::Snapshot& snapshot, int64_t lo, int64_t hi) {
  const lakerun::delta::StructField* id = snapshot.metadata.schema->FindField("id");
  LAKERUN_CHECK(id != nullptr, snapshot.Describe(), ": the scale table has no column 'id'");
  const std::map<std::string, const lakerun::delta::DataType*> wanted = {{"id", id->type.get()}};
  int64_t kept = 0;
  for (const auto& file : snapshot.files) {
    std::optional<lakerun::delta::FileStats> stats;
    if (file.stats) stats = lakerun::delta::ParseFileStats(*file.stats, wanted);
    const lakerun::delta::ColumnStats* c = nullptr;
    if (stats) {
      auto it = stats->columns.find("id");
      if (it != stats->columns.end()) c = &it->second;
    }
    const bool below = c && c->max && c->max->as_int() < lo;
    const bool above = c && c->min && c->min->as_int() > hi;
    if (!below && !above) ++kept;
  }
  return kept;
}

// The round's measurements, in a process that has loaded nothing else.
void RunRound(const Flags& flags, Step* steps) {
  const auto& o = flags.table_options;
  const int64_t all_ids = o.files * o.rows_per_file;
  const int64_t lo = all_ids / 10 * 4;  // a range in the middle of the checkpoint's files
  const int64_t hi = lo + all_ids / 100 - 1;
  const Filter id_range = Filter::And({Filter::Compare("id", lakerun::format::FilterOp::kGe, Value::Int(lo)),
                                       Filter::Compare("id", lakerun::format::FilterOp::kLe, Value::Int(hi))});
  const Filter part = Filter::Parse("part = 7");
  const Filter both = Filter::And({part, id_range});

  lakerun::delta::Snapshot snapshot;
  steps[0] = Measure([&] {
    snapshot = lakerun::delta::DeltaTable(flags.table).Latest();
    return static_cast<int64_t>(snapshot.files.size());
  });
  const Filter* plans[] = {&id_range, &part, &both};
  for (int i = 0; i < 3; ++i) {
    steps[i + 1] = Measure([&] { return static_cast<int64_t>(lakerun::delta::PruneFiles(snapshot, *plans[i]).size()); });
  }
  steps[4] = Measure([&] { return CountByLazyStats(snapshot, lo, hi); });
}

// Runs `fn` in a forked child and waits for it; false when the child failed.
template <typename F>
bool InChild(F&& fn) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return false;
  }
  if (pid == 0) {
    int rc = 0;
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      rc = 1;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A round in a child process; its steps come back through a pipe.
bool RunRoundInChild(const Flags& flags, Step* steps) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const bool ok = InChild([&] {
    close(fds[0]);
    Step out[kSteps];
    RunRound(flags, out);
    const ssize_t n = write(fds[1], out, sizeof out);
    LAKERUN_CHECK(n == static_cast<ssize_t>(sizeof out), "delta_snapshot_scale_bench: cannot report a round");
  });
  close(fds[1]);
  const ssize_t n = ok ? read(fds[0], steps, sizeof(Step) * kSteps) : 0;
  close(fds[0]);
  return ok && n == static_cast<ssize_t>(sizeof(Step) * kSteps);
}

double Mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

void PrintStep(int round, int i, const Step& s) {
  std::printf("  round %d  %-28s %7.3f s wall  %7.3f s cpu  %8lld files  peak RSS %7.1f MB  RSS %7.1f MB\n", round,
              kStepNames[i], s.wall_s, s.cpu_s, static_cast<long long>(s.count), Mb(s.peak_bytes), Mb(s.rss_bytes));
}

void PrintSummary(const std::vector<std::vector<Step>>& rounds) {
  std::printf("\nsummary (median wall time of %zu rounds, largest peak RSS; targets <= %.0f s, <= %.0f GB):\n",
              rounds.size(), kTargetSeconds, kTargetBytes / 1e9);
  for (int i = 0; i < kSteps; ++i) {
    std::vector<double> times;
    int64_t peak = 0;
    for (const auto& r : rounds) {
      times.push_back(r[static_cast<size_t>(i)].wall_s);
      peak = std::max(peak, r[static_cast<size_t>(i)].peak_bytes);
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    const int64_t count = rounds.front()[static_cast<size_t>(i)].count;
    std::printf("%-30s %7.3f s (%s)  peak RSS %7.1f MB (%s)  %lld files\n", kStepNames[i], median,
                median <= kTargetSeconds ? "met" : "NOT met", Mb(peak), peak <= kTargetBytes ? "met" : "NOT met",
                static_cast<long long>(count));
  }
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--table" && has_value) {
      flags->table = argv[++i];
    } else if (a == "--files" && has_value) {
      flags->table_options.files = std::atoll(argv[++i]);
    } else if (a == "--commits" && has_value) {
      flags->table_options.commits = std::atoi(argv[++i]);
    } else if (a == "--parts" && has_value) {
      flags->table_options.checkpoint_parts = std::atoi(argv[++i]);
    } else if (a == "--rounds" && has_value) {
      flags->rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--regenerate") {
      flags->regenerate = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--table DIR] [--files N] [--commits N] [--parts N] [--rounds R] [--regenerate]\n"
                   "unknown or incomplete flag: %s\n",
                   argv[0], a.c_str());
      return false;
    }
  }
  if (flags->table.empty()) {
    flags->table = (std::filesystem::temp_directory_path() /
                    ("lakerun_delta_scale_" + std::to_string(flags->table_options.files)))
                       .string();
  }
  return true;
}

bool EnsureTable(const Flags& flags) {
  const std::string log = lakerun::JoinPath(flags.table, "_delta_log");
  if (!flags.regenerate && std::filesystem::exists(log)) {
    std::printf("table %s: reusing the existing log (--regenerate rewrites it)\n", flags.table.c_str());
    return true;
  }
  std::filesystem::remove_all(log);
  const auto& o = flags.table_options;
  std::printf("table %s: writing the log (%lld files, %d-part checkpoint at version %lld, %d commits)...\n",
              flags.table.c_str(), static_cast<long long>(o.files), o.checkpoint_parts,
              static_cast<long long>(o.checkpoint_version), o.commits);
  const auto start = Clock::now();
  // In a child, so the generator's memory never counts towards the measurements.
  const bool ok = InChild([&] {
    const lakerun::bench::ScaleTableSummary s = lakerun::bench::WriteScaleTable(flags.table, o);
    std::printf("  version %lld, %lld live files, %.1f MB of log\n", static_cast<long long>(s.latest_version),
                static_cast<long long>(s.live_files), Mb(s.log_bytes));
  });
  std::printf("  written in %.1f s\n", std::chrono::duration<double>(Clock::now() - start).count());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  if (!EnsureTable(flags)) return 1;
  std::vector<std::vector<Step>> rounds;
  for (int r = 1; r <= flags.rounds; ++r) {
    std::vector<Step> steps(kSteps);
    if (!RunRoundInChild(flags, steps.data())) {
      std::fprintf(stderr, "round %d failed\n", r);
      return 1;
    }
    for (int i = 0; i < kSteps; ++i) PrintStep(r, i, steps[static_cast<size_t>(i)]);
    rounds.push_back(std::move(steps));
  }
  PrintSummary(rounds);
  return 0;
}
