/* SPDX-License-Identifier: MIT */
/*
 * Which wheel is a loop's, for tw_uv_timer_init(loop, ...): libuv keeps
 * timers in the loop, which has no room for ours, so the layer keeps the
 * loops that have a wheel of its own in a process-wide list under a lock.
 *
 * Each thread remembers its last lookup, so that the next init on the same
 * loop, the common case by far, takes neither the lock nor the list: good
 * while no loop's entry has been removed since (removals, bumped under
 * the lock by each). An entry is removed on its loop's thread, so a lookup
 * that raced with its own entry's removal would be two threads on one loop
 * at once; a removal the program has synchronised with (a loop handed to
 * another thread and back) is seen, and the lookup is made afresh. Where
 * C11's atomics or thread-local storage are missing, every lookup locks.
 */
#define _POSIX_C_SOURCE 200809L /* <uv.h> needs POSIX types under strict -std=c11 */

#include <stdlib.h>

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__) && !defined(_MSC_VER)
#include <stdatomic.h>
#define TW__UV_LOOKUP_CACHE 1
#endif

#include "uv_int.h"

static uv_once_t loops_once = UV_ONCE_INIT;
static uv_mutex_t loops_lock;
static struct tw__uv_loop_entry *loops; /* under loops_lock */

#ifdef TW__UV_LOOKUP_CACHE
/* In a shared library a thread-local variable is found through a call
 * (__tls_get_addr) unless it is in the static TLS block, which ELF
 * loaders keep room in for libraries loaded later too (dlopen()). */
#if defined(__ELF__) && defined(__GNUC__)
#define TW__UV_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define TW__UV_TLS_MODEL
#endif

static atomic_ulong removals;
static _Thread_local TW__UV_TLS_MODEL struct {
	uv_loop_t *loop;
	struct tw__uv_loop_entry *e;
	unsigned long removals;
} last;

/* Under loops_lock. */
static void remember(uv_loop_t *loop, struct tw__uv_loop_entry *e)
{
	last.loop = loop;
	last.e = e;
	last.removals = atomic_load_explicit(&removals, memory_order_relaxed);
}
#endif

static void loops_init(void)
{
	if (uv_mutex_init(&loops_lock) != 0)
		abort();
}

struct tw__uv_loop_entry *tw__uv_loops_find(uv_loop_t *loop)
{
	struct tw__uv_loop_entry *e;

#ifdef TW__UV_LOOKUP_CACHE
	if (last.loop == loop && last.removals == atomic_load_explicit(&removals, memory_order_relaxed))
		return last.e;
#endif
	uv_once(&loops_once, loops_init);
	uv_mutex_lock(&loops_lock);
	for (e = loops; e && e->loop != loop; e = e->next)
		;
#ifdef TW__UV_LOOKUP_CACHE
	if (e)
		remember(loop, e);
#endif
	uv_mutex_unlock(&loops_lock);
	return e;
}

void tw__uv_loops_add(struct tw__uv_loop_entry *e)
{
	uv_once(&loops_once, loops_init);
	uv_mutex_lock(&loops_lock);
	e->next = loops;
	loops = e;
#ifdef TW__UV_LOOKUP_CACHE
	remember(e->loop, e);
#endif
	uv_mutex_unlock(&loops_lock);
}

void tw__uv_loops_remove(struct tw__uv_loop_entry *e)
{
	struct tw__uv_loop_entry **p;

	uv_mutex_lock(&loops_lock);
	for (p = &loops; *p != e; p = &(*p)->next)
		;
	*p = e->next;
#ifdef TW__UV_LOOKUP_CACHE
	atomic_fetch_add_explicit(&removals, 1, memory_order_relaxed);
#endif
	uv_mutex_unlock(&loops_lock);
}
