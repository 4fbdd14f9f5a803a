// SPDX-License-Identifier: MIT
//
// Intrusive lists threaded through struct tw_timer.
//
// Slots are hlists, as in the kernel: a list head is one pointer and each
// timer keeps `pprev`, the
// address of the pointer that points at it, so it can unlink itself in O(1)
// without knowing its head. The due list adds a tail pointer because it
// must keep the order in which timers came due.
#ifndef TW_LIST_HPP
#define TW_LIST_HPP

#include "timerwheel.h"

namespace tw {

inline void hlist_add_head(tw_timer **head, tw_timer *t)
{
	t->tw__next = *head;
	if (*head)
		(*head)->tw__pprev = &t->tw__next;
	*head = t;
	t->tw__pprev = head;
}

// Take t off its list; true if it was the list's last timer.
inline bool hlist_del(tw_timer *t)
{
	tw_timer *next = t->tw__next;
	*t->tw__pprev = next;
	if (!next)
		return true;
	next->tw__pprev = t->tw__pprev;
	return false;
}

// Two chains linked through tw__next, each in order of expiry, as one;
// on equal expiries, a's first.
inline tw_timer *merge_by_expiry(tw_timer *a, tw_timer *b)
{
	tw_timer *head = nullptr, **tail = &head;
	while (a && b) {
		tw_timer **from = b->expires < a->expires ? &b : &a;
		*tail = *from;
		tail = &(*from)->tw__next;
		*from = *tail;
	}
	*tail = a ? a : b;
	return head;
}

// Cut the run at the head of *list off it, in order of expiry, and give
// its last timer in *last: a run in order, or one strictly against it,
// reversed as it is taken (strictly, so that equal expiries keep their
// order).
inline tw_timer *take_run(tw_timer **list, tw_timer **last)
{
	tw_timer *t = *list, *next = t->tw__next;
	if (next && next->expires < t->expires) {
		tw_timer *rev = nullptr;
		*last = t;
		do {
			next = t->tw__next;
			t->tw__next = rev;
			rev = t;
			t = next;
		} while (t && t->expires < rev->expires);
		*list = t;
		return rev;
	}
	tw_timer *first = t;
	for (; next && next->expires >= t->expires; next = t->tw__next)
		t = next;
	t->tw__next = nullptr;
	*list = next;
	*last = t;
	return first;
}

// A chain linked through tw__next (its pprev links are left as they are)
// in order of expiry, equal expiries in their order: a natural merge sort
// with no allocation. Runs in order or against it are taken whole, a run
// that follows the one before in order is joined to it, and the others
// are merged as a binary counter counts (runs[i] holds 2^i runs). A chain
// made of a few runs, as a slot's timers of one tick are, costs O(n);
// any chain O(n log n).
inline tw_timer *sort_by_expiry(tw_timer *list)
{
	tw_timer *runs[64]; // runs[i]: nullptr, or 2^i runs that came before those of runs[i - 1]
	tw_timer *run = nullptr, *last = nullptr, *next_last = nullptr;
	unsigned used = 0;
	while (list) {
		tw_timer *next = take_run(&list, &next_last);
		if (run && next->expires >= last->expires) {
			last->tw__next = next;
			last = next_last;
			continue;
		}
		unsigned i = 0;
		for (; run && i < used && runs[i]; i++) {
			run = merge_by_expiry(runs[i], run);
			runs[i] = nullptr;
		}
		if (run) {
			if (i == used)
				used++;
			runs[i] = run;
		}
		run = next;
		last = next_last;
	}
	for (unsigned i = 0; i < used; i++)
		if (runs[i])
			run = merge_by_expiry(runs[i], run);
	return run;
}

struct tail_list {
	tw_timer *first;
	tw_timer **tail; // &first when empty, else &last->tw__next

	void init()
	{
		first = nullptr;
		tail = &first;
	}

	void append(tw_timer *t)
	{
		t->tw__next = nullptr;
		t->tw__pprev = tail;
		*tail = t;
		tail = &t->tw__next;
	}

	// Detach the first n timers (all of them if there are fewer) as a
	// plain chain and return its head; the others stay, in their order.
	tw_timer *take_front(unsigned n)
	{
		tw_timer *head = first;
		tw_timer **link = &first;
		for (unsigned i = 0; i < n && *link; i++)
			link = &(*link)->tw__next;
		first = *link;
		*link = nullptr;
		if (first)
			first->tw__pprev = &first;
		else
			tail = &first;
		return head;
	}

	// A timer that had no successor was taken off this list, or off a
	// plain hlist detached from it: only this list's last moves its tail.
	void unlinked_last(const tw_timer *t)
	{
		if (tail == &t->tw__next)
			tail = t->tw__pprev;
	}
};

} // namespace tw

#endif
