/* SPDX-License-Identifier: MIT */
/*
 * timerwheel: a hierarchical timing wheel for C programs and event loops.
 *
 * Time. Every time is a uint64_t count of nanoseconds of CLOCK_MONOTONIC.
 * Times are absolute: an expiry or a `now` is a moment, never a delay.
 * tw_deadline() turns a delay into a moment.
 * The wheel never reads a clock: the caller passes `now`.
 *
 * Names. A call that returns a value is named by the value: tw_now(),
 * tw_count(), tw_tick(). A call that fills a struct is named tw_get_NOUN():
 * tw_get_stats(), tw_get_lateness().
 *
 * Firing rule. Let E be a timer's expiry, and tick the wheel's tick.
 * A timer without slack (the default) never fires before E.
 * If E > tw_now() when it is armed, it fires in the first tw_advance()
 * whose `now` reaches E rounded up to a whole tick.
 * If E <= tw_now() when it is armed, it fires in the next tw_advance().
 * The rounding saturates at UINT64_MAX.
 * So a timer in the last partial tick fires when `now` reaches UINT64_MAX.
 * Every armed timer fires exactly once, unless it is cancelled or re-armed
 * first.
 *
 * Slack. A timer may be armed with a window [E, E + S] instead of an
 * instant. tw_add_range() and tw_mod_range() give a timer its own slack S.
 * The wheel's default slack (struct tw_config) serves tw_add() and tw_mod().
 * Such a timer never fires before E.
 * It fires at the latest in the first tw_advance() whose `now` reaches
 * E + S rounded up to a whole tick (saturating).
 * In ticks, the window runs from E's tick to E's tick + S / tick, rounded
 * down.
 * A window that runs past the last tick (the one UINT64_MAX rounds up to)
 * ends at the last tick.
 * The wheel picks the coarsest tick of the window.
 * That is the multiple of the largest power of two in the window.
 * tw_next_expiry() reports the picked tick.
 * So a loop that sleeps until then wakes for the timer there.
 * Timers whose windows overlap mostly pick the same tick and share one
 * wake-up.
 * A wake-up is an advance whose `now` reaches tw_next_expiry(), for
 * whatever timer.
 * That is the next expiry once the requests from other threads are applied.
 * A wake-up also fires every timer whose window has opened.
 * A window has opened when `now` reaches E rounded up to a tick.
 * An advance short of tw_next_expiry() fires a timer with slack only at its
 * picked tick.
 * A periodic timer picks by one rule for all its re-arms.
 * It fires at E's tick rounded up to a multiple of 2^a ticks.
 * Here 2^a is the largest power of two no greater than S / tick + 1.
 * If that multiple lies past the last tick, it picks as a one-shot timer.
 * Slack 0 is the exact firing rule above.
 * timerwheel(7) explains how the wheel finds opened windows.
 *
 * Order. Timers that fire in one advance fire in the order of their ticks.
 * A timer with slack counts with the tick it fires at, inside its window.
 * First come the timers whose tick the advance reached.
 * Then come those whose window a wake-up found open.
 * Within one tick the order is unspecified.
 * Timers armed already expired fire first, in the order they were armed.
 *
 * Callbacks. A callback may cancel or re-arm any timer.
 * It may arm new timers.
 * It may free the memory of the timer that is running.
 * A timer armed from a callback, due at or before the advance's `now`,
 * fires in the next advance, not in the current one.
 * After a callback, the wheel touches its timer's memory only if the
 * callback re-armed it.
 *
 * Threads. A wheel belongs to one thread, its owner: the thread that runs
 * its loop.
 * Its functions take no lock.
 * No two threads may call them on the same wheel at once.
 * Other threads arm, re-arm and cancel its timers only through requests.
 * tw_post_mod(), tw_post_mod_range() and tw_post_del() queue a
 * struct tw_request on the wheel.
 * Posting takes no lock and allocates nothing.
 * The owner applies queued requests in the order they were posted.
 * It applies them at the start of each tw_advance(), or in tw_drain().
 * A request acts as if the owner had called tw_mod(), tw_mod_range() or
 * tw_del() then.
 * A request posted again while it is still queued is replaced: the latest
 * post wins (see tw_post_mod()).
 * Every race follows from these rules:
 *
 * - A request that races the timer's firing takes effect before or after
 *   the advance that fires it.
 *   Before it, a cancel prevents the firing, and a re-arm moves the timer.
 *   After it, the timer has fired.
 *   A re-arm then arms it again.
 *   A cancel then finds it idle, and its result is 0.
 * - A cancel posted while the timer's callback runs takes effect after the
 *   callback returns.
 *   Requests are never applied inside callbacks.
 * - A request is done once tw_request_done() or tw_request_wait() says so.
 *   Then the effect of its latest post holds.
 *   The owner no longer touches the request.
 *   A timer cancelled by a done request never fires, unless re-armed since.
 *   It may be freed, as after tw_del() on the owner (del_timer_sync()).
 * - Requests to a destroyed wheel fail with -ESHUTDOWN.
 *   Requests still queued at the destroy are done with result -ESHUTDOWN.
 *   From a callback, that happens once the callback has returned.
 * - A post that races the destroy either fails, or returns 0 or 1.
 *   If it returns 0 or 1, its request is done once the post has returned.
 *   It also waits for any other post of the same request to return.
 *   And it waits for tw_wheel_destroy() to return.
 *   From a callback, it waits for the advance that ran the destroy.
 *   Its result is -ESHUTDOWN, unless the owner applied it before.
 *   This holds also while a backend still holds the wheel.
 *   So a waiting thread never waits for the backend to let go.
 * - Posting to a wheel whose memory may have been released is a use after
 *   free.
 *   Stop the posting threads before the last of tw_wheel_destroy(),
 *   tw_uv_close() or tw_uring_detach().
 * - A poster may wait for a request with tw_request_wait_timeout().
 *   It waits at most its timeout.
 *   An owner whose loop stopped without destroying the wheel never applies
 *   the request.
 *   tw_request_wait(), which has no timeout, would wait for it forever.
 *
 * The owner learns of a request that moves the next expiry earlier through
 * the wake hook (tw_set_wake()).
 * The backends install their own.
 * timerwheel(7) gives the reasoning behind the queue's order.
 *
 * Loops. Any loop drives a wheel with three calls.
 * It sleeps until tw_next_expiry(), reads the clock, and calls tw_advance()
 * with it.
 * The loop kit does the arithmetic around them.
 * tw_clock_monotonic() reads the clock.
 * tw_deadline() makes "now + delay" without wrapping.
 * tw_timeout_ms() turns the next expiry into a poll() or epoll_wait()
 * timeout, rounded up.
 * tw_ns_to_timespec() and tw_timeout_timespec() make the struct timespec of
 * timerfd_settime(), ppoll() and epoll_pwait2().
 * A loop may arm its one OS timer (a timerfd) from the notify hook
 * (tw_set_notify()).
 * Then the OS timer moves only when it must.
 *
 * Errors. Functions return 0 or a positive count on success.
 * They return a negative errno on failure, and then change nothing.
 */
