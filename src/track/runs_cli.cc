#include "lakerun/track/runs_cli.h"

#include "lakerun/base/error.h"
#include "lakerun/track/report.h"
#include "lakerun/track/store.h"

namespace lakerun::track {
namespace {

struct ParsedArgs {
  std::string tracking_uri;
  std::string experiment;
  std::vector<std::string> positional;
  bool help = false;
};

ParsedArgs Parse(const std::vector<std::string>& args, const char* command, bool allow_experiment) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) {
      const size_t eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      LAKERUN_CHECK(i + 1 < args.size(), "lakerun ", command, ": option ", flag, " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      out.help = true;
    } else if (a == "--tracking-uri" || a.rfind("--tracking-uri=", 0) == 0) {
      out.tracking_uri = value("--tracking-uri");
    } else if (allow_experiment && (a == "--experiment" || a.rfind("--experiment=", 0) == 0)) {
      out.experiment = value("--experiment");
    } else if (a.rfind("--", 0) == 0) {
      LAKERUN_THROW(InvalidArgument, "lakerun ", command, ": unknown option '", a, "' (see --help)");
    } else {
      out.positional.push_back(a);
    }
  }
  return out;
}

}  // namespace

int RunsListMain(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = Parse(args, "runs list", true);
  if (parsed.help) {
    out << "usage: lakerun runs list [--experiment NAME] [--tracking-uri URI]\n\n"
           "Lists runs newest first: name, id, status, start, duration, key params, latest metrics.\n"
           "Without --experiment, every active experiment is listed. The URI defaults to MLFLOW_TRACKING_URI,\n"
           "else ./mlruns; http(s):// URIs read from an MLflow tracking server.\n";
    return 0;
  }
  LAKERUN_CHECK(parsed.positional.empty(), "lakerun runs list: unexpected argument '", parsed.positional.front(),
                "'");
  auto store = OpenStore(parsed.tracking_uri);
  std::vector<Experiment> experiments;
  if (!parsed.experiment.empty()) {
    auto e = store->GetExperimentByName(parsed.experiment);
    LAKERUN_CHECK(e.has_value(), "lakerun runs list: no experiment named '", parsed.experiment, "' in ",
                  store->uri());
    experiments.push_back(*e);
  } else {
    experiments = store->ListExperiments();
  }
  if (experiments.empty()) {
    out << "no experiments in " << store->uri() << "\n";
    return 0;
  }
  bool first = true;
  for (const auto& e : experiments) {
    const auto runs = store->SearchRuns({e.experiment_id});
    if (runs.empty() && parsed.experiment.empty()) continue;
    if (!first) out << "\n";
    first = false;
    out << "Experiment " << e.name << " (" << e.experiment_id << "): " << runs.size() << " run"
        << (runs.size() == 1 ? "" : "s") << "\n";
    if (!runs.empty()) out << FormatRunsTable(runs);
  }
  if (first) out << "no runs in " << store->uri() << "\n";
  return 0;
}

int RunsShowMain(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = Parse(args, "runs show", false);
  if (parsed.help) {
    out << "usage: lakerun runs show RUN [--tracking-uri URI]\n\n"
           "Shows a run's params, tags and metrics (latest value, min/max, history sparkline).\n"
           "RUN is a run id, an id prefix or a run name.\n";
    return 0;
  }
  LAKERUN_CHECK(parsed.positional.size() == 1, "lakerun runs show: expected one RUN (id, id prefix or name), got ",
                parsed.positional.size());
  auto store = OpenStore(parsed.tracking_uri);
  const RunRecord run = FindRun(*store, parsed.positional[0]);
  out << FormatRunDetails(run, ReadHistories(*store, run));
  return 0;
}

int RunsCompareMain(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = Parse(args, "runs compare", false);
  if (parsed.help) {
    out << "usage: lakerun runs compare RUN RUN... [--tracking-uri URI]\n\n"
           "Shows runs side by side: params (differing ones marked '*') and metrics with sparklines.\n";
    return 0;
  }
  LAKERUN_CHECK(parsed.positional.size() >= 2, "lakerun runs compare: expected at least two runs, got ",
                parsed.positional.size());
  auto store = OpenStore(parsed.tracking_uri);
  std::vector<RunRecord> runs;
  std::vector<MetricHistories> histories;
  for (const auto& id : parsed.positional) {
    runs.push_back(FindRun(*store, id));
    histories.push_back(ReadHistories(*store, runs.back()));
  }
  out << FormatRunsComparison(runs, histories);
  return 0;
}

}  // namespace lakerun::track
