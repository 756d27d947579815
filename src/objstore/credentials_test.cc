#include "objstore/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "lakerun/base/error.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::objstore {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every variable the loaders read: cleared for each test, restored after it.
constexpr const char* kVariables[] = {
    "HOME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL", "AWS_S3_FORCE_PATH_STYLE", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_BLOB_ENDPOINT", "GCS_HMAC_ACCESS_ID",
    "GCS_HMAC_SECRET", "GOOGLE_OAUTH_ACCESS_TOKEN", "CLOUDSDK_AUTH_ACCESS_TOKEN", "STORAGE_EMULATOR_HOST",
    "GCS_ENDPOINT_URL"};

// Secrets the tests use; no error message may contain any of them.
constexpr const char* kSecrets[] = {"AKIAENVKEYID", "envSecretKey/abc", "envSessionToken", "AKIAFILEDEFAULT",
                                    "fileDefaultSecret", "AKIAFILEDEV", "fileDevSecret", "fileDevToken",
                                    "zmFsc2VTZWNyZXRLZXk=", "sv=2021&sig=SASsecret", "gcsHmacSecret"};

class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      if (value != nullptr) saved_[name] = value;
      ::unsetenv(name);
    }
    Set("HOME", home_.path());
  }

  void TearDown() override {
    for (const char* name : kVariables) {
      const auto it = saved_.find(name);
      if (it != saved_.end()) {
        ::setenv(name, it->second.c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }

  static void Set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

  // Writes `text` to $HOME/relative_path, creating $HOME/.aws.
  std::string WriteHomeFile(const std::string& relative_path, const std::string& text) {
    ::mkdir(home_.Join(".aws").c_str(), 0700);
    const std::string path = home_.Join(relative_path);
    std::ofstream(path) << text;
    return path;
  }

  // The ConfigError that `load` throws (its message), checked to name no secret.
  static std::string ConfigErrorOf(const std::function<void()>& load) {
    try {
      load();
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      for (const char* secret : kSecrets) EXPECT_THAT(message, Not(HasSubstr(secret)));
      return message;
    }
    ADD_FAILURE() << "no ConfigError";
    return {};
  }

  testing::TempDir home_;
  std::map<std::string, std::string> saved_;
};

constexpr char kCredentialsFile[] =
    "[default]\n"
    "aws_access_key_id = AKIAFILEDEFAULT\n"
    "aws_secret_access_key = fileDefaultSecret\n"
    "\n"
    "# the dev account\n"
    "[dev]\n"
    "aws_access_key_id=AKIAFILEDEV\n"
    "aws_secret_access_key=fileDevSecret\n"
    "aws_session_token = fileDevToken\n";

constexpr char kConfigFile[] =
    "[default]\n"
    "region = eu-west-2\n"
    "; 'dev' is only a profile in this file when written [profile dev]\n"
    "[dev]\n"
    "region = wrong-1\n"
    "[profile dev]\n"
    "region = ap-south-1\n"
    "s3 =\n"
    "  addressing_style = path\n";

TEST_F(CredentialsTest, NothingSetIsAnonymousAws) {
  const AwsSettings settings = LoadAwsSettings();
  EXPECT_FALSE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials_source, "anonymous");
  EXPECT_EQ(settings.region, "us-east-1");
  EXPECT_EQ(settings.endpoint_url, "");
  EXPECT_FALSE(settings.force_path_style);
}

TEST_F(CredentialsTest, DefaultProfileFromHomeFiles) {
  const std::string credentials = WriteHomeFile(".aws/credentials", kCredentialsFile);
  WriteHomeFile(".aws/config", kConfigFile);
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEFAULT");
  EXPECT_EQ(settings.credentials->secret_access_key, "fileDefaultSecret");
  EXPECT_EQ(settings.credentials->session_token, "");
  EXPECT_EQ(settings.credentials_source, "profile 'default' in " + credentials);
  EXPECT_EQ(settings.region, "eu-west-2");
  EXPECT_FALSE(settings.force_path_style);
}

TEST_F(CredentialsTest, EnvironmentWinsOverProfiles) {
  WriteHomeFile(".aws/credentials", kCredentialsFile);
  WriteHomeFile(".aws/config", kConfigFile);
  Set("AWS_ACCESS_KEY_ID", "AKIAENVKEYID");
  Set("AWS_SECRET_ACCESS_KEY", "envSecretKey/abc");
  Set("AWS_SESSION_TOKEN", "envSessionToken");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAENVKEYID");
  EXPECT_EQ(settings.credentials->secret_access_key, "envSecretKey/abc");
  EXPECT_EQ(settings.credentials->session_token, "envSessionToken");
  EXPECT_EQ(settings.credentials_source, "environment");
  EXPECT_EQ(settings.region, "eu-west-2");  // the profile still gives what the environment does not
}

TEST_F(CredentialsTest, EnvironmentKeysComeTogether) {
  Set("AWS_ACCESS_KEY_ID", "AKIAENVKEYID");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }),
              HasSubstr("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
  ::unsetenv("AWS_ACCESS_KEY_ID");
  Set("AWS_SECRET_ACCESS_KEY", "envSecretKey/abc");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }),
              HasSubstr("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"));
}

