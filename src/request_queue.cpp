// SPDX-License-Identifier: MIT
//
// The request queue's steps; the ordering argument that ties them is at
// the top of request_queue.hpp, and the numbers below refer to it.
#include "request_queue.hpp"

#include <errno.h>

#include "debug.hpp"
#include "park.hpp"
#include "usdt.h"

namespace tw {

// Claim a request for writing: the generation moves on, so that an owner
// reading the old payload cannot take it (1). *queued: it is on its way
// to the owner already, and is rewritten in place. 0 if another thread
// is writing it.
inline uint32_t request_queue::claim(tw_request *r, bool *queued)
{
	uint32_t s = atomic_load<mo::relaxed>(&r->tw__state);
	uint32_t to;
	do {
		uint32_t phase = req::phase(s);
		if (phase == req::phase_writing || phase == req::phase_rewriting)
			return 0;
		*queued = phase == req::phase_queued;
		to = req::with(s + req::gen_one, *queued ? req::phase_rewriting : req::phase_writing, req::op(s));
	} while (!atomic_cas_weak<mo::acquire, mo::relaxed>(&r->tw__state, &s, to));
	return to;
}

// The payload is written: queued from now on. Returns true if the poster
// must push it (a new post, or a rewrite the owner handed back). Release:
// the payload (1); acquire: a hand-back, after which the owner no longer
// reads the link that push() writes (2).
inline bool request_queue::publish(tw_request *r, request_op op)
{
	uint32_t s = atomic_load<mo::relaxed>(&r->tw__state);
	bool push;
	do
		push = req::phase(s) == req::phase_writing;
	while (!atomic_cas_weak<mo::acq_rel, mo::relaxed>(&r->tw__state, &s,
							  req::with(s, req::phase_queued, op)));
	return push;
}

// False if the queue is closed: the request is then the poster's to
// complete (CLOSING, whose acquire this is).
inline bool request_queue::push(tw_request *r)
{
	tw_request *head = atomic_load<mo::acquire>(&head_);
	do {
		if (head == closed())
			return false;
		r->tw__next = head;
	} while (!atomic_cas_weak<mo::seq_cst, mo::acquire>(&head_, &head, r));
	return true;
}

// A request pushed too late, completed as the close would have.
inline void request_queue::shut(tw_request *r)
{
	request_payload p;
	uint32_t gen;
	if (take(r, &p, &gen))
		complete(r, gen, -TW_ESHUTDOWN);
}

int request_queue::post(tw_wheel *w, tw_request *r, const request_payload &p)
{
	if (atomic_load<mo::acquire>(&refusing_))
		return -TW_ESHUTDOWN;
	bool replaced;
	if (!claim(r, &replaced))
		return -EBUSY;
	atomic_store<mo::release>(&r->tw__timer, p.timer); // (1)
	atomic_store<mo::release>(&r->tw__expires, p.expires);
	atomic_store<mo::release>(&r->tw__slack, p.slack);
	TW_PROBE_POST(w, p.timer, static_cast<unsigned>(p.op), p.expires);
	if (publish(r, p.op) && !push(r))
		shut(r);
	// A cancel never makes the owner look earlier.
	else if (p.op != request_op::del && p.expires < atomic_load<mo::seq_cst>(&horizon_))
		wake(w);
	return replaced ? 1 : 0;
}

bool request_queue::publish_horizon(uint64_t when)
{
	atomic_store<mo::seq_cst>(&horizon_, when);
	return pending();
}

// The whole stack, reversed into posting order; the head is left `rest`
// (nullptr, or closed()). Acquire: the payloads and links written before
// each push (2); release: a poster whose push comes after this, or who
// finds the queue closed, sees all the owner did before it.
inline tw_request *request_queue::take_all(tw_request *rest)
{
	tw_request *stack = atomic_exchange<mo::acq_rel>(&head_, rest);
	if (!is_stack(stack))
		return nullptr;
	tw_request *fifo = nullptr;
	while (stack) {
		tw_request *next = stack->tw__next;
		stack->tw__next = fifo;
		fifo = stack;
		stack = next;
	}
	return fifo;
}

// Copy a queued request's payload out and mark it applying; false if a
// poster is rewriting it, which is then the poster's to push again.
inline bool request_queue::take(tw_request *r, request_payload *p, uint32_t *gen)
{
	uint32_t s = atomic_load<mo::acquire>(&r->tw__state);
	for (;;) {
		if (req::phase(s) == req::phase_rewriting) {
			if (atomic_cas_strong<mo::release, mo::acquire>(&r->tw__state, &s,
									req::with(s, req::phase_writing, req::op(s))))
				return false;
			continue;
		}
		p->op = req::op(s);
		p->timer = atomic_load<mo::acquire>(&r->tw__timer); // (1)
		p->expires = atomic_load<mo::acquire>(&r->tw__expires);
		p->slack = atomic_load<mo::acquire>(&r->tw__slack);
		if (atomic_cas_strong<mo::acq_rel, mo::acquire>(&r->tw__state, &s,
								req::with(s, req::phase_applying, p->op))) {
			*gen = s & req::gen_mask;
			return true;
		}
	}
}

// Done, unless a poster posted it again meanwhile: then only the latest
// post is ever reported. Threads parked on it are woken.
inline void request_queue::complete(tw_request *r, uint32_t gen, int result)
{
	atomic_store<mo::relaxed>(&r->tw__result, result);
	uint32_t s = atomic_load<mo::relaxed>(&r->tw__state), to;
	do {
		if ((s & req::gen_mask) != gen || req::phase(s) != req::phase_applying)
			return;
		to = req::with(s, req::phase_done, req::op(s)) & ~req::waiter;
	} while (!atomic_cas_weak<mo::release, mo::relaxed>(&r->tw__state, &s, to)); // (3)
	if (s & req::waiter)
		park_wake(&r->tw__state);
}

inline int request_queue::apply_all(tw_request *fifo, tw_wheel *w,
				    int (*apply)(tw_wheel *w, const request_payload &p))
{
	int applied = 0;
	// The apply probe's depth: the requests of this drain left to apply.
	// No poster pushes one of them again before its take().
	uint64_t left = 0;
	if (TW_PROBE_ENABLED(apply))
		for (const tw_request *r = fifo; r; r = r->tw__next)
			left++;
	for (tw_request *r = fifo; r;) {
		tw_request *next = r->tw__next; // before take(): then a poster may push r again (2)
		request_payload p;
		uint32_t gen;
		if (take(r, &p, &gen)) {
			TW_PROBE_APPLY(w, p.timer, static_cast<unsigned>(p.op), left);
			complete(r, gen, apply(w, p));
			applied++;
		}
		left -= left > 0;
		r = next;
	}
	return applied;
}

int request_queue::drain(tw_wheel *w, int (*apply)(tw_wheel *w, const request_payload &p))
{
	return apply_all(take_all(nullptr), w, apply);
}

// A request the close took: done with -ESHUTDOWN in one CAS from queued,
// never through applying, or a rewrite handed back to its poster (who
// finds the queue closed and completes it). Not take() then complete():
// a poster may post an applying request again, fail to push, complete it
// itself, and its caller free it, all before this thread's complete().
// Here the CAS is the owner's last touch of the request (CLOSING).
inline bool request_queue::shut_taken(tw_request *r)
{
	uint32_t s = atomic_load<mo::acquire>(&r->tw__state);
	for (;;) {
		TW_ASSERT(req::phase(s) == req::phase_queued || req::phase(s) == req::phase_rewriting, "queued");
		if (req::phase(s) == req::phase_rewriting) {
			if (atomic_cas_strong<mo::release, mo::acquire>(&r->tw__state, &s,
									req::with(s, req::phase_writing, req::op(s))))
				return false;
			continue;
		}
		// Queued: not done, so its caller still holds it and may not free
		// it; a failed CAS leaves a result that the next completion
		// overwrites.
		atomic_store<mo::relaxed>(&r->tw__result, -TW_ESHUTDOWN);
		uint32_t to = req::with(s, req::phase_done, req::op(s)) & ~req::waiter;
		if (atomic_cas_strong<mo::release, mo::acquire>(&r->tw__state, &s, to)) { // (3)
			if (s & req::waiter)
				park_wake(&r->tw__state);
			return true;
		}
	}
}

int request_queue::close()
{
	int done = 0;
	for (tw_request *r = take_all(closed()); r;) {
		tw_request *next = r->tw__next; // before the CAS: then a poster may write it (2)
		done += shut_taken(r);
		r = next;
	}
	return done;
}

} // namespace tw
