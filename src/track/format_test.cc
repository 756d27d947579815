// Formats at the edges of the file store and the REST API: YAML scalars, metric lines, key rules, log-batch bodies.
#include <cmath>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/track/report.h"
#include "lakerun_testing/matchers.h"
#include "track/log_batch.h"
#include "track/metric_line.h"
#include "track/validation.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

TEST(YamlTest, QuotesStringsAsPyYamlDoes) {
  EXPECT_EQ(EmitYamlString("demo-exp"), "demo-exp");
  EXPECT_EQ(EmitYamlString(""), "''");
  EXPECT_EQ(EmitYamlString("0"), "'0'");
  EXPECT_EQ(EmitYamlString("947448973651377922"), "'947448973651377922'");
  EXPECT_EQ(EmitYamlString("1.5"), "'1.5'");
  EXPECT_EQ(EmitYamlString("true"), "'true'");
  EXPECT_EQ(EmitYamlString("null"), "'null'");
  EXPECT_EQ(EmitYamlString("a: b"), "'a: b'");
  EXPECT_EQ(EmitYamlString("it's"), "it's");
  EXPECT_EQ(EmitYamlString("'q"), "'''q'");
  EXPECT_EQ(EmitYamlString("-x"), "-x");
  EXPECT_EQ(EmitYamlString("line\nbreak"), "\"line\\nbreak\"");
  EXPECT_EQ(EmitYamlString("file:///a/b"), "file:///a/b");
  EXPECT_EQ(EmitYamlString("0cde1e1d213549d19200307b3f387c17"), "0cde1e1d213549d19200307b3f387c17");
}

TEST(YamlTest, RoundTripsFlatMappings) {
  const std::string text = EmitFlatYaml({{"b", YamlValue::String("it's: here")},
                                         {"a", YamlValue::Int(-3)},
                                         {"c", YamlValue::Null()},
                                         {"d", YamlValue::EmptyList()},
                                         {"e", YamlValue::String("0")}});
  EXPECT_EQ(text, "a: -3\nb: 'it''s: here'\nc: null\nd: []\ne: '0'\n");
  const auto parsed = ParseFlatYaml(text, "meta.yaml");
  EXPECT_EQ(parsed.at("a").text, "-3");
  EXPECT_EQ(parsed.at("b").text, "it's: here");
  EXPECT_TRUE(parsed.at("c").is_null);
  EXPECT_EQ(parsed.at("e").text, "0");
  EXPECT_TRUE(parsed.at("e").quoted);
}

TEST(YamlTest, RejectsLinesWithoutKeys) {
  EXPECT_THROW_WITH(ParseFlatYaml("name: x\ngarbage\n", "/r/meta.yaml"), CorruptDataError, "/r/meta.yaml:2",
                    "garbage");
}

TEST(ReportTest, DurationsOfEndedAndRunningRuns) {
  RunInfo info;
  info.start_time_ms = 1000;
  info.status = RunStatus::kFinished;
  info.end_time_ms = 5200;
  EXPECT_EQ(FormatDuration(info), "4.2s");
  info.end_time_ms = 1000 + 3 * 60000 + 5000;
  EXPECT_EQ(FormatDuration(info), "3m 05s");
  info.end_time_ms = 1000 + 62 * 60000;
  EXPECT_EQ(FormatDuration(info), "1h 02m");
  info.status = RunStatus::kRunning;  // continued after it ended once: its old end time is not its duration
  EXPECT_EQ(FormatDuration(info), "running");
  info.end_time_ms.reset();
  EXPECT_EQ(FormatDuration(info), "running");
}

TEST(MetricLineTest, FormatsValuesAsPythonReadsThem) {
  EXPECT_EQ(FormatMetricValue(0.9), "0.90000000000000002");
  EXPECT_EQ(FormatMetricValue(0.5), "0.5");
  EXPECT_EQ(FormatMetricValue(1e300), "1.0000000000000001e+300");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "nan");
  EXPECT_EQ(FormatMetricValue(INFINITY), "inf");
  EXPECT_EQ(FormatMetricValue(-INFINITY), "-inf");
  std::string line;
  AppendMetricLine({"k", 0.25, 1795336210731, 7}, &line);
  EXPECT_EQ(line, "1795336210731 0.25 7\n");
}

TEST(MetricLineTest, ParsesTwoThreeAndFiveFields) {
  Metric m = ParseMetricLine("1795336210731 0.9 3", "loss", "f");
  EXPECT_EQ(m.timestamp_ms, 1795336210731);
  EXPECT_DOUBLE_EQ(m.value, 0.9);
  EXPECT_EQ(m.step, 3);
  EXPECT_EQ(ParseMetricLine("5 1.5", "loss", "f").step, 0);
  EXPECT_TRUE(std::isnan(ParseMetricLine("5 nan 1", "loss", "f").value));
  EXPECT_EQ(ParseMetricLine("5 -inf 1", "loss", "f").value, -INFINITY);
  EXPECT_EQ(ParseMetricLine("5 2 4 train abc123", "loss", "f").step, 4);
  EXPECT_THROW_WITH(ParseMetricLine("5 abc 1", "loss", "metrics/loss:3"), CorruptDataError, "metrics/loss:3", "abc");
  EXPECT_THROW_WITH(ParseMetricLine("5", "loss", "metrics/loss:1"), CorruptDataError, "1 fields");
}

