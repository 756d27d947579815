// A scanner for the small XML documents object stores answer with: S3's ListBucketResult and Error, Azure's
// EnumerationResults and Error (private to lakerun::objstore). Not a validating parser: elements are found by name,
// which is all these flat, well-known documents need.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lakerun::objstore {

/// The raw inner text of each element named `name` anywhere in `xml`, in document order; an empty element
/// (<Name/>) gives "". Elements are not expected to nest inside an element of the same name.
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view name);
/// The decoded text of the first element `name` in `xml`; "" when there is none.
std::string XmlText(std::string_view xml, std::string_view name);
/// Decodes the five predefined entities, decimal and hex character references (as UTF-8) and CDATA sections.
std::string XmlDecode(std::string_view text);

}  // namespace lakerun::objstore