#ifndef TIMERWHEEL_H
#define TIMERWHEEL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * TW_API marks what the libraries export.
 * Every other symbol is hidden.
 * On ELF it is visibility("default").
 * On Windows it is __declspec(dllexport) while timerwheel's own DLL is
 * built (TW_BUILDING_DLL).
 * A program that uses the DLL needs nothing.
 * It links the DLL's import library, as it would a static one.
 */
#if defined(_WIN32) || defined(__CYGWIN__)
#ifdef TW_BUILDING_DLL
#define TW_API __declspec(dllexport)
#else
#define TW_API
#endif
#elif defined(__GNUC__)
#define TW_API __attribute__((visibility("default")))
#else
#define TW_API
#endif

/*
 * Two error numbers the library returns are not in every <errno.h>.
 * Windows has neither; macOS and the BSDs have no EUCLEAN.
 * Where this header says -EUCLEAN or -ESHUTDOWN, the value is -TW_EUCLEAN
 * or -TW_ESHUTDOWN.
 * Where <errno.h> defines them (as Linux does), they are EUCLEAN and
 * ESHUTDOWN.
 * Elsewhere TW_ESHUTDOWN is 4042, which on Windows is libuv's UV_ESHUTDOWN
 * negated.
 * Elsewhere TW_EUCLEAN is 4117, beyond the C libraries' and libuv's
 * numbers.
 * Portable programs compare results with the TW_ names.
 */
#if defined(EUCLEAN) && !defined(_WIN32)
#define TW_EUCLEAN EUCLEAN
#else
#define TW_EUCLEAN 4117
#endif
#if defined(ESHUTDOWN) && !defined(_WIN32)
#define TW_ESHUTDOWN ESHUTDOWN
#else
#define TW_ESHUTDOWN 4042
#endif

#define TW_VERSION_MAJOR 1
#define TW_VERSION_MINOR 0
#define TW_VERSION_PATCH 0
/** The version as one number, (major << 16) | (minor << 8) | patch, as tw_version() gives it. */
#define TW_VERSION_HEX ((TW_VERSION_MAJOR << 16) | (TW_VERSION_MINOR << 8) | TW_VERSION_PATCH)

/** Default tick: 1 ms. */
#define TW_DEFAULT_TICK_NS 1000000u
/** Default slots per level: 2^6 = 64. */
#define TW_DEFAULT_SLOT_BITS 6u
/** Largest slot_bits accepted (64 slots per level, one 64-bit bitmap). */
#define TW_MAX_SLOT_BITS 6u

struct tw_wheel;
struct timespec; /* from <time.h>, for the loop kit's conversions */

/**
 * struct tw_timer - an intrusive timer, embedded in the caller's struct
 * @expires: the expiry last armed (ns, absolute). Read-only for the caller.
 * @fn:      the callback, set by tw_timer_init().
 *
 * The library never allocates a timer.
 * Initialise it once with tw_timer_init().
 * In the callback, tw_container_of() gives the outer struct.
 * Fields whose names start with tw__ are private.
 * Its size is part of the ABI.
 * It is 40 bytes on LP64 (64-bit Linux, macOS, the BSDs).
 * It is 40 bytes on LLP64 (64-bit Windows).
 * On ILP32 it is 28 bytes where uint64_t is 4-byte aligned in structs
 * (i386).
 * It is 32 bytes where uint64_t is 8-byte aligned (32-bit ARM, Windows on
 * x86).
 */
struct tw_timer {
	struct tw_timer *tw__next;
	struct tw_timer **tw__pprev;
	uint64_t expires;
	void (*fn)(struct tw_timer *t);
	uint32_t tw__owner;
	uint16_t tw__where;
	uint8_t tw__flags;
	uint8_t tw__magic;
};

#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(void *) != 8 || sizeof(struct tw_timer) <= 40,
	      "struct tw_timer is at most 40 bytes on 64-bit targets");
#else /* C, and C++98/03, which have no static_assert */
typedef char tw__timer_size_check[(sizeof(void *) != 8 || sizeof(struct tw_timer) <= 40) ? 1 : -1];
#endif

/**
 * struct tw_request - a request from another thread to arm, re-arm or cancel
 *
 * The posting thread provides it: embed it in the work item that posts it.
 * The queue allocates nothing.
 * A new request is zero-filled (memset(), or `= {0}`).
 * A request carries one operation at a time, the one of its latest post.
 * Posting it again while it is queued replaces its operation, timer,
 * expiry and window (see tw_post_mod()).
 * All fields are private.
 * It is 40 bytes on 64-bit targets.
 */
struct tw_request {
	struct tw_request *tw__next;
	struct tw_timer *tw__timer;
	uint64_t tw__expires;
	uint64_t tw__slack;
	int32_t tw__result;
	uint32_t tw__state; /* phase, operation and generation; read and written atomically */
};

#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(void *) != 8 || sizeof(struct tw_request) == 40,
	      "struct tw_request is 40 bytes on 64-bit targets");
#else
typedef char tw__request_size_check[(sizeof(void *) != 8 || sizeof(struct tw_request) == 40) ? 1 : -1];
#endif

/**
 * struct tw_periodic - a timer that repeats every @period ns without drift
 * @timer:  the embedded timer; arm it with tw_add(w, &p->timer, first).
 * @period: the period in ns, read each time the timer fires; may be changed.
 *
 * Before its callback runs, the timer is re-armed at expires + n * period.
 * n is the smallest number that puts it after the advance's `now`.
 * So it never drifts.
 * A timer that fell more than a period behind skips to the next future
 * multiple.
 * It does not fire a burst.
 * Stop it with tw_del(), also from its own callback, where it is pending.
 * The re-arm saturates at UINT64_MAX.
 * A timer that fires when `now` is UINT64_MAX is not re-armed: no later
 * time exists.
 * It is then idle in its callback, and its expires is the expiry it fired
 * for.
 */
struct tw_periodic {
	struct tw_timer timer;
	uint64_t period;
};

