// Credentials and endpoints from the places each provider's own tools read them. Every error names the variable,
// file, line or profile at fault and never a value that may be secret.
#include "objstore/credentials.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string_view>

#include "lakerun/base/error.h"
#include "lakerun/base/crypto.h"

namespace lakerun::objstore {
namespace {

// An environment variable's value; unset and empty are the same.
std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

std::string WithoutTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// "~" and "~/..." relative to $HOME, as the AWS tools expand them; other paths unchanged.
std::string ExpandHome(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  const std::string home = Env("HOME");
  return home.empty() ? path : home + path.substr(1);
}

// One setting of an INI file and the file it came from.
struct IniValue {
  std::string value;
  std::string path;
};
using IniSection = std::map<std::string, IniValue>;  // lower-cased key -> value
using IniFile = std::map<std::string, IniSection>;  // section name as written (trimmed) -> settings

[[noreturn]] void ThrowIniError(const std::string& path, int line, std::string_view what) {
  LAKERUN_THROW(ConfigError, path, ":", line, ": ", what);
}

// Parses AWS's INI dialect: [section] lines, "key = value" lines, whole-line comments starting with '#' or ';', and
// nested settings (lines indented deeper than a "parent =" line with no value, stored as "parent.key", as the config
// file's "s3 =" block is written). A line indented under a key with a value would continue that value (configparser's
// multi-line values), which nothing lakerun reads uses: an error. A missing file is an empty one.
IniFile ReadIni(const std::string& path) {
  IniFile file;
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 && errno == ENOENT) return file;
  std::ifstream in(path);
  LAKERUN_CHECK_AS(IoError, in.is_open(), "cannot read ", path, ": ", std::strerror(errno));
  IniSection* section = nullptr;
  int key_indent = -1;  // the indentation of the section's last top-level key; -1 before its first
  std::string parent;   // that key when it opened a nested block ("parent =" with no value), else ""
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string_view text = Trim(line);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    if (text[0] == '[') {
      if (text.back() != ']') ThrowIniError(path, number, "a section header must end with ']'");
      section = &file[std::string(Trim(text.substr(1, text.size() - 2)))];
      key_indent = -1;
      parent.clear();
      continue;
    }
    if (section == nullptr) ThrowIniError(path, number, "a setting before any [section]");
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) ThrowIniError(path, number, "expected 'name = value' or '[section]'");
    const std::string key = Lower(Trim(text.substr(0, eq)));
    const std::string value(Trim(text.substr(eq + 1)));
    if (key.empty()) ThrowIniError(path, number, "a setting without a name");
    const int indent = static_cast<int>(line.find_first_not_of(" \t"));
    if (key_indent >= 0 && indent > key_indent) {
      if (parent.empty()) ThrowIniError(path, number, "an indented line continues a value (not supported)");
      (*section)[parent + "." + key] = {value, path};
      continue;
    }
    (*section)[key] = {value, path};
    key_indent = indent;
    parent = value.empty() ? key : std::string();
  }
  return file;
}

// A profile's settings gathered from both files: the config file's section ("[profile NAME]", or "[default]" /
// "[profile default]" for the default profile), overridden by the credentials file's "[NAME]".
struct AwsProfile {
  std::string name;
  bool found = false;
  IniSection settings;

  const IniValue* Find(const std::string& key) const {
    const auto it = settings.find(key);
    return it == settings.end() || it->second.value.empty() ? nullptr : &it->second;
  }
};

// The profile a config-file section header names: "profile  dev" -> "dev"; "" for any other section.
std::string ProfileSectionName(const std::string& section) {
  if (section.rfind("profile", 0) != 0 || section.size() <= 7 || (section[7] != ' ' && section[7] != '\t')) return {};
  return std::string(Trim(std::string_view(section).substr(7)));
}

AwsProfile LoadAwsProfile(const std::string& name, const std::string& credentials_path,
                          const std::string& config_path) {
  AwsProfile profile;
  profile.name = name;
  auto merge = [&profile](const IniSection& settings) {
    profile.found = true;
    for (const auto& [key, value] : settings) profile.settings[key] = value;
  };
  const IniFile config = ReadIni(config_path);
  // "[default]" first, so that "[profile default]" wins over it as in the AWS CLI.
  if (const auto it = config.find("default"); name == "default" && it != config.end()) merge(it->second);
  for (const auto& [section, settings] : config) {
    if (ProfileSectionName(section) == name) merge(settings);
  }
  const IniFile credentials = ReadIni(credentials_path);
  if (const auto it = credentials.find(name); it != credentials.end()) merge(it->second);
  return profile;
}

