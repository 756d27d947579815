#include "lakerun/rdzv/secret.h"

#include <sys/stat.h>

#include <fstream>
#include <map>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::rdzv {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(SecretTest, GeneratedSecretsAreLongAndDiffer) {
  const std::string a = GenerateSecret();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, GenerateSecret());
}

TEST(SecretTest, FileWithoutItsTrailingNewline) {
  lakerun::testing::TempDir dir;
  const std::string path = WriteFile(dir.Join("s"), "0123456789abcdef-secret\n", 0600);
  EXPECT_EQ(ReadSecretFile(path), "0123456789abcdef-secret");
}

TEST(SecretTest, BadFilesAreRefusedWithoutShowingTheirContents) {
  lakerun::testing::TempDir dir;
  const std::string shared = WriteFile(dir.Join("shared"), "0123456789abcdef-shared", 0644);
  EXPECT_THROW_WITH(ReadSecretFile(shared), ConfigError, "accessible to group or others (mode 644)", "chmod 600");
  const std::string short_one = WriteFile(dir.Join("short"), "tiny", 0600);
  try {
    ReadSecretFile(short_one);
    ADD_FAILURE() << "a 4-byte secret was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("4 bytes long"));
    EXPECT_THAT(e.what(), Not(HasSubstr("tiny")));
  }
  EXPECT_THROW_WITH(ReadSecretFile(dir.Join("missing")), ConfigError, "cannot be read");
}

TEST(SecretTest, EnvironmentVariableWinsOverTheFileVariable) {
  lakerun::testing::TempDir dir;
  const std::string path = WriteFile(dir.Join("s"), "secret from the file!", 0600);
  EXPECT_EQ(SecretFromEnvironment(MapEnvironment({{kSecretFileVariable, path}})), "secret from the file!");
  EXPECT_EQ(SecretFromEnvironment(MapEnvironment({{kSecretFileVariable, path},
                                                  {kSecretVariable, "secret from the variable"}})),
            "secret from the variable");
  EXPECT_EQ(SecretFromEnvironment(MapEnvironment({})), std::nullopt);
  try {
    SecretFromEnvironment(MapEnvironment({{kSecretVariable, "short-one"}}));
    ADD_FAILURE() << "a short secret was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(kSecretVariable));
    EXPECT_THAT(e.what(), Not(HasSubstr("short-one")));
  }
}

}  // namespace
}  // namespace lakerun::rdzv
