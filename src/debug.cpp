// SPDX-License-Identifier: MIT
//
// The registry of live wheels behind the debug checks (see debug.hpp): an
// open-addressing hash set of wheel pointers with their ids, under a spin
// lock because wheels of different threads share it. It lives only while
// wheels do, so a program that destroys its wheels leaks nothing.
#include "debug.hpp"
#include "probe.hpp"
#include "spin.hpp"

#if TW_DEBUG_CHECKS

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

namespace {

struct entry {
	const tw_wheel *w; // nullptr: empty
	uint32_t id;
};

entry *table;
size_t capacity; // 0 or a power of two
size_t used;
bool locked;


size_t home(const tw_wheel *w)
{
	return static_cast<size_t>((reinterpret_cast<uintptr_t>(w) >> 4) * 0x9e3779b97f4a7c15ull) &
	       (capacity - 1);
}

// The index of w, or capacity if it is not there.
size_t find(const tw_wheel *w)
{
	if (!capacity)
		return 0;
	for (size_t i = home(w);; i = (i + 1) & (capacity - 1)) {
		if (table[i].w == w)
			return i;
		if (!table[i].w)
			return capacity;
	}
}

void place(entry e)
{
	size_t i = home(e.w);
	while (table[i].w)
		i = (i + 1) & (capacity - 1);
	table[i] = e;
}

bool grow()
{
	size_t old_capacity = capacity;
	entry *old = table;
	size_t n = capacity ? capacity * 2 : 16;
	entry *fresh = static_cast<entry *>(calloc(n, sizeof(entry)));
	if (!fresh)
		return false;
	table = fresh;
	capacity = n;
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i].w)
			place(old[i]);
	free(old);
	return true;
}

void vreport(const char *fn, const char *fmt, va_list ap)
{
	fprintf(stderr, "timerwheel: %s: ", fn);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

} // namespace

namespace tw::debug {

bool wheel_created(const tw_wheel *w, uint32_t id)
{
	tw::spin_guard g(locked);
	if ((used + 1) * 2 > capacity && !grow())
		return false;
	place(entry{ w, id });
	used++;
	return true;
}

void wheel_freed(const tw_wheel *w)
{
	tw::spin_guard g(locked);
	size_t i = find(w);
	if (i == capacity)
		return;
	tw::probe_erase(table, capacity, i, [](const entry &e) { return home(e.w); },
			[](const entry &e) { return !e.w; });
	if (--used == 0) {
		free(table);
		table = nullptr;
		capacity = 0;
	}
}

void require_live(const tw_wheel *w, const char *fn)
{
	bool live;
	{
		tw::spin_guard g(locked);
		live = find(w) != capacity;
	}
	if (!live)
		misuse(fn, "wheel %p is not a live wheel: destroyed, or never created", (const void *)w);
}

bool id_live(uint32_t id)
{
	tw::spin_guard g(locked);
	for (size_t i = 0; i < capacity; i++)
		if (table[i].w && table[i].id == id)
			return true;
	return false;
}

void warn(const char *fn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fn, fmt, ap);
	va_end(ap);
}

void misuse(const char *fn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fn, fmt, ap);
	va_end(ap);
	fputs("timerwheel: aborting (a debug build catches this misuse)\n", stderr);
	abort();
}

void broken(const char *invariant, const char *cond, const char *file, int line)
{
	fprintf(stderr, "timerwheel: invariant %s broken: %s (%s:%d)\n", invariant, cond, file, line);
	abort();
}

} // namespace tw::debug

#endif