/**
 * struct tw_config - wheel geometry and default slack
 * @tick_ns:   the resolution in ns; 0 means TW_DEFAULT_TICK_NS.
 * @slot_bits: log2 of the slots per level, 1 to 6; 0 means 6.
 * @slack_ns:  the slack of timers armed with tw_add() and tw_mod(), in ns;
 *             0 means exact (see "Slack").
 *
 * The wheel has as many levels as it takes to cover every 64-bit time.
 * The default slack serves code that arms through tw_add() and tw_mod(),
 * such as libraries and the C++ API.
 * tw_add_range() and tw_mod_range() give one timer its own slack.
 */
struct tw_config {
	uint64_t tick_ns;
	unsigned slot_bits;
	uint64_t slack_ns;
};

/**
 * struct tw_stats - counters since the wheel was created
 * @armed:        timers armed by tw_add() and tw_mod(), periodic re-arms
 *                included
 * @fired:        callbacks called
 * @cancelled:    pending timers disarmed by tw_del()
 * @cascaded:     timers moved from a coarser level to a finer one, or
 *                straight to the due list. A re-armed timer placed again at
 *                its own or a coarser level is not counted.
 * @placed:       timers put into a wheel slot. A timer counts when armed for
 *                a later tick, and again each time its slot comes due and it
 *                moves on. placed / armed is the placements per timer; slack
 *                lowers it. Timers a wake-up's search puts back do not count.
 * @advances:     calls of tw_advance() that moved or kept time
 * @idle_advances: such calls that fired nothing (cascades only, early
 *                wake-ups, or a loop's advances between timers)
 * @notifies:     calls of the notify hook
 * @os_rearms:    notify hook calls that touched the OS timer (the hook said so)
 */
struct tw_stats {
	uint64_t armed;
	uint64_t fired;
	uint64_t cancelled;
	uint64_t cascaded;
	uint64_t placed;
	uint64_t advances;
	uint64_t idle_advances;
	uint64_t notifies;
	uint64_t os_rearms;
};

/** Buckets of struct tw_lateness: none late, then one per power of two of ns. */
#define TW_LATENESS_BUCKETS 65

/**
 * struct tw_lateness - how late timers fired, as a histogram
 * @tick_ns: the wheel's tick, for reading the buckets against it
 * @count:   @count[0] counts the timers that fired at their expiry to the ns.
 *           For b >= 1, @count[b] counts those that fired from 2^(b-1) ns up
 *           to (not including) 2^b ns after it.
 *           With a 1 ms tick, a tick is in bucket 20, from 0.52 to 1.05 ms.
 * @fired:   the sum of @count, the callbacks called
 * @max_ns:  the largest lateness, in ns
 *
 * Lateness is the @now of the advance that fired a timer, minus its expiry.
 * For a periodic timer it is the expiry it fired for.
 * It includes what the wheel adds: rounding to ticks and slack windows.
 * It includes the wait of a timer a budget left for a later advance.
 * It includes how late the program advanced the wheel.
 * With a backend, @now is the clock read when its OS timer woke it.
 * So the OS's own wake-up lateness is in it too.
 * It does not include a loop's own delay from that @now to the callback.
 */
struct tw_lateness {
	uint64_t tick_ns;
	uint64_t count[TW_LATENESS_BUCKETS];
	uint64_t fired;
	uint64_t max_ns;
};

/**
 * tw_notify_fn - the notify hook, for event-loop backends
 * @w:    the wheel
 * @next: the wheel's new next expiry (as tw_next_expiry()), UINT64_MAX if none
 * @arg:  the argument given to tw_set_notify()
 *
 * A backend arms its single OS timer for @next here.
 * The wheel calls the hook in these cases:
 *
 * - From tw_add() and tw_mod(), when the next expiry moves earlier than the
 *   last value passed to the hook.
 * - From tw_add() and tw_mod(), when the wheel was empty.
 * - From tw_del() when the wheel becomes empty, with UINT64_MAX.
 * - From tw_wheel_destroy(), with UINT64_MAX.
 * - At the end of every tw_advance() that moved or kept the clock, with the
 *   next expiry then.
 *   That is UINT64_MAX if a callback destroyed the wheel.
 *
 * A backward tw_advance() is a no-op and calls nothing.
 * The hook is never called while callbacks run.
 *
 * @next is UINT64_MAX for an empty wheel.
 * It is also UINT64_MAX for a wheel whose timers fire only at UINT64_MAX.
 * tw_count() tells them apart.
 * A loop should stay alive for the second, as for a native timer with the
 * largest timeout.
 * The hook may read the wheel: tw_count(), tw_next_expiry(), tw_now().
 * It may remove itself with tw_set_notify(w, NULL, NULL).
 * For example, it may do so on hearing that a destroyed wheel is empty.
 * It must not change the wheel otherwise.
 *
 * An installed hook holds the wheel.
 * A destroyed wheel's memory is released only once the hook is removed (see
 * tw_wheel_destroy()).
 *
 * Return: 1 if the hook started, moved or stopped the OS timer, else 0.
 * The 1s are counted in &tw_stats.os_rearms.
 */
typedef int (*tw_notify_fn)(struct tw_wheel *w, uint64_t next, void *arg);

/**
 * tw_container_of - the struct that embeds a member
 * @ptr:    pointer to the member, e.g. the struct tw_timer * a callback gets
 * @type:   the outer struct's type
 * @member: the member's name within @type
 *
 * @ptr may point to const, e.g. in a function that takes a const timer.
 * The result is a plain @type *: keep the const yourself if it matters.
 * The arithmetic goes through an integer, so -Wcast-qual stays quiet.
 */
#define tw_container_of(ptr, type, member) \
	((type *)(uintptr_t)((uintptr_t)(ptr) - offsetof(type, member)))

/**
 * tw_version - the version of the library the program runs with
 *
 * Compare it with TW_VERSION_HEX, the version the program was compiled
 * against.
 * libuv's uv_version() and UV_VERSION_HEX work the same way.
 *
 * Return: (major << 16) | (minor << 8) | patch.
 */
TW_API unsigned tw_version(void);

/**
 * tw_version_string - the version of the library as text
 *
 * Return: "major.minor.patch", a static string.
 */
TW_API const char *tw_version_string(void);

