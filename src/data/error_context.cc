#include "error_context.h"

#include <exception>

#include "lakerun/base/error.h"

namespace lakerun::data {

void RethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (const CommTimeout& e) {
    throw CommTimeout(context + e.what());
  } catch (const DistError& e) {
    throw DistError(context + e.what());
  } catch (const IoError& e) {
    throw IoError(context + e.what());
  } catch (const CorruptDataError& e) {
    throw CorruptDataError(context + e.what());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(context + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(context + e.what());
  } catch (const NotImplemented& e) {
    throw NotImplemented(context + e.what());
  } catch (const InternalError& e) {
    throw InternalError(context + e.what());
  } catch (const std::exception& e) {
    throw Error(context + e.what());
  }
}

std::exception_ptr CurrentWithContext(const std::string& context) {
  try {
    RethrowWithContext(context);
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace lakerun::data
