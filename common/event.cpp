#include "common/event.hpp"

namespace pmix {

std::vector<proc_id> custom_range(const info_list& info) {
  std::vector<proc_id> out;
  const auto* entry = find(info, PMIX_EVENT_CUSTOM_RANGE);
  if (entry == nullptr) return out;
  if (const auto* p = entry->val.as_proc()) {
    out.push_back(*p);
  } else if (const auto* a = entry->val.as_array()) {
    for (const auto& e : a->elements)
      if (const auto* p = e.as_proc()) out.push_back(*p);
  }
  return out;
}

bool reaches(const event& ev, const proc_id& notifier, const proc_id& process) {
  switch (ev.range) {
    case PMIX_RANGE_RM:
      return false;
    case PMIX_RANGE_NAMESPACE:
      return process.nspace == (ev.source.nspace.empty() ? notifier.nspace : ev.source.nspace);
    case PMIX_RANGE_CUSTOM:
      for (const auto& p : custom_range(ev.info))
        if (p.nspace == process.nspace && (p.rank == rank_wildcard || p.rank == process.rank))
          return true;
      return false;
    default:  // PMIX_RANGE_PROC_LOCAL, _LOCAL, _SESSION, _GLOBAL, _UNDEF
      return true;
  }
}

bool for_default_handlers(const event& ev) {
  const auto* nd = find(ev.info, PMIX_EVENT_NON_DEFAULT);
  return nd == nullptr || !nd->val.truthy();
}

}  // namespace pmix
