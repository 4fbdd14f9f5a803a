// SPDX-License-Identifier: MIT
//
// tw_walk(): every pending timer, once, without changing the wheel. A
// pending timer is on exactly one list: the due list, `ready` (callbacks
// of the running advance still to come), or one slot's lanes (the links
// invariant), so visiting each list once visits each timer once. Only the
// occupied slots are read, found through the bitmaps as next_expiry()
// finds them.
#include "wheel.hpp"

namespace {

// A due chain: the due list or `ready`, both plain chains through tw__next.
int walk_chain(tw_timer *t, tw_walk_fn fn, void *arg)
{
	for (tw_timer *next; t; t = next) {
		TW_ASSERT(t->tw__where == tw::where_due, "links");
		next = t->tw__next;
		if (int stop = fn(t, t->expires, arg))
			return stop;
	}
	return 0;
}

} // namespace

int tw_wheel::walk(tw_walk_fn fn, void *arg) const
{
	if (int stop = walk_chain(*due.ready_head(), fn, arg))
		return stop;
	if (int stop = walk_chain(*due.due_head(), fn, arg))
		return stop;
	for (uint64_t levels_left = buckets.level_mask(); levels_left; levels_left &= levels_left - 1) {
		unsigned level = tw::lsb64(levels_left);
		for (uint64_t bits = buckets.bitmap(level); bits; bits &= bits - 1) {
			size_t index = geo.index_of(level, tw::lsb64(bits));
			TW_ASSERT(!buckets[index].empty(), "bitmaps");
			int stop = buckets[index].each([fn, arg](tw_timer *t, tw_timer *const *) {
				return fn(t, t->expires, arg);
			});
			if (stop)
				return stop;
		}
	}
	return 0;
}
