// SPDX-License-Identifier: MIT
//
// The queue of requests from other threads (tw_post_mod(),
// tw_post_mod_range(), tw_post_del()): a lock-free stack of caller-provided
// struct tw_request, which the owner takes whole and applies in posting
// order. Nothing here allocates, and no
// side ever waits for the other: a poster pushes, or rewrites a request it
// queued before; the owner takes what it finds.
//
// A request's life is its state word, tw_request::tw__state, changed only
// by compare-and-swap:
//
//   new/done/applying --post--> writing --> queued        (pushed)
//   queued --re-post--> rewriting --> queued              (not pushed again)
//   rewriting --owner takes it--> writing --> queued      (the poster pushes)
//   queued --owner takes it--> applying --> done
//   applying --post--> writing ...                        (a new post: this
//                                                          application is
//                                                          never reported)
//
// ORDERING. Each numbered pair below is a release and the acquire it
// synchronises with; every access not named is relaxed. (No fences: the
// thread sanitizer, which CI runs on these tests, does not model them.)
//
// (1) The payload. A poster claims the request (state to writing or
//     rewriting, generation + 1), then stores the timer, expiry and window
//     each with release, and publishes them with a release CAS to queued.
//     The owner, like a seqlock reader, loads the state, loads the payload
//     each word with acquire, and CASes the state it loaded to applying.
//     If it read any word of a rewrite, that store's release made the
//     claim before it visible, so the CAS reads the claim or later and
//     fails (the generation moved): a torn payload is never applied. A
//     CAS that succeeds thus read only words written before the last
//     publish it saw. The generation has 26 bits: fooling the CAS would
//     take 2^26 complete rewrites by one poster between two of the
//     owner's steps.
// (2) The links. tw__next is written by a poster before its push (a
//     seq_cst CAS of the head) and read by the owner after its acq_rel
//     exchange of the head; the owner reads a request's link before it
//     moves the request out of queued (release: to applying, or handing a
//     rewrite back), and a poster writes the link again only after a CAS
//     with acquire that read that move (its claim, or its publish).
// (3) The result. The owner stores the result, then makes the request done
//     with a release CAS; tw_request_done() and tw_request_result() load
//     the state with acquire.
// (4) Waiters. A waiter sets the waiter flag by CAS, then sleeps while the
//     word holds the value it wrote (park.hpp compares and sleeps in one
//     step); the owner's CAS to done reads the latest value of the word,
//     so it either comes before the flag (the waiter's compare sees done
//     and returns) or sees the flag and wakes the word's sleepers.
//
// NO LOST WAKE-UP. The owner's loop sleeps until the time it gave the
// notify hook; it publishes that time as the horizon, and posters wake it
// (the wake hook) for an expiry earlier than the horizon.
//
// - A push and the horizon are a Dekker pair, all four accesses seq_cst: a
//   poster pushes, then loads the horizon; the owner stores the horizon,
//   then loads the head (publish_horizon()). In the single order of
//   seq_cst operations, either the push comes before the owner's load of
//   the head (the owner sees a request and runs again at once instead of
//   sleeping), or the owner's store comes before the poster's load (the
//   poster compares its expiry with the new horizon, and wakes the owner
//   if it is earlier). Never neither.
// - A re-post that rewrites a queued request pushes nothing, and loads the
//   horizon after its rewrite. The request is then either in the head's
//   stack, and every publish_horizon() until the owner takes it finds the
//   stack not empty (the owner runs again at once, and its drain reads the
//   rewrite or hands it back, below); or in a drain that has taken the
//   stack and has not reached it yet, which reads the rewrite before the
//   owner publishes a horizon again. Either way the horizon the poster
//   loads is the one its request is judged against.
// - A rewrite that the owner takes in the middle (rewriting to writing)
//   is pushed by its poster when it finishes: the first case again.
// - Requests posted before the owner installed its wake hook wake nobody:
//   they are applied at the owner's next advance (tw_set_wake()).
//
// CLOSING. A destroyed wheel completes every request with -ESHUTDOWN, and
// one that got past refuse()'s test before the destroy must not wait for
// an owner who will never look again (a backend may hold the wheel long
// after). So the owner closes the queue: it exchanges the head with
// `closed` and completes what it took (shut_taken()); and a push is a CAS that expects a
// stack, never `closed`. Both are writes of the one head word, so in its
// modification order each push comes either before the close (the close
// took the request and completes it) or after (the CAS reads `closed` and
// fails). With the closed state in a flag beside the head there would be a
// third case: the poster tests the flag, the close takes the stack, then
// the push lands on a queue nobody drains. A poster whose push fails holds
// the only way to the request (it is on no stack) and completes it as the
// owner would, take() then complete(): a rewriter in the middle is handed
// the push back and finds the queue closed in turn. Its acquire of
// `closed` synchronises with the close's release, so that all the owner
// did to the request before, such as a complete() of an older post that
// found the generation moved, comes before the poster's completion. The
// close itself never moves a request it took to applying: from there a
// poster may post it again and, its push failing, complete it at once, so
// that its caller frees it while the close would still complete the older
// post. It CASes the request straight from queued to done, and that CAS
// is its last access; a rewrite it hands back is the poster's alone.
#ifndef TW_REQUEST_QUEUE_HPP
#define TW_REQUEST_QUEUE_HPP

