// libcurl, loaded when an object store or the MLflow REST store first needs it instead of linked (private to
// lakerun::objstore, used by lakerun::track).
//
// Linking libcurl makes every program that links lakerun::track, the `lakerun` command and its launcher included,
// load about 27 more shared libraries (TLS, Kerberos, LDAP, SSH, ...) before main(): about 6 ms of a 7.4 ms
// `lakerun --help` on the 2-core machine, for a library that only remote storage and tracking call. The headers are used as
// usual; the functions come from dlopen("libcurl.so.4") through this table.
#pragma once

#include <curl/curl.h>

namespace lakerun::objstore {

struct Libcurl {
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  char* (*escape)(const char*, int);
  void (*free)(void*);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

/// The process's libcurl: loaded, its functions resolved and curl_global_init() called, once (thread-safe). Throws
/// IoError naming the library and the dynamic loader's message when it cannot be loaded or lacks a function; the
/// next call tries again.
const Libcurl& LoadLibcurl();

}  // namespace lakerun::objstore