std::optional<AwsCredentials> AwsEnvironmentCredentials() {
  const std::string id = Env("AWS_ACCESS_KEY_ID"), secret = Env("AWS_SECRET_ACCESS_KEY");
  if (id.empty() && secret.empty()) return std::nullopt;
  const char* set = id.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID";
  const char* unset = id.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY";
  LAKERUN_CHECK_AS(ConfigError, !id.empty() && !secret.empty(), set, " is set but ", unset,
                   " is not: set both, or neither to use a profile");
  return AwsCredentials{id, secret, Env("AWS_SESSION_TOKEN")};
}

// Profile keys that name credentials lakerun does not obtain itself (an STS call, a helper program, an SSO login).
constexpr const char* kUnsupportedCredentialKeys[] = {"role_arn", "credential_process", "sso_session", "sso_start_url",
                                                      "web_identity_token_file"};

std::optional<AwsCredentials> AwsProfileCredentials(const AwsProfile& profile, std::string* source) {
  const IniValue* id = profile.Find("aws_access_key_id");
  const IniValue* secret = profile.Find("aws_secret_access_key");
  if (id == nullptr && secret == nullptr) {
    // Better a clear refusal than anonymous requests that fail later with "Access Denied".
    for (const char* key : kUnsupportedCredentialKeys) {
      const IniValue* found = profile.Find(key);
      LAKERUN_CHECK_AS(NotImplemented, found == nullptr, "profile '", profile.name, "' in ", found->path,
                       " gets its credentials through ", key, ", which lakerun does not support; export them first "
                       "(`eval \"$(aws configure export-credentials --profile ", profile.name,
                       " --format env)\"` sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN)");
    }
    return std::nullopt;
  }
  const IniValue* present = id != nullptr ? id : secret;
  LAKERUN_CHECK_AS(ConfigError, id != nullptr && secret != nullptr, "profile '", profile.name, "' in ", present->path,
                   " has ", id != nullptr ? "aws_access_key_id" : "aws_secret_access_key", " but no ",
                   id != nullptr ? "aws_secret_access_key" : "aws_access_key_id");
  *source = StrCat("profile '", profile.name, "' in ", id->path);
  const IniValue* token = profile.Find("aws_session_token");
  return AwsCredentials{id->value, secret->value, token != nullptr ? token->value : std::string()};
}

// AWS_S3_FORCE_PATH_STYLE, else the profile's s3 addressing_style, else path style exactly when an endpoint is set
// (S3-compatible servers seldom have the wildcard DNS that virtual-hosted buckets need).
bool ForcePathStyle(const AwsProfile& profile, bool has_endpoint) {
  const std::string env = Lower(Env("AWS_S3_FORCE_PATH_STYLE"));
  if (!env.empty()) {
    if (env == "1" || env == "true" || env == "yes" || env == "on") return true;
    if (env == "0" || env == "false" || env == "no" || env == "off") return false;
    LAKERUN_THROW(ConfigError, "AWS_S3_FORCE_PATH_STYLE must be true or false, got '", Env("AWS_S3_FORCE_PATH_STYLE"),
                  "'");
  }
  if (const IniValue* style = profile.Find("s3.addressing_style")) {
    if (style->value == "path") return true;
    if (style->value == "virtual") return false;
    LAKERUN_CHECK_AS(ConfigError, style->value == "auto", "profile '", profile.name, "' in ", style->path,
                     ": s3 addressing_style must be path, virtual or auto, got '", style->value, "'");
  }
  return has_endpoint;
}

std::string FirstSet(std::initializer_list<std::string> values) {
  for (const std::string& value : values) {
    if (!value.empty()) return value;
  }
  return {};
}

std::string ProfileValue(const AwsProfile& profile, const std::string& key) {
  const IniValue* value = profile.Find(key);
  return value == nullptr ? std::string() : value->value;
}

