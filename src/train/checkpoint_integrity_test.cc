// Checkpoints verify themselves: every record's CRC-32 and the whole-file digest are checked before a checkpoint is
// loaded; ckpt_path="last" takes the newest checkpoint that verifies; temporaries of crashed saves are cleaned.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <set>

#include "lakerun/base/error.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "train/checkpoint_digest.h"
#include "train/checkpoint_temporaries.h"
#include "train/zip_records.h"

namespace lakerun::train {
namespace {

struct Line : Module {
  Line() { fc = register_module("fc", torch::nn::Linear(3, 1)); }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    ++steps;
    return torch::mse_loss(fc(b.at("x")), b.at("y"));
  }
  Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.1).momentum(0.5))};
  }
  torch::nn::Linear fc{nullptr};
  int steps = 0;
};

// 3 batches per epoch.
TensorBatchSource Data() {
  torch::manual_seed(5);
  const at::Tensor x = torch::randn({24, 3});
  return TensorBatchSource({{"x", x}, {"y", x.sum(1, true)}}, 8, /*shuffle_seed=*/2);
}

// Fits up to `epochs` with a ModelCheckpoint in `dir` keeping every epoch's checkpoint and last.ckpt.
void Fit(Line& model, int epochs, const std::string& dir, const std::string& ckpt_path = "") {
  TrainerOptions o;
  o.max_epochs = epochs;
  o.distributed = false;
  o.progress_every_n_steps = 0;
  ModelCheckpointOptions c;
  c.dirpath = dir;
  c.save_top_k = -1;
  c.save_last = true;
  Trainer t(o, {std::make_shared<ModelCheckpoint>(c)});
  auto data = Data();
  t.Fit(model, data, nullptr, ckpt_path);
}

std::string Read(const std::string& path) { return LocalFileSystem().ReadFile(path); }

void FlipByte(const std::string& path, size_t at) {
  std::string bytes = Read(path);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
  LocalFileSystem().WriteAtomically(path, bytes);
}