/**
 * tw_wheel_create - make a wheel whose clock starts at @now
 * @out: where the new wheel is stored; untouched on failure
 * @cfg: geometry, or NULL for the defaults (1 ms tick, 64 slots per level)
 * @now: the current time in ns
 *
 * A wheel is one allocation, and it allocates nothing after it.
 * It takes 48 bytes per slot, and there are levels times 2^slot_bits slots.
 * It takes about 1,900 bytes besides.
 * With the defaults on x86-64 that is 26,456 bytes.
 * The process also keeps one set of live wheel ids.
 * The set takes 4 bytes per live wheel and is kept at most half full.
 * It grows when more wheels are alive at once than it holds.
 * It is freed when no wheel is alive.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @out is NULL or @cfg->slot_bits is above 6.
 * It returns -ENOMEM if an allocation failed.
 */
TW_API int tw_wheel_create(struct tw_wheel **out, const struct tw_config *cfg, uint64_t now);

/**
 * tw_wheel_destroy - free a wheel
 * @w: the wheel, or NULL (then nothing happens)
 *
 * Timers still armed become idle at once (tw_pending() is false).
 * They are never called.
 * Their memory may be released right after this call.
 * A second call on the same wheel does nothing, while its memory is still
 * held.
 *
 * The wheel's own memory is released when nothing holds it any longer:
 *
 * - From inside one of @w's callbacks, when that tw_advance() returns.
 *   No further callback of @w runs in that advance.
 * - While a notify hook is installed (a backend drives @w), when the hook
 *   is removed.
 *   tw_set_notify(@w, NULL) removes it, and tw_uv_close() and
 *   tw_uring_detach() call that.
 *   Until then the backend may still read @w.
 *   The hook is called once more with UINT64_MAX, so it can stop its OS
 *   timer.
 *   That call comes at once, or when the advance ends if the destroy came
 *   from a callback.
 *
 * Until it is released, a destroyed wheel holds no timer:
 *
 * - tw_add(), tw_mod() and tw_advance() return -EINVAL.
 *   tw_advance() from a callback returns -EBUSY.
 * - tw_set_notify() with a hook returns -EINVAL.
 * - tw_del() of an idle timer returns 0.
 * - tw_count() returns 0, and tw_next_expiry() UINT64_MAX.
 *
 * Once released, @w must not be used again.
 */
TW_API void tw_wheel_destroy(struct tw_wheel *w);

/**
 * tw_timer_init - prepare a timer before its first use
 * @t:  the timer
 * @fn: its callback, called with @t when it fires
 *
 * Call it once, while the timer is idle.
 * A NULL @t is ignored.
 */
TW_API void tw_timer_init(struct tw_timer *t, void (*fn)(struct tw_timer *t));

/**
 * tw_periodic_init - prepare a periodic timer
 * @p:      the periodic timer
 * @fn:     its callback, called with &p->timer each period
 * @period: the period in ns
 *
 * Arm it with tw_add(w, &p->timer, first_expiry).
 *
 * Return: 0, or -EINVAL if @p or @fn is NULL or @period is 0.
 */
TW_API int tw_periodic_init(struct tw_periodic *p, void (*fn)(struct tw_timer *t), uint64_t period);

/**
 * tw_add - arm an idle timer
 * @w:       the wheel
 * @t:       an initialised, idle timer
 * @expires: the expiry, absolute ns; in the past means the next advance
 *
 * O(1).
 * The timer gets the wheel's default slack, &tw_config.slack_ns.
 * That is 0 unless the wheel was created with one.
 * tw_add_range() gives a timer its own slack.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @w or @t is NULL, or @w was destroyed (see
 * tw_wheel_destroy()).
 * It returns -EINVAL if @t was not initialised with tw_timer_init(), or has
 * no callback.
 * It returns -EBUSY if @t is already armed, on this wheel or another.
 */
TW_API int tw_add(struct tw_wheel *w, struct tw_timer *t, uint64_t expires);

/**
 * tw_mod - arm or re-arm a timer for a new expiry, in one O(1) call
 * @w:       the wheel
 * @t:       an initialised timer, idle or armed on @w
 * @expires: the new expiry, absolute ns
 *
 * Moving an armed timer later only stores the new expiry.
 * So the common re-arm, a timeout pushed forward on each event, touches no
 * other timer's memory.
 * A timer with slack also stays where it is in two cases.
 * Either its place comes due before its new window opens.
 * Or its place holds the tick picked in that window.
 * Otherwise it moves, still in O(1).
 * The timer gets the wheel's default slack, as with tw_add().
 * tw_mod_range() gives a timer its own slack.
 *
 * Return: 1 if @t was armed before, 0 if it was idle.
 * It returns -EINVAL if @w or @t is NULL, or @t was not initialised.
 * It returns -EINVAL if @t is armed on another wheel.
 * It returns -EINVAL if @w was destroyed (see tw_wheel_destroy()).
 */
TW_API int tw_mod(struct tw_wheel *w, struct tw_timer *t, uint64_t expires);

/**
 * tw_add_range - arm an idle timer to fire anywhere in a window
 * @w:       the wheel
 * @t:       an initialised, idle timer
 * @expires: the start of the window, absolute ns: never earlier
 * @slack:   the window's length in ns; 0 is exact, as tw_add()
 *
 * O(1).
 * The timer fires in [@expires, @expires + @slack rounded up to a tick].
 * It fires at the tick the wheel picks in that window, the coarsest one.
 * Many timers share that tick, and a backend sleeps until it.
 * It may fire earlier, in a wake-up that reaches @expires rounded up to a
 * tick (see "Slack").
 * A periodic timer keeps its window for its re-arms.
 * Like Linux's hrtimer_start_range_ns() and libdispatch's leeway, pass
 * what the program can tolerate.
 * For example, pass a second on a 30 s idle timeout.
 *
 * Return: as tw_add().
 */
TW_API int tw_add_range(struct tw_wheel *w, struct tw_timer *t, uint64_t expires, uint64_t slack);

/**
 * tw_mod_range - arm or re-arm a timer for a new window, in one O(1) call
 * @w:       the wheel
 * @t:       an initialised timer, idle or armed on @w
 * @expires: the start of the window, absolute ns
 * @slack:   the window's length in ns; 0 is exact, as tw_mod()
 *
 * As tw_mod(), with the window of tw_add_range().
 * A re-arm only stores the new expiry and window in two cases.
 * Either the timer's place comes due before the new window opens.
 * Or its place holds the new tick, the coarsest of the new window.
 * Any other re-arm moves the timer, still in O(1).
 * With a slack under one tick the timer is exact, and tw_mod()'s rule
 * applies.
 *
 * Return: as tw_mod().
 */
TW_API int tw_mod_range(struct tw_wheel *w, struct tw_timer *t, uint64_t expires, uint64_t slack);

