// The library's C++ form of PMIx data: what the C facade copies pmix_value_t /
// pmix_info_t / pmix_proc_t into (api/convert.hpp), what actors keep and pass
// in messages, and what the codec puts on the wire (protocol/codec.hpp).
//
// A value keeps its exact pmix_data_type_t in `type`; the payload lives in the
// alternative fixed for that type by value::kind_of(). Values are cheap to copy:
// nested arrays are shared and immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pmix {

using data_type = std::uint16_t;  // pmix_data_type_t
using rank_t = std::uint32_t;     // pmix_rank_t

inline constexpr rank_t rank_undef = 0xffffffffu;     // PMIX_RANK_UNDEF
inline constexpr rank_t rank_wildcard = 0xfffffffeu;  // PMIX_RANK_WILDCARD
inline constexpr rank_t rank_valid_limit = 0xffffffffu - 50;  // PMIX_RANK_VALID

struct proc_id {
  std::string nspace;
  rank_t rank = rank_undef;

  friend bool operator==(const proc_id& a, const proc_id& b) {
    return a.rank == b.rank && a.nspace == b.nspace;
  }
  friend bool operator!=(const proc_id& a, const proc_id& b) { return !(a == b); }
  friend bool operator<(const proc_id& a, const proc_id& b) {
    return a.nspace != b.nspace ? a.nspace < b.nspace : a.rank < b.rank;
  }
};

// "nspace:rank" (or "nspace:*" for the wildcard), for logs and errors.
std::string to_string(const proc_id& p);

struct timeval_value {
  std::int64_t sec = 0;
  std::int64_t usec = 0;
};

struct envar_value {
  std::string name;
  std::string value;
  char separator = 0;
};

struct proc_info_value {
  proc_id proc;
  std::string hostname;
  std::string executable;
  std::int32_t pid = 0;
  std::int32_t exit_code = 0;
  std::uint8_t state = 0;
};

struct value;
struct info;

// A PMIX_DATA_ARRAY: every element has the array's element type.
struct array_value {
  data_type type = 0;
  std::vector<value> elements;
};

struct value {
  enum class kind {
    none,         // PMIX_UNDEF
    boolean,      // PMIX_BOOL
    integer,      // signed integer types, PMIX_STATUS, PMIX_TIME, PMIX_PID
    unsigned_,    // unsigned integer types, ranks, enums, PMIX_POINTER
    real,         // PMIX_FLOAT, PMIX_DOUBLE
    bytes,        // strings, byte objects, regexes, nspace names
    proc,         // PMIX_PROC
    timeval,      // PMIX_TIMEVAL
    envar,        // PMIX_ENVAR
    proc_info,    // PMIX_PROC_INFO
    array,        // PMIX_DATA_ARRAY
    info,         // PMIX_INFO (an element of an info array)
    unsupported,  // a type we cannot copy (e.g. PMIX_TOPO, PMIX_QUERY)
  };
  // The rare large payloads (PMIX_ENVAR, PMIX_PROC_INFO) are boxed, so a
  // value stays small (56 bytes instead of 136): a 10,000-rank registration
  // holds some 60,000 of them.
  using payload = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string,
                               proc_id, timeval_value, std::shared_ptr<const envar_value>,
                               std::shared_ptr<const proc_info_value>,
                               std::shared_ptr<const array_value>, std::shared_ptr<const info>>;

  data_type type = 0;
  payload data;

  static kind kind_of(data_type t);

  static value boolean(bool b);
  static value string(std::string s);
  static value bytes(data_type t, std::string b);  // PMIX_BYTE_OBJECT, PMIX_REGEX, ...
  static value integer(data_type t, std::int64_t i);
  static value unsigned_(data_type t, std::uint64_t u);
  static value real(data_type t, double d);
  static value proc(proc_id p);
  static value array(array_value a);

  bool is_set() const { return type != 0; }
  // The integer held by an integer or unsigned type (bool gives 0/1).
  std::optional<std::int64_t> as_int() const;
  std::optional<std::uint64_t> as_uint() const;
  // The text/bytes held by a string-like type.
  const std::string* as_string() const;
  const proc_id* as_proc() const;
  const array_value* as_array() const;
  const struct info* as_info() const;  // an element of an info array
  // PMIX_INFO_TRUE semantics: an unset value or a bool true is true; a
  // string "true"/"1" and a non-zero integer are accepted too.
  bool truthy() const;
};

struct info {
  std::string key;
  value val;
  std::uint32_t flags = 0;  // pmix_info_directives_t
};

using info_list = std::vector<info>;

// A key the Standard reserves: they all start "pmix.". A user key that
// merely begins with "pmix" (one made from a namespace such as
// "pmixrun.123-...") is the application's own.
inline bool reserved_key(std::string_view key) { return key.substr(0, 5) == "pmix."; }

// The first entry with `key`, or nullptr.
const info* find(const info_list& list, std::string_view key);

// One pmix_query_t of PMIx_Query_info: the keys asked for, with qualifiers.
struct query {
  std::vector<std::string> keys;
  info_list qualifiers;
};

// One pmix_pdata_t: a published key, its value and who published it.
struct pdata {
  proc_id proc;
  std::string key;
  value val;
};

// One pmix_app_t of PMIx_Spawn.
struct app {
  std::string cmd;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value" entries
  std::string cwd;
  int maxprocs = 0;
  info_list info;
};

}  // namespace pmix
