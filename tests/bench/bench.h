/* SPDX-License-Identifier: MIT */
/*
 * The contract between the benchmark driver (driver.c) and one peer's
 * adapter (peer_tw.c, peer_floor.c, peer_heap.c, peer_heap_ptr.c, peer_uv.c,
 * peer_ev.c, peer_event.c),
 * which driver.c #includes (BENCH_PEER) so that the glue inlines. Each peer
 * is its own program: libev exports libevent-compatible event_* symbols,
 * and one process per peer keeps the RSS figures clean.
 *
 * Every peer keeps its timers in one array of containers
 * { its handle; uint64_t deadline; }. The deadline is the harness's copy of
 * the expiry, kept beside the handle so that checking a fire costs no extra
 * cache miss; 0 means "not armed". Its bytes are subtracted from the memory
 * figures (peer_harness_bytes()).
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- provided by the peer --- */

/* Short name used in the CSV: tw, floor, heap, heap-ptr, libuv, libev, libevent. */
extern const char peer_name[];
/*
 * How far past a deadline the driver sets the clock when it advances to it.
 * 0 for the peers that fire a timer once their clock reaches its deadline;
 * 1 ns for libev, which fires only when its clock is strictly past it.
 */
extern const uint64_t peer_slack_ns;

/* sizeof the peer's own timer handle, and harness bytes per container. */
size_t peer_handle_size(void);
size_t peer_harness_bytes(void);

/* Make a fresh timer structure whose clock starts at the virtual time
 * (already set), with n initialised, idle timers. 0 or -errno. */
int peer_open(uint32_t n);
/* Cancel what is left, free everything. */
void peer_close(void);

/* Arm idle timer i for an absolute deadline (ns, virtual clock). */
void peer_arm(uint32_t i, uint64_t deadline);
/* Re-arm timer i, armed or idle, with the library's own re-arm call. */
void peer_rearm(uint32_t i, uint64_t deadline);
/* Cancel timer i (it may have fired already). */
void peer_cancel(uint32_t i);
/* Run what is due at the virtual time `now` + peer_slack_ns (already set). */
void peer_advance(uint64_t now);
/* The harness deadline of timer i (0 if not armed). */
uint64_t peer_deadline(uint32_t i);

/* --- provided by the driver --- */

struct bench_check {
	uint64_t fired;
	uint64_t early;
	uint64_t late;
	uint64_t missed;
	uint64_t dup;
};

extern struct bench_check bench_chk;
/* The window every timer of the running workload was armed with (W3s), else 0. */
extern uint64_t bench_slack_ns;
/* The running workload's name where a peer may report on it (W3c, W3s), else NULL. */
extern const char *bench_workload;
/* Called with the fired timer's index when a fire must free its slot (W5). */
extern void (*bench_on_fire)(uint32_t i);
extern uint64_t bench_vnow; /* the virtual clock, ns */
/*
 * A peer whose adapter defines PEER_REHEARSE to 1 (the floor) gets one
 * untimed rehearsal of each workload before the timed repetitions, with the
 * same calls in the same order: bench_rehearsal is true from its
 * peer_open() to its peer_close(). Its timing is discarded.
 */
extern bool bench_rehearsal;

/*
 * Every peer's callback ends here. A fire is early if the clock is before
 * the deadline, late if the driver had already advanced past the deadline
 * (the clock is beyond deadline + slack: the fire missed the advance meant
 * for it), a duplicate if the timer was not armed (fired twice, or fired
 * after a cancel).
 */
static inline void bench_fired(uint64_t *deadline, uint32_t i)
{
	uint64_t d = *deadline;

	if (d == 0) {
		bench_chk.dup++;
		return;
	}
	if (bench_vnow < d)
		bench_chk.early++;
	else if (bench_vnow > d + peer_slack_ns + bench_slack_ns)
		bench_chk.late++;
	*deadline = 0;
	bench_chk.fired++;
	if (bench_on_fire)
		bench_on_fire(i);
}

/* --- provided by vclock.c --- */

/* The real CLOCK_MONOTONIC, for timing the workloads. */
uint64_t vclock_real_ns(void);
/* Calls the peers made into the interposed functions since start. */
struct vclock_counts {
	uint64_t mono;        /* clock_gettime(CLOCK_MONOTONIC) */
	uint64_t mono_coarse; /* clock_gettime(CLOCK_MONOTONIC_COARSE) */
	uint64_t realtime;    /* clock_gettime(CLOCK_REALTIME[_COARSE]) */
	uint64_t other_clock; /* other clock ids, passed to the real clock */
	uint64_t gettimeofday;
	uint64_t time;
	uint64_t polls;       /* epoll_wait/epoll_pwait/poll/select calls */
	uint64_t sleeps;      /* ... of those, with a timeout other than 0 */
};
extern struct vclock_counts vclock_counts;

#endif /* BENCH_H */