/**
 * tw_del - cancel a timer, O(1)
 * @w: the wheel
 * @t: the timer
 *
 * Cancelling an idle timer is not an error.
 * It is safe from any callback.
 * A timer due in the same advance then does not fire.
 *
 * Return: 1 if @t was armed, 0 if it was idle.
 * It returns -EINVAL if @w or @t is NULL, or @t is armed on another wheel.
 */
TW_API int tw_del(struct tw_wheel *w, struct tw_timer *t);

/**
 * tw_pending - is the timer armed?
 * @t: the timer, or NULL (false)
 *
 * A timer is pending from tw_add() or tw_mod() until it fires or is
 * cancelled.
 * A periodic timer stays pending in its own callback.
 * It is not pending there if it was not re-armed: period 0, or it fired
 * when `now` was UINT64_MAX.
 */
TW_API bool tw_pending(const struct tw_timer *t);

/**
 * tw_forward - move an idle timer's expiry past @now by whole periods
 * @t:      the timer, idle (typically from its own callback)
 * @now:    the time to get past
 * @period: the period in ns
 *
 * Like the kernel's hrtimer_forward().
 * t->expires becomes expires + n * period.
 * n is the smallest number that makes it later than @now.
 * Both saturate at UINT64_MAX.
 * The expiry is then UINT64_MAX, which is not later than a @now of
 * UINT64_MAX (no time is).
 * Arm the timer afterwards with tw_add().
 * It never drifts, and it skips missed periods instead of bursting.
 *
 * Return: n, the number of periods added.
 * n is UINT64_MAX if it does not fit, e.g. expiry 0, @now UINT64_MAX,
 * @period 1.
 * It returns 0 if @t is NULL or pending, or @period is 0.
 * It returns 0 if the expiry is already later than @now.
 */
TW_API uint64_t tw_forward(struct tw_timer *t, uint64_t now, uint64_t period);

/**
 * tw_advance - move the wheel's clock to @now and run what is due
 * @w:   the wheel
 * @now: the current time in ns
 *
 * It jumps over empty stretches.
 * An advance of ten hours with nothing due costs a handful of bit
 * operations.
 * A @now earlier than tw_now() is a no-op that returns 0.
 *
 * Return: the number of callbacks called.
 * It returns -EINVAL if @w is NULL or was destroyed (see
 * tw_wheel_destroy()).
 * It returns -EBUSY if called from one of @w's callbacks.
 */
TW_API int tw_advance(struct tw_wheel *w, uint64_t now);

/**
 * tw_advance_budget - tw_advance(), firing at most @budget timers
 * @w:      the wheel
 * @now:    the current time in ns
 * @budget: the most callbacks to call, at least 1
 *
 * For a loop that must stay responsive when many timers come due at once,
 * e.g. after a suspend or a stall.
 * It moves the clock to @now, as tw_advance() does.
 * It takes the first @budget due timers, in tick order, as its batch.
 * It calls their callbacks.
 * The other due timers stay due, in the same order.
 * While any is left, tw_next_expiry() is tw_now().
 * The next advance fires them first, with or without a budget.
 * They fire before the timers that come due at a later tick.
 * So the loop serves its I/O between two batches.
 *
 * Every guarantee holds across batches:
 *
 * - No timer fires before its expiry.
 * - Each timer fires once.
 * - The batches keep tick order.
 * - A callback may cancel or re-arm a timer still waiting, in its batch or
 *   a later one.
 *   That timer then fires by its new expiry, or not at all.
 *
 * The batch is taken before its first callback runs.
 * It is not refilled.
 * A timer of the batch that an earlier callback cancels or re-arms leaves
 * it.
 * Then fewer than @budget callbacks run, although timers are still due.
 * The return value says how many ran.
 * A timer armed already due fires after the timers left waiting.
 * That holds for one armed from a callback or between two batches.
 * A budget of UINT_MAX is no budget.
 *
 * Return: the number of callbacks called, at most @budget.
 * It returns -EINVAL if @w is NULL or was destroyed, or @budget is 0.
 * It returns -EBUSY if called from one of @w's callbacks.
 */
TW_API int tw_advance_budget(struct tw_wheel *w, uint64_t now, unsigned budget);

/**
 * tw_set_wake_budget - the most timers a backend fires per wake-up
 * @w:      the wheel
 * @budget: at least 1; UINT_MAX (the default) for no budget
 *
 * The libuv and io_uring backends read it when their OS timer fires.
 * They then call tw_advance_budget(w, now, tw_wake_budget(w)).
 * A wake-up that finds many timers due fires that many of them.
 * It leaves the rest for the next turn of the loop.
 * The loop serves its I/O in between.
 * A loop of the program's own can do the same.
 *
 * The uv_timer_t layer (<timerwheel/uv_timer.h>) changes this on a libuv
 * backend that carries its timers.
 * That starts with the first tw_uv_timer_init_on() on the backend.
 * For the loop's own backend, it starts with tw_uv_timer_init().
 * Such a backend advances its wheel without a budget.
 * It spends the budget on the layer's callbacks instead.
 * The program's own timers on that wheel all fire in their wake-up.
 *
 * Set it on the backend's wheel: tw_uv_wheel(), or the wheel given to
 * tw_uring_attach().
 * It may be set at any time, also from a callback.
 * It applies from the next wake-up.
 * The libuv backend arms its uv timer in libuv's whole milliseconds.
 * So the rest waits for the next millisecond.
 * That fires at most about @budget timers per millisecond.
 * The loop's I/O is served meanwhile.
 *
 * Return: 0, -EINVAL if @w is NULL or @budget is 0.
 */
TW_API int tw_set_wake_budget(struct tw_wheel *w, unsigned budget);

/**
 * tw_wake_budget - the budget set by tw_set_wake_budget()
 * @w: the wheel
 *
 * Return: the budget, UINT_MAX if none was set (or @w is NULL).
 */
TW_API unsigned tw_wake_budget(const struct tw_wheel *w);