// Sets a file's modification time to `age` before now.
void SetAge(const std::string& path, std::chrono::seconds age) {
  const auto when = std::chrono::system_clock::now() - age;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  const timespec times[2] = {{ns / 1000000000, ns % 1000000000}, {ns / 1000000000, ns % 1000000000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(CheckpointIntegrityTest, ASavedCheckpointIsSealedAndEveryFlippedByteIsRefused) {
  testing::TempDir dir;
  Line model;
  Fit(model, 1, dir.path());
  const std::string bytes = Read(dir.Join("last.ckpt"));
  EXPECT_EQ(CheckpointProblem(bytes), std::nullopt);
  const ZipLayout zip = ReadZipLayout(bytes);
  EXPECT_THAT(std::string(zip.comment), ::testing::StartsWith("lakerun-digest crc32="));
  EXPECT_GT(zip.records.size(), 3u);
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    ASSERT_NE(CheckpointProblem(damaged), std::nullopt) << "a flipped bit at offset " << at << " went unnoticed";
  }
  // Python's zipfile reads the sealed archive and finds every record intact.
  const char* python = std::getenv("LAKERUN_PYTHON");
  const std::string check = StrCat(python ? python : "/usr/bin/python3",
                                   " -c \"import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
                                   "sys.exit(z.testzip() is not None or not z.comment.startswith(b'lakerun-digest'))\" ",
                                   dir.Join("last.ckpt"));
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
}

TEST(CheckpointIntegrityTest, ADamagedCheckpointIsRefusedNamingTheFileAndTheDamage) {
  testing::TempDir dir;
  Line first;
  Fit(first, 2, dir.path());
  const std::string path = dir.Join("epoch=1-step=6.ckpt");
  const ZipLayout zip = ReadZipLayout(Read(path));
  const ZipRecord* largest = &zip.records[0];
  for (const ZipRecord& r : zip.records) largest = r.compressed_size > largest->compressed_size ? &r : largest;
  FlipByte(path, largest->data_offset + largest->compressed_size / 2);
  Line second;
  EXPECT_THROW_WITH(Fit(second, 3, dir.Join("resumed"), path), CorruptDataError, "checkpoint " + path + " is damaged",
                    "record '" + largest->name + "'", "CRC-32");
  EXPECT_EQ(second.steps, 0);
  auto data = Data();
  TrainerOptions local;
  local.distributed = false;
  EXPECT_THROW_WITH(Trainer(local).Validate(second, data, path), CorruptDataError, path, "is damaged");

  // Damage outside every record (a name in the central directory): the whole-file digest catches it.
  const std::string other = dir.Join("epoch=0-step=3.ckpt");
  const std::string bytes = Read(other);
  FlipByte(other, bytes.rfind(ReadZipLayout(bytes).records.back().name));
  EXPECT_THROW_WITH(Fit(second, 3, dir.Join("resumed"), other), CorruptDataError, other,
                    "whole-file digest does not match");
}

// A file without the digest (the archive comment), as lakerun wrote before digests existed: its records are checked.
TEST(CheckpointIntegrityTest, CheckpointsWithoutADigestAreCheckedRecordByRecord) {
  testing::TempDir dir;
  Line first;
  Fit(first, 1, dir.path());
  std::string bytes = Read(dir.Join("last.ckpt"));
  const ZipLayout zip = ReadZipLayout(bytes);
  bytes.resize(zip.end_record_offset + 22);
  bytes[zip.end_record_offset + 20] = bytes[zip.end_record_offset + 21] = '\0';  // no comment
  const std::string legacy = dir.Join("legacy.ckpt");
  LocalFileSystem().WriteAtomically(legacy, bytes);
  Line resumed;
  Fit(resumed, 2, dir.Join("resumed"), legacy);
  EXPECT_EQ(resumed.steps, 3);
  FlipByte(legacy, zip.records.back().data_offset);
  EXPECT_THROW_WITH(Fit(resumed, 2, dir.Join("resumed"), legacy), CorruptDataError, legacy, "CRC-32");
}

TEST(CheckpointIntegrityTest, ResumeFromLastTakesTheNewestCheckpointThatVerifies) {
  testing::TempDir dir;
  Line first;
  Fit(first, 3, dir.path());
  const std::vector<std::string> newest_first = {"last.ckpt", "epoch=2-step=9.ckpt", "epoch=1-step=6.ckpt",
                                                 "epoch=0-step=3.ckpt"};
  for (size_t i = 0; i < newest_first.size(); ++i) SetAge(dir.Join(newest_first[i]), std::chrono::seconds(10 * i));
  FlipByte(dir.Join("last.ckpt"), 100);
  FlipByte(dir.Join("epoch=2-step=9.ckpt"), 200);

  ::testing::internal::CaptureStderr();
  Line resumed;
  Fit(resumed, 4, dir.path(), "last");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(resumed.steps, 2 * 3) << "resumed from epoch 1's checkpoint: epochs 2 and 3 remain";
  EXPECT_THAT(log, ::testing::HasSubstr("skipping " + dir.Join("last.ckpt") + ": checkpoint"));
  EXPECT_THAT(log, ::testing::HasSubstr("skipping " + dir.Join("epoch=2-step=9.ckpt")));
  EXPECT_THAT(log, ::testing::HasSubstr("resuming from " + dir.Join("epoch=1-step=6.ckpt")));

  for (const auto& f : LocalFileSystem().List(dir.path())) {
    if (!f.is_directory) FlipByte(dir.Join(f.name), 50);
  }
  Line fresh;
  EXPECT_THROW_WITH(Fit(fresh, 5, dir.path(), "last"), CorruptDataError, "none of the", "checkpoints verifies",
                    "last.ckpt");
}

pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST(CheckpointIntegrityTest, TemporariesOfCrashedSavesAreRemovedAtTheNextSaveAndLiveOnesKept) {
  testing::TempDir dir;
  const std::string me = std::to_string(::getpid()), dead = std::to_string(DeadPid());
  const std::set<std::string> stale = {
      "last.ckpt.tmp." + dead + ".0",          // its process is gone
      "epoch=0-step=3.ckpt.tmp." + me + ".5",  // this pid, written before this process started: a reused pid
      "last.ckpt.tmp.1.1",                     // nothing written for two days
  };
  const std::set<std::string> kept = {
      "last.ckpt.tmp." + me + ".99",  // a save of this process in flight
      "last.ckpt.tmp.1.0",            // pid 1 is alive and started before the file was written
      "notes.txt.tmp." + dead + ".0",  // not a checkpoint's
  };
  for (const auto& name : stale) LocalFileSystem().WriteAtomically(dir.Join(name), "partial");
  for (const auto& name : kept) LocalFileSystem().WriteAtomically(dir.Join(name), "partial");
  SetAge(dir.Join("epoch=0-step=3.ckpt.tmp." + me + ".5"), std::chrono::hours(2));
  SetAge(dir.Join("last.ckpt.tmp.1.1"), std::chrono::hours(48));

  Line model;
  Fit(model, 1, dir.path());
  std::set<std::string> left;
  for (const auto& f : LocalFileSystem().List(dir.path())) left.insert(f.name);
  for (const auto& name : stale) EXPECT_EQ(left.count(name), 0u) << name << " was not removed";
  for (const auto& name : kept) EXPECT_EQ(left.count(name), 1u) << name << " was removed";
  EXPECT_EQ(left.count("last.ckpt"), 1u);

  long pid = 0;
  EXPECT_TRUE(IsCheckpointTemporary("epoch=3-step=9.ckpt.tmp.4242.17", &pid));
  EXPECT_EQ(pid, 4242);
  EXPECT_FALSE(IsCheckpointTemporary("last.ckpt", &pid));
  EXPECT_FALSE(IsCheckpointTemporary("last.ckpt.tmp.12x.0", &pid));
  EXPECT_FALSE(IsCheckpointTemporary("last.ckpt.tmp.12", &pid));
  EXPECT_FALSE(IsCheckpointTemporary(".ckpt.tmp.12.0", &pid));
}

}  // namespace
}  // namespace lakerun::train
