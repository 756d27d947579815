// The `_lakerun` extension module: the C++ half of the `lakerun` Python package (python/lakerun/__init__.py).
#include <pybind11/pybind11.h>

#include "lakerun/version.h"
#include "python/bindings.h"

PYBIND11_MODULE(_lakerun, m) {
  m.doc() = "lakerun's C++ core for the `lakerun` package: import lakerun, not this module.";
  m.attr("__version__") = LAKERUN_VERSION_STRING;
  lakerun::python::RegisterErrors(m);
  lakerun::python::RegisterTable(m);
  lakerun::python::RegisterLoader(m);
  lakerun::python::RegisterImport(m);
  lakerun::python::RegisterLaunch(m);
}
