/* SPDX-License-Identifier: MIT */
/*
 * Which wheel is a loop's, for tw_uv_timer_init(loop, ...): libuv keeps
 * timers in the loop, which has no room for ours, so the layer keeps the
 * loops' wheels in a process-wide list under a lock.
 *
 * The last lookup is remembered, so that the next init on the same loop,
 * the common case by far, takes neither the lock nor the list. It is
 * written under the lock and read without it, as a sequence lock is: a
 * reader takes it only if the sequence was even and unchanged around its
 * reads. An entry is removed (and forgotten, if it is the remembered one)
 * on its loop's thread, so a lookup racing with its own loop's removal
 * would be two threads on one loop at once; a removal the program has
 * synchronised with (a loop handed to another thread and back, a loop
 * freed and another made at its address) is seen. Threads that init on
 * different loops take turns at being remembered, and lock as before.
 * Where C11's atomics are missing, every lookup locks.
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
static atomic_uint seq; /* odd while the remembered lookup changes */
static _Atomic(uv_loop_t *) last_loop;
static _Atomic(struct tw__uv_loop_entry *) last_entry;

/* Under loops_lock. Every access is sequentially consistent: a fence
 * would do with fewer, but ThreadSanitizer cannot check fences. */
static void remember(uv_loop_t *loop, struct tw__uv_loop_entry *e)
{
	unsigned s = atomic_load(&seq);

	atomic_store(&seq, s + 1);
	atomic_store(&last_loop, loop);
	atomic_store(&last_entry, e);
	atomic_store(&seq, s + 2);
}

static struct tw__uv_loop_entry *remembered(uv_loop_t *loop)
{
	unsigned s = atomic_load(&seq);
	uv_loop_t *l = atomic_load(&last_loop);
	struct tw__uv_loop_entry *e = atomic_load(&last_entry);

	if ((s & 1) || l != loop || atomic_load(&seq) != s)
		return NULL;
	return e;
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
	e = remembered(loop);
	if (e)
		return e;
#endif
	uv_once(&loops_once, loops_init);
	uv_mutex_lock(&loops_lock);
	for (e = loops; e && tw__uv_loop(&e->uv) != loop; e = e->next)
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
	remember(tw__uv_loop(&e->uv), e);
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
	if (atomic_load_explicit(&last_entry, memory_order_relaxed) == e)
		remember(NULL, NULL);
#endif
	uv_mutex_unlock(&loops_lock);
}
