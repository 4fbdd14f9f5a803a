// SPDX-License-Identifier: MIT
//
// Requests from other threads: tw_post_mod() and tw_post_del() push a
// caller-provided struct tw_request on a lock-free stack in the wheel; the
// owner takes the whole stack at the start of each advance (drain()),
// reverses it into posting order and applies each request as its own
// tw_mod() or tw_del(). So the wheel itself stays single-threaded: no
// timer, list or counter is ever touched by another thread, and the
// owner's own calls cost nothing more.
//
// Waking the owner. A poster compares its expiry with `horizon`, the time
// the owner will look at the stack anyway (the time its loop's OS timer is
// armed for), and calls the wake hook when it is earlier. The poster pushes
// then reads `horizon`; the owner stores `horizon` then reads the stack
// (publish_horizon()): with both sides sequentially consistent, at least
// one of them sees the other's write, so a request is never left waiting
// for a wake-up that nobody asked for.
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "wheel.hpp"

namespace {

enum : int32_t { op_mod = 1, op_del = 2 };
enum : uint32_t { req_new = 0, req_posted = 1, req_done = 2 };

uint32_t state_of(const tw_request *req) { return __atomic_load_n(&req->tw__state, __ATOMIC_ACQUIRE); }

} // namespace

// Any thread.
int tw_wheel::post(tw_request *req, int op, tw_timer *t, uint64_t expires)
{
	if (__atomic_load_n(&refusing, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	// Claimed atomically: of two threads posting one request at once,
	// one gets -EBUSY rather than both linking it.
	uint32_t state = state_of(req);
	do {
		if (state == req_posted)
			return -EBUSY;
	} while (!__atomic_compare_exchange_n(&req->tw__state, &state, req_posted, false, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	req->tw__timer = t;
	req->tw__expires = expires;
	req->tw__op = op;
	req->tw__result = 0;
	tw_request *head = __atomic_load_n(&requests, __ATOMIC_RELAXED);
	do
		req->tw__next = head;
	while (!__atomic_compare_exchange_n(&requests, &head, req, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	tw_wake_fn fn = __atomic_load_n(&wake, __ATOMIC_ACQUIRE);
	if (fn && op == op_mod && expires < __atomic_load_n(&horizon, __ATOMIC_SEQ_CST))
		fn(this, __atomic_load_n(&wake_arg, __ATOMIC_RELAXED));
	return 0;
}

// The owner, outside callbacks. A destroyed wheel completes what is
// queued with -ESHUTDOWN, so that nobody waits for it forever.
int tw_wheel::drain()
{
	// Acquire: the requests' fields, written before each push. Release:
	// a poster whose push comes after this exchange sees all the owner did
	// before it (tw_wheel_destroy()'s refusal among them).
	tw_request *stack = __atomic_exchange_n(&requests, nullptr, __ATOMIC_ACQ_REL);
	tw_request *fifo = nullptr;
	while (stack) {
		tw_request *next = stack->tw__next;
		stack->tw__next = fifo;
		fifo = stack;
		stack = next;
	}
	int applied = 0;
	while (fifo) {
		tw_request *req = fifo;
		fifo = req->tw__next; // read first: once done, the poster owns req again
		tw_timer *t = req->tw__timer;
		int r;
		if (destroyed())
			r = -ESHUTDOWN;
		else if (req->tw__op == op_del)
			r = t->tw__where == tw::where_idle ? 0 : t->tw__owner != id ? -EINVAL : del(t);
		else if (t->tw__magic != tw::timer_magic || !t->fn)
			r = -EINVAL;
		else
			r = mod(t, req->tw__expires, default_slack);
		req->tw__result = r;
		__atomic_store_n(&req->tw__state, req_done, __ATOMIC_RELEASE);
		applied++;
	}
	return applied;
}

// The owner tells posters when it will next look at the requests, then
// looks once more: a request pushed before this store may have read the
// old, later horizon and not woken it (see the top of this file).
// Without a notify hook nobody knows when the owner looks next: posters
// always wake it.
void tw_wheel::publish_horizon(uint64_t when)
{
	__atomic_store_n(&horizon, notify ? when : UINT64_MAX, __ATOMIC_SEQ_CST);
}

extern "C" {

TW_API int tw_request_done(const tw_request *req)
{
	return req && state_of(req) == req_done;
}

TW_API int tw_request_result(const tw_request *req)
{
	if (!req)
		return -EINVAL;
	if (state_of(req) != req_done)
		return -EBUSY;
	return req->tw__result;
}

TW_API int tw_request_wait(tw_wheel *w, tw_request *req)
{
	if (!w || !req || state_of(req) == req_new)
		return -EINVAL;
	if (state_of(req) != req_done) {
		tw_wake_fn fn = __atomic_load_n(&w->wake, __ATOMIC_ACQUIRE);
		if (fn)
			fn(w, __atomic_load_n(&w->wake_arg, __ATOMIC_RELAXED));
	}
	// Yield a few times (the owner is usually quick), then sleep in
	// steps of 50 us.
	for (unsigned spins = 0; state_of(req) != req_done; spins++) {
		if (spins < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 50000 };
			nanosleep(&ts, nullptr);
		}
	}
	return req->tw__result;
}

} // extern "C"
