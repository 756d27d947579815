// Object stores built from a URI and the environment (private to lakerun::objstore).
#pragma once

#include <memory>

#include "objstore/http.h"
#include "objstore/object_store.h"
#include "objstore/uri.h"

namespace lakerun::objstore {

/// The retry policy of object-store requests: quick first retries (a loaded store answers 503 SlowDown), every call
/// bounded by LAKERUN_OBJSTORE_TIMEOUT seconds (default 60), at most AWS_MAX_ATTEMPTS attempts (default 8).
RetryPolicy ObjectStoreRetryPolicy();

/// The store of `uri`'s bucket or container, its endpoint and credentials read from the environment now.
std::unique_ptr<ObjectStore> MakeStore(const ObjectUri& uri);

}  // namespace lakerun::objstore
