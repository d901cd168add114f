// PMIx_generate_regex / PMIx_generate_ppn and OpenPMIx master's
// PMIx_generate_regex2 / PMIx_parse_regex2: host helpers that need no running
// library (common/regex has the format).
#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "common/regex/regex.hpp"

namespace {

pmix_status_t hand_out(const pmix::regex::result<std::string>& r, const char* call, char** out) {
  if (!r.ok()) {
    pmix::log::error("api", call, ": ", r.error().what);
    return PMIX_ERR_BAD_PARAM;
  }
  *out = strdup(r.value().c_str());
  return *out == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

// Fills *regex with `type` and the bytes of `text` and its NUL.
pmix_status_t load_regex2(pmix_regex2_t* regex, const char* type, const std::string& text) {
  auto* bytes = static_cast<uint8_t*>(std::malloc(text.size() + 1));
  char* name = strdup(type);
  if (bytes == nullptr || name == nullptr) {
    std::free(bytes);
    std::free(name);
    return PMIX_ERR_NOMEM;
  }
  std::memcpy(bytes, text.c_str(), text.size() + 1);
  regex->type = name;
  regex->bytes = bytes;
  regex->len = text.size() + 1;
  return PMIX_SUCCESS;
}

// The names of a node map, ','-joined.
std::string joined(const pmix::regex::node_list& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace

extern "C" {

// The shorter of two encodings of `input` (a delimited list): "pmix", our
// node map form (PMIx_generate_regex), used only where it gives back exactly
// `input` and is shorter; else "raw", the text itself, as OpenPMIx's raw
// encoding. Each holds its text with the NUL (len counts it). No directive
// is defined; `info` is not read. Release with PMIx_Regex2_destruct.
PMIX_EXPORT pmix_status_t PMIx_generate_regex2(const char* input, pmix_info_t[], size_t, pmix_regex2_t* regex) {
  if (input == nullptr || regex == nullptr) return PMIX_ERR_BAD_PARAM;
  PMIx_Regex2_construct(regex);
  try {
    if (const auto compact = pmix::regex::generate_node_map(input); compact.ok() && compact.value().size() < std::strlen(input)) {
      const auto back = pmix::regex::parse_node_map(compact.value());
      if (back.ok() && joined(back.value()) == input) return load_regex2(regex, "pmix", compact.value());
    }
    return load_regex2(regex, "raw", input);
  } catch (const std::bad_alloc&) {
    return PMIX_ERR_NOMEM;
  }
}

// The list a regex2 stands for, in *output (the caller frees it):
// PMIX_ERR_BAD_PARAM for bytes that are not a NUL-terminated text of their
// type, PMIX_ERR_NOT_SUPPORTED for a type we do not encode (OpenPMIx's
// "compress").
PMIX_EXPORT pmix_status_t PMIx_parse_regex2(const pmix_regex2_t* regex, pmix_info_t[], size_t, char** output) {
  if (regex == nullptr || output == nullptr || regex->type == nullptr) return PMIX_ERR_BAD_PARAM;
  *output = nullptr;
  const bool raw = std::strcmp(regex->type, "raw") == 0;
  if (!raw && std::strcmp(regex->type, "pmix") != 0) {
    pmix::log::error("api", "PMIx_parse_regex2: encoding '", regex->type, "' is not supported (pmix, raw)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  if (regex->bytes == nullptr || regex->len == 0 || regex->bytes[regex->len - 1] != '\0' ||
      std::memchr(regex->bytes, '\0', regex->len) != regex->bytes + regex->len - 1) {
    pmix::log::error("api", "PMIx_parse_regex2: the ", regex->type, " bytes are not one NUL-terminated text");
    return PMIX_ERR_BAD_PARAM;
  }
  const char* text = reinterpret_cast<const char*>(regex->bytes);
  if (raw) {
    *output = strdup(text);
    return *output == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
  }
  try {
    const auto names = pmix::regex::parse_node_map(text);
    if (!names.ok()) {
      pmix::log::error("api", "PMIx_parse_regex2: ", names.error().what);
      return PMIX_ERR_BAD_PARAM;
    }
    *output = strdup(joined(names.value()).c_str());
    return *output == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
  } catch (const std::bad_alloc&) {
    return PMIX_ERR_NOMEM;
  }
}


PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char* input, char** regex) {
  if (input == nullptr || regex == nullptr) return PMIX_ERR_BAD_PARAM;
  *regex = nullptr;
  return hand_out(pmix::regex::generate_node_map(input), "PMIx_generate_regex", regex);
}

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char* input, char** ppn) {
  if (input == nullptr || ppn == nullptr) return PMIX_ERR_BAD_PARAM;
  *ppn = nullptr;
  return hand_out(pmix::regex::generate_proc_map(input), "PMIx_generate_ppn", ppn);
}

}  // extern "C"