std::string Lookup(const std::map<std::string, std::string>& settings, const std::string& key) {
  const auto it = settings.find(key);
  return it == settings.end() ? std::string() : it->second;
}

// Azurite's documented development account, which "UseDevelopmentStorage=true" stands for.
constexpr char kAzuriteAccount[] = "devstoreaccount1";
constexpr char kAzuriteKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
constexpr char kAzuriteBlobEndpoint[] = "http://127.0.0.1:10000/devstoreaccount1";

// "Name=value;Name=value;" with case-insensitive names (lower-cased here); values may hold '=' (base64 padding).
std::map<std::string, std::string> ParseConnectionString(std::string_view text) {
  std::map<std::string, std::string> settings;
  int index = 0;
  while (!text.empty()) {
    const size_t semicolon = text.find(';');
    const std::string_view segment = Trim(text.substr(0, semicolon));
    text = semicolon == std::string_view::npos ? std::string_view() : text.substr(semicolon + 1);
    ++index;
    if (segment.empty()) continue;
    const size_t eq = segment.find('=');
    LAKERUN_CHECK_AS(ConfigError, eq != std::string_view::npos && eq > 0, "AZURE_STORAGE_CONNECTION_STRING: part ",
                     index, " is not 'Name=value'");
    settings[Lower(Trim(segment.substr(0, eq)))] = std::string(Trim(segment.substr(eq + 1)));
  }
  if (Lower(Lookup(settings, "usedevelopmentstorage")) == "true") {
    settings.emplace("accountname", kAzuriteAccount);
    settings.emplace("accountkey", kAzuriteKey);
    settings.emplace("blobendpoint", kAzuriteBlobEndpoint);
  }
  return settings;
}

// The connection string's endpoint: BlobEndpoint, else one built from DefaultEndpointsProtocol and EndpointSuffix
// when either differs from Azure's public cloud, else "" (the default).
std::string ConnectionStringEndpoint(const std::map<std::string, std::string>& settings, const std::string& account) {
  const std::string blob_endpoint = Lookup(settings, "blobendpoint");
  if (!blob_endpoint.empty()) return blob_endpoint;
  const std::string protocol = Lower(Lookup(settings, "defaultendpointsprotocol"));
  const std::string suffix = Lookup(settings, "endpointsuffix");
  if ((protocol.empty() || protocol == "https") && (suffix.empty() || suffix == "core.windows.net")) return {};
  return StrCat(protocol.empty() ? "https" : protocol, "://", account, ".blob.",
                suffix.empty() ? "core.windows.net" : suffix);
}

}  // namespace

AwsSettings LoadAwsSettings() {
  const std::string named_profile = Env("AWS_PROFILE");
  const std::string home = Env("HOME");
  const std::string credentials_path =
      ExpandHome(FirstSet({Env("AWS_SHARED_CREDENTIALS_FILE"), home.empty() ? "" : home + "/.aws/credentials"}));
  const std::string config_path =
      ExpandHome(FirstSet({Env("AWS_CONFIG_FILE"), home.empty() ? "" : home + "/.aws/config"}));
  const AwsProfile profile =
      LoadAwsProfile(named_profile.empty() ? "default" : named_profile, credentials_path, config_path);
  LAKERUN_CHECK_AS(ConfigError, named_profile.empty() || profile.found, "AWS_PROFILE names profile '", named_profile,
                   "', which neither ", credentials_path.empty() ? "the credentials file" : credentials_path, " nor ",
                   config_path.empty() ? "the config file" : config_path, " holds");
  AwsSettings settings;
  settings.credentials = AwsEnvironmentCredentials();
  if (settings.credentials) {
    settings.credentials_source = "environment";
  } else {
    settings.credentials = AwsProfileCredentials(profile, &settings.credentials_source);
    if (!settings.credentials) settings.credentials_source = "anonymous";
  }
  settings.region = FirstSet({Env("AWS_REGION"), Env("AWS_DEFAULT_REGION"), ProfileValue(profile, "region"),
                              "us-east-1"});
  settings.endpoint_url = WithoutTrailingSlashes(
      FirstSet({Env("AWS_ENDPOINT_URL_S3"), Env("AWS_ENDPOINT_URL"), ProfileValue(profile, "endpoint_url")}));
  settings.force_path_style = ForcePathStyle(profile, !settings.endpoint_url.empty());
  return settings;
}

