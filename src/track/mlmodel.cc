#include "lakerun/track/mlmodel.h"

#include <sys/time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "track/ids.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

std::string NowUtc() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm tm{};
  const std::time_t seconds = tv.tv_sec;
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%06ld", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>(tv.tv_usec));
  return buf;
}

std::string Line(int indent, const std::string& key, const std::string& value) {
  return std::string(static_cast<size_t>(indent), ' ') + key + ": " + value + "\n";
}

std::string S(const std::string& s) { return EmitYamlString(s); }

// A value under `flavors`: a string, null, or a mapping whose keys are in PyYAML's order (sorted). One tree feeds
// both the MLmodel file and the run's log-model history, so the two never disagree.
struct Node {
  enum class Kind { kString, kNull, kMap };
  Kind kind = Kind::kNull;
  std::string text;
  std::vector<std::pair<std::string, Node>> children;
};
Node Str(std::string text) { return {Node::Kind::kString, std::move(text), {}}; }
Node Null() { return {}; }
Node Map(std::vector<std::pair<std::string, Node>> children) { return {Node::Kind::kMap, "", std::move(children)}; }

Node Flavors(const MLmodelSpec& spec) {
  std::vector<std::pair<std::string, Node>> flavors;
  flavors.emplace_back("lakerun", Map({{"archive", Str(spec.torchscript ? "data/model.pth" : spec.archive_path)},
                                       {"archive_format", Str(spec.torchscript ? "torchscript" : "libtorch")},
                                       {"data", Str("data")},
                                       {"lakerun_version", Str("0.1.0")},
                                       {"safetensors", Str(spec.safetensors_path)},
                                       {"torch_version", Str(spec.torch_version)}}));
  if (spec.torchscript) {
    flavors.emplace_back("python_function",
                         Map({{"config", Map({{"device", Null()}})},
                              {"data", Str("data")},
                              {"env", Map({{"conda", Str("conda.yaml")}, {"virtualenv", Str("python_env.yaml")}})},
                              {"loader_module", Str("mlflow.pytorch")},
                              {"pickle_module_name", Str("mlflow.pytorch.pickle_module")},
                              {"python_version", Str(spec.python_version)}}));
    flavors.emplace_back("pytorch", Map({{"code", Null()},
                                         {"model_data", Str("data")},
                                         {"pytorch_version", Str(spec.torch_version)}}));
  }
  return Map(std::move(flavors));
}

void EmitYaml(const Node& map, int indent, std::string* out) {
  for (const auto& [key, value] : map.children) {
    if (value.kind == Node::Kind::kMap) {
      *out += std::string(static_cast<size_t>(indent), ' ') + key + ":\n";
      EmitYaml(value, indent + 2, out);
    } else {
      *out += Line(indent, key, value.kind == Node::Kind::kNull ? "null" : S(value.text));
    }
  }
}

