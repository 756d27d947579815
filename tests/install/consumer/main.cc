// table_sum TABLE COLUMN: every rank loads its share of TABLE's integer COLUMN; rank 0 prints the rows and the sum
// over all ranks. Runs on one process, or on N ranks: `lakerun launch -n N -- table_sum TABLE COLUMN`.
#include <lakerun/base/run_main.h>
#include <lakerun/data/loader.h>
#include <lakerun/data/table_source.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/init.h>
#include <lakerun/version.h>

#include <cstdint>
#include <cstdio>
#include <memory>

namespace {

int TableSum(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: table_sum TABLE COLUMN\n");
    return 2;
  }
  lakerun::dist::Context& ctx = lakerun::dist::Init();
  lakerun::data::TableOptions table;
  table.columns = {argv[2]};
  lakerun::data::LoaderOptions options;
  options.batch_size = 4;
  options.rank = ctx.rank();
  options.world_size = ctx.world_size();
  options.remainder = lakerun::data::RemainderPolicy::kDrop;
  lakerun::data::Loader loader(lakerun::data::OpenTable(argv[1], table), options);

  int64_t rows = 0;
  int64_t sum = 0;
  while (auto batch = loader.Next()) {
    rows += batch->size();
    sum += batch->at(argv[2]).sum().item<int64_t>();
  }
  std::printf("rank %d of %d: %lld rows\n", ctx.rank(), ctx.world_size(), static_cast<long long>(rows));
  const int64_t all_rows = lakerun::dist::AllReduceInt64(ctx, rows);
  const int64_t all_sum = lakerun::dist::AllReduceInt64(ctx, sum);
  if (ctx.rank() == 0) {
    std::printf("table_sum: lakerun %s, %d ranks, %lld rows, sum %lld\n", LAKERUN_VERSION_STRING, ctx.world_size(),
                static_cast<long long>(all_rows), static_cast<long long>(all_sum));
  }
  lakerun::dist::Shutdown();
  return 0;
}

}  // namespace

// An error escaping TableSum prints "table_sum: error: ..." and exits 1.
int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, TableSum); }