AzureSettings LoadAzureSettings(const std::string& account) {
  const std::string connection_string = Env("AZURE_STORAGE_CONNECTION_STRING");
  const std::map<std::string, std::string> connection = ParseConnectionString(connection_string);
  AzureSettings settings;
  settings.account = FirstSet({account, Env("AZURE_STORAGE_ACCOUNT"), Lookup(connection, "accountname")});
  settings.account_key_base64 = Env("AZURE_STORAGE_KEY");
  settings.sas_token = Env("AZURE_STORAGE_SAS_TOKEN");
  std::string key_source = "AZURE_STORAGE_KEY";
  LAKERUN_CHECK_AS(ConfigError, settings.account_key_base64.empty() || settings.sas_token.empty(),
                   "both AZURE_STORAGE_KEY and AZURE_STORAGE_SAS_TOKEN are set: set one of them");
  if (settings.account_key_base64.empty() && settings.sas_token.empty() && !connection_string.empty()) {
    const std::string named = Lookup(connection, "accountname");
    LAKERUN_CHECK_AS(ConfigError, named.empty() || named == settings.account,
                     "AZURE_STORAGE_CONNECTION_STRING is for storage account '", named, "', not '", settings.account,
                     "'");
    settings.account_key_base64 = Lookup(connection, "accountkey");
    settings.sas_token = Lookup(connection, "sharedaccesssignature");
    key_source = "AZURE_STORAGE_CONNECTION_STRING's AccountKey";
    LAKERUN_CHECK_AS(ConfigError, settings.account_key_base64.empty() || settings.sas_token.empty(),
                     "AZURE_STORAGE_CONNECTION_STRING holds both AccountKey and SharedAccessSignature: keep one");
  }
  if (!settings.sas_token.empty() && settings.sas_token[0] == '?') settings.sas_token.erase(0, 1);
  if (!settings.account_key_base64.empty()) Base64Decode(settings.account_key_base64, key_source);
  settings.blob_endpoint = WithoutTrailingSlashes(
      FirstSet({Env("AZURE_STORAGE_BLOB_ENDPOINT"), ConnectionStringEndpoint(connection, settings.account)}));
  LAKERUN_CHECK_AS(ConfigError, !settings.account.empty() || settings.account_key_base64.empty(),
                   "an Azure storage key is set (", key_source, ") but no account: set AZURE_STORAGE_ACCOUNT");
  LAKERUN_CHECK_AS(ConfigError, !settings.account.empty() || !settings.blob_endpoint.empty(),
                   "no Azure storage account: give it in the URI, or set AZURE_STORAGE_ACCOUNT, "
                   "AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_BLOB_ENDPOINT");
  return settings;
}

GcsSettings LoadGcsSettings() {
  GcsSettings settings;
  const char* id_name = "GCS_HMAC_ACCESS_ID";
  const char* secret_name = "GCS_HMAC_SECRET";
  if (Env(id_name).empty() && Env(secret_name).empty()) {
    id_name = "AWS_ACCESS_KEY_ID";
    secret_name = "AWS_SECRET_ACCESS_KEY";
  }
  const std::string id = Env(id_name), secret = Env(secret_name);
  if (!id.empty() || !secret.empty()) {
    LAKERUN_CHECK_AS(ConfigError, !id.empty() && !secret.empty(), id.empty() ? secret_name : id_name, " is set but ",
                     id.empty() ? id_name : secret_name, " is not: GCS HMAC keys need both");
    settings.hmac = AwsCredentials{id, secret, ""};
  }
  settings.oauth_token = FirstSet({Env("GOOGLE_OAUTH_ACCESS_TOKEN"), Env("CLOUDSDK_AUTH_ACCESS_TOKEN")});
  // STORAGE_EMULATOR_HOST is "host:port" for most emulators; Google's clients then use plain http.
  std::string emulator = Env("STORAGE_EMULATOR_HOST");
  if (!emulator.empty() && emulator.find("://") == std::string::npos) emulator = "http://" + emulator;
  settings.endpoint_url =
      WithoutTrailingSlashes(FirstSet({emulator, Env("GCS_ENDPOINT_URL"), "https://storage.googleapis.com"}));
  return settings;
}

}  // namespace lakerun::objstore
