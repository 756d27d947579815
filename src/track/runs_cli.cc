#include "lakerun/track/runs_cli.h"

#include "lakerun/base/choices.h"
#include "lakerun/base/error.h"
#include "lakerun/track/report.h"
#include "lakerun/track/store.h"

namespace lakerun::track {
namespace {

struct ParsedArgs {
  std::string tracking_uri;
  std::string experiment;
  std::string sort;
  std::vector<std::string> columns;
  std::vector<std::string> positional;
  bool help = false;
};

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool Is(const std::string& arg, const std::string& flag) { return arg == flag || arg.rfind(flag + "=", 0) == 0; }

// `list`: the command takes list's flags (--experiment, --sort, --columns).
ParsedArgs Parse(const std::vector<std::string>& args, const char* command, bool list) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) {
      const size_t eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      LAKERUN_CHECK_AS(ConfigError, i + 1 < args.size(), "lakerun ", command, ": option ", flag, " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      out.help = true;
    } else if (Is(a, "--tracking-uri")) {
      out.tracking_uri = value("--tracking-uri");
    } else if (list && Is(a, "--experiment")) {
      out.experiment = value("--experiment");
    } else if (list && Is(a, "--sort")) {
      out.sort = value("--sort");
    } else if (list && Is(a, "--columns")) {
      out.columns = SplitCommas(value("--columns"));
      CheckRunsColumns(out.columns);
    } else if (a.rfind("--", 0) == 0) {
      std::vector<std::string> flags = {"--help", "--tracking-uri"};
      if (list) flags.insert(flags.end(), {"--experiment", "--sort", "--columns"});
      const auto nearest = NearestName(a.substr(0, a.find('=')), flags);
      LAKERUN_THROW(ConfigError, "lakerun ", command, ": unknown option '", a, "'",
                    nearest ? " (did you mean " + *nearest + "?)" : std::string(), "; see --help");
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
    out << "usage: lakerun runs list [--experiment NAME] [--sort KEY[:asc|:desc]] [--columns LIST]\n"
           "                        [--tracking-uri URI]\n\n"
           "Lists runs newest first: name, id, status, start, duration, key params, latest metrics (the metric\n"
           "the run's Trainer monitored first, always shown).\n"
           "  --sort KEY     order by name, id, status, start, duration, metrics.<key>, params.<key> or\n"
           "                 tags.<key>, e.g. --sort metrics.val_loss (ascending; :desc for descending);\n"
           "                 runs without the value come last\n"
           "  --columns LIST comma-separated: name, id, status, start, duration, params, metrics, or one value\n"
           "                 each: metrics.<key>, params.<key>, tags.<key>\n"
           "                 e.g. --columns name,status,metrics.val_loss,params.lr\n"
           "Without --experiment, every active experiment is listed. The URI defaults to MLFLOW_TRACKING_URI,\n"
           "else ./mlruns; http(s):// URIs read from an MLflow tracking server.\n";
    return 0;
  }
  LAKERUN_CHECK_AS(ConfigError, parsed.positional.empty(), "lakerun runs list: unexpected argument '",
                   parsed.positional.front(), "'");
  TableOptions table;
  table.columns = parsed.columns;
  if (!parsed.sort.empty()) {
    std::vector<RunRecord> probe;
    SortRuns(probe, parsed.sort);  // a bad key fails before the store is read
  }
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
    auto runs = store->SearchRuns({e.experiment_id});
    if (!parsed.sort.empty()) SortRuns(runs, parsed.sort);
    if (runs.empty() && parsed.experiment.empty()) continue;
    if (!first) out << "\n";
    first = false;
    out << "Experiment " << e.name << " (" << e.experiment_id << "): " << runs.size() << " run"
        << (runs.size() == 1 ? "" : "s") << "\n";
    if (!runs.empty()) out << FormatRunsTable(runs, table);
  }
  if (first) out << "no runs in " << store->uri() << "\n";
  return 0;
}

int RunsShowMain(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = Parse(args, "runs show", false);
  if (parsed.help) {
    out << "usage: lakerun runs show RUN [--tracking-uri URI]\n\n"
           "Shows a run's params, tags and metrics (latest value, min/max, history sparkline).\n"
           "RUN is a run id, an id prefix or a run name; when several runs match, they are listed instead.\n";
    return 0;
  }
  LAKERUN_CHECK_AS(ConfigError, parsed.positional.size() == 1,
                   "lakerun runs show: expected one RUN (id, id prefix or name), got ", parsed.positional.size());
  auto store = OpenStore(parsed.tracking_uri);
  const RunRecord run = FindRun(*store, parsed.positional[0]);
  out << FormatRunDetails(run, ReadHistories(*store, run), store->GetExperiment(run.info.experiment_id));
  return 0;
}

int RunsCompareMain(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = Parse(args, "runs compare", false);
  if (parsed.help) {
    out << "usage: lakerun runs compare RUN RUN... [--tracking-uri URI]\n\n"
           "Shows runs side by side: params (differing ones marked '*') and metrics with sparklines.\n";
    return 0;
  }
  LAKERUN_CHECK_AS(ConfigError, parsed.positional.size() >= 2,
                   "lakerun runs compare: expected at least two runs, got ", parsed.positional.size());
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
