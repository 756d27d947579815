// SaveShards: each rank's file, then rank 0's index.
#include <lakerun/base/error.h>
#include <lakerun/base/stale_temporaries.h>

#include "dist/agreed_outcome.h"
#include "dist/checkpoint_index.h"
#include "dist/shard_file.h"
#include "dist/sharded_checkpoint.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <random>

namespace lakerun::dist {
namespace {

// Rank files' entries travel to rank 0 in one gather: a bound far above any real model's tables.
constexpr std::size_t kMaxFileEntryBytes = 256 << 20;

// Names ShardFileName gives.
bool IsShardFileName(const std::string& name) {
  return name.rfind("shard-", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
}

// 16 hex digits that tell this save's files from any other's.
std::string NewSaveId() {
  std::random_device device;
  const uint64_t id = (static_cast<uint64_t>(device()) << 32) ^ device() ^
                      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(id));
  return text;
}

// Rank 0, before anyone writes: the directory exists, holds no index, and no temporaries of crashed saves.
std::string Prepare(FileSystem& fs, const std::string& dir) {
  fs.CreateDirs(dir);
  fs.Remove(ShardedIndexPath(dir));
  RemoveStaleTemporaries(
      fs, dir, [](const std::string& target) { return IsShardFileName(target) || target == "index.json"; },
      "a sharded checkpoint save");
  return NewSaveId();
}

// Per optimizer, per piece: its index among the optimizer's members, if it is one.
std::vector<std::vector<std::optional<std::size_t>>> MemberIndices(const ShardedState& s) {
  std::vector<std::vector<std::optional<std::size_t>>> out;
  for (const ShardedOptimizer& opt : s.optimizers) {
    out.emplace_back(s.pieces.size());
    for (std::size_t m = 0; m < opt.members().size(); ++m) out.back()[opt.members()[m]] = m;
  }
  return out;
}

SavedState AppendState(ShardFileBuilder& out, const ShardedState& s, const OwnedPiece& piece, std::size_t o,
                       const StateParts& parts) {
  SavedState saved{o, parts.step, {}};
  for (const auto& [field, t] : parts.tensors) {
    LAKERUN_INTERNAL_ASSERT(t.numel() == piece.where.numel && t.scalar_type() == piece.value.scalar_type(),
                            "the ", field, " state of a piece of '", s.names[piece.where.param], "'");
    saved.at.emplace_back(field, out.Append(t));
  }
  return saved;
}

// Writes this rank's file; returns its entry in the index.
SavedFile WriteFile(FileSystem& fs, const std::string& dir, const ShardedState& s, const std::string& save_id) {
  const int rank = s.ctx.rank(), world = s.ctx.world_size();
  ShardFileBuilder out(ShardFileHeader(save_id, rank, world));
  SavedFile file;
  file.rank = rank;
  file.name = ShardFileName(rank, world);
  const auto members = MemberIndices(s);
  for (std::size_t k = 0; k < s.pieces.size(); ++k) {
    const OwnedPiece& piece = s.pieces[k];
    SavedRange range{piece.where.param, piece.where.param_offset, piece.where.numel, out.Append(piece.value), {}};
    for (std::size_t o = 0; o < s.optimizers.size(); ++o) {
      if (!members[o][k].has_value()) continue;
      if (std::optional<StateParts> parts = s.optimizers[o].MemberState(*members[o][k])) {
        range.state.push_back(AppendState(out, s, piece, o, *parts));
      }
    }
    file.ranges.push_back(std::move(range));
  }
  const ShardFileChecksums sums = out.Finish(kShardFileBlockBytes);
  file.bytes = out.bytes().size();
  file.checksums_at = sums.at;
  file.checksums_crc32 = sums.crc32;
  fs.WriteAtomically(JoinPath(dir, file.name), out.bytes());
  return file;
}

ShardedIndex MakeIndex(const ShardedState& s, const std::string& save_id, const std::vector<std::string>& files) {
  ShardedIndex index;
  index.save_id = save_id;
  index.world_size = s.ctx.world_size();
  index.stage = ToString(s.stage);
  index.block_bytes = kShardFileBlockBytes;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const at::Tensor& p = s.params[i];
    index.parameters.push_back({s.names[i], p.sizes().vec(), c10::toString(p.scalar_type()), p.numel()});
  }
  for (const ShardedOptimizer& opt : s.optimizers) {
    SavedOptimizer saved{ToString(opt.kind()), {}};
    for (std::size_t i = 0; i < s.params.size(); ++i) {
      if (std::optional<std::size_t> g = opt.GroupOf(i)) {
        saved.fields.emplace_back(i, StateTensorNames(opt.kind(), opt.user().param_groups()[*g].options()));
      }
    }
    index.optimizers.push_back(std::move(saved));
  }
  for (std::size_t r = 0; r < files.size(); ++r) {
    index.files.push_back(FileFromJson(files[r], StrCat("rank ", r, "'s file entry")));
  }
  return index;
}

// Rank 0, after every rank's file is in place: the index, then away with rank files no index names any more.
uint64_t WriteIndex(FileSystem& fs, const std::string& dir, const ShardedIndex& index) {
  const std::string text = IndexToJson(index);
  fs.WriteAtomically(ShardedIndexPath(dir), text);
  for (const FileInfo& entry : fs.List(dir)) {
    bool named = false;
    for (const SavedFile& f : index.files) named = named || f.name == entry.name;
    if (!entry.is_directory && IsShardFileName(entry.name) && !named) fs.Remove(JoinPath(dir, entry.name));
  }
  return text.size();
}

}  // namespace

std::string ShardedIndexPath(const std::string& dir) { return JoinPath(dir, "index.json"); }

ShardedCheckpointIo SaveShards(FileSystem& fs, const std::string& dir, const ShardedState& s) {
  Context& ctx = s.ctx;
  const std::string save_id = AgreeOnOutcome(ctx, [&] { return ctx.rank() == 0 ? Prepare(fs, dir) : ""; })[0];
  ShardedCheckpointIo io;
  at::NoGradGuard no_grad;
  const std::vector<std::string> files = AgreeOnOutcome(
      ctx,
      [&] {
        const SavedFile mine = WriteFile(fs, dir, s, save_id);
        io.bytes += static_cast<int64_t>(mine.bytes);
        return FileToJson(mine);
      },
      kMaxFileEntryBytes);
  io.files = 1;
  AgreeOnOutcome(ctx, [&] {
    if (ctx.rank() == 0) {
      io.bytes += static_cast<int64_t>(WriteIndex(fs, dir, MakeIndex(s, save_id, files)));
      ++io.files;
    }
    return std::string();
  });
  return io;
}

}  // namespace lakerun::dist
