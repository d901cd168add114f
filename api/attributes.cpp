// PMIx_Get_attribute_string / PMIx_Get_attribute_name over the generated
// dictionary (docs/local-functions.md, "Attributes").
#include "api/attributes.hpp"

#include <pmix.h>

#include <string_view>
#include <unordered_map>

#include "common/log.hpp"

namespace pmix::api {
namespace {

// The strings are in the entries, not pointed to: a table of pointers is
// relocated by the loader in every process that links the library (1,076
// relocations, four pages written and so copied, each a write fault and a
// TLB flush on this project's VM: issue 40), where this one is read-only
// data, read only by a process that asks for an attribute's name. Too short
// an array for a new attribute is a compile error.
struct attribute {
  char name[48];
  char key[40];
  pmix_data_type_t type;  // what the header's comment says the value holds
};

constexpr attribute kAttributes[] = {
#include "api/attributes_table.inc"
};

struct dictionary {
  std::unordered_map<std::string_view, const attribute*> by_name;
  std::unordered_map<std::string_view, const char*> by_key;

  dictionary() {
    by_name.reserve(std::size(kAttributes));
    by_key.reserve(std::size(kAttributes));
    for (const auto& a : kAttributes) {
      by_name.emplace(a.name, &a);
      by_key.emplace(a.key, a.name);  // the first definition of a key wins
    }
  }
};

const dictionary& the_dictionary() {
  static const dictionary d;
  return d;
}

}  // namespace

const char* attribute_name(std::string_view key) {
  const auto& m = the_dictionary().by_key;
  const auto it = m.find(key);
  return it == m.end() ? nullptr : it->second;
}

const char* attribute_key(std::string_view name) {
  const auto& m = the_dictionary().by_name;
  const auto it = m.find(name);
  return it == m.end() ? nullptr : it->second->key;
}

pmix_data_type_t attribute_type(std::string_view name) {
  const auto& m = the_dictionary().by_name;
  const auto it = m.find(name);
  return it == m.end() ? PMIX_UNDEF : it->second->type;
}

}  // namespace pmix::api

extern "C" {

// Unknown names and keys are answered with the argument itself, as OpenPMIx
// 4.2.2 does; NULL (where OpenPMIx crashes) with NULL.
PMIX_EXPORT const char* PMIx_Get_attribute_string(const char* attribute) {
  if (attribute == nullptr) {
    pmix::log::error("api", "PMIx_Get_attribute_string: NULL attribute name");
    return nullptr;
  }
  const char* key = pmix::api::attribute_key(attribute);
  return key != nullptr ? key : attribute;
}

PMIX_EXPORT const char* PMIx_Get_attribute_name(const char* attrstring) {
  if (attrstring == nullptr) {
    pmix::log::error("api", "PMIx_Get_attribute_name: NULL attribute string");
    return nullptr;
  }
  const char* name = pmix::api::attribute_name(attrstring);
  return name != nullptr ? name : attrstring;
}

}  // extern "C"