// A session token alone does not mix with a profile's keys.
TEST_F(CredentialsTest, SessionTokenAloneIsIgnored) {
  WriteHomeFile(".aws/credentials", kCredentialsFile);
  Set("AWS_SESSION_TOKEN", "envSessionToken");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEFAULT");
  EXPECT_EQ(settings.credentials->session_token, "");
}

TEST_F(CredentialsTest, AwsProfileSelectsSections) {
  const std::string credentials = WriteHomeFile(".aws/credentials", kCredentialsFile);
  WriteHomeFile(".aws/config", kConfigFile);
  Set("AWS_PROFILE", "dev");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEV");
  EXPECT_EQ(settings.credentials->secret_access_key, "fileDevSecret");
  EXPECT_EQ(settings.credentials->session_token, "fileDevToken");
  EXPECT_EQ(settings.credentials_source, "profile 'dev' in " + credentials);
  EXPECT_EQ(settings.region, "ap-south-1");
  EXPECT_TRUE(settings.force_path_style);  // s3 = / addressing_style = path
}

TEST_F(CredentialsTest, MissingExplicitProfileNamesProfileAndFiles) {
  const std::string credentials = WriteHomeFile(".aws/credentials", kCredentialsFile);
  const std::string config = WriteHomeFile(".aws/config", kConfigFile);
  Set("AWS_PROFILE", "staging");
  const std::string message = ConfigErrorOf([] { LoadAwsSettings(); });
  EXPECT_THAT(message, HasSubstr("AWS_PROFILE names profile 'staging'"));
  EXPECT_THAT(message, HasSubstr(credentials));
  EXPECT_THAT(message, HasSubstr(config));
  // Environment keys do not hide the mistake.
  Set("AWS_ACCESS_KEY_ID", "AKIAENVKEYID");
  Set("AWS_SECRET_ACCESS_KEY", "envSecretKey/abc");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr("'staging'"));
}

TEST_F(CredentialsTest, ProfilesThatAssumeRolesOrRunProgramsAreRefusedByName) {
  const std::string config = WriteHomeFile(".aws/config",
                                           "[profile role]\nrole_arn = arn:aws:iam::123:role/x\nsource_profile = dev\n"
                                           "[profile helper]\ncredential_process = /bin/creds\n");
  Set("AWS_PROFILE", "role");
  try {
    LoadAwsSettings();
    FAIL() << "a role profile was taken for anonymous access";
  } catch (const NotImplemented& e) {
    EXPECT_THAT(e.what(), HasSubstr("profile 'role' in " + config + " gets its credentials through role_arn"));
    EXPECT_THAT(e.what(), HasSubstr("aws configure export-credentials --profile role"));
  }
  Set("AWS_PROFILE", "helper");
  EXPECT_THROW(LoadAwsSettings(), NotImplemented);
  // Keys in the environment are used as they are.
  Set("AWS_ACCESS_KEY_ID", "AKIAENVKEYID");
  Set("AWS_SECRET_ACCESS_KEY", "envSecretKey/abc");
  EXPECT_EQ(LoadAwsSettings().credentials_source, "environment");
}

