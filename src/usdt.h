/* SPDX-License-Identifier: MIT
 *
 * The USDT probes of provider "timerwheel" (timerwheel-probes(7) says what
 * each one means), one macro per probe, so that every call site passes the
 * same arguments in the same order. Built with TW_PROBES (the "probes"
 * option), each is <sys/sdt.h>'s probe: a nop and an ELF note that a
 * tracer reads. Without it, each is nothing and its arguments are not
 * evaluated, so an argument must have no effect of its own.
 *
 * The core's probes have semaphores (TW_PROBE_SEMAPHORES, usdt.cpp), which
 * a tracer raises while it watches: TW_PROBE_ENABLED() guards an argument
 * that costs work to compute.
 */
#ifndef TW_USDT_H
#define TW_USDT_H

/* The arm probe's level for a timer that went to the due list at once,
 * and for a re-arm that left the timer in the slot it was in. */
#define TW_PROBE_LEVEL_DUE (-1)
#define TW_PROBE_LEVEL_KEPT (-2)

#if defined(TW_PROBES) && TW_PROBES
#if defined(TW_PROBE_SEMAPHORES) && TW_PROBE_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
/* The core is C++; hidden, a semaphore is read without the GOT. */
#include "compiler.hpp"
#define TW_SEMAPHORE(name) extern "C" TW_HIDDEN unsigned short timerwheel_##name##_semaphore
TW_SEMAPHORE(arm);
TW_SEMAPHORE(cancel);
TW_SEMAPHORE(fire);
TW_SEMAPHORE(advance);
TW_SEMAPHORE(cascade);
TW_SEMAPHORE(post);
TW_SEMAPHORE(apply);
#define TW_PROBE_ENABLED(name) TW_UNLIKELY(timerwheel_##name##_semaphore != 0)
#endif
#include <sys/sdt.h>
#if defined(TW_PROBE_SEMAPHORES) && TW_PROBE_SEMAPHORES
/* A probe need not make its semaphore look used to the compiler (usdt.cpp
 * defines them all): that asm operand costs a lea at every probe of PIC. */
#undef _SDT_NOTE_SEMAPHORE_USE
#define _SDT_NOTE_SEMAPHORE_USE(provider, name)
#endif

#define TW_PROBE_ARM(w, t, expires, now, level) STAP_PROBE5(timerwheel, arm, w, t, expires, now, level)
#define TW_PROBE_CANCEL(w, t, was_pending) STAP_PROBE3(timerwheel, cancel, w, t, was_pending)
#define TW_PROBE_FIRE(w, t, expires, late_ns, fn) STAP_PROBE5(timerwheel, fire, w, t, expires, late_ns, fn)
#define TW_PROBE_ADVANCE(w, now, fired, cascaded, deferred) \
	STAP_PROBE5(timerwheel, advance, w, now, fired, cascaded, deferred)
#define TW_PROBE_CASCADE(w, level, moved) STAP_PROBE3(timerwheel, cascade, w, level, moved)
#define TW_PROBE_POST(w, t, kind, expires) STAP_PROBE4(timerwheel, post, w, t, kind, expires)
#define TW_PROBE_APPLY(w, t, kind, depth) STAP_PROBE4(timerwheel, apply, w, t, kind, depth)
#define TW_PROBE_WAKE(backend, w, now, next, early) STAP_PROBE5(timerwheel, wake, backend, w, now, next, early)
#define TW_PROBE_UV_START(h, timeout_ms, repeat_ms) STAP_PROBE3(timerwheel, uv_timer_start, h, timeout_ms, repeat_ms)
#define TW_PROBE_UV_STOP(h, was_active) STAP_PROBE2(timerwheel, uv_timer_stop, h, was_active)
#define TW_PROBE_UV_FIRE(h, cb) STAP_PROBE2(timerwheel, uv_timer_fire, h, cb)
#else
/* Unevaluated: an argument computed for a probe alone is still used. */
#define TW_PROBE_ARM(w, t, expires, now, level) \
	do { \
		(void)sizeof(w); (void)sizeof(t); (void)sizeof(expires); (void)sizeof(now); (void)sizeof(level); \
	} while (0)
#define TW_PROBE_CANCEL(w, t, was_pending) \
	do { \
		(void)sizeof(w); (void)sizeof(t); (void)sizeof(was_pending); \
	} while (0)
#define TW_PROBE_FIRE(w, t, expires, late_ns, fn) \
	do { \
		(void)sizeof(w); (void)sizeof(t); (void)sizeof(expires); (void)sizeof(late_ns); (void)sizeof(fn); \
	} while (0)
#define TW_PROBE_ADVANCE(w, now, fired, cascaded, deferred) \
	do { \
		(void)sizeof(w); (void)sizeof(now); (void)sizeof(fired); (void)sizeof(cascaded); (void)sizeof(deferred); \
	} while (0)
#define TW_PROBE_CASCADE(w, level, moved) \
	do { \
		(void)sizeof(w); (void)sizeof(level); (void)sizeof(moved); \
	} while (0)
#define TW_PROBE_POST(w, t, kind, expires) \
	do { \
		(void)sizeof(w); (void)sizeof(t); (void)sizeof(kind); (void)sizeof(expires); \
	} while (0)
#define TW_PROBE_APPLY(w, t, kind, depth) \
	do { \
		(void)sizeof(w); (void)sizeof(t); (void)sizeof(kind); (void)sizeof(depth); \
	} while (0)
#define TW_PROBE_WAKE(backend, w, now, next, early) \
	do { \
		(void)sizeof(backend); (void)sizeof(w); (void)sizeof(now); (void)sizeof(next); (void)sizeof(early); \
	} while (0)
#define TW_PROBE_UV_START(h, timeout_ms, repeat_ms) \
	do { \
		(void)sizeof(h); (void)sizeof(timeout_ms); (void)sizeof(repeat_ms); \
	} while (0)
#define TW_PROBE_UV_STOP(h, was_active) \
	do { \
		(void)sizeof(h); (void)sizeof(was_active); \
	} while (0)
#define TW_PROBE_UV_FIRE(h, cb) \
	do { \
		(void)sizeof(h); (void)sizeof(cb); \
	} while (0)
#endif

#ifndef TW_PROBE_ENABLED
#define TW_PROBE_ENABLED(name) 0
#endif

#endif
