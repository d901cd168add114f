#include "common/progress.hpp"

namespace pmix::progress {
namespace {
thread_local int depth = 0;
}

bool in_library_thread() { return depth > 0; }
void enter() { ++depth; }
void leave() { --depth; }
scope::scope() { enter(); }
scope::~scope() { leave(); }

}  // namespace pmix::progress
