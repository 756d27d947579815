#include "dist/agreed_outcome.h"

#include <lakerun/base/error.h>

#include <algorithm>
#include <exception>

namespace lakerun::dist {
namespace {

// The first byte of a rank's message: how its body ended. The rest: its result, or its error's message.
constexpr char kReturned = '+';

// The lakerun error types a peer's failure is re-thrown as, most derived first (CommTimeout before DistError).
#define LAKERUN_TAGGED_ERRORS(X)                                                                          \
  X('c', CommTimeout) X('d', DistError) X('i', IoError) X('x', CorruptDataError) X('a', InvalidArgument) \
      X('g', ConfigError) X('n', NotImplemented) X('r', ResourceError) X('t', InternalError)

char TagOf(const std::exception& e) {
#define LAKERUN_TAG_OF(tag, Type) \
  if (dynamic_cast<const Type*>(&e) != nullptr) return tag;
  LAKERUN_TAGGED_ERRORS(LAKERUN_TAG_OF)
#undef LAKERUN_TAG_OF
  return 'e';  // lakerun::Error, or another std::exception (torch's c10::Error)
}

[[noreturn]] void ThrowTagged(char tag, const std::string& message) {
  switch (tag) {
#define LAKERUN_THROW_TAGGED(t, Type) \
  case t: throw Type(message);
    LAKERUN_TAGGED_ERRORS(LAKERUN_THROW_TAGGED)
#undef LAKERUN_THROW_TAGGED
    default: throw Error(message);
  }
}

// Long messages are cut so that one failure cannot exceed the gather's bound.
constexpr std::size_t kMaxMessageBytes = 16 * 1024;

}  // namespace

std::vector<std::string> AgreeOnOutcome(Context& ctx, const std::function<std::string()>& body,
                                        std::size_t max_bytes) {
  std::exception_ptr failure;
  std::string mine;
  try {
    mine = kReturned + body();
  } catch (const std::exception& e) {
    failure = std::current_exception();
    mine = std::string(1, TagOf(e)) + std::string(e.what()).substr(0, kMaxMessageBytes);
  } catch (...) {
    failure = std::current_exception();
    mine = "eunknown exception";
  }
  // One more byte than the caller's bound for the tag, and room for a message whatever the bound.
  const std::vector<std::string> all = AllGatherBytes(ctx, mine, std::max(max_bytes, kMaxMessageBytes) + 1);
  if (failure) std::rethrow_exception(failure);
  std::vector<std::string> results;
  for (std::size_t r = 0; r < all.size(); ++r) {
    LAKERUN_INTERNAL_ASSERT(!all[r].empty(), "rank ", r, " sent no outcome");
    if (all[r][0] != kReturned) ThrowTagged(all[r][0], StrCat("rank ", r, ": ", all[r].substr(1)));
    results.push_back(all[r].substr(1));
  }
  return results;
}

}  // namespace lakerun::dist