TEST_F(CredentialsTest, MissingDefaultProfileIsAnonymous) {
  WriteHomeFile(".aws/credentials", "[other]\naws_access_key_id = AKIAFILEDEV\naws_secret_access_key = x\n");
  const AwsSettings settings = LoadAwsSettings();
  EXPECT_FALSE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials_source, "anonymous");
}

TEST_F(CredentialsTest, ExplicitFilesWithTildeAndConfigOnlyKeys) {
  ::mkdir(home_.Join("conf").c_str(), 0700);
  std::ofstream(home_.Join("conf/my-config")) << "[profile ci]\naws_access_key_id = AKIAFILEDEV\n"
                                                  "aws_secret_access_key = fileDevSecret\nregion = sa-east-1\n";
  Set("AWS_CONFIG_FILE", "~/conf/my-config");
  Set("AWS_SHARED_CREDENTIALS_FILE", "~/conf/absent");
  Set("AWS_PROFILE", "ci");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEV");
  EXPECT_EQ(settings.credentials_source, "profile 'ci' in " + home_.Join("conf/my-config"));
  EXPECT_EQ(settings.region, "sa-east-1");
}

TEST_F(CredentialsTest, CredentialsFileWinsOverConfigAndProfileDefaultOverDefault) {
  WriteHomeFile(".aws/config",
                "[default]\nregion = us-west-1\naws_access_key_id = AKIAFILEDEV\n"
                "aws_secret_access_key = fileDevSecret\n[profile default]\nregion = us-west-2\n");
  WriteHomeFile(".aws/credentials", "[default]\naws_access_key_id = AKIAFILEDEFAULT\n"
                                    "aws_secret_access_key = fileDefaultSecret\n");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEFAULT");
  EXPECT_EQ(settings.credentials->secret_access_key, "fileDefaultSecret");
  EXPECT_EQ(settings.region, "us-west-2");
}

TEST_F(CredentialsTest, CommentsBlanksCaseAndCrlf) {
  WriteHomeFile(".aws/credentials",
                "# leading comment\r\n\r\n  [ default ]  \r\n; another\r\n"
                "  AWS_Access_Key_ID   =   AKIAFILEDEFAULT  \r\naws_secret_access_key=fileDefaultSecret\r\n");
  const AwsSettings settings = LoadAwsSettings();
  ASSERT_TRUE(settings.credentials.has_value());
  EXPECT_EQ(settings.credentials->access_key_id, "AKIAFILEDEFAULT");
  EXPECT_EQ(settings.credentials->secret_access_key, "fileDefaultSecret");
}

TEST_F(CredentialsTest, UnparsableLinesNameFileAndLineNotValue) {
  const std::string path = WriteHomeFile(".aws/credentials",
                                         "[default]\naws_access_key_id = AKIAFILEDEFAULT\n"
                                         "aws_secret_access_key fileDefaultSecret\n");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr(path + ":3: expected 'name = value'"));
  WriteHomeFile(".aws/credentials", "aws_secret_access_key = fileDefaultSecret\n");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr(path + ":1: a setting before any [section]"));
  WriteHomeFile(".aws/credentials", "[default\n");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr(path + ":1: a section header must end with ']'"));
  WriteHomeFile(".aws/credentials", "[default]\nregion = x\n  aws_secret_access_key = fileDefaultSecret\n");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr(path + ":3: an indented line continues a value"));
}

