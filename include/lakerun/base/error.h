// lakerun's one error model.
//
// Every failure lakerun reports is an exception derived from lakerun::Error. Messages name what failed and where:
// the file, row group, column, byte offset, rank, key or flag at fault, the bad value and what was expected.
// Expected outcomes ("no checkpoint yet", "end of data") are return values (std::optional), never exceptions.
//
//   LAKERUN_CHECK(i < n, "sample ", i, " is out of range for a batch of ", n);  // throws InvalidArgument
//   LAKERUN_CHECK_AS(ConfigError, o.batch_size > 0, "LoaderOptions::batch_size must be positive, got ", o.batch_size);
//   LAKERUN_CHECK_AS(CorruptDataError, len <= left, path, ": page at offset ", off, " overruns the chunk");
//   LAKERUN_THROW(IoError, "cannot open ", path, ": ", std::strerror(errno));
//   LAKERUN_INTERNAL_ASSERT(queue_.empty());                                   // a lakerun bug, not user input
//
// ConfigError or InvalidArgument: one rule.
//   ConfigError      a setting is wrong in itself, or with the other settings, or on this machine or job: a field of
//                    an options struct (LoaderOptions::batch_size = 0), a command-line flag, an environment variable,
//                    a string parsed into an enum, a combination (rank 3 of world_size 2), or a request the machine
//                    cannot honour (accelerator cuda without CUDA). The message names the option, flag or variable.
//                    Thrown where the settings are read: the constructor that takes them, the flag parser.
//   InvalidArgument  a call is wrong for what it is applied to: an argument out of range (an index, a state to
//                    restore), a name the data does not have (a column a batch lacks, even one named in options),
//                    or input data that breaks the call's documented contract (a null where no null policy is set).
// Both are the caller's to fix and never worth retrying; a lakerun bug is an InternalError, broken bytes a
// CorruptDataError.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace lakerun {

/// Base of every exception lakerun throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A file or socket operation failed (open, read, write, rename, connect).
class IoError : public Error { using Error::Error; };
/// Bytes on disk or on the wire do not follow the format they claim (truncated file, bad magic, corrupt Thrift...).
class CorruptDataError : public Error { using Error::Error; };
/// A call was made with an argument outside its documented range (see the rule above).
class InvalidArgument : public Error { using Error::Error; };
/// A setting (an options field, a flag, an environment variable) is invalid, inconsistent or cannot be honoured here
/// (see the rule above).
class ConfigError : public Error { using Error::Error; };
/// A distributed operation failed: a peer died, a collective failed, the rendezvous broke.
class DistError : public Error { using Error::Error; };
/// A distributed wait ran past its deadline (a peer never arrived, a key never appeared).
class CommTimeout : public DistError { using DistError::DistError; };
/// The input uses a feature lakerun does not implement (an unknown codec, a Delta reader feature...).
class NotImplemented : public Error { using Error::Error; };
/// The process cannot get the memory an operation needs: an allocation sized from the data (a column chunk, a
/// decompressed page) was refused (std::bad_alloc) under the process's memory limit (RLIMIT_AS, `ulimit -v`) or the
/// machine's free memory. The message names what was being read, where, and how many bytes were asked for; reading
/// less at a time (fewer columns, smaller units) may succeed.
class ResourceError : public Error { using Error::Error; };
/// A lakerun invariant does not hold: a bug in lakerun, never the user's fault.
class InternalError : public Error { using Error::Error; };

namespace detail {
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}
}  // namespace detail

/// Concatenates anything streamable into one string: StrCat("row group ", 3, " of ", path).
template <typename... Args>
std::string StrCat(Args&&... args) {
  return detail::StrCat(std::forward<Args>(args)...);
}

/// Throws the ResourceError of an allocation sized from the data that was refused (catch std::bad_alloc where such a
/// buffer is sized, not everywhere): "<where>: cannot allocate <bytes> bytes for <what> (the process's memory limit
/// or free memory is too small; read fewer columns, or with unit_bytes slices)". `where` names the file, row group
/// and column.
[[noreturn]] inline void ThrowAllocationFailure(const std::string& where, unsigned long long bytes,
                                                const std::string& what) {
  throw ResourceError(StrCat(where, ": cannot allocate ", bytes, " bytes for ", what,
                             " (the process's memory limit or free memory is too small; read fewer columns, or with "
                             "unit_bytes slices)"));
}

}  // namespace lakerun

#define LAKERUN_THROW(ErrorType, ...) throw ::lakerun::ErrorType(::lakerun::StrCat(__VA_ARGS__))

#define LAKERUN_CHECK_AS(ErrorType, cond, ...)    \
  do {                                            \
    if (!(cond)) LAKERUN_THROW(ErrorType, __VA_ARGS__); \
  } while (false)

#define LAKERUN_CHECK(cond, ...) LAKERUN_CHECK_AS(InvalidArgument, cond, __VA_ARGS__)

#define LAKERUN_INTERNAL_ASSERT(cond, ...)                                                        \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      LAKERUN_THROW(InternalError, "internal error at ", __FILE__, ":", __LINE__, ": ", #cond, " " \
                    __VA_OPT__(, ) __VA_ARGS__);                                                  \
  } while (false)
