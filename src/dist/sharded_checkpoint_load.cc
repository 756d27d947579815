// ReadShards and ApplyShards: the index checked against the model, this rank's pieces read from whichever files
// hold them, whatever world size and level wrote them.
#include <lakerun/base/error.h>

#include "dist/agreed_outcome.h"
#include "dist/checkpoint_index.h"
#include "dist/shard_file.h"
#include "dist/sharded_checkpoint.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <memory>

namespace lakerun::dist {
namespace {

std::string Quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

std::string Describe(c10::IntArrayRef shape, const std::string& dtype) { return StrCat(shape, " ", dtype); }

// For each of the model's parameters, its index in the checkpoint. InvalidArgument naming every parameter the
// checkpoint lacks or holds besides, or the first whose shape or dtype differs.
std::vector<std::size_t> MatchParameters(const ShardedIndex& index, const ShardedState& s, const std::string& path) {
  std::map<std::string, std::size_t> saved;
  for (std::size_t p = 0; p < index.parameters.size(); ++p) saved[index.parameters[p].name] = p;
  std::vector<std::size_t> out;
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    auto it = saved.find(s.names[i]);
    if (it == saved.end()) {
      missing.push_back(s.names[i]);
      continue;
    }
    const SavedParameter& p = index.parameters[it->second];
    const std::string here = Describe(s.params[i].sizes(), c10::toString(s.params[i].scalar_type()));
    const std::string there = Describe(p.shape, p.dtype);
    LAKERUN_CHECK(here == there, path, ": parameter '", s.names[i], "' is ", here, " in the model but ", there,
                  " in the checkpoint");
    out.push_back(it->second);
    saved.erase(it);
  }
  LAKERUN_CHECK(missing.empty(), path, ": the checkpoint has no parameter ", Quoted(missing),
                " of the model (it holds ", index.parameters.size(), " parameters)");
  std::vector<std::string> extra;
  for (const auto& [name, p] : saved) extra.push_back(name);
  LAKERUN_CHECK(extra.empty(), path, ": the checkpoint holds parameter ", Quoted(extra), ", which the model lacks");
  return out;
}

// The same optimizer kinds, in the same order, stepping the same parameters.
void MatchOptimizers(const ShardedIndex& index, const ShardedState& s, const std::vector<std::size_t>& saved,
                     const std::string& path) {
  LAKERUN_CHECK(index.optimizers.size() == s.optimizers.size(), path, ": the checkpoint holds the state of ",
                index.optimizers.size(), " optimizers, but ShardedDataParallel was given ", s.optimizers.size());
  for (std::size_t o = 0; o < s.optimizers.size(); ++o) {
    const ShardedOptimizer& opt = s.optimizers[o];
    const SavedOptimizer& then = index.optimizers[o];
    LAKERUN_CHECK(then.kind == ToString(opt.kind()), path, ": optimizer ", o, " is ", ToString(opt.kind()),
                  " but the checkpoint's optimizer ", o, " is ", then.kind);
    for (std::size_t i = 0; i < s.params.size(); ++i) {
      const bool now = opt.GroupOf(i).has_value(), before = then.FieldsOf(saved[i]) != nullptr;
      LAKERUN_CHECK(now == before, path, ": optimizer ", o, " (", then.kind, ") ", now ? "steps" : "does not step",
                    " parameter '", s.names[i], "', but in the checkpoint it ", before ? "does" : "does not");
    }
  }
}

// A saved range's elements [begin, end) of the parameter (within the range).
struct Overlap {
  std::size_t file = 0;
  const SavedRange* range = nullptr;
  int64_t begin = 0, end = 0;
  /// Where the overlap's elements lie, in a segment of the range's that starts at byte `segment`.
  uint64_t At(uint64_t segment, int64_t element) const { return segment + (begin - range->offset) * element; }
  uint64_t Bytes(int64_t element) const { return (end - begin) * element; }
};

std::vector<std::string> SortedFields(const SavedState& state) {
  std::vector<std::string> fields;
  for (const auto& [field, at] : state.at) fields.push_back(field);
  std::sort(fields.begin(), fields.end());
  return fields;
}

// Reads this rank's part of a checkpoint whose index is checked and matched to the model: which saved ranges
// overlap each piece, then the byte ranges they need from each file, then the pieces' values and state.
class PieceReader {
 public:
  PieceReader(const std::string& dir, const std::string& index_path, const ShardedIndex& index,
              const ShardedState& s, std::vector<std::size_t> saved);
  LoadedShards Read(FileSystem& fs);