/**
 * tw_next_expiry - when the wheel next has work
 * @w: the wheel
 *
 * The moment to wake for the earliest firing tick.
 * For an exact timer, that is its expiry rounded up to a whole tick.
 * For a timer with slack, it is the tick the wheel picked in its window.
 * The advance that reaches it also fires every timer whose window has
 * opened (see "Slack").
 * It costs O(1), through occupancy bitmaps.
 * It is never later than the earliest firing tick.
 * It is exactly that tick, unless a timer left its slot early: cancelled,
 * or re-armed elsewhere.
 * It is tw_now() if a timer is already due.
 * That holds also in a callback, while timers of the same advance are
 * still to run.
 * Cascades happen inside the advance that reaches this moment.
 * So a cascade alone never wakes a loop that sleeps until it.
 * Such a loop can still wake without firing anything.
 * That happens after a cancel or a re-arm took the earliest timer out of
 * its place.
 * It happens at most once per place a timer left early.
 * &tw_stats.idle_advances counts such wake-ups.
 * timerwheel(7) explains the bound this moment comes from.
 *
 * Return: the time in ns.
 * It is UINT64_MAX if nothing is armed, or @w is NULL.
 * It is also UINT64_MAX if the earliest timer fires only at UINT64_MAX.
 */
TW_API uint64_t tw_next_expiry(const struct tw_wheel *w);

/**
 * tw_now - the wheel's clock: the @now of the last tw_advance() or creation
 * @w: the wheel (NULL gives 0)
 */
TW_API uint64_t tw_now(const struct tw_wheel *w);

/**
 * tw_count - the number of armed timers
 * @w: the wheel (NULL gives 0)
 */
TW_API size_t tw_count(const struct tw_wheel *w);

/**
 * tw_tick - the wheel's tick in ns
 * @w: the wheel (NULL gives 0)
 */
TW_API uint64_t tw_tick(const struct tw_wheel *w);

/**
 * tw_set_notify - install the notify hook (see tw_notify_fn)
 * @w:   the wheel
 * @fn:  the hook, or NULL to remove it
 * @arg: passed to the hook
 *
 * The hook is not called when it is installed.
 * Arm the OS timer for tw_next_expiry() then.
 * From there on the hook hears every change that matters (see
 * tw_notify_fn).
 * Removing the hook from a destroyed wheel releases the wheel (see
 * tw_wheel_destroy()).
 * From inside the hook, the release comes once the hook has returned.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @w is NULL, or @fn is not NULL and @w was
 * destroyed.
 * It returns -EBUSY if a hook is installed and @fn is not NULL: one backend
 * per wheel.
 */
TW_API int tw_set_notify(struct tw_wheel *w, tw_notify_fn fn, void *arg);

/**
 * tw_clock_monotonic - read CLOCK_MONOTONIC in nanoseconds
 *
 * The clock the wheel's times are counted in, for programs that have none
 * of their own.
 * On POSIX systems it calls clock_gettime(CLOCK_MONOTONIC).
 * On Windows it calls QueryPerformanceCounter().
 * The wheel never calls it.
 * Pass its value to tw_wheel_create() and tw_advance().
 * Build expiries on it with tw_deadline().
 * The libuv and io_uring backends read the same clock (tw_uv_now(),
 * tw_uring_now()).
 *
 * Return: the time in ns since an arbitrary moment before the process
 * started (on Linux, boot).
 * It never goes backwards.
 */
TW_API uint64_t tw_clock_monotonic(void);

/**
 * tw_deadline - the moment @delay after @now, saturating
 * @now:   a time in ns, e.g. tw_clock_monotonic()
 * @delay: a delay in ns
 *
 * Give the result to tw_add() or tw_mod().
 *
 * Return: @now + @delay, or UINT64_MAX if the sum does not fit.
 * So a delay of UINT64_MAX means "never".
 * It does not wrap into the past, where the timer would fire at once.
 */
TW_API uint64_t tw_deadline(uint64_t now, uint64_t delay);

/**
 * tw_timeout_ms - a poll() or epoll_wait() timeout until @expires
 * @now:     the current time in ns, e.g. tw_clock_monotonic()
 * @expires: the moment to wake, e.g. tw_next_expiry()
 *
 * Whole milliseconds, rounded up.
 * So a loop that sleeps this long never wakes before @expires.
 * Use: poll(fds, n, tw_timeout_ms(now, tw_next_expiry(w))).
 * Then call tw_advance(w, tw_clock_monotonic()).
 * The timeout is clamped to INT_MAX ms, about 24.8 days.
 * A loop that wakes after that fires nothing, and sleeps again.
 *
 * Return: -1 (wait without a timeout) if @expires is UINT64_MAX.
 * That is the next expiry of a wheel with nothing armed.
 * It returns 0 if @expires is not later than @now.
 * Else it returns the milliseconds from @now to @expires, rounded up, at
 * most INT_MAX.
 */
TW_API int tw_timeout_ms(uint64_t now, uint64_t expires);

/**
 * tw_ns_to_timespec - an absolute time as a struct timespec
 * @ts: filled with @ns: seconds and nanoseconds
 * @ns: a time in ns of CLOCK_MONOTONIC, e.g. tw_next_expiry()
 *
 * For clocks that take absolute times.
 * One is the it_value of timerfd_settime() with TFD_TIMER_ABSTIME, on a
 * CLOCK_MONOTONIC timerfd.
 * Another is clock_nanosleep() with TIMER_ABSTIME.
 * The conversion is exact, except at the ends.
 * 0 becomes 1 ns, as far in the past.
 * That is because an all-zero it_value disarms a timerfd instead of firing
 * it.
 * With a 32-bit time_t, a time from 2^31 s on saturates.
 * It becomes 2^31 - 1 s and 999,999,999 ns, the latest a struct timespec
 * holds.
 * A loop woken there, 68 years after boot, finds nothing due and sleeps
 * again.
 * UINT64_MAX, the next expiry of an empty wheel, converts like any time.
 * With a 64-bit time_t it gives 18,446,744,073 s and 709,551,615 ns.
 * A timerfd is better disarmed then, with an all-zero it_value.
 *
 * struct timespec comes from <time.h>.
 * Under strict -std=c99 or -std=c11, define _POSIX_C_SOURCE 200809L.
 * It is the struct timespec the library was built with.
 * On a 32-bit target, build the program with the library's time_t.
 * glibc's _TIME_BITS sets it; Debian's i386 libraries use 32 bits.
 *
 * Return: 0, -EINVAL if @ts is NULL.
 */
TW_API int tw_ns_to_timespec(struct timespec *ts, uint64_t ns);