TEST_F(CredentialsTest, ProfileKeyWithoutSecret) {
  const std::string path = WriteHomeFile(".aws/credentials", "[dev]\naws_access_key_id = AKIAFILEDEV\n");
  Set("AWS_PROFILE", "dev");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }),
              HasSubstr("profile 'dev' in " + path + " has aws_access_key_id but no aws_secret_access_key"));
}

TEST_F(CredentialsTest, RegionPrecedence) {
  WriteHomeFile(".aws/config", kConfigFile);
  EXPECT_EQ(LoadAwsSettings().region, "eu-west-2");
  Set("AWS_DEFAULT_REGION", "eu-central-1");
  EXPECT_EQ(LoadAwsSettings().region, "eu-central-1");
  Set("AWS_REGION", "eu-north-1");
  EXPECT_EQ(LoadAwsSettings().region, "eu-north-1");
}

TEST_F(CredentialsTest, EndpointPrecedenceAndPathStyle) {
  WriteHomeFile(".aws/config", "[default]\nendpoint_url = http://profile:9000/\n");
  AwsSettings settings = LoadAwsSettings();
  EXPECT_EQ(settings.endpoint_url, "http://profile:9000");
  EXPECT_TRUE(settings.force_path_style);  // endpoints default to path style
  Set("AWS_ENDPOINT_URL", "http://generic:9000");
  EXPECT_EQ(LoadAwsSettings().endpoint_url, "http://generic:9000");
  Set("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:4568");
  settings = LoadAwsSettings();
  EXPECT_EQ(settings.endpoint_url, "http://127.0.0.1:4568");
  EXPECT_TRUE(settings.force_path_style);
  Set("AWS_S3_FORCE_PATH_STYLE", "false");
  EXPECT_FALSE(LoadAwsSettings().force_path_style);
  Set("AWS_S3_FORCE_PATH_STYLE", "maybe");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }), HasSubstr("AWS_S3_FORCE_PATH_STYLE must be true or false"));
}

TEST_F(CredentialsTest, AddressingStyleFromProfile) {
  WriteHomeFile(".aws/config", "[default]\nendpoint_url = http://minio:9000\ns3 =\n    addressing_style = virtual\n");
  EXPECT_FALSE(LoadAwsSettings().force_path_style);
  WriteHomeFile(".aws/config", "[default]\ns3 =\n    addressing_style = path\n");
  EXPECT_TRUE(LoadAwsSettings().force_path_style);
  Set("AWS_S3_FORCE_PATH_STYLE", "0");
  EXPECT_FALSE(LoadAwsSettings().force_path_style);
  ::unsetenv("AWS_S3_FORCE_PATH_STYLE");
  const std::string path = WriteHomeFile(".aws/config", "[default]\ns3 =\n    addressing_style = sideways\n");
  EXPECT_THAT(ConfigErrorOf([] { LoadAwsSettings(); }),
              HasSubstr("profile 'default' in " + path + ": s3 addressing_style must be path, virtual or auto"));
}

constexpr char kAzureKey[] = "zmFsc2VTZWNyZXRLZXk=";
constexpr char kAzuriteKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

TEST_F(CredentialsTest, AzureAccountAndKeyFromEnvironment) {
  Set("AZURE_STORAGE_ACCOUNT", "envaccount");
  Set("AZURE_STORAGE_KEY", kAzureKey);
  AzureSettings settings = LoadAzureSettings("");
  EXPECT_EQ(settings.account, "envaccount");
  EXPECT_EQ(settings.account_key_base64, kAzureKey);
  EXPECT_EQ(settings.sas_token, "");
  EXPECT_EQ(settings.blob_endpoint, "");
  EXPECT_EQ(LoadAzureSettings("uriaccount").account, "uriaccount");
  Set("AZURE_STORAGE_BLOB_ENDPOINT", "http://127.0.0.1:10000/envaccount/");
  EXPECT_EQ(LoadAzureSettings("").blob_endpoint, "http://127.0.0.1:10000/envaccount");
}

