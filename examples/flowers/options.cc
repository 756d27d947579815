#include "options.h"

#include <functional>
#include <map>

#include "lakerun/base/error.h"

namespace lakerun::examples::flowers {

std::string Usage() {
  return R"(usage: flowers [flags]

Trains a small CNN on JPEG images stored in a Delta table, decoded and augmented by lakerun's loader, with the
Lightning-style Trainer (early stopping on val_loss, a checkpoint every epoch, MLflow tracking from rank 0).
Runs as one process or as every rank of `lakerun launch -n N -- flowers ...` (or torchrun, Slurm, MPI).

The table (columns image, label; partitioned by split = train / val / test) is built on first use by rank 0:
from Fashion-MNIST (28x28 upscaled to 64x64 and JPEG-encoded) or from --images DIR/<class>/<image>.jpg.

data:
  --table PATH             Delta table to train from, built when missing (flowers_table)
  --images DIR             build the table from this folder of class sub-folders instead of Fashion-MNIST
  --fashion-mnist DIR      Fashion-MNIST IDX files (/usr/share/datasets/fashion-mnist)
  --table-limit N          build from at most N images per source split (0: all)
  --rebuild                delete and rebuild the table
  --resize N               shorter side after decoding (64)
  --crop N                 square crop: random for training (with horizontal flips), centre otherwise (56)
  --channels N             1 or 3 (default: what the table records: 1 for Fashion-MNIST, 3 for photos)
  --batch-size N           per rank (64)
  --loader-threads N       decoding threads per rank (1)
model and training:
  --width N                channels of the first conv layer (16)
  --lr X                   AdamW learning rate (0.002)
  --weight-decay X         (0.0001)
  --epochs N               at most this many epochs (20)
  --limit-train-batches N  per epoch (-1: all), likewise --limit-val-batches, --limit-test-batches
  --seed N                 model init, shuffling and augmentation (42)
  --torch-threads N        intra-op threads per rank (0: cores / ranks on this node)
  --patience N             EarlyStopping on val_loss: epochs without improvement (10)
  --min-delta X            smallest improvement that counts (0.01)
  --stop-below X           stop as soon as val_loss < X (0.55; 0: never)
output:
  --output-dir DIR         checkpoints go to DIR/checkpoints (flowers_out)
  --resume                 continue from DIR/checkpoints/last.ckpt when present
  --tracking-uri URI       MLflow store: a path or http(s):// server (mlruns)
  --experiment NAME        MLflow experiment (flowers)
  --run-name NAME          MLflow run name (generated)
  --no-tracking            do not log to MLflow
  --log-every N            progress line and metrics every N steps (50)
  --dist-timeout S         bound on waiting for peers, including rank 0 building the table (900)
  --help
)";
}

namespace {

int64_t ParseInt(const std::string& flag, const std::string& value, int64_t min) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LAKERUN_CHECK_AS(ConfigError, used == value.size() && !value.empty(), "flag ", flag,
                   ": expected an integer, got '", value, "'");
  LAKERUN_CHECK_AS(ConfigError, v >= min, "flag ", flag, ": expected at least ", min, ", got ", v);
  return v;
}

double ParseDouble(const std::string& flag, const std::string& value, double min) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LAKERUN_CHECK_AS(ConfigError, used == value.size() && !value.empty(), "flag ", flag, ": expected a number, got '",
                   value, "'");
  LAKERUN_CHECK_AS(ConfigError, v >= min, "flag ", flag, ": expected at least ", min, ", got ", v);
  return v;
}

}  // namespace

FlowersOptions ParseFlags(int argc, const char* const* argv) {
  FlowersOptions o;
  using Setter = std::function<void(const std::string& flag, const std::string& value)>;
  auto str = [](std::string& field) -> Setter { return [&field](auto&, const std::string& v) { field = v; }; };
  auto integer = [](auto& field, int64_t min) -> Setter {
    return [&field, min](const std::string& f, const std::string& v) {
      field = static_cast<std::remove_reference_t<decltype(field)>>(ParseInt(f, v, min));
    };
  };
  auto real = [](double& field, double min) -> Setter {
    return [&field, min](const std::string& f, const std::string& v) { field = ParseDouble(f, v, min); };
  };
  const std::map<std::string, Setter> with_value = {
      {"--table", str(o.table)},
      {"--images", str(o.images_dir)},
      {"--fashion-mnist", str(o.fashion_mnist_dir)},
      {"--table-limit", integer(o.table_limit, 0)},
      {"--resize", integer(o.resize, 8)},
      {"--crop", integer(o.crop, 8)},
      {"--channels", integer(o.channels, 1)},
      {"--batch-size", integer(o.batch_size, 1)},
      {"--loader-threads", integer(o.loader_threads, 0)},
      {"--width", integer(o.width, 1)},
      {"--lr", real(o.lr, 0)},
      {"--weight-decay", real(o.weight_decay, 0)},
      {"--epochs", integer(o.epochs, 1)},
      {"--limit-train-batches", integer(o.limit_train_batches, -1)},
      {"--limit-val-batches", integer(o.limit_val_batches, -1)},
      {"--limit-test-batches", integer(o.limit_test_batches, -1)},
      {"--seed", integer(o.seed, 0)},
      {"--torch-threads", integer(o.torch_threads, 0)},
      {"--patience", integer(o.patience, 0)},
      {"--min-delta", real(o.min_delta, 0)},
      {"--stop-below", real(o.stop_below, 0)},
      {"--output-dir", str(o.output_dir)},
      {"--tracking-uri", str(o.tracking_uri)},
      {"--experiment", str(o.experiment)},
      {"--run-name", str(o.run_name)},
      {"--log-every", integer(o.log_every, 1)},
      {"--dist-timeout", integer(o.dist_timeout_s, 1)},
  };
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--rebuild") {
      o.rebuild = true;
    } else if (flag == "--resume") {
      o.resume = true;
    } else if (flag == "--no-tracking") {
      o.tracking = false;
    } else if (auto it = with_value.find(flag); it != with_value.end()) {
      if (!has_value) {
        LAKERUN_CHECK_AS(ConfigError, i + 1 < argc, "flag ", flag, ": missing its value");
        value = argv[++i];
      }
      it->second(flag, value);
    } else {
      LAKERUN_THROW(ConfigError, "unknown flag '", flag, "' (see flowers --help)");
    }
  }
  LAKERUN_CHECK_AS(ConfigError, o.channels == 0 || o.channels == 1 || o.channels == 3,
                   "flag --channels: expected 1 or 3, got ", o.channels);
  LAKERUN_CHECK_AS(ConfigError, o.crop <= o.resize, "flag --crop: ", o.crop, " is larger than --resize ", o.resize);
  return o;
}

}  // namespace lakerun::examples::flowers