 private:
  std::vector<Overlap> OverlapsOf(const OwnedPiece& piece) const;
  void NeedBytes();
  at::Tensor Elements(std::size_t k, const std::vector<uint64_t>& segments) const;
  std::optional<StateParts> StateOf(std::size_t o, std::size_t m) const;

  const std::string& index_path_;
  const ShardedIndex& index_;
  const ShardedState& s_;
  std::vector<std::size_t> saved_;                     // per model parameter: the checkpoint's
  std::vector<std::vector<Overlap>> by_parameter_;     // per checkpoint parameter: its ranges, by offset
  std::vector<std::unique_ptr<ShardFileReader>> files_;
  std::vector<std::vector<Overlap>> overlaps_;         // per piece
};

PieceReader::PieceReader(const std::string& dir, const std::string& index_path, const ShardedIndex& index,
                         const ShardedState& s, std::vector<std::size_t> saved)
    : index_path_(index_path), index_(index), s_(s), saved_(std::move(saved)) {
  by_parameter_.resize(index.parameters.size());
  for (std::size_t f = 0; f < index.files.size(); ++f) {
    const SavedFile& file = index.files[f];
    files_.push_back(std::make_unique<ShardFileReader>(
        JoinPath(dir, file.name), ShardFileHeader(index.save_id, file.rank, index.world_size), file.bytes,
        index.block_bytes, ShardFileChecksums{file.checksums_at, file.checksums_crc32}));
    for (const SavedRange& r : file.ranges) by_parameter_[r.parameter].push_back({f, &r, r.offset, r.offset + r.numel});
  }
  for (auto& ranges : by_parameter_) {
    std::sort(ranges.begin(), ranges.end(), [](const Overlap& a, const Overlap& b) { return a.begin < b.begin; });
  }
  for (const OwnedPiece& piece : s.pieces) overlaps_.push_back(OverlapsOf(piece));
}

// The saved ranges holding the piece's elements, cut to them (IndexFromJson checked that they cover every element).
std::vector<Overlap> PieceReader::OverlapsOf(const OwnedPiece& piece) const {
  const int64_t begin = piece.where.param_offset, end = begin + piece.where.numel;
  std::vector<Overlap> out;
  for (const Overlap& r : by_parameter_[saved_[piece.where.param]]) {
    if (r.end <= begin || r.begin >= end) continue;
    out.push_back({r.file, r.range, std::max(begin, r.begin), std::min(end, r.end)});
  }
  return out;
}

// Every piece's overlaps: their values and every state field saved with them.
void PieceReader::NeedBytes() {
  for (std::size_t k = 0; k < s_.pieces.size(); ++k) {
    const int64_t element = s_.pieces[k].value.element_size();
    for (const Overlap& o : overlaps_[k]) {
      files_[o.file]->Need(o.At(o.range->at, element), o.Bytes(element));
      for (const SavedState& state : o.range->state) {
        for (const auto& [field, at] : state.at) files_[o.file]->Need(o.At(at, element), o.Bytes(element));
      }
    }
  }
}

// Piece k's elements (on the CPU) from its overlaps, each of which holds them in a segment at segments[i].
at::Tensor PieceReader::Elements(std::size_t k, const std::vector<uint64_t>& segments) const {
  const OwnedPiece& piece = s_.pieces[k];
  at::Tensor t = at::empty({piece.where.numel}, piece.value.options().device(at::kCPU));
  const int64_t element = t.element_size();
  for (std::size_t i = 0; i < overlaps_[k].size(); ++i) {
    const Overlap& o = overlaps_[k][i];
    files_[o.file]->CopyOut(o.At(segments[i], element), o.Bytes(element),
                            static_cast<char*>(t.data_ptr()) + (o.begin - piece.where.param_offset) * element);
  }
  return t;
}

LoadedShards PieceReader::Read(FileSystem& fs) {
  NeedBytes();
  LoadedShards out;
  for (auto& file : files_) {
    if (!file->needed()) continue;
    out.io.bytes += static_cast<int64_t>(file->Fetch(fs));
    ++out.io.files;
  }
  for (std::size_t k = 0; k < s_.pieces.size(); ++k) {
    std::vector<uint64_t> segments;
    for (const Overlap& o : overlaps_[k]) segments.push_back(o.range->at);
    out.values.push_back(Elements(k, segments));
  }
  for (std::size_t o = 0; o < s_.optimizers.size(); ++o) {
    out.state.emplace_back();
    for (std::size_t m = 0; m < s_.optimizers[o].members().size(); ++m) out.state.back().push_back(StateOf(o, m));
  }
  return out;
}

// Optimizer o's state for its member m, from the saved ranges that hold the member's piece: they must agree on
// whether there is state, on the step count and on the fields, which must be those the member's group fills now.
std::optional<StateParts> PieceReader::StateOf(std::size_t o, std::size_t m) const {
  const ShardedOptimizer& opt = s_.optimizers[o];
  const std::size_t k = opt.members()[m];
  const ShardPiece& where = s_.pieces[k].where;
  std::vector<const SavedState*> held;  // per overlap
  for (const Overlap& ov : overlaps_[k]) {
    held.push_back(nullptr);
    for (const SavedState& state : ov.range->state) held.back() = state.optimizer == o ? &state : held.back();
  }
  const SavedState* first = held.front();
  for (const SavedState* state : held) {
    const bool same = state == nullptr || first == nullptr
                          ? state == first
                          : state->step == first->step && SortedFields(*state) == SortedFields(*first);
    LAKERUN_CHECK_AS(CorruptDataError, same, index_path_, ": the rank files disagree on optimizer ", o,
                     "'s state for elements [", where.param_offset, ", ", where.param_offset + where.numel,
                     ") of parameter '", s_.names[where.param], "' (whether there is any, its step or its fields)");
  }
  if (first == nullptr) return std::nullopt;
  std::vector<std::string> wanted =
      StateTensorNames(opt.kind(), opt.user().param_groups()[*opt.GroupOf(where.param)].options());
  std::sort(wanted.begin(), wanted.end());
  LAKERUN_CHECK(SortedFields(*first) == wanted, index_path_, ": optimizer ", o, " (", ToString(opt.kind()),
                ") keeps state ", Quoted(wanted), " for parameter '", s_.names[where.param],
                "' with its current options, but the checkpoint holds ", Quoted(SortedFields(*first)));
  StateParts parts{first->step, {}};
  for (const auto& [field, unused] : first->at) {
    std::vector<uint64_t> segments;
    for (const SavedState* state : held) {
      for (const auto& [name, at] : state->at) {
        if (name == field) segments.push_back(at);
      }
    }
    parts.tensors.emplace_back(field, Elements(k, segments));
  }
  return parts;
}

LoadedShards ReadMine(FileSystem& fs, const std::string& dir, const ShardedState& s) {
  const std::string path = ShardedIndexPath(dir);
  LAKERUN_CHECK_AS(IoError, fs.Exists(path), "no sharded checkpoint in ", dir, ": its index ", path,
                   " does not exist (a save that did not complete, or another directory)");
  const std::string text = fs.ReadFile(path);
  const ShardedIndex index = IndexFromJson(text, path);
  std::vector<std::size_t> saved = MatchParameters(index, s, path);
  MatchOptimizers(index, s, saved, path);
  LoadedShards out = PieceReader(dir, path, index, s, std::move(saved)).Read(fs);
  out.io.bytes += static_cast<int64_t>(text.size());
  ++out.io.files;
  return out;
}

}  // namespace

LoadedShards ReadShards(FileSystem& fs, const std::string& dir, const ShardedState& s) {
  LoadedShards loaded;
  AgreeOnOutcome(s.ctx, [&] {
    loaded = ReadMine(fs, dir, s);
    return std::string();
  });
  return loaded;
}

void ApplyShards(LoadedShards loaded, ShardedState& s) {
  at::NoGradGuard no_grad;
  for (std::size_t k = 0; k < s.pieces.size(); ++k) s.pieces[k].value.copy_(loaded.values[k]);
  for (std::size_t o = 0; o < s.optimizers.size(); ++o) {
    ShardedOptimizer& opt = s.optimizers[o];
    for (std::size_t m = 0; m < opt.members().size(); ++m) {
      std::optional<StateParts>& parts = loaded.state[o][m];
      if (!parts.has_value()) {
        opt.ClearMemberState(m);
        continue;
      }
      for (auto& [field, t] : parts->tensors) t = t.to(s.pieces[opt.members()[m]].value.device());
      opt.SetMemberState(m, *parts);
    }
  }
}

}  // namespace lakerun::dist
