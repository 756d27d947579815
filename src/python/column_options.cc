// lakerun.Loader's per-column options (images=, nulls=, lists=, forms=) as the C++ loader's ImageOptions,
// NullPolicy, ListPolicy and the table's ColumnForm: a dict of settings per column, each key one field. An unknown
// key or a value of the wrong type is a lakerun.InvalidArgument naming the column and the key, and listing the keys
// there are.
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

// One of `names` (a closed set of strings) as its value; another string or type is a py::cast_error (reported by
// Apply as the setting's wrong type) or an InvalidArgument naming the choices.
template <typename T>
T Choice(const char* what, const std::string& column, const char* key, const py::handle& v,
         const std::map<std::string, T>& names) {
  const std::string name = v.cast<std::string>();
  const auto it = names.find(name);
  if (it != names.end()) return it->second;
  std::string known;
  for (const auto& [n, value] : names) known += (known.empty() ? "'" : ", '") + n + "'";
  LAKERUN_THROW(InvalidArgument, what, "['", column, "']['", key, "']: '", name, "' is not one of ", known);
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

ColumnChoices ColumnChoicesFrom(std::optional<std::vector<std::string>> columns, std::optional<std::string> filter,
                                const std::optional<std::map<std::string, py::object>>& nulls,
                                const std::optional<std::map<std::string, py::dict>>& lists,
                                const std::optional<std::map<std::string, py::dict>>& forms) {
  ColumnChoices out;
  out.projection.columns = std::move(columns);
  out.projection.filter = std::move(filter);
  for (const auto& [column, settings] : forms.value_or(std::map<std::string, py::dict>{})) {
    out.projection.forms[column] = ColumnFormFrom(column, settings);
  }
  for (const auto& [column, settings] : lists.value_or(std::map<std::string, py::dict>{})) {
    out.lists[column] = ListPolicyFrom(column, settings);
  }
  for (const auto& [column, policy] : nulls.value_or(std::map<std::string, py::object>{})) {
    if (py::isinstance<py::str>(policy)) {
      const std::string name = policy.cast<std::string>();
      LAKERUN_CHECK(name == "drop_row", "nulls['", column, "']: '", name,
                    "' is not a policy: give 'drop_row' or a dict of settings (fill_value, emit_mask)");
      out.projection.drop_null_rows.push_back(column);
    } else if (py::isinstance<py::dict>(policy)) {
      out.nulls[column] = NullPolicyFrom(column, policy.cast<py::dict>());
    } else {
      LAKERUN_THROW(InvalidArgument, "nulls['", column, "']: ", std::string(py::repr(policy)),
                    " is not a policy: give 'drop_row' or a dict of settings (fill_value, emit_mask)");
    }
  }
  return out;
}

data::ListPolicy ListPolicyFrom(const std::string& column, const py::dict& settings) {
  const std::map<std::string, Setter<data::ListPolicy>> setters = {
      {"layout",
       [&](auto& o, const py::handle& v) {
         o.layout = Choice<data::ListLayout>(
             "lists", column, "layout", v, {{"padded", data::ListLayout::kPadded}, {"flat", data::ListLayout::kFlat}});
       }},
      {"pad_to", [](auto& o, const py::handle& v) { o.pad_to = v.cast<int64_t>(); }},
      {"truncate", [](auto& o, const py::handle& v) { o.truncate = v.cast<bool>(); }},
      {"pad_value", [](auto& o, const py::handle& v) { o.pad_value = v.cast<double>(); }},
  };
  data::ListPolicy out;
  Apply("lists", column, settings, setters, &out);
  return out;
}

data::ColumnForm ColumnFormFrom(const std::string& column, const py::dict& settings) {
  const std::map<std::string, Setter<data::ColumnForm>> setters = {
      {"decimal",
       [&](auto& o, const py::handle& v) {
         o.decimal = Choice<data::DecimalForm>(
             "forms", column, "decimal", v,
             {{"float64", data::DecimalForm::kFloat64}, {"unscaled_int64", data::DecimalForm::kUnscaledInt64}});
       }},
      {"timestamp",
       [&](auto& o, const py::handle& v) {
         o.timestamp = Choice<data::TimestampUnit>("forms", column, "timestamp", v,
                                                   {{"us", data::TimestampUnit::kMicros},
                                                    {"ns", data::TimestampUnit::kNanos}});
       }},
  };
  data::ColumnForm out;
  Apply("forms", column, settings, setters, &out);
  return out;
}

}  // namespace lakerun::python
