// lakerun.Loader's per-column options (images=, nulls=) as the C++ loader's ImageOptions and NullPolicy: a dict of
// settings per column, each key one field. An unknown key or a value of the wrong type is a lakerun.InvalidArgument
// naming the column and the key, and listing the keys there are.
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "python/bindings.h"

namespace lakerun::python {
namespace {

template <typename Options>
using Setter = std::function<void(Options&, const py::handle&)>;

// Applies `settings` to `out` through `setters`, by key.
template <typename Options>
void Apply(const std::string& what, const std::string& column, const py::dict& settings,
           const std::map<std::string, Setter<Options>>& setters, Options* out) {
  for (const auto& [key_object, value] : settings) {
    const std::string key = py::str(key_object);
    const auto it = setters.find(key);
    if (it == setters.end()) {
      std::string known;
      for (const auto& [name, setter] : setters) known += (known.empty() ? "" : ", ") + name;
      LAKERUN_THROW(InvalidArgument, what, "['", column, "']: unknown setting '", key, "' (settings: ", known, ")");
    }
    try {
      it->second(*out, value);
    } catch (const py::cast_error&) {
      LAKERUN_THROW(InvalidArgument, what, "['", column, "']['", key, "']: ", std::string(py::repr(value)),
                    " is not of the setting's type");
    }
  }
}

// crop: an int (a square) or a pair (height, width).
void SetCrop(data::ImageOptions& o, const py::handle& v) {
  if (py::isinstance<py::int_>(v)) {
    o.crop_height = o.crop_width = v.cast<int>();
    return;
  }
  const auto hw = v.cast<std::pair<int, int>>();
  o.crop_height = hw.first;
  o.crop_width = hw.second;
}

}  // namespace

data::ImageOptions ImageOptionsFrom(const std::string& column, const py::dict& settings) {
  static const std::map<std::string, Setter<data::ImageOptions>> kSetters = {
      {"channels", [](auto& o, const py::handle& v) { o.channels = v.cast<int>(); }},
      {"resize", [](auto& o, const py::handle& v) { o.resize = v.cast<int>(); }},
      {"crop", SetCrop},
      {"random_crop", [](auto& o, const py::handle& v) { o.random_crop = v.cast<bool>(); }},
      {"flip_probability", [](auto& o, const py::handle& v) { o.flip_probability = v.cast<float>(); }},
      {"to_float", [](auto& o, const py::handle& v) { o.to_float = v.cast<bool>(); }},
      {"mean", [](auto& o, const py::handle& v) { o.mean = v.cast<std::vector<float>>(); }},
      {"std", [](auto& o, const py::handle& v) { o.std = v.cast<std::vector<float>>(); }},
      {"max_pixels", [](auto& o, const py::handle& v) { o.max_pixels = v.cast<int64_t>(); }},
  };
  data::ImageOptions out;
  Apply("images", column, settings, kSetters, &out);
  return out;
}

data::NullPolicy NullPolicyFrom(const std::string& column, const py::dict& settings) {
  static const std::map<std::string, Setter<data::NullPolicy>> kSetters = {
      {"fill_value", [](auto& o, const py::handle& v) { o.fill_value = v.cast<double>(); }},
      {"emit_mask", [](auto& o, const py::handle& v) { o.emit_mask = v.cast<bool>(); }},
  };
  data::NullPolicy out;
  Apply("nulls", column, settings, kSetters, &out);
  return out;
}

}  // namespace lakerun::python
