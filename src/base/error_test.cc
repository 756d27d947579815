#include "lakerun/base/error.h"

#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

TEST(ErrorTest, CheckThrowsInvalidArgumentWithMessage) {
  const int batch = -3;
  EXPECT_THROW_WITH(LAKERUN_CHECK(batch > 0, "batch_size must be positive, got ", batch), InvalidArgument,
                    "batch_size must be positive, got -3");
}

TEST(ErrorTest, CheckAsThrowsTheNamedType) {
  EXPECT_THROW(LAKERUN_CHECK_AS(CorruptDataError, false, "bad page"), CorruptDataError);
  EXPECT_NO_THROW(LAKERUN_CHECK_AS(CorruptDataError, true, "never"));
}

TEST(ErrorTest, HierarchyDerivesFromError) {
  EXPECT_THROW(LAKERUN_THROW(CommTimeout, "rank 3 never arrived"), DistError);
  EXPECT_THROW(LAKERUN_THROW(IoError, "x"), Error);
  EXPECT_THROW(LAKERUN_THROW(NotImplemented, "x"), std::runtime_error);
}

TEST(ErrorTest, InternalAssertNamesFileAndCondition) {
  EXPECT_THROW_WITH(LAKERUN_INTERNAL_ASSERT(1 + 1 == 3, "math"), InternalError, "error_test.cc", "1 + 1 == 3",
                    "math");
}

}  // namespace
}  // namespace lakerun