TEST_F(CredentialsTest, AzureSasWithOrWithoutQuestionMark) {
  Set("AZURE_STORAGE_ACCOUNT", "acct");
  Set("AZURE_STORAGE_SAS_TOKEN", "?sv=2021&sig=SASsecret");
  AzureSettings settings = LoadAzureSettings("");
  EXPECT_EQ(settings.sas_token, "sv=2021&sig=SASsecret");
  EXPECT_EQ(settings.account_key_base64, "");
  Set("AZURE_STORAGE_SAS_TOKEN", "sv=2021&sig=SASsecret");
  EXPECT_EQ(LoadAzureSettings("").sas_token, "sv=2021&sig=SASsecret");
  Set("AZURE_STORAGE_KEY", kAzureKey);
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }),
              HasSubstr("both AZURE_STORAGE_KEY and AZURE_STORAGE_SAS_TOKEN are set"));
}

TEST_F(CredentialsTest, AzureBadKeyNamesTheVariable) {
  Set("AZURE_STORAGE_ACCOUNT", "acct");
  Set("AZURE_STORAGE_KEY", "envSecretKey/abc!");
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }), HasSubstr("AZURE_STORAGE_KEY is not valid base64"));
}

TEST_F(CredentialsTest, AzureConnectionString) {
  Set("AZURE_STORAGE_CONNECTION_STRING", StrCat("DefaultEndpointsProtocol=https;AccountName=connacct;AccountKey=",
                                                kAzureKey, ";EndpointSuffix=core.windows.net"));
  AzureSettings settings = LoadAzureSettings("");
  EXPECT_EQ(settings.account, "connacct");
  EXPECT_EQ(settings.account_key_base64, kAzureKey);  // the '=' padding survives
  EXPECT_EQ(settings.blob_endpoint, "");
  EXPECT_EQ(LoadAzureSettings("connacct").account, "connacct");
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings("other"); }),
              HasSubstr("AZURE_STORAGE_CONNECTION_STRING is for storage account 'connacct', not 'other'"));
  // Variables win for credentials; the connection string still gives what they do not.
  Set("AZURE_STORAGE_SAS_TOKEN", "sv=2021&sig=SASsecret");
  settings = LoadAzureSettings("other");
  EXPECT_EQ(settings.account, "other");
  EXPECT_EQ(settings.sas_token, "sv=2021&sig=SASsecret");
  EXPECT_EQ(settings.account_key_base64, "");
}

TEST_F(CredentialsTest, AzuriteConnectionString) {
  Set("AZURE_STORAGE_CONNECTION_STRING",
      StrCat("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=", kAzuriteKey,
             ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"));
  const AzureSettings settings = LoadAzureSettings("");
  EXPECT_EQ(settings.account, "devstoreaccount1");
  EXPECT_EQ(settings.account_key_base64, kAzuriteKey);
  EXPECT_EQ(settings.blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  Set("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true");
  const AzureSettings development = LoadAzureSettings("");
  EXPECT_EQ(development.account, "devstoreaccount1");
  EXPECT_EQ(development.account_key_base64, kAzuriteKey);
  EXPECT_EQ(development.blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
}

TEST_F(CredentialsTest, AzureConnectionStringVariants) {
  Set("AZURE_STORAGE_CONNECTION_STRING",
      "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2021&sig=SASsecret");
  AzureSettings settings = LoadAzureSettings("acct");
  EXPECT_EQ(settings.sas_token, "sv=2021&sig=SASsecret");
  EXPECT_EQ(settings.blob_endpoint, "https://acct.blob.core.windows.net");
  Set("AZURE_STORAGE_CONNECTION_STRING",
      StrCat("accountname=cn;accountkey=", kAzureKey, ";endpointsuffix=core.chinacloudapi.cn"));
  settings = LoadAzureSettings("");
  EXPECT_EQ(settings.account, "cn");
  EXPECT_EQ(settings.blob_endpoint, "https://cn.blob.core.chinacloudapi.cn");
  Set("AZURE_STORAGE_CONNECTION_STRING", "AccountName=acct;fileDevSecret");
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }),
              HasSubstr("AZURE_STORAGE_CONNECTION_STRING: part 2 is not 'Name=value'"));
  Set("AZURE_STORAGE_CONNECTION_STRING", "AccountName=acct;AccountKey=envSecretKey/abc!");
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }),
              HasSubstr("AZURE_STORAGE_CONNECTION_STRING's AccountKey is not valid base64"));
}

