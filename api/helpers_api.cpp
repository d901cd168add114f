// The helpers OpenPMIx 4.2.3 and later export in place of its macros (issue
// 37): argv arrays, keys, namespaces and process ids, the directive flags of
// an info, the environment. A program built against a newer OpenPMIx header
// calls these where one built against 4.2.2's expanded the macro inline.
// Each does what OpenPMIx's man page for it says (docs/man/man3 at its
// master); all are computed here, none talks to a server.
#include <pmix.h>
#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

// A copy of `s` (with malloc, for the caller to free); null if out of memory.
char* copy(const char* s) { return ::strdup(s); }

// Grows `*argv` by one slot at `where` (0 or the end) holding a copy of `arg`.
pmix_status_t insert(char*** argv, const char* arg, bool front) {
  if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
  const int n = PMIx_Argv_count(*argv);
  char* item = copy(arg);
  if (item == nullptr) return PMIX_ERR_OUT_OF_RESOURCE;
  auto** grown = static_cast<char**>(std::realloc(*argv, sizeof(char*) * (static_cast<std::size_t>(n) + 2)));
  if (grown == nullptr) {
    std::free(item);
    return PMIX_ERR_OUT_OF_RESOURCE;
  }
  if (front) {
    std::memmove(grown + 1, grown, sizeof(char*) * static_cast<std::size_t>(n));
    grown[0] = item;
  } else {
    grown[n] = item;
  }
  grown[n + 1] = nullptr;
  *argv = grown;
  return PMIX_SUCCESS;
}

bool starts_with_word(const char* text, const char* word) {
  return ::strncasecmp(text, word, std::strlen(word)) == 0;
}

// PMIx_Info_true's and PMIx_Value_true's reading of a value: that of 4.2.2's
// PMIX_INFO_TRUE (pmix_check_true, pmix_common.h), and for a string it
// leaves non-boolean the words and signed numbers OpenPMIx's later man page
// adds (enable, y, t; disable, n, f; "-1").
pmix_boolean_t truth_of(const pmix_value_t& v) {
  const pmix_boolean_t inline_reading = pmix_check_true(&v);
  if (inline_reading != PMIX_NON_BOOL || v.type != PMIX_STRING || v.data.string == nullptr) return inline_reading;
  const char* s = v.data.string;
  while (std::isspace(static_cast<unsigned char>(*s))) ++s;
  if (*s == '-' || *s == '+') {
    char* end = nullptr;
    const long n = std::strtol(s, &end, 10);
    if (end != s) return n == 0 ? PMIX_BOOL_FALSE : PMIX_BOOL_TRUE;
  }
  for (const char* word : {"enable", "y", "t"})
    if (starts_with_word(s, word)) return PMIX_BOOL_TRUE;
  for (const char* word : {"disable", "n", "f"})
    if (starts_with_word(s, word)) return PMIX_BOOL_FALSE;
  return PMIX_NON_BOOL;
}

std::string rank_text(pmix_rank_t r) {
  switch (r) {
    case PMIX_RANK_UNDEF: return "UNDEF";
    case PMIX_RANK_WILDCARD: return "WILDCARD";
    case PMIX_RANK_LOCAL_NODE: return "LOCAL_NODE";
    case PMIX_RANK_LOCAL_PEERS: return "LOCAL_PEERS";
    case PMIX_RANK_INVALID: return "INVALID";
    default: return std::to_string(r);
  }
}

}  // namespace

extern "C" {

// ---- argv arrays ----------------------------------------------------------

PMIX_EXPORT int PMIx_Argv_count(char** a) {
  int n = 0;
  while (a != nullptr && a[n] != nullptr) ++n;
  return n;
}

PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char*** argv, const char* arg) { return insert(argv, arg, false); }

PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char*** argv, const char* arg) { return insert(argv, arg, true); }

PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char*** argv, const char* arg) {
  if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
  for (int k = 0; *argv != nullptr && (*argv)[k] != nullptr; ++k)
    if (std::strcmp((*argv)[k], arg) == 0) return PMIX_SUCCESS;
  return insert(argv, arg, false);
}

PMIX_EXPORT void PMIx_Argv_free(char** argv) {
  if (argv == nullptr) return;
  for (char** p = argv; *p != nullptr; ++p) std::free(*p);
  std::free(argv);
}

PMIX_EXPORT char** PMIx_Argv_split_inter(const char* src_string, int delimiter, bool include_empty) {
  char** out = nullptr;
  if (src_string == nullptr) return nullptr;
  const char delim = static_cast<char>(delimiter);
  for (const char* p = src_string; *p != '\0';) {
    if (*p == delim) {
      // A leading delimiter, or one right after another, is an empty token.
      if (include_empty && (p == src_string || p[-1] == delim) && insert(&out, "", false) != PMIX_SUCCESS) {
        PMIx_Argv_free(out);
        return nullptr;
      }
      ++p;
      continue;
    }
    const char* end = std::strchr(p, delim);
    const std::string token = end == nullptr ? std::string{p} : std::string{p, end};
    if (insert(&out, token.c_str(), false) != PMIX_SUCCESS) {
      PMIx_Argv_free(out);
      return nullptr;
    }
    p += token.size();
  }
  return out;
}

PMIX_EXPORT char** PMIx_Argv_split(const char* src_string, int delimiter) {
  return PMIx_Argv_split_inter(src_string, delimiter, false);
}

PMIX_EXPORT char** PMIx_Argv_split_with_empty(const char* src_string, int delimiter) {
  return PMIx_Argv_split_inter(src_string, delimiter, true);
}

PMIX_EXPORT char* PMIx_Argv_join(char** argv, int delimiter) {
  std::string joined;
  for (int k = 0; argv != nullptr && argv[k] != nullptr; ++k) {
    if (k > 0) joined += static_cast<char>(delimiter);
    joined += argv[k];
  }
  return copy(joined.c_str());
}

