// Where a client's board waiter runs (client::steps_aside, step_aside): off
// its server's CPU when the node has one to spare, with the thread's own
// affinity given back.
#include <doctest/doctest.h>
#include <sched.h>

#include "client/connection.hpp"

using pmix::client::step_aside;
using pmix::client::steps_aside;

TEST_CASE("a board waiter steps aside only on its server's CPU, and only when the node has a CPU to spare") {
  CHECK(steps_aside(3, 3, true));
  CHECK_FALSE(steps_aside(3, 3, false));  // as many local processes as CPUs, or more
  CHECK_FALSE(steps_aside(2, 3, true));   // already apart
  CHECK_FALSE(steps_aside(-1, -1, true));  // neither known
  CHECK_FALSE(steps_aside(0, -1, true));  // no post yet
}

TEST_CASE("step_aside moves the calling thread off the CPU and gives it back its own affinity") {
  cpu_set_t before;
  CPU_ZERO(&before);
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  const int here = ::sched_getcpu();
  REQUIRE(here >= 0);
  if (CPU_COUNT(&before) < 2) {
    // Nowhere to go: nothing changes.
    CHECK_FALSE(step_aside(here));
  } else {
    REQUIRE(step_aside(here));
    CHECK(::sched_getcpu() != here);
  }
  cpu_set_t after;
  CPU_ZERO(&after);
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));

  // A CPU outside the thread's set, or none: refused, the set unchanged.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(::sched_getcpu(), &one);
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
  CHECK_FALSE(step_aside(::sched_getcpu()));  // the only CPU it may use
  CHECK_FALSE(step_aside(-1));
  CHECK_FALSE(step_aside(CPU_SETSIZE));
  cpu_set_t still;
  CPU_ZERO(&still);
  REQUIRE(::sched_getaffinity(0, sizeof still, &still) == 0);
  CHECK(CPU_EQUAL(&one, &still));
  REQUIRE(::sched_setaffinity(0, sizeof before, &before) == 0);
}
