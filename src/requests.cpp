// SPDX-License-Identifier: MIT
//
// Requests from other threads, the wheel's side and the poster's: the
// owner applies the queued requests (request_queue.hpp) at the start of
// each advance, each through the entry the owner's own tw_mod(),
// tw_mod_range() or tw_del() takes (tw::apply_request(), entry.cpp). So the
// wheel itself stays single-threaded: no timer, list or counter is ever
// touched by another thread, and the owner's own calls cost nothing more.
// A poster that waits for its request sleeps on it (park.hpp).
#include <errno.h>

#include "compiler.hpp"
#include "park.hpp"
#include "wheel.hpp"

// The owner, outside callbacks. A destroyed wheel completes what is
// queued with -ESHUTDOWN, and what is pushed after, so that nobody waits
// for it forever (the wheel may outlive the destroy in a backend's hands).
int tw_wheel::drain()
{
	return destroyed() ? requests.close() : requests.drain(this, tw::apply_request);
}

// The owner tells posters when it will next look at the requests, and
// learns whether any came in before that (request_queue.hpp). Without a
// notify hook nobody knows when the owner looks next: posters always wake
// it.
bool tw_wheel::publish_horizon(uint64_t when)
{
	return requests.publish_horizon(hook.installed() ? when : UINT64_MAX);
}

namespace {

uint32_t state_of(const tw_request *req) { return tw::atomic_load<tw::mo::acquire>(&req->tw__state); }

bool is_done(uint32_t s) { return tw::req::phase(s) == tw::req::phase_done; }

// Once the state was seen done (3).
int result_of(const tw_request *req) { return tw::atomic_load<tw::mo::relaxed>(&req->tw__result); }

// Ask the waiters' flag of a request, so that its completion wakes us;
// false if the state moved meanwhile (look again).
bool mark_waiter(tw_request *req, uint32_t *s)
{
	if (*s & tw::req::waiter)
		return true;
	uint32_t to = *s | tw::req::waiter;
	if (!tw::atomic_cas_strong<tw::mo::acquire, tw::mo::acquire>(&req->tw__state, s, to))
		return false;
	*s = to;
	return true;
}

} // namespace

extern "C" {

TW_API int tw_request_done(const tw_request *req)
{
	return req && is_done(state_of(req));
}

TW_API int tw_request_result(const tw_request *req)
{
	if (!req)
		return -EINVAL;
	if (!is_done(state_of(req)))
		return -EBUSY;
	return result_of(req);
}

TW_API int tw_request_wait_timeout(tw_wheel *w, tw_request *req, uint64_t timeout_ns)
{
	if (!w || !req)
		return -EINVAL;
	uint32_t s = state_of(req);
	if (tw::req::phase(s) == tw::req::phase_new)
		return -EINVAL;
	if (!is_done(s))
		w->requests.wake(w);
	uint64_t deadline = tw_deadline(tw_clock_monotonic(), timeout_ns);
	for (;; s = state_of(req)) {
		if (is_done(s))
			return result_of(req);
		if (mark_waiter(req, &s) && !tw::park_wait(&req->tw__state, s, deadline))
			return is_done(state_of(req)) ? result_of(req) : -ETIMEDOUT;
	}
}

TW_API int tw_request_wait(tw_wheel *w, tw_request *req)
{
	return tw_request_wait_timeout(w, req, UINT64_MAX);
}

} // extern "C"