// A JSON string as Python's json.dumps writes it (ensure_ascii): \" \\ \n \r \t \b \f, other control characters
// and every non-ASCII character as \uXXXX (lower-case hex; UTF-16 surrogate pairs above U+FFFF). A byte that is not
// part of valid UTF-8 is written as the code point of its value.
std::string PythonJsonString(const std::string& s) {
  std::string out = "\"";
  char buf[16];
  auto escape = [&](uint32_t unit) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(unit));
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      escape(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t code = length == 4 ? c & 0x07u : length == 3 ? c & 0x0Fu : c & 0x1Fu;
    bool valid = length > 1 && i + length <= s.size();
    for (int k = 1; valid && k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(s[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (!valid || code > 0x10FFFF) {
      escape(c);
      ++i;
      continue;
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      escape(0xD800 + (code >> 10));
      escape(0xDC00 + (code & 0x3FF));
    } else {
      escape(code);
    }
    i += static_cast<size_t>(length);
  }
  return out + "\"";
}

std::string EmitJson(const Node& node) {
  if (node.kind == Node::Kind::kNull) return "null";
  if (node.kind == Node::Kind::kString) return PythonJsonString(node.text);
  std::string out = "{";
  for (const auto& [key, value] : node.children) {
    if (out.size() > 1) out += ", ";
    out += PythonJsonString(key) + ": " + EmitJson(value);
  }
  return out + "}";
}

}  // namespace

MLmodelSpec ResolveMLmodelSpec(MLmodelSpec spec) {
  if (spec.model_uuid.empty()) spec.model_uuid = NewUuidHex();
  if (spec.utc_time_created.empty()) spec.utc_time_created = NowUtc();
  return spec;
}

std::string FormatMLmodel(const MLmodelSpec& unresolved) {
  const MLmodelSpec spec = ResolveMLmodelSpec(unresolved);
  std::string out;
  out += Line(0, "artifact_path", S(spec.artifact_path));
  out += "flavors:\n";
  EmitYaml(Flavors(spec), 2, &out);
  out += Line(0, "mlflow_version", S(spec.mlflow_version));
  if (spec.model_size_bytes >= 0) out += Line(0, "model_size_bytes", std::to_string(spec.model_size_bytes));
  out += Line(0, "model_uuid", S(spec.model_uuid));
  if (!spec.run_id.empty()) out += Line(0, "run_id", S(spec.run_id));
  out += Line(0, "utc_time_created", S(spec.utc_time_created));
  return out;
}

std::string FormatLogModelHistoryEntry(const MLmodelSpec& spec) {
  LAKERUN_CHECK(!spec.model_uuid.empty() && !spec.utc_time_created.empty(),
                "FormatLogModelHistoryEntry: the spec's model_uuid and utc_time_created must be set ",
                "(ResolveMLmodelSpec), so that the history names the model its MLmodel describes");
  // Model.get_tags_dict(): these keys in the order Model.__init__ sets them, then the flavors without "config".
  Node entry = Map({});
  if (!spec.run_id.empty()) entry.children.emplace_back("run_id", Str(spec.run_id));
  entry.children.emplace_back("artifact_path", Str(spec.artifact_path));
  entry.children.emplace_back("utc_time_created", Str(spec.utc_time_created));
  entry.children.emplace_back("model_uuid", Str(spec.model_uuid));
  Node flavors = Flavors(spec);
  for (auto& [name, flavor] : flavors.children) {
    auto& fields = flavor.children;
    fields.erase(std::remove_if(fields.begin(), fields.end(), [](const auto& f) { return f.first == "config"; }),
                 fields.end());
  }
  entry.children.emplace_back("flavors", std::move(flavors));
  return EmitJson(entry);
}

void WriteModelMetadataFiles(FileSystem& fs, const std::string& dir, const MLmodelSpec& spec) {
  fs.CreateDirs(JoinPath(dir, "data"));
  fs.WriteAtomically(JoinPath(dir, "MLmodel"), FormatMLmodel(spec));
  fs.WriteAtomically(JoinPath(dir, "conda.yaml"),
                     "channels:\n- conda-forge\ndependencies:\n- python=" + spec.python_version +
                         "\n- pip<=24.0\n- pip:\n  - mlflow==" + spec.mlflow_version +
                         "\n  - torch==" + spec.torch_version + "\nname: mlflow-env\n");
  fs.WriteAtomically(JoinPath(dir, "python_env.yaml"),
                     "python: " + spec.python_version +
                         "\nbuild_dependencies:\n- pip\ndependencies:\n- -r requirements.txt\n");
  fs.WriteAtomically(JoinPath(dir, "requirements.txt"),
                     "mlflow==" + spec.mlflow_version + "\ntorch==" + spec.torch_version + "\n");
  if (spec.torchscript) {
    fs.WriteAtomically(JoinPath(dir, "data/pickle_module_info.txt"), "mlflow.pytorch.pickle_module");
  }
}

}  // namespace lakerun::track
