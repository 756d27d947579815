// tutorial_make_csv FILE [ROWS]: writes the tutorial's data set, a CSV file with a header line.
//
//   f0,f1,f2,f3,label,split
//   0.8460,1.5526,-0.6889,0.4776,1,train
//
// Four numeric features, a class label and a split column (every fifth row is "val", the others "train"). The label
// is the ring the point (f0, f1) falls in, give or take some noise on its distance from the origin: 0 inside radius
// 1, 1 between 1 and 2, 2 beyond. f2 and f3 are noise. Rings are not linearly separable: a linear model scores
// what always answering the largest class scores (46 % of the validation rows), while a small network with one
// hidden layer reaches about 87 % in a few epochs. The rows are the same on every run (a fixed seed). Any CSV file
// of your own with a header line can take its place in docs/tutorial.md.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <lakerun/base/error.h>
#include <lakerun/base/run_main.h>

namespace {

constexpr double kInner = 1.0;  // radius of the inner disc (label 0)
constexpr double kOuter = 2.0;  // outer radius of the middle ring (label 1); beyond it, label 2

int MakeCsv(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: tutorial_make_csv FILE [ROWS]   (ROWS: default 2000)\n");
    return 2;
  }
  const std::string path = argv[1];
  long rows = 2000;
  if (argc == 3) {
    char* end = nullptr;
    rows = std::strtol(argv[2], &end, 10);
    LAKERUN_CHECK_AS(ConfigError, *end == '\0' && rows > 0, "ROWS must be a positive integer, got '",
                     argv[2], "'");
  }
  std::FILE* out = std::fopen(path.c_str(), "w");
  LAKERUN_CHECK_AS(IoError, out != nullptr, "cannot write ", path, ": ", std::strerror(errno));
  std::mt19937_64 random(42);
  std::normal_distribution<double> feature(0.0, 1.2);
  std::normal_distribution<double> noise(0.0, 0.15);
  std::fprintf(out, "f0,f1,f2,f3,label,split\n");
  for (long row = 0; row < rows; ++row) {
    const double f[4] = {feature(random), feature(random), feature(random), feature(random)};
    const double radius = std::hypot(f[0], f[1]) + noise(random);
    const int label = radius < kInner ? 0 : radius < kOuter ? 1 : 2;
    std::fprintf(out, "%.4f,%.4f,%.4f,%.4f,%d,%s\n", f[0], f[1], f[2], f[3], label, row % 5 == 4 ? "val" : "train");
  }
  LAKERUN_CHECK_AS(IoError, std::fclose(out) == 0, "cannot write ", path);
  std::printf("wrote %s: %ld rows\n", path.c_str(), rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, MakeCsv); }