#include <stdint.h>

#include "compiler.hpp"
#include "timerwheel.h"

namespace tw {

// What a request asks: tw_post_mod(), tw_post_mod_range(), tw_post_del().
enum class request_op : uint32_t { none = 0, mod = 1, mod_range = 2, del = 3 };

// A request as the owner applies it, copied out of the struct tw_request.
struct request_payload {
	request_op op;
	tw_timer *timer;
	uint64_t expires;
	uint64_t slack; // in ns, for mod_range
};

// Apply a request on the owner's thread through the entry of the call it
// stands for: tw_mod(), tw_mod_range() or tw_del() (entry.cpp).
int apply_request(tw_wheel *w, const request_payload &p);

// The state word, tw_request::tw__state: phase, a waiter flag, the
// operation, and a generation that every claim moves on.
namespace req {
enum : uint32_t {
	phase_new = 0,
	phase_queued = 1,    // on the stack, or taken by a drain that has not reached it
	phase_rewriting = 2, // queued, and a poster is writing a new payload
	phase_writing = 3,   // a poster is writing a payload and will push it
	phase_applying = 4,  // the owner copied the payload out and applies it
	phase_done = 5,
	phase_mask = 7,
	waiter = 8, // a thread is parked on the word (park.hpp), or was
	op_shift = 4,
	op_mask = 3u << op_shift,
	gen_one = 1u << 6,
	gen_mask = ~(gen_one - 1),
};

inline uint32_t phase(uint32_t s) { return s & phase_mask; }
inline request_op op(uint32_t s) { return static_cast<request_op>((s & op_mask) >> op_shift); }
inline uint32_t with(uint32_t s, uint32_t phase, request_op o)
{
	return (s & (gen_mask | waiter)) | static_cast<uint32_t>(o) << op_shift | phase;
}
} // namespace req

class request_queue {
public:
	void init() { horizon_ = UINT64_MAX; }

	// Any thread. 0 if queued, 1 if it replaced a post still queued (after
	// close(), the request is then done with -ESHUTDOWN by the time this
	// returns, or by the thread that posts it at the same instant);
	// -ESHUTDOWN once refuse() was called, -EBUSY while another thread
	// posts the same request.
	int post(tw_wheel *w, tw_request *r, const request_payload &p);

	// The owner: take every queued request and apply it, in posting
	// order, with apply(w, payload), which returns its result. Returns the
	// number applied.
	int drain(tw_wheel *w, int (*apply)(tw_wheel *w, const request_payload &p));

	// The owner: posters wake it for expiries before `when` from now on
	// (UINT64_MAX: never needed). Returns whether requests are queued,
	// which the owner must then apply before it sleeps.
	bool publish_horizon(uint64_t when);

	// The owner, once refused and outside callbacks: complete every queued
	// request with -ESHUTDOWN, and every one pushed later too (CLOSING).
	// Returns the number completed.
	int close();

	// Requests are queued (seq_cst: see publish_horizon()). A closed
	// queue holds none.
	bool pending() const { return is_stack(atomic_load<mo::seq_cst>(&head_)); }

	// From now on posts fail with -ESHUTDOWN; close() completes those
	// that got past the test.
	void refuse() { atomic_store<mo::release>(&refusing_, 1u); }

	// The owner, before others post.
	void set_wake(tw_wake_fn fn, void *arg)
	{
		atomic_store<mo::relaxed>(&wake_arg_, fn ? arg : nullptr);
		atomic_store<mo::release>(&wake_, fn);
	}
	bool has_wake() const { return atomic_load<mo::relaxed>(&wake_) != nullptr; }
	void wake(tw_wheel *w) const
	{
		tw_wake_fn fn = atomic_load<mo::acquire>(&wake_);
		if (fn)
			fn(w, atomic_load<mo::relaxed>(&wake_arg_));
	}

private:
	// The head of a closed queue: no request's address (they are
	// aligned), so a CAS that expects a stack never matches it.
	static tw_request *closed() { return reinterpret_cast<tw_request *>(uintptr_t{ 1 }); }
	static bool is_stack(const tw_request *head) { return reinterpret_cast<uintptr_t>(head) > 1; }

	static uint32_t claim(tw_request *r, bool *queued);
	static bool publish(tw_request *r, request_op op);
	bool push(tw_request *r);
	static void shut(tw_request *r);
	static bool shut_taken(tw_request *r);
	tw_request *take_all(tw_request *rest);
	static int apply_all(tw_request *fifo, tw_wheel *w, int (*apply)(tw_wheel *w, const request_payload &p));
	static bool take(tw_request *r, request_payload *p, uint32_t *gen);
	static void complete(tw_request *r, uint32_t gen, int result);

	tw_request *head_;  // posted, not taken: newest first; closed() once closed
	uint64_t horizon_;  // posters wake the owner for expiries before this
	uint32_t refusing_; // the wheel was destroyed
	tw_wake_fn wake_;
	void *wake_arg_;
};

} // namespace tw

#endif