TEST(ValidationTest, FollowsMlflowKeyRules) {
  for (const char* ok : {"loss", "train/loss", "a.b-c_d e:f", "x/y/z"}) EXPECT_NO_THROW(ValidateKey(ok, "metric"));
  EXPECT_THROW_WITH(ValidateKey("", "metric"), InvalidArgument, "empty");
  EXPECT_THROW_WITH(ValidateKey("a..b", "param"), InvalidArgument, "param", "'a..b'", "'..'");
  EXPECT_THROW_WITH(ValidateKey("/abs", "tag"), InvalidArgument, "tag", "start with '/'");
  EXPECT_THROW_WITH(ValidateKey("a//b", "metric"), InvalidArgument, "normalized");
  EXPECT_THROW_WITH(ValidateKey("a/", "metric"), InvalidArgument, "normalized");
  EXPECT_THROW_WITH(ValidateKey("a*b", "metric"), InvalidArgument, "character '*'");
  EXPECT_THROW_WITH(ValidateKey(std::string(251, 'k'), "metric"), InvalidArgument, "251 characters");
  EXPECT_THROW_WITH(ValidateParamValue("lr", std::string(6001, 'v')), InvalidArgument, "param 'lr'", "6000");
  EXPECT_THROW_WITH(ValidateRunId("../etc"), InvalidArgument, "invalid run id '../etc'");
}

nlohmann::json ParseBody(const std::string& body) { return nlohmann::json::parse(body); }

TEST(LogBatchTest, SplitsAtMetricParamAndEntityLimits) {
  std::vector<Metric> metrics;
  for (int i = 0; i < 2500; ++i) metrics.push_back({"m", static_cast<double>(i), 1000 + i, i});
  auto bodies = BuildLogBatchBodies("r1", metrics, {}, {});
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(ParseBody(bodies[0])["metrics"].size(), 1000u);
  EXPECT_EQ(ParseBody(bodies[1])["metrics"].size(), 1000u);
  EXPECT_EQ(ParseBody(bodies[2])["metrics"].size(), 500u);
  EXPECT_EQ(ParseBody(bodies[2])["metrics"][499]["step"], 2499);

  std::vector<KeyValue> params;
  for (int i = 0; i < 250; ++i) params.push_back({"p" + std::to_string(i), "v"});
  bodies = BuildLogBatchBodies("r1", {}, params, {});
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(ParseBody(bodies[0])["params"].size(), 100u);
  EXPECT_EQ(ParseBody(bodies[2])["params"].size(), 50u);

  // 100 params + 100 tags + 900 metrics = 1100 entities: the total limit (1000) splits them.
  std::vector<KeyValue> tags(params.begin(), params.begin() + 100);
  params.resize(100);
  metrics.resize(900);
  bodies = BuildLogBatchBodies("r1", metrics, params, tags);
  ASSERT_EQ(bodies.size(), 2u);
  auto first = ParseBody(bodies[0]);
  EXPECT_EQ(first["params"].size() + first["tags"].size() + first["metrics"].size(), 1000u);
}

TEST(LogBatchTest, SplitsAtTheBodySizeLimit) {
  std::vector<KeyValue> params;
  for (int i = 0; i < 60; ++i) params.push_back({"p" + std::to_string(i), std::string(5000, 'x')});
  std::vector<KeyValue> tags;
  for (int i = 0; i < 100; ++i) tags.push_back({"t" + std::to_string(i), std::string(8000, 'y')});
  LogBatchLimits limits;
  const auto bodies = BuildLogBatchBodies("r1", {}, params, tags, limits);
  size_t params_seen = 0;
  size_t tags_seen = 0;
  for (const auto& body : bodies) {
    EXPECT_LE(body.size(), limits.max_body_bytes);
    auto j = ParseBody(body);
    params_seen += j["params"].size();
    tags_seen += j["tags"].size();
  }
  EXPECT_EQ(params_seen, 60u);
  EXPECT_EQ(tags_seen, 100u);
  EXPECT_EQ(bodies.size(), 2u);  // 300 kB of params + 800 kB of tags need two bodies
}

TEST(LogBatchTest, EscapesStringsAsJson) {
  const std::string value = std::string("quote\" back\\ nl\n tab\t ctl") + '\x01' + " utf8 \xc3\xa9";
  const auto bodies = BuildLogBatchBodies("r\"1", {}, {{"p", value}}, {{"t", "x"}});
  ASSERT_EQ(bodies.size(), 1u);
  const auto body = ParseBody(bodies[0]);
  EXPECT_EQ(body["run_id"], "r\"1");
  EXPECT_EQ(body["params"][0]["value"], value);
  EXPECT_EQ(body["tags"][0]["key"], "t");
}

TEST(LogBatchTest, EncodesNonFiniteValuesAsStrings) {
  const auto bodies = BuildLogBatchBodies(
      "r1", {{"a", std::nan(""), 1, 0}, {"b", INFINITY, 1, 0}, {"c", -INFINITY, 1, 0}, {"d", 0.1, 1, 0}}, {}, {});
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_NE(bodies[0].find("\"value\":\"NaN\""), std::string::npos);
  EXPECT_NE(bodies[0].find("\"value\":\"Infinity\""), std::string::npos);
  EXPECT_NE(bodies[0].find("\"value\":\"-Infinity\""), std::string::npos);
  EXPECT_DOUBLE_EQ(ParseBody(bodies[0])["metrics"][3]["value"].get<double>(), 0.1);
}

}  // namespace
}  // namespace lakerun::track
