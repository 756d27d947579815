// Feeds every committed image corpus file (fuzz/data/corpus/image/*) to the image fuzz target in every build (gcc
// included, no sanitizers needed) and checks its contract: return normally or throw a lakerun::Error subclass.
// Inputs that once broke the decoder are added here after the fix, so they stay fixed.
#include <gtest/gtest.h>

#include <string>
#include <typeinfo>

#include "image_target.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/paths.h"

namespace lakerun::data::fuzz {
namespace {

TEST(ImageCorpusReplayTest, OnlyLakerunErrorsEscape) {
  FileSystem& fs = LocalFileSystem();
  const std::string dir = lakerun::testing::SourceDir() + "/fuzz/data/corpus/image";
  size_t files = 0, decoded = 0;
  for (const FileInfo& info : fs.List(dir)) {
    if (info.is_directory) continue;
    const std::string path = dir + "/" + info.name;
    ++files;
    try {
      FuzzImage(fs.ReadFile(path));
      ++decoded;
    } catch (const Error&) {
      // the contract: bad input is rejected with a lakerun::Error
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw " << typeid(e).name() << " (not a lakerun::Error) on " << path << ": " << e.what();
    } catch (...) {
      ADD_FAILURE() << "threw a non-std exception on " << path;
    }
  }
  EXPECT_GT(files, 0u) << "no corpus files under " << dir;
  EXPECT_GT(decoded, 0u) << "no corpus file decodes: the seeds are meant to be valid images";
}

}  // namespace
}  // namespace lakerun::data::fuzz