PMIX_EXPORT char** PMIx_Argv_copy(char** argv) {
  if (argv == nullptr) return nullptr;
  char** out = nullptr;
  for (int k = 0; argv[k] != nullptr; ++k)
    if (insert(&out, argv[k], false) != PMIX_SUCCESS) {
      PMIx_Argv_free(out);
      return nullptr;
    }
  if (out == nullptr) out = static_cast<char**>(std::calloc(1, sizeof(char*)));  // an empty array stays one
  return out;
}

PMIX_EXPORT pmix_status_t PMIx_Setenv(const char* name, const char* value, bool overwrite, char*** env) {
  if (env == nullptr || name == nullptr) return PMIX_ERR_BAD_PARAM;
  if (*env == environ) {
    // The process's own environment: the C library's.
    const int rc = value == nullptr ? ::unsetenv(name) : ::setenv(name, value, overwrite ? 1 : 0);
    return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
  }
  const std::string entry = std::string{name} + "=" + (value != nullptr ? value : "");
  const std::size_t prefix = std::strlen(name) + 1;
  for (int k = 0; *env != nullptr && (*env)[k] != nullptr; ++k) {
    if (std::strncmp((*env)[k], entry.c_str(), prefix) != 0) continue;
    if (!overwrite) return PMIX_ERR_EXISTS;
    char* replaced = copy(entry.c_str());
    if (replaced == nullptr) return PMIX_ERR_OUT_OF_RESOURCE;
    std::free((*env)[k]);
    (*env)[k] = replaced;
    return PMIX_SUCCESS;
  }
  return insert(env, entry.c_str(), false);
}

// ---- keys, namespaces, process ids ------------------------------------------

PMIX_EXPORT void PMIx_Load_key(pmix_key_t key, const char* src) {
  std::memset(key, 0, PMIX_MAX_KEYLEN + 1);
  if (src != nullptr) std::strncpy(key, src, PMIX_MAX_KEYLEN);
}

PMIX_EXPORT bool PMIx_Check_key(const char* key, const char* str) {
  return std::strncmp(key, str, PMIX_MAX_KEYLEN) == 0;
}

PMIX_EXPORT bool PMIx_Check_reserved_key(const char* key) { return std::strncmp(key, "pmix", 4) == 0; }

PMIX_EXPORT void PMIx_Load_nspace(pmix_nspace_t nspace, const char* str) {
  std::memset(nspace, 0, PMIX_MAX_NSLEN + 1);
  if (str != nullptr) std::strncpy(nspace, str, PMIX_MAX_NSLEN);
}

PMIX_EXPORT bool PMIx_Nspace_invalid(const char* nspace) { return nspace == nullptr || nspace[0] == '\0'; }

PMIX_EXPORT bool PMIx_Check_nspace(const char* key1, const char* key2) {
  // An invalid namespace matches any.
  if (PMIx_Nspace_invalid(key1) || PMIx_Nspace_invalid(key2)) return true;
  return std::strncmp(key1, key2, PMIX_MAX_NSLEN) == 0;
}

PMIX_EXPORT bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b) {
  return a == b || a == PMIX_RANK_WILDCARD || b == PMIX_RANK_WILDCARD;
}

PMIX_EXPORT bool PMIx_Rank_valid(pmix_rank_t a) { return a < PMIX_RANK_VALID; }

PMIX_EXPORT void PMIx_Load_procid(pmix_proc_t* p, const char* ns, pmix_rank_t rk) {
  PMIx_Load_nspace(p->nspace, ns);
  p->rank = rk;
}

PMIX_EXPORT void PMIx_Xfer_procid(pmix_proc_t* dst, const pmix_proc_t* src) { std::memcpy(dst, src, sizeof *dst); }

PMIX_EXPORT bool PMIx_Check_procid(const pmix_proc_t* a, const pmix_proc_t* b) {
  return PMIx_Check_nspace(a->nspace, b->nspace) && PMIx_Check_rank(a->rank, b->rank);
}

PMIX_EXPORT bool PMIx_Procid_invalid(const pmix_proc_t* p) {
  return PMIx_Nspace_invalid(p->nspace) || p->rank == PMIX_RANK_INVALID;
}

PMIX_EXPORT char* PMIx_Proc_string(const pmix_proc_t* proc) {
  if (proc == nullptr) return copy("[NO-NAME]");
  const std::string ns{proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN)};
  return copy(("[" + ns + "," + rank_text(proc->rank) + "]").c_str());
}

// ---- an info's directives -------------------------------------------------

PMIX_EXPORT void PMIx_Info_required(pmix_info_t* p) { p->flags |= PMIX_INFO_REQD; }
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t* p) { p->flags &= ~PMIX_INFO_REQD; }
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD) != 0; }
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD) == 0; }
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t* p) { p->flags |= PMIX_INFO_REQD_PROCESSED; }
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD_PROCESSED) != 0; }
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t* p) { p->flags |= PMIX_INFO_ARRAY_END; }
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t* p) { return (p->flags & PMIX_INFO_ARRAY_END) != 0; }
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t* p) { p->flags |= PMIX_INFO_QUALIFIER; }
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t* p) { return (p->flags & PMIX_INFO_QUALIFIER) != 0; }
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t* p) { p->flags |= PMIX_INFO_PERSISTENT; }
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t* p) { return (p->flags & PMIX_INFO_PERSISTENT) != 0; }

PMIX_EXPORT pmix_boolean_t PMIx_Info_true(const pmix_info_t* p) { return truth_of(p->value); }
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t* v) { return truth_of(*v); }

}  // extern "C"
