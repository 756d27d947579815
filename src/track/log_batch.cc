#include "track/log_batch.h"

#include <cmath>
#include <cstdio>

#include "lakerun/base/error.h"

namespace lakerun::track {
namespace {

// A JSON string literal (RFC 8259 escaping); hand-written because it runs once per logged entity.
std::string JsonString(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string MetricJson(const Metric& m) {
  std::string out = "{\"key\":";
  out += JsonString(m.key);
  out += ",\"value\":";
  out += JsonMetricValue(m.value);
  out += ",\"timestamp\":";
  out += std::to_string(m.timestamp_ms);
  out += ",\"step\":";
  out += std::to_string(m.step);
  out += '}';
  return out;
}

std::string KeyValueJson(const KeyValue& kv) {
  return "{\"key\":" + JsonString(kv.key) + ",\"value\":" + JsonString(kv.value) + "}";
}

class BodyBuilder {
 public:
  BodyBuilder(const std::string& run_id, const LogBatchLimits& limits, std::vector<std::string>* out)
      : prefix_("{\"run_id\":" + JsonString(run_id)), limits_(limits), out_(out) {}

  // kind: 0 params, 1 tags, 2 metrics.
  void Add(int kind, std::string json, const std::string& key) {
    const size_t max[3] = {limits_.max_params, limits_.max_tags, limits_.max_metrics};
    static const char* const kKinds[3] = {"param", "tag", "metric"};
    LAKERUN_CHECK(Overhead() + json.size() + 64 <= limits_.max_body_bytes, kKinds[kind], " '", key, "' needs ",
                  json.size(), " bytes, more than one log-batch request may carry (", limits_.max_body_bytes, ")");
    if (parts_[kind].size() >= max[kind] || entities_ >= limits_.max_entities ||
        Size() + json.size() + 1 + 32 > limits_.max_body_bytes) {
      Finish();
    }
    bytes_ += json.size() + 1;
    parts_[kind].push_back(std::move(json));
    ++entities_;
  }

  void Finish() {
    if (entities_ == 0) return;
    static const char* const kNames[3] = {"params", "tags", "metrics"};
    std::string body = prefix_;
    body.reserve(Size() + 32);
    for (int k = 0; k < 3; ++k) {
      body += ",\"";
      body += kNames[k];
      body += "\":[";
      for (size_t i = 0; i < parts_[k].size(); ++i) {
        if (i) body += ',';
        body += parts_[k][i];
      }
      body += ']';
      parts_[k].clear();
    }
    body += '}';
    out_->push_back(std::move(body));
    entities_ = 0;
    bytes_ = 0;
  }

 private:
  size_t Overhead() const { return prefix_.size() + 40; }
  size_t Size() const { return Overhead() + bytes_; }

  std::string prefix_;
  LogBatchLimits limits_;
  std::vector<std::string>* out_;
  std::vector<std::string> parts_[3];
  size_t entities_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

std::string JsonMetricValue(double value) {
  if (std::isnan(value)) return "\"NaN\"";
  if (std::isinf(value)) return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[40];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return std::string(buf, static_cast<size_t>(n));
}

std::vector<std::string> BuildLogBatchBodies(const std::string& run_id, const std::vector<Metric>& metrics,
                                             const std::vector<KeyValue>& params, const std::vector<KeyValue>& tags,
                                             const LogBatchLimits& limits) {
  std::vector<std::string> out;
  BodyBuilder builder(run_id, limits, &out);
  for (const auto& p : params) builder.Add(0, KeyValueJson(p), p.key);
  for (const auto& t : tags) builder.Add(1, KeyValueJson(t), t.key);
  for (const auto& m : metrics) builder.Add(2, MetricJson(m), m.key);
  builder.Finish();
  return out;
}

}  // namespace lakerun::track
