// lakerun::Error and its subclasses as Python exceptions (docs/python.md, "Errors"). Each C++ class becomes a
// Python class of the same name under lakerun.Error, carrying the C++ message unchanged; where a built-in Python
// exception means the same, the class derives from it too, so `except OSError` catches a lakerun.IoError:
//   Error (Exception) <- IoError (+OSError), CorruptDataError, InvalidArgument (+ValueError),
//   ConfigError (+ValueError), NotImplementedError (+NotImplementedError), InternalError,
//   DistError <- CommTimeout (+TimeoutError).
#include <Python.h>

#include "lakerun/base/error.h"
#include "python/bindings.h"

namespace lakerun::python {
namespace {

// Registers C++ exception type E as the Python class `name` with `bases`. pybind11 tries the most recently
// registered translator first, so a base class must be registered before its subclasses.
template <typename E>
py::handle Register(py::module_& m, const char* name, const py::tuple& bases, const char* doc) {
  py::exception<E>& type = py::register_exception<E>(m, name, bases);
  type.attr("__doc__") = doc;
  type.attr("__module__") = "lakerun";
  return type;
}

}  // namespace

void RegisterErrors(py::module_& m) {
  py::handle error = Register<Error>(m, "Error", py::make_tuple(py::handle(PyExc_Exception)),
                                     "Base of every exception lakerun raises; str(e) is the C++ message.");
  auto with = [&](PyObject* builtin) { return py::make_tuple(error, py::handle(builtin)); };
  Register<IoError>(m, "IoError", with(PyExc_OSError),
                    "A file or socket operation failed (a missing table: the message names the path).");
  Register<CorruptDataError>(m, "CorruptDataError", py::make_tuple(error),
                             "Bytes do not follow the format they claim (a damaged Parquet page, a bad Delta log).");
  Register<InvalidArgument>(m, "InvalidArgument", with(PyExc_ValueError),
                            "A call is wrong for what it is applied to (an unknown column, a state of another table).");
  Register<ConfigError>(m, "ConfigError", with(PyExc_ValueError),
                        "An option is invalid or inconsistent (batch_size=0, rank outside world_size).");
  Register<NotImplemented>(m, "NotImplementedError", with(PyExc_NotImplementedError),
                           "The input uses a feature lakerun does not implement (a codec, a Delta reader feature).");
  Register<InternalError>(m, "InternalError", py::make_tuple(error), "A lakerun invariant broke: a bug in lakerun.");
  py::handle dist = Register<DistError>(m, "DistError", py::make_tuple(error), "A distributed operation failed.");
  Register<CommTimeout>(m, "CommTimeout", py::make_tuple(dist, py::handle(PyExc_TimeoutError)),
                        "A distributed wait ran past its deadline.");
}

}  // namespace lakerun::python
