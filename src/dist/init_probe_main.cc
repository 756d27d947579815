// dist_init_probe: joins the job its environment describes (lakerun::dist::Init), all-reduces rank + 1 and prints
//   probe launcher=<name> rank=<r> world=<w> local=<l>/<lw> sum=<s>
// Exit codes: 0 success, 3 CommTimeout, 4 other lakerun::Error, 5 anything else. Used by dist_init_test.
// LAKERUN_PROBE_TIMEOUT_MS bounds every wait (default 20000).
#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/init.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main() {
  try {
    lakerun::dist::InitOptions options;
    const char* timeout = std::getenv("LAKERUN_PROBE_TIMEOUT_MS");
    options.timeout = std::chrono::milliseconds(timeout ? std::atol(timeout) : 20000);
    lakerun::dist::Context& ctx = lakerun::dist::Init(options);
    int64_t sum = lakerun::dist::AllReduceInt64(ctx, ctx.rank() + 1);
    std::printf("probe launcher=%s rank=%d world=%d local=%d/%d sum=%lld\n", LauncherName(ctx.launcher()),
                ctx.rank(), ctx.world_size(), ctx.local_rank(), ctx.local_world_size(),
                static_cast<long long>(sum));
    std::fflush(stdout);
    lakerun::dist::Barrier(ctx);
    lakerun::dist::Shutdown();
    return 0;
  } catch (const lakerun::CommTimeout& e) {
    std::printf("error CommTimeout: %s\n", e.what());
    return 3;
  } catch (const lakerun::Error& e) {
    std::printf("error Error: %s\n", e.what());
    return 4;
  } catch (const std::exception& e) {
    std::printf("error other: %s\n", e.what());
    return 5;
  }
}
