// The host thread: pmixrun's main thread owns all launcher state (jobs, the
// data store, connected groups). Up-calls run on the PMIx server library's
// threads; they copy what they need into a task and post() it, then return
// PMIX_SUCCESS. The main loop runs the posted tasks in order, and the tasks
// call the up-calls' callbacks. So no launcher state needs a lock, and no
// callback is ever called from inside the up-call that it answers (the way
// PRRTE thread-shifts every up-call into its own event loop).
#pragma once

#include <pthread.h>

#include <functional>

namespace pmixrun {

// Which thread runs the tasks, and the signal that wakes it: post() sends
// `wake_signal` to `thread`, which keeps the signal blocked and takes it
// synchronously (pmixrun's main loop: from a signalfd it polls; or with
// sigtimedwait). Call once, before PMIx_server_init.
void set_host_thread(pthread_t thread, int wake_signal);

// Makes the calling thread the host thread as pmixrun and pmixd run it:
// SIGCHLD, SIGINT, SIGTERM and SIGUSR1 (the wake-up) blocked and taken from
// the signalfd returned, SIGPIPE blocked (a write to a closed pipe gives
// EPIPE). Call before any thread starts, so every thread inherits the mask
// (children get an empty one back). -1, with `program`'s error on stderr,
// if the signalfd cannot be made.
int take_host_signals(const char* program);

// Raises this process's soft limit on descriptors to its hard limit, as
// Open MPI's mpirun does: each process of a job holds about 4 of the host's
// descriptors (its output pipes, its stdin, its connection), and a login
// shell's soft limit of 1,024 stopped a job at about 250 processes. The
// processes the host starts inherit the raised limit. Returns the soft
// limit in force afterwards.
unsigned long raise_descriptor_limit();

// About how many descriptors a host needs for `processes` processes of its
// own.
inline unsigned long descriptors_for(unsigned long processes) { return 4 * processes + 64; }

// Queues a task for the host thread (any thread may call this).
void post(std::function<void()> task);

// Runs every task posted so far, in order (host thread only). Tasks posted
// while it runs are run too. Returns how many ran.
int run_posted();

// From now on post() drops its tasks (after the server is finalized, no
// callback may be called).
void stop_posting();

}  // namespace pmixrun
