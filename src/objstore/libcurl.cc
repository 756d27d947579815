#include "objstore/libcurl.h"

#include <dlfcn.h>

#include <string>

#include "lakerun/base/error.h"

namespace lakerun::objstore {
namespace {

// libcurl's SONAME since 2006; the unversioned name (a development symlink) is the fallback.
constexpr const char* kLibraryNames[] = {"libcurl.so.4", "libcurl.so"};

template <typename Fn>
void Resolve(void* handle, const char* library, const char* symbol, Fn* out) {
  dlerror();
  void* address = dlsym(handle, symbol);
  const char* error = dlerror();
  LAKERUN_CHECK_AS(IoError, error == nullptr && address != nullptr, "remote storage and REST tracking: ", library,
                   " has no ", symbol, error != nullptr ? StrCat(" (", error, ")") : std::string());
  *out = reinterpret_cast<Fn>(address);
}

Libcurl Load() {
  void* handle = nullptr;
  const char* library = nullptr;
  std::string errors;
  for (const char* name : kLibraryNames) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      library = name;
      break;
    }
    const char* error = dlerror();
    errors += StrCat(errors.empty() ? "" : "; ", error != nullptr ? error : name);
  }
  LAKERUN_CHECK_AS(IoError, handle != nullptr,
                   "object-store paths (s3://, gs://, az://) and MLflow REST tracking need libcurl, which could not be "
                   "loaded (", errors, "); install it (Debian: apt-get install libcurl4)");
  Libcurl curl;
  CURLcode (*global_init)(long) = nullptr;
  Resolve(handle, library, "curl_global_init", &global_init);
  Resolve(handle, library, "curl_easy_init", &curl.easy_init);
  Resolve(handle, library, "curl_easy_cleanup", &curl.easy_cleanup);
  Resolve(handle, library, "curl_easy_reset", &curl.easy_reset);
  Resolve(handle, library, "curl_easy_setopt", &curl.easy_setopt);
  Resolve(handle, library, "curl_easy_perform", &curl.easy_perform);
  Resolve(handle, library, "curl_easy_getinfo", &curl.easy_getinfo);
  Resolve(handle, library, "curl_easy_strerror", &curl.easy_strerror);
  Resolve(handle, library, "curl_escape", &curl.escape);
  Resolve(handle, library, "curl_free", &curl.free);
  Resolve(handle, library, "curl_slist_append", &curl.slist_append);
  Resolve(handle, library, "curl_slist_free_all", &curl.slist_free_all);
  const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT);
  LAKERUN_CHECK_AS(IoError, rc == CURLE_OK, "libcurl: curl_global_init failed (",
                   curl.easy_strerror(rc), ")");
  return curl;  // the library stays loaded for the life of the process
}

}  // namespace

const Libcurl& LoadLibcurl() {
  // A static's initialisation runs once and is thread-safe; when it throws, the next call runs it again.
  static const Libcurl loaded = Load();
  return loaded;
}

}  // namespace lakerun::objstore
