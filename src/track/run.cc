#include "lakerun/track/run.h"

#include <cstring>
#include <exception>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "track/kill_signal.h"
#include "track/open_run_file.h"
#include "track/run_state.h"
#include "track/validation.h"

namespace lakerun::track {

Run::State::State(std::shared_ptr<Store> store_in, RunInfo info_in, const TrackerOptions& options_in,
                  std::function<int64_t()> clock)
    : store(std::move(store_in)), info(std::move(info_in)), options(options_in), clock_ms(std::move(clock)) {
  logger = std::make_unique<AsyncLogger>(store, info.run_id, options.queue_capacity, options.on_full);
}

Run::State::~State() {
  if (signal_token != 0) KillSignalHandler::Unregister(signal_token);
}

void Run::State::End(RunStatus status) {
  std::exception_ptr error;
  {
    std::unique_lock<std::timed_mutex> end_lock(end_mu);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (ended) return;
      ended = true;
    }
    try {
      logger->Close(options.flush_timeout);
    } catch (...) {
      error = std::current_exception();
    }
    try {
      store->UpdateRun(info.run_id, status, clock_ms());
      info.status = status;
      WithdrawOpenRun(announcement);  // ended: nothing left for the launcher to end
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  // After the status is written: the last unregistration joins the signal watcher, which may be waiting on end_mu.
  if (signal_token != 0) {
    KillSignalHandler::Unregister(signal_token);
    signal_token = 0;
  }
  if (error) std::rethrow_exception(error);
}

void Run::State::OnKillSignal(RunStatus status) {
  // If End() is running, let it finish writing the status (bounded), then there is nothing left to do.
  std::unique_lock<std::timed_mutex> end_lock(end_mu, std::defer_lock);
  if (!end_lock.try_lock_for(options.flush_timeout)) {
    LAKERUN_LOG(Error) << "tracking run " << info.run_id << ": End() still running after "
                       << options.flush_timeout.count() << " ms; leaving the run as it is";
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (ended) return;
    ended = true;
  }
  // Close, not just flush: once it returns the background thread has stopped, so the process can die without
  // leaving a half-written metric line behind. Log calls racing with this are dropped.
  try {
    logger->Close(options.flush_timeout);
  } catch (const std::exception& e) {
    LAKERUN_LOG(Error) << "tracking run " << info.run_id << ": flush on abnormal exit failed: " << e.what();
  }
  store->UpdateRun(info.run_id, status, clock_ms());
  WithdrawOpenRun(announcement);
}

Run::Run() = default;
Run::Run(std::shared_ptr<State> state) : state_(std::move(state)), uncaught_at_start_(std::uncaught_exceptions()) {
  if (state_ && state_->options.handle_signals) {
    std::weak_ptr<State> weak = state_;
    state_->signal_token = KillSignalHandler::Register([weak](int signal_number) {
      // signal_number 0: std::terminate (an exception nobody caught) -> FAILED; SIGINT/SIGTERM -> KILLED.
      if (auto s = weak.lock()) s->OnKillSignal(signal_number == 0 ? RunStatus::kFailed : RunStatus::kKilled);
    });
  }
}

Run::Run(Run&& other) noexcept
    : state_(std::move(other.state_)), uncaught_at_start_(std::uncaught_exceptions()) {}

Run& Run::operator=(Run&& other) noexcept {
  if (this != &other) {
    if (state_) {
      try {
        state_->End(RunStatus::kFinished);
      } catch (const std::exception& e) {
        LAKERUN_LOG(Error) << "ending tracking run " << state_->info.run_id << ": " << e.what();
      }
    }
    state_ = std::move(other.state_);
    uncaught_at_start_ = std::uncaught_exceptions();
  }
  return *this;
}

Run::~Run() {
  if (!state_) return;
  const RunStatus status =
      std::uncaught_exceptions() > uncaught_at_start_ ? RunStatus::kFailed : RunStatus::kFinished;
  try {
    state_->End(status);
  } catch (const std::exception& e) {
    LAKERUN_LOG(Error) << "ending tracking run " << state_->info.run_id << ": " << e.what();
  }
}

bool Run::active() const { return state_ != nullptr; }

namespace {
const std::string& Empty() {
  static const std::string empty;
  return empty;
}
}  // namespace

const std::string& Run::run_id() const { return state_ ? state_->info.run_id : Empty(); }
const std::string& Run::experiment_id() const { return state_ ? state_->info.experiment_id : Empty(); }
const std::string& Run::run_name() const { return state_ ? state_->info.run_name : Empty(); }

void Run::LogParam(const std::string& key, const std::string& value) {
  if (!state_) return;
  ValidateKey(key, "param");
  ValidateParamValue(key, value);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto [it, inserted] = state_->params.try_emplace(key, value);
    if (!inserted) {
      LAKERUN_CHECK(it->second == value, "Changing param values is not allowed. Param with key='", key,
                    "' was already logged with value='", it->second, "' for run ID='", state_->info.run_id,
                    "'. Attempted logging new value '", value, "'.");
      return;  // same value again: nothing to store
    }
  }
  LogEntry entry;
  entry.kind = LogEntry::Kind::kParam;
  entry.kv = {key, value};
  state_->logger->Enqueue(std::move(entry));
}

void Run::LogParams(const std::map<std::string, std::string>& params) {
  for (const auto& [key, value] : params) LogParam(key, value);
}

void Run::LogMetric(const std::string& key, double value, int64_t step) {
  if (!state_) return;
  LogMetric(key, value, step, state_->clock_ms());
}

void Run::LogMetric(const std::string& key, double value, int64_t step, int64_t timestamp_ms) {
  if (!state_) return;
  ValidateKey(key, "metric");
  {
    // A point equal to the key's previous one in step, time and value (bit for bit) is the same point logged twice
    // (e.g. "epoch" by two hooks in one millisecond): MLflow's stores keep (key, step, timestamp, value) unique.
    std::lock_guard<std::mutex> lock(state_->mu);
    const auto last = state_->last_points.find(key);
    if (last == state_->last_points.end()) {
      state_->last_points.emplace(key, Metric{key, value, timestamp_ms, step});
    } else {
      Metric& previous = last->second;
      if (previous.step == step && previous.timestamp_ms == timestamp_ms &&
          std::memcmp(&previous.value, &value, sizeof value) == 0) {
        return;
      }
      previous.value = value;  // the key's latest point, updated in place (no copy of the key per point)
      previous.timestamp_ms = timestamp_ms;
      previous.step = step;
    }
  }
  LogEntry entry;
  entry.kind = LogEntry::Kind::kMetric;
  entry.metric = {key, value, timestamp_ms, step};
  state_->logger->Enqueue(std::move(entry));
}

void Run::LogMetrics(const std::map<std::string, double>& metrics, int64_t step) {
  if (!state_) return;
  const int64_t now = state_->clock_ms();
  for (const auto& [key, value] : metrics) LogMetric(key, value, step, now);
}

void Run::SetTag(const std::string& key, const std::string& value) {
  if (!state_) return;
  ValidateKey(key, "tag");
  ValidateTagValue(key, value);
  LogEntry entry;
  entry.kind = LogEntry::Kind::kTag;
  entry.kv = {key, value};
  state_->logger->Enqueue(std::move(entry));
}

void Run::LogArtifact(const std::string& local_path, const std::string& artifact_path) {
  if (!state_) return;
  ValidateArtifactPath(artifact_path);
  LogEntry entry;
  entry.kind = LogEntry::Kind::kArtifact;
  entry.kv = {local_path, artifact_path};
  state_->logger->Enqueue(std::move(entry));
}

void Run::Flush(std::chrono::milliseconds timeout) {
  if (!state_) return;
  state_->logger->Flush(timeout.count() > 0 ? timeout : state_->options.flush_timeout);
}

void Run::End(RunStatus status) {
  if (!state_) return;
  state_->End(status);
}

uint64_t Run::dropped() const { return state_ ? state_->logger->dropped() : 0; }

}  // namespace lakerun::track