TEST_F(CredentialsTest, AzureNeedsAnAccount) {
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }), HasSubstr("no Azure storage account"));
  Set("AZURE_STORAGE_KEY", kAzureKey);
  EXPECT_THAT(ConfigErrorOf([] { LoadAzureSettings(""); }), HasSubstr("an Azure storage key is set"));
  ::unsetenv("AZURE_STORAGE_KEY");
  Set("AZURE_STORAGE_BLOB_ENDPOINT", "http://127.0.0.1:10000/public");
  const AzureSettings anonymous = LoadAzureSettings("");
  EXPECT_EQ(anonymous.account, "");
  EXPECT_EQ(anonymous.blob_endpoint, "http://127.0.0.1:10000/public");
}

TEST_F(CredentialsTest, GcsDefaults) {
  const GcsSettings settings = LoadGcsSettings();
  EXPECT_FALSE(settings.hmac.has_value());
  EXPECT_EQ(settings.oauth_token, "");
  EXPECT_EQ(settings.endpoint_url, "https://storage.googleapis.com");
}

TEST_F(CredentialsTest, GcsHmacKeys) {
  Set("AWS_ACCESS_KEY_ID", "AKIAENVKEYID");
  Set("AWS_SECRET_ACCESS_KEY", "envSecretKey/abc");
  GcsSettings settings = LoadGcsSettings();
  ASSERT_TRUE(settings.hmac.has_value());
  EXPECT_EQ(settings.hmac->access_key_id, "AKIAENVKEYID");
  EXPECT_EQ(settings.hmac->secret_access_key, "envSecretKey/abc");
  Set("GCS_HMAC_ACCESS_ID", "GOOG1EXAMPLE");
  Set("GCS_HMAC_SECRET", "gcsHmacSecret");
  settings = LoadGcsSettings();
  ASSERT_TRUE(settings.hmac.has_value());
  EXPECT_EQ(settings.hmac->access_key_id, "GOOG1EXAMPLE");
  EXPECT_EQ(settings.hmac->secret_access_key, "gcsHmacSecret");
  EXPECT_EQ(settings.hmac->session_token, "");
  ::unsetenv("GCS_HMAC_ACCESS_ID");
  EXPECT_THAT(ConfigErrorOf([] { LoadGcsSettings(); }),
              HasSubstr("GCS_HMAC_SECRET is set but GCS_HMAC_ACCESS_ID is not"));
}

TEST_F(CredentialsTest, GcsOAuthTokenAndEndpoints) {
  Set("CLOUDSDK_AUTH_ACCESS_TOKEN", "ya29.cloudsdk");
  EXPECT_EQ(LoadGcsSettings().oauth_token, "ya29.cloudsdk");
  Set("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.google");
  EXPECT_EQ(LoadGcsSettings().oauth_token, "ya29.google");
  Set("GCS_ENDPOINT_URL", "https://gcs.internal:8443/");
  EXPECT_EQ(LoadGcsSettings().endpoint_url, "https://gcs.internal:8443");
  Set("STORAGE_EMULATOR_HOST", "localhost:4443");
  EXPECT_EQ(LoadGcsSettings().endpoint_url, "http://localhost:4443");
  Set("STORAGE_EMULATOR_HOST", "https://fake-gcs:4443");
  EXPECT_EQ(LoadGcsSettings().endpoint_url, "https://fake-gcs:4443");
}

}  // namespace
}  // namespace lakerun::objstore
