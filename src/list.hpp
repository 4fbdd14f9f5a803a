// SPDX-License-Identifier: MIT
//
// Intrusive lists threaded through struct tw_timer.
//
// Slots are hlists, as in the kernel: a list head is one pointer (a slot's
// four lanes are 32 bytes) and each timer keeps `pprev`, the
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

inline void hlist_del(tw_timer *t)
{
	*t->tw__pprev = t->tw__next;
	if (t->tw__next)
		t->tw__next->tw__pprev = t->tw__pprev;
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

	// Also takes a timer off a plain hlist that was detached from this
	// list: only a timer that is this list's last moves its tail.
	void remove(tw_timer *t)
	{
		if (tail == &t->tw__next)
			tail = t->tw__pprev;
		hlist_del(t);
	}
};

} // namespace tw

#endif
