// SPDX-License-Identifier: MIT
//
// Intrusive lists threaded through a node's tw__next and tw__pprev: struct
// tw_timer's, in the core and in the uv_timer_t layer, whose lists are
// these same templates over its timers' core timers (one list and one sort
// for the whole library).
//
// Slots are hlists, as in the kernel: a list head is one pointer and each
// node keeps `pprev`, the address of the pointer that points at it, so it
// can unlink itself in O(1) without knowing its head. The due list adds a
// tail pointer because it must keep the order in which timers came due.
#ifndef TW_LIST_HPP
#define TW_LIST_HPP

#include "timerwheel.h"

namespace tw {

template <class T> inline void hlist_add_head(T **head, T *t)
{
	t->tw__next = *head;
	if (*head)
		(*head)->tw__pprev = &t->tw__next;
	*head = t;
	t->tw__pprev = head;
}

// Take t off its list; true if it was the list's last node.
template <class T> inline bool hlist_del(T *t)
{
	T *next = t->tw__next;
	*t->tw__pprev = next;
	if (!next)
		return true;
	next->tw__pprev = t->tw__pprev;
	return false;
}

// The core's order: a timer comes before another when it expires earlier.
struct by_expiry {
	bool operator()(const tw_timer *a, const tw_timer *b) const { return a->expires < b->expires; }
};

// Two chains linked through tw__next, each in the order `before` gives, as
// one; where neither comes before the other, a's first.
template <class T, class Before> inline T *merge(T *a, T *b, Before before)
{
	T *head = nullptr, **tail = &head;
	while (a && b) {
		T **from = before(b, a) ? &b : &a;
		*tail = *from;
		tail = &(*from)->tw__next;
		*from = *tail;
	}
	*tail = a ? a : b;
	return head;
}

// Cut the run at the head of *list off it, in order, and give its last
// node in *last: a run in order, or one strictly against it, reversed as
// it is taken (strictly, so that equal nodes keep their order).
template <class T, class Before> inline T *take_run(T **list, T **last, Before before)
{
	T *t = *list, *next = t->tw__next;
	if (next && before(next, t)) {
		T *rev = nullptr;
		*last = t;
		do {
			next = t->tw__next;
			t->tw__next = rev;
			rev = t;
			t = next;
		} while (t && before(t, rev));
		*list = t;
		return rev;
	}
	T *first = t;
	for (; next && !before(next, t); next = t->tw__next)
		t = next;
	t->tw__next = nullptr;
	*list = next;
	*last = t;
	return first;
}

// A chain linked through tw__next (its pprev links are left as they are)
// in the order `before` gives, equal nodes in their order: a natural merge
// sort with no allocation. Runs in order or against it are taken whole, a
// run that follows the one before in order is joined to it, and the others
// are merged as a binary counter counts (runs[i] holds 2^i runs). A chain
// made of a few runs, as a slot's timers of one tick are, costs O(n); any
// chain O(n log n).
template <class T, class Before> inline T *sort(T *list, Before before)
{
	T *runs[64]; // runs[i]: nullptr, or 2^i runs that came before those of runs[i - 1]
	T *run = nullptr, *last = nullptr, *next_last = nullptr;
	unsigned used = 0;
	while (list) {
		T *next = take_run(&list, &next_last, before);
		if (run && !before(next, last)) {
			last->tw__next = next;
			last = next_last;
			continue;
		}
		unsigned i = 0;
		for (; run && i < used && runs[i]; i++) {
			run = merge(runs[i], run, before);
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
			run = merge(runs[i], run, before);
	return run;
}

// Lists that keep a tail pointer: any struct L with members `T *first`
// and `T **tail` (&first when empty, else &last->tw__next), as the core's
// tail_list and the layer's ready list are; their nodes link both ways.
template <class T> struct tail_list {
	T *first;
	T **tail;
};

template <class L> inline void tail_init(L &l)
{
	l.first = nullptr;
	l.tail = &l.first;
}

template <class L, class T> inline void tail_append(L &l, T *t)
{
	t->tw__next = nullptr;
	t->tw__pprev = l.tail;
	*l.tail = t;
	l.tail = &t->tw__next;
}

// Put t where *at points (&l.first or a node's &tw__next): ahead of the
// node there, or last when at is the tail.
template <class L, class T> inline void tail_insert(L &l, T **at, T *t)
{
	t->tw__next = *at;
	t->tw__pprev = at;
	if (*at)
		(*at)->tw__pprev = &t->tw__next;
	else
		l.tail = &t->tw__next;
	*at = t;
}

// Detach the first n nodes (all of them if there are fewer) as a plain
// chain and return its head; the others stay, in their order.
template <class L> inline auto tail_take_front(L &l, unsigned n) -> decltype(l.first)
{
	auto head = l.first;
	auto link = &l.first;
	for (unsigned i = 0; i < n && *link; i++)
		link = &(*link)->tw__next;
	l.first = *link;
	*link = nullptr;
	if (l.first)
		l.first->tw__pprev = &l.first;
	else
		l.tail = &l.first;
	return head;
}

// A node that had no successor was taken off l, or off a plain hlist
// detached from it: only l's last moves its tail.
template <class L, class T> inline void tail_unlinked_last(L &l, const T *t)
{
	if (l.tail == &t->tw__next)
		l.tail = t->tw__pprev;
}

// A chain linked through tw__next alone (a sort's result) as l, its
// back links and tail made again.
template <class L> inline void tail_relink(L &l, decltype(l.first) chain)
{
	l.first = chain;
	l.tail = &l.first;
	for (auto t = chain; t; t = t->tw__next) {
		t->tw__pprev = l.tail;
		l.tail = &t->tw__next;
	}
}

template <class L, class T> inline void tail_remove(L &l, T *t)
{
	tail_unlinked_last(l, t);
	hlist_del(t);
}

} // namespace tw

#endif