/**
 * tw_timeout_timespec - a ppoll() or epoll_pwait2() timeout until @expires
 * @ts:      filled with the time from @now to @expires
 * @now:     the current time in ns, e.g. tw_clock_monotonic()
 * @expires: the moment to wake, e.g. tw_next_expiry()
 *
 * Nanosecond precision, so no rounding is needed.
 * A relative timeout counts from the call, after @now.
 * So a loop never wakes before @expires.
 * The timeout is zero when @expires is not later than @now.
 * With a 32-bit time_t a timeout of 2^31 s or more saturates.
 * It becomes 2^31 - 1 s and 999,999,999 ns, as in tw_ns_to_timespec().
 * The loop then wakes before @expires, finds nothing due and sleeps again.
 * struct timespec comes from <time.h>, as for tw_ns_to_timespec().
 *
 * Return: 0 when @ts holds the timeout.
 * It returns 1 when @expires is UINT64_MAX, nothing being armed.
 * Then pass NULL, to wait without a timeout.
 * @ts then holds UINT64_MAX ns as a timeout, whatever @now.
 * That is for a loop that cannot pass NULL.
 * With a 64-bit time_t it is 18,446,744,073 s and 709,551,615 ns.
 * With a 32-bit one it saturates as above.
 * It returns -EINVAL if @ts is NULL.
 */
TW_API int tw_timeout_timespec(struct timespec *ts, uint64_t now, uint64_t expires);

/**
 * tw_wake_fn - the wake hook: a request needs the owner's attention
 * @w:   the wheel
 * @arg: the argument given to tw_set_wake()
 *
 * The posting thread calls it after the request is queued or replaced.
 * It does so when the request re-arms a timer earlier than the owner will
 * next look at the queue.
 * That moment is the time the owner last gave the notify hook.
 * With no notify hook, the posting thread always calls it.
 * tw_request_wait_timeout() calls it too.
 * It must be safe to call from any thread.
 * Write to an eventfd or a pipe, or call uv_async_send() or
 * pthread_cond_signal().
 * The owner then calls tw_advance() or tw_drain().
 */
typedef void (*tw_wake_fn)(struct tw_wheel *w, void *arg);

/**
 * tw_set_wake - install the wake hook for requests from other threads
 * @w:   the wheel
 * @fn:  the hook, or NULL to remove it
 * @arg: passed to the hook
 *
 * Owner only, before other threads post.
 * Without a wake hook requests are still queued and applied.
 * The owner applies them at its next tw_advance() or tw_drain().
 *
 * Return: 0, -EINVAL if @w is NULL.
 */
TW_API int tw_set_wake(struct tw_wheel *w, tw_wake_fn fn, void *arg);

/**
 * tw_post_mod - from any thread, ask the owner to arm or re-arm a timer
 * @w:       the wheel
 * @req:     a request: new, done, or still queued (then replaced)
 * @t:       an initialised timer, idle or armed on @w
 * @expires: the new expiry, absolute ns
 *
 * It takes no lock and allocates nothing: @req is queued on @w.
 * The owner applies it at the start of its next tw_advance() or tw_drain().
 * It is applied as tw_mod(@w, @t, @expires), through the same checks.
 * It gets tw_mod()'s window (the wheel's default slack) and tw_mod()'s
 * result.
 * tw_post_mod_range() gives the window of tw_mod_range().
 * @t and @req must stay valid until @req is done.
 * This thread must not change @t meanwhile; the owner's thread may use it.
 * It wakes the owner (tw_wake_fn) when @expires is earlier than the owner
 * would otherwise look at the queue.
 *
 * Latest wins.
 * Posting @req again before the owner applied it replaces what it asks:
 * operation, timer, expiry and window.
 * The earlier post is then never applied.
 * So a worker that pushes a timeout twice before the owner drains gets the
 * later deadline.
 * A post while the owner is applying @req is queued anew, and applied
 * after it.
 * Either way, tw_request_done() becomes 1 only for the latest post, once
 * applied.
 * tw_request_result() and tw_request_wait() report only that post.
 *
 * Return: 0 when queued, 1 when it replaced a post of @req still queued.
 * Racing tw_wheel_destroy(), either may come with @req done with result
 * -ESHUTDOWN (see "Threads").
 * It returns -EINVAL if an argument is NULL.
 * It returns -ESHUTDOWN if @w was destroyed (-TW_ESHUTDOWN where <errno.h>
 * has none, as on Windows).
 * It returns -EBUSY if another thread posts @req at the same instant.
 * One of two racing posts of one request fails; a single poster never sees
 * it.
 */
TW_API int tw_post_mod(struct tw_wheel *w, struct tw_request *req, struct tw_timer *t, uint64_t expires);

/**
 * tw_post_mod_range - from any thread, ask the owner to re-arm a timer for a window
 * @w:       the wheel
 * @req:     a request: new, done, or still queued (then replaced)
 * @t:       an initialised timer, idle or armed on @w
 * @expires: the start of the window, absolute ns
 * @slack:   the window's length in ns; 0 is exact
 *
 * As tw_post_mod(), applied as tw_mod_range(@w, @t, @expires, @slack).
 * The request sets the timer's window.
 * It keeps the window when @slack is the one the timer was armed with.
 * tw_post_mod() gives the wheel's default slack instead, as tw_mod() does.
 * The owner is woken when @expires is earlier than it would otherwise look
 * at the queue.
 *
 * Return: as tw_post_mod().
 */
TW_API int tw_post_mod_range(struct tw_wheel *w, struct tw_request *req, struct tw_timer *t, uint64_t expires,
			     uint64_t slack);

/**
 * tw_post_del - from any thread, ask the owner to cancel a timer
 * @w:   the wheel
 * @req: a request: new, done, or still queued (then replaced)
 * @t:   the timer
 *
 * As tw_post_mod(), applied as tw_del(@w, @t); the result is tw_del()'s.
 * It does not wake the owner: a cancel never makes it look earlier.
 * tw_request_wait_timeout() wakes it.
 * When @req is done, @t will not fire unless it is re-armed.
 * It may then be freed.
 *
 * Return: as tw_post_mod().
 */
TW_API int tw_post_del(struct tw_wheel *w, struct tw_request *req, struct tw_timer *t);

/**
 * tw_request_done - has the owner applied the request?
 * @req: the request (NULL gives 0)
 *
 * Any thread may call it.
 * After 1, the effect of the request's latest post is in place.
 * The owner no longer touches @req: reuse it or free it.
 * tw_request_result() is then final.
 *
 * Return: 1 if done, 0 if new, queued, or being applied.
 */
TW_API int tw_request_done(const struct tw_request *req);

/**
 * tw_request_result - what the applied request returned
 * @req: a done request
 *
 * Return: the result of the latest post.
 * That is the return value of tw_mod(), tw_mod_range() or tw_del().
 * So it is 1 if the timer was armed, 0 if idle.
 * It is -EINVAL if the timer was not initialised or is armed on another
 * wheel.
 * It is -ESHUTDOWN if the wheel was destroyed first.
 * That is -TW_ESHUTDOWN where <errno.h> has no ESHUTDOWN, as on Windows.
 * It returns -EBUSY if @req is not done, -EINVAL if @req is NULL.
 */
