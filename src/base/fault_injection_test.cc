#include "lakerun/base/fault_injection.h"

#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_->CreateDirs("/t");
    mem_->WriteAtomically("/t/data.bin", std::string(100, 'x'));
  }
  std::unique_ptr<FileSystem> mem_ = NewMemoryFileSystem();
  FaultInjectingFileSystem fs_{*mem_};
};

TEST_F(FaultInjectionTest, FailedReadsNameFileAndOffset) {
  fs_.FailReadsOf("data.bin", 50);
  auto in = fs_.OpenForRead("/t/data.bin");
  EXPECT_EQ(in->ReadAt(0, 50), std::string(50, 'x'));
  EXPECT_THROW_WITH(in->ReadAt(40, 20), IoError, "/t/data.bin", "offset 40");
}

TEST_F(FaultInjectionTest, CorruptByteFlipsBits) {
  fs_.CorruptByte("data.bin", 3);
  auto bytes = fs_.OpenForRead("/t/data.bin")->ReadAll();
  EXPECT_EQ(static_cast<unsigned char>(bytes[3]), static_cast<unsigned char>('x' ^ 0xFF));
  EXPECT_EQ(bytes[2], 'x');
}

TEST_F(FaultInjectionTest, CrashMidWriteLeavesTornPrefixAndOldFileViaAtomicWrite) {
  fs_.WriteAtomically("/t/ckpt", "old contents");
  fs_.CrashWritesAfter(4);
  EXPECT_THROW(fs_.WriteAtomically("/t/ckpt", "new contents that are longer"), InjectedCrash);
  // The atomic write never replaced the old file, and cleaned up its temp file.
  EXPECT_EQ(mem_->ReadFile("/t/ckpt"), "old contents");
  for (const auto& entry : mem_->List("/t")) EXPECT_EQ(entry.name.find(".tmp."), std::string::npos) << entry.name;
}

TEST_F(FaultInjectionTest, CrashTearsAPlainWrite) {
  fs_.CrashWritesAfter(3);
  auto out = fs_.OpenForWrite("/t/plain");
  EXPECT_THROW(out->Append("abcdef"), InjectedCrash);
  EXPECT_EQ(mem_->ReadFile("/t/plain"), "abc");
}

}  // namespace
}  // namespace lakerun
