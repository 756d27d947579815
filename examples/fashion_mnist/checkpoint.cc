#include "checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun::examples {
namespace {

constexpr const char* kPrefix = "checkpoint-epoch-";
constexpr const char* kSuffix = ".pt";

// The epoch number in a checkpoint file name, or nullopt for other names (temp files included).
std::optional<int64_t> EpochOf(const std::string& name) {
  const std::string prefix = kPrefix;
  const std::string suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return std::nullopt;
  return std::stoll(digits);
}

// Makes the rename itself durable.
void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    LAKERUN_THROW(IoError, "cannot open checkpoint directory ", dir, " to fsync it: ", std::strerror(err));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  LAKERUN_CHECK_AS(IoError, rc == 0, "cannot fsync checkpoint directory ", dir, ": ", std::strerror(err));
}

}  // namespace

std::string SaveCheckpoint(const std::string& dir, const CheckpointPosition& position, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer) {
  FileSystem& fs = LocalFileSystem();
  fs.CreateDirs(dir);
  const std::string path = JoinPath(dir, StrCat(kPrefix, position.epoch, kSuffix));
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("epoch", at::tensor(position.epoch, at::kLong));
  archive.write("global_step", at::tensor(position.global_step, at::kLong));
  std::ostringstream bytes;
  archive.save_to(bytes);
  fs.WriteAtomically(path, bytes.str());
  SyncDirectory(dir);
  return path;
}

std::optional<std::string> FindLatestCheckpoint(const std::string& dir) {
  FileSystem& fs = LocalFileSystem();
  const auto info = fs.Stat(dir);
  if (!info || !info->is_directory) return std::nullopt;
  std::optional<int64_t> best;
  std::string best_name;
  for (const FileInfo& entry : fs.List(dir)) {
    if (entry.is_directory) continue;
    const auto epoch = EpochOf(entry.name);
    if (epoch && (!best || *epoch > *best)) {
      best = epoch;
      best_name = entry.name;
    }
  }
  if (!best) return std::nullopt;
  return JoinPath(dir, best_name);
}

CheckpointPosition LoadCheckpoint(const std::string& path, torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer) {
  const std::string bytes = LocalFileSystem().ReadFile(path);
  CheckpointPosition position;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size());
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    at::Tensor epoch;
    at::Tensor step;
    archive.read("epoch", epoch);
    archive.read("global_step", step);
    position.epoch = epoch.item<int64_t>();
    position.global_step = step.item<int64_t>();
  } catch (const c10::Error& e) {
    LAKERUN_THROW(CorruptDataError, "cannot load checkpoint ", path, ": ", e.what_without_backtrace());
  }
  return position;
}

}  // namespace lakerun::examples