TW_API int tw_request_result(const struct tw_request *req);

/**
 * tw_request_wait_timeout - wait, at most a while, until the owner has applied a request
 * @w:          the wheel it was posted to
 * @req:        the request
 * @timeout_ns: how long to wait at most, in ns from now on the monotonic
 *              clock; 0 only looks, UINT64_MAX waits without a limit
 *
 * It wakes the owner, then sleeps on @req.
 * It sleeps on a futex on Linux, a condition variable elsewhere; it does
 * not poll.
 * It returns when the owner has applied the latest post, or the timeout
 * has passed.
 * It is the waiting counterpart of the kernel's del_timer_sync().
 * Never call it from the owner's thread, which would wait for itself.
 * The owner calls tw_drain() instead.
 * After -ETIMEDOUT the request is still queued, and the owner applies it
 * later.
 * So @req and its timer must stay valid until it is done, as after any
 * post.
 * An owner whose loop stopped, its wheel not destroyed, never applies it.
 * This call then returns -ETIMEDOUT when the timeout has passed.
 *
 * Return: tw_request_result().
 * It returns -ETIMEDOUT if @req was not done within @timeout_ns.
 * It returns -EINVAL if @w or @req is NULL, or @req was never posted.
 */
TW_API int tw_request_wait_timeout(struct tw_wheel *w, struct tw_request *req, uint64_t timeout_ns);

/**
 * tw_request_wait - wait until the owner has applied a request
 * @w:   the wheel it was posted to
 * @req: the request
 *
 * tw_request_wait_timeout() without a limit.
 * If the owner's loop stopped without destroying the wheel, this waits
 * forever.
 * A poster that cannot rule that out passes a timeout instead.
 *
 * Return: tw_request_result().
 * It returns -EINVAL if @w or @req is NULL, or @req was never posted.
 */
TW_API int tw_request_wait(struct tw_wheel *w, struct tw_request *req);

/**
 * tw_drain - apply the requests queued by other threads, now
 * @w: the wheel
 *
 * Owner only, outside callbacks.
 * tw_advance() does this first in every call.
 *
 * Return: the number of requests applied.
 * It returns -EINVAL if @w is NULL, -EBUSY from a callback.
 */
TW_API int tw_drain(struct tw_wheel *w);

/**
 * tw_walk_fn - the visitor of tw_walk()
 * @t:       a pending timer (tw_container_of() gives the program's record)
 * @expires: its expiry, as last armed (for a periodic timer, the next one)
 * @arg:     the argument given to tw_walk()
 *
 * It may read the wheel and the timer.
 * It may change the program's own fields around the timer.
 * It must not arm, re-arm or cancel a timer of the wheel.
 * It must not advance or destroy the wheel.
 * The walk would follow links that moved.
 *
 * Return: 0 to go on, anything else to stop the walk, which returns it.
 */
typedef int (*tw_walk_fn)(struct tw_timer *t, uint64_t expires, void *arg);

/**
 * tw_walk - visit every pending timer, without changing the wheel
 * @w:   the wheel
 * @fn:  called once for each pending timer (see tw_walk_fn)
 * @arg: passed to @fn
 *
 * For checkpoints and orderly shutdowns.
 * The walk changes nothing, not even the wheel's counters.
 * The program may write out each timer's record with its expiry.
 * It restores a timer later by arming it again.
 * An expiry already past then fires in the next tw_advance().
 * Every timer that tw_pending() calls pending is visited exactly once.
 * The due timers come first, in the order they will fire.
 * That order holds unless they are cancelled or re-armed.
 * In a callback, the due timers include those still to run in its advance.
 * Then come the timers in the wheel's slots, in no specified order.
 * It costs O(timers) plus O(levels): empty slots are skipped.
 * A timer with slack is visited with its expiry.
 * Its window is the program's to remember.
 *
 * It may be called from a callback of @w.
 * It then visits the timers still to run in the same advance: they are
 * pending.
 * It does not visit the running timer, unless that timer was re-armed.
 * A periodic timer is re-armed before its callback.
 *
 * Return: 0 once every timer was visited, also for an empty wheel.
 * If @fn returns non-zero, the walk stops and returns that value.
 * It returns -EINVAL if @w or @fn is NULL.
 */
TW_API int tw_walk(const struct tw_wheel *w, tw_walk_fn fn, void *arg);

/**
 * tw_get_stats - read the wheel's counters
 * @w:   the wheel
 * @out: filled with the counters
 *
 * Return: 0, -EINVAL if @w or @out is NULL.
 */
TW_API int tw_get_stats(const struct tw_wheel *w, struct tw_stats *out);

/**
 * tw_get_lateness - read how late the wheel's timers fired
 * @w:   the wheel
 * @out: filled with the histogram since the wheel was created
 *
 * A fixed histogram, updated at each firing at the cost of a bit scan.
 * tw_lateness_quantile() reads percentiles from it.
 *
 * Return: 0, -EINVAL if @w or @out is NULL.
 */
TW_API int tw_get_lateness(const struct tw_wheel *w, struct tw_lateness *out);

/**
 * tw_lateness_quantile - a percentile of a lateness histogram, rounded up
 * @l:        the histogram, from tw_get_lateness()
 * @permille: which one, 0 to 1000: 500 for the median, 990 for p99
 *
 * The percentile by nearest rank.
 * Sort the @l->fired firings by lateness, and take the r-th.
 * r is @permille * @l->fired / 1000, rounded up, and at least 1.
 * So 0 picks the smallest lateness, and 1000 the largest.
 * The histogram keeps that lateness as its bucket b.
 * So the result is the bucket's largest lateness, 2^b - 1 ns.
 * It is 0 for bucket 0.
 * It is never more than @l->max_ns.
 * It is never below the r-th lateness.
 * It is less than twice that lateness, and 0 when that lateness is 0.
 * For 1000 it is exactly @l->max_ns.
 * With 3 firings, @permille 0 to 333 gives the first.
 * Then 334 to 666 gives the second, and 667 to 1000 the third.
 *
 * Return: the lateness in ns.
 * It returns 0 if nothing fired, @l is NULL or @permille is above 1000.
 */
TW_API uint64_t tw_lateness_quantile(const struct tw_lateness *l, unsigned permille);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_H */
