#include "common/value.hpp"

#include <pmix_common.h>

namespace pmix {

std::string to_string(const proc_id& p) {
  if (p.rank == rank_wildcard) return p.nspace + ":*";
  if (p.rank == rank_undef) return p.nspace + ":undef";
  return p.nspace + ":" + std::to_string(p.rank);
}

value::kind value::kind_of(data_type t) {
  switch (t) {
    case PMIX_UNDEF:
      return kind::none;
    case PMIX_BOOL:
      return kind::boolean;
    case PMIX_INT: case PMIX_INT8: case PMIX_INT16: case PMIX_INT32: case PMIX_INT64:
    case PMIX_STATUS: case PMIX_TIME: case PMIX_PID:
      return kind::integer;
    case PMIX_BYTE: case PMIX_SIZE: case PMIX_UINT: case PMIX_UINT8: case PMIX_UINT16:
    case PMIX_UINT32: case PMIX_UINT64: case PMIX_PROC_RANK: case PMIX_PERSIST: case PMIX_SCOPE:
    case PMIX_DATA_RANGE: case PMIX_INFO_DIRECTIVES: case PMIX_DATA_TYPE: case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE: case PMIX_IOF_CHANNEL: case PMIX_JOB_STATE: case PMIX_LINK_STATE:
    case PMIX_DEVTYPE: case PMIX_LOCTYPE: case PMIX_POINTER: case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST: case PMIX_STOR_ACCESS_TYPE:
    case PMIX_RESBLOCK_DIRECTIVE: case PMIX_ALLOC_INHERIT:
      return kind::unsigned_;
    case PMIX_FLOAT: case PMIX_DOUBLE:
      return kind::real;
    case PMIX_STRING: case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: case PMIX_PROC_NSPACE:
      return kind::bytes;
    case PMIX_PROC:
      return kind::proc;
    case PMIX_TIMEVAL:
      return kind::timeval;
    case PMIX_ENVAR:
      return kind::envar;
    case PMIX_PROC_INFO:
      return kind::proc_info;
    case PMIX_DATA_ARRAY:
      return kind::array;
    case PMIX_INFO:
      return kind::info;
    default:
      return kind::unsupported;
  }
}

value value::boolean(bool b) { return value{PMIX_BOOL, b}; }
value value::string(std::string s) { return value{PMIX_STRING, std::move(s)}; }
value value::bytes(data_type t, std::string b) { return value{t, std::move(b)}; }
value value::integer(data_type t, std::int64_t i) { return value{t, i}; }
value value::unsigned_(data_type t, std::uint64_t u) { return value{t, u}; }
value value::real(data_type t, double d) { return value{t, d}; }
value value::proc(proc_id p) { return value{PMIX_PROC, std::move(p)}; }
value value::array(array_value a) {
  return value{PMIX_DATA_ARRAY, std::make_shared<const array_value>(std::move(a))};
}

std::optional<std::int64_t> value::as_int() const {
  if (auto* i = std::get_if<std::int64_t>(&data)) return *i;
  if (auto* u = std::get_if<std::uint64_t>(&data)) return static_cast<std::int64_t>(*u);
  if (auto* b = std::get_if<bool>(&data)) return *b ? 1 : 0;
  return std::nullopt;
}

std::optional<std::uint64_t> value::as_uint() const {
  if (auto* u = std::get_if<std::uint64_t>(&data)) return *u;
  if (auto* i = std::get_if<std::int64_t>(&data)) {
    if (*i < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*i);
  }
  if (auto* b = std::get_if<bool>(&data)) return *b ? 1u : 0u;
  return std::nullopt;
}

const std::string* value::as_string() const { return std::get_if<std::string>(&data); }

const proc_id* value::as_proc() const { return std::get_if<proc_id>(&data); }

const array_value* value::as_array() const {
  auto* a = std::get_if<std::shared_ptr<const array_value>>(&data);
  return a != nullptr ? a->get() : nullptr;
}

const info* value::as_info() const {
  auto* i = std::get_if<std::shared_ptr<const info>>(&data);
  return i != nullptr ? i->get() : nullptr;
}

bool value::truthy() const {
  if (type == PMIX_UNDEF) return true;
  if (auto* b = std::get_if<bool>(&data)) return *b;
  if (auto* s = std::get_if<std::string>(&data))
    return *s == "true" || *s == "TRUE" || *s == "True" || *s == "1" || *s == "yes";
  if (auto i = as_int()) return *i != 0;
  return false;
}

const info* find(const info_list& list, std::string_view key) {
  for (const auto& i : list)
    if (i.key == key) return &i;
  return nullptr;
}

}  // namespace pmix
