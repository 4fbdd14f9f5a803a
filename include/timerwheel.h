/* SPDX-License-Identifier: MIT */
/*
 * timerwheel: a hierarchical timing wheel for C programs and event loops.
 *
 * Time is uint64_t nanoseconds of CLOCK_MONOTONIC, absolute: every expiry
 * and every `now` is a moment, never a delay (tw_deadline() turns a delay
 * into a moment). The wheel never reads a clock: the caller passes `now`.
 *
 * Firing rule. Let E be a timer's expiry and tick the wheel's tick. A timer
 * without slack (the default) armed while E > tw_now() fires in the first tw_advance() whose `now`
 * reaches E rounded up to a whole tick, and never before E. A timer armed
 * with E <= tw_now() (already expired) fires in the next tw_advance(). The
 * rounding saturates: a timer in the last partial tick below UINT64_MAX
 * fires when `now` reaches UINT64_MAX. Every armed timer fires exactly once
 * unless it is cancelled or re-armed first.
 *
 * Slack. A timer may be armed with a window instead of an instant
 * (tw_add_range(), tw_mod_range(), or the wheel's default slack in struct
 * tw_config): with slack S its window is [E, E + S]. It never fires before
 * E, and fires at the latest in the first tw_advance() whose `now` reaches
 * E + S rounded up to a whole tick (saturating). The wheel picks the tick
 * it fires at: the coarsest of the window, the multiple of the largest
 * power of two among the ticks from E's tick to E's tick + S / tick
 * (rounded down) or to the last tick (the one UINT64_MAX rounds up to),
 * whichever comes first: a window that runs past the end of time is cut
 * there before the pick, not the pick afterwards. tw_next_expiry() reports
 * that tick, so a loop that sleeps until then is woken for the timer
 * there. Timers whose windows overlap mostly pick the same tick and share
 * one wake-up, and a timer whose tick starts a coarse slot fires from that
 * slot without cascading further. A wake-up, an advance whose `now`
 * reaches tw_next_expiry() (for whatever timer; the next expiry once the
 * requests queued by other threads are applied), also fires every timer
 * whose window has opened, whose E rounded up to a tick it reaches; an
 * advance short of tw_next_expiry() fires a timer with slack only once its
 * tick has come. To find opened windows a wake-up walks the slot of each
 * such tick in which a window has opened, with all its timers, exact ones
 * too: about one slot per power of two in use. A periodic timer keeps one
 * rule for all its re-arms: it fires at E's tick rounded up to a multiple
 * of 2^a ticks, 2^a the largest power of two no greater than S / tick + 1
 * (if that multiple lies past the last tick, the coarsest tick from E's to
 * the last, as a one-shot timer picks). Slack 0 is the exact rule above.
 *
 * Order. Timers that fire in one advance fire in the order of their ticks
 * (for a timer with slack, a tick inside its window: those whose tick the
 * advance reached, then those whose window a wake-up found open); within
 * one tick the order is unspecified. Timers that were armed already
 * expired fire first, in the order they were armed.
 *
 * Callbacks. Inside a callback a program may cancel or re-arm any timer,
 * arm new ones, and free the memory of the timer that is running. A timer
 * armed from a callback with an expiry at or before the advance's `now`
 * fires in the next advance, not in the current one. The wheel touches a
 * timer's memory after its callback only if the callback re-armed it.
 *
 * Threads. A wheel belongs to one thread, its owner (the thread that runs
 * its loop); its functions take no lock and none may run on the same wheel
 * from two threads at once. Other threads arm, re-arm and cancel its timers
 * only through requests: tw_post_mod(), tw_post_mod_range() and
 * tw_post_del() queue a struct tw_request on the wheel, lock-free and
 * without allocating; the owner applies queued requests, in the order they
 * were posted, at the start of each tw_advance() (or in tw_drain()), as if
 * it had called tw_mod(), tw_mod_range() or tw_del() itself then. A request
 * posted again while it is still queued is replaced: the latest post wins
 * (see tw_post_mod()). Everything about a request follows from these rules:
 *
 * - A request racing the timer's firing takes effect either before the
 *   advance that fires it (a cancel then prevents the firing; a re-arm
 *   moves it) or after it (the timer fired, and a re-arm arms it again; a
 *   cancel finds it idle and returns 0 as its result).
 * - A cancel posted while the timer's callback runs takes effect after the
 *   callback has returned: requests are never applied inside callbacks.
 * - Once a request is done (tw_request_done(), tw_request_wait()), the
 *   effect of its latest post holds and the owner no longer touches the
 *   request: a timer cancelled by a done request, and not re-armed since,
 *   never fires and may be freed, as after tw_del() on the owner
 *   (del_timer_sync()).
 * - Requests to a destroyed wheel fail with -ESHUTDOWN, and requests still
 *   queued when it is destroyed are done with result -ESHUTDOWN (when
 *   destroyed from a callback, once that callback has returned). A post
 *   that races the destroy does one or the other: it fails, or it returns
 *   0 or 1 and its request is done once the post (and any other post of
 *   the same request) and tw_wheel_destroy() (from a callback: the advance
 *   that ran it) have returned, with result -ESHUTDOWN unless the owner
 *   applied it before; this holds also while a backend still holds the
 *   wheel, so a thread waiting for it never waits for the backend to let
 *   go. Posting to a wheel whose memory may have been released is a use
 *   after free: stop the posting threads before the last of
 *   tw_wheel_destroy(), tw_uv_close() or tw_uring_detach().
 * - A poster that waits for a request (tw_request_wait_timeout()) waits at
 *   most its timeout: an owner whose loop has stopped without destroying
 *   the wheel never applies the request, and tw_request_wait() without a
 *   timeout would wait for it forever.
 *
 * The owner learns of a request that moves the next expiry earlier through
 * the wake hook (tw_set_wake()); the backends install their own.
 *
 * Loops. Any loop drives a wheel with three calls: sleep until
 * tw_next_expiry(), read the clock, tw_advance() to it. The loop kit does
 * the arithmetic around them: tw_clock_monotonic() reads the clock,
 * tw_deadline() makes "now + delay" without wrapping, tw_timeout_ms() turns
 * the next expiry into a poll() or epoll_wait() timeout rounded up, and
 * tw_ns_to_timespec() and tw_timeout_timespec() into the struct timespec of
 * timerfd_settime(), ppoll() and epoll_pwait2(). A loop whose one OS timer
 * should move only when it must (a timerfd) arms it from the notify hook
 * (tw_set_notify()).
 *
 * Errors. Functions return 0 or a positive count on success and a negative
 * errno on failure, and change nothing when they fail.
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
 * TW_API marks what the libraries export. They are built with every other
 * symbol hidden: on ELF through visibility("default") on these, on Windows
 * (PE/COFF) through __declspec(dllexport) while a DLL of timerwheel is
 * built (TW_BUILDING_DLL, defined by its build only). A program that uses
 * a DLL needs nothing: it links the DLL's import library as it would a
 * static one.
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
 * Two error numbers the library returns are not in every <errno.h>:
 * Windows has neither, macOS and the BSDs have no EUCLEAN. Where this
 * header documents -EUCLEAN or -ESHUTDOWN, the value returned is
 * -TW_EUCLEAN or -TW_ESHUTDOWN: EUCLEAN and ESHUTDOWN themselves wherever
 * <errno.h> defines them, as Linux's does. Elsewhere TW_ESHUTDOWN is 4042,
 * on Windows libuv's UV_ESHUTDOWN negated (uv_strerror() names it), and
 * TW_EUCLEAN 4117, beyond the numbers the C libraries and libuv use.
 * Programs meant to be portable compare results with the TW_ names.
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

#define TW_VERSION_MAJOR 0
#define TW_VERSION_MINOR 2
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
 * The library never allocates a timer. Initialise it once with
 * tw_timer_init(); recover the outer struct in the callback with
 * tw_container_of(). Fields whose names start with tw__ are private.
 * Its size is part of the ABI, by data model: 40 bytes on LP64 (64-bit
 * Linux, macOS, the BSDs) and LLP64 (64-bit Windows); on ILP32 28 bytes
 * where uint64_t is 4-byte aligned in structs (i386) and 32 where it is
 * 8-byte aligned (32-bit ARM, Windows on x86).
 */
struct tw_timer {
	struct tw_timer *tw__next;
	struct tw_timer **tw__pprev;
	uint64_t expires;
	void (*fn)(struct tw_timer *t);
	uint32_t tw__owner; /* id of the wheel it is armed on, 0 if idle */
	uint16_t tw__where; /* which list it is on, 0 if idle */
	uint8_t tw__flags;
	uint8_t tw__magic; /* set by tw_timer_init() */
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
 * Provided by the posting thread (embed it in the work item that posts it):
 * the queue allocates nothing. A new request is zero-filled (memset(), or
 * `= {0}`). One request carries one operation at a time, the one it was
 * posted with last: posting it again while it is queued replaces the
 * operation, timer, expiry and window it carries (see tw_post_mod()). All
 * fields are private; 40 bytes on 64-bit targets.
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
 * Before its callback runs, a periodic timer is re-armed at
 * expires + n * period, with the smallest n that puts it after the
 * advance's `now`: it never drifts, and a timer that fell more than a period
 * behind skips to the next future multiple instead of firing a burst.
 * Stop it with tw_del(), also from its own callback (it is pending there).
 * The re-arm saturates at UINT64_MAX; a timer that fires when `now` is
 * UINT64_MAX is not re-armed (no later time exists) and is idle in its
 * callback, its expires still the expiry it fired for.
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
 *             0 means exact (see "Slack" and tw_add_range()).
 *
 * The wheel has as many levels as it takes to cover every 64-bit time.
 */
struct tw_config {
	uint64_t tick_ns;
	unsigned slot_bits;
	uint64_t slack_ns;
};

/**
 * struct tw_stats - counters since the wheel was created
 * @armed:        timers armed by tw_add() and tw_mod(), periodic re-arms included
 * @fired:        callbacks called
 * @cancelled:    pending timers disarmed by tw_del()
 * @cascaded:     timers moved from a coarser level to a finer one (or from
 *                a coarser level straight to the due list); a timer re-armed
 *                later and placed again at its own or a coarser level is not
 *                counted
 * @placed:       timers put into a wheel slot: when armed for a later tick,
 *                and again each time their slot comes due and they move on
 *                (placed / armed is the placements per timer; slack lowers
 *                it); not the timers a wake-up's search puts back
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
 * @count:   @count[0]: timers that fired at their expiry to the ns;
 *           @count[b], b >= 1: those that fired from 2^(b-1) ns up to (not
 *           including) 2^b ns after it (with a 1 ms tick, a tick is in
 *           bucket 20, from 0.52 to 1.05 ms)
 * @fired:   the sum of @count, the callbacks called
 * @max_ns:  the largest lateness, in ns
 *
 * Lateness is the @now of the advance that fired a timer minus its expiry
 * (for a periodic timer, the expiry it fired for): what the wheel itself
 * adds, by rounding to ticks, by slack windows and by a budget that left a
 * timer for a later advance, and how late the program advanced it. With a
 * backend, that @now is the clock read when its OS timer woke it, so the
 * OS's own wake-up lateness is in it too. It does not include a loop's own
 * delay from that @now to the callback.
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
 * Called (1) from tw_add()/tw_mod() when the next expiry moves earlier than
 * the last value passed to the hook, or when the wheel was empty; (2) from
 * tw_del() when the wheel becomes empty, and from tw_wheel_destroy(), with
 * UINT64_MAX; and (3) at the end of every tw_advance() that moved or kept
 * the clock, with the next expiry then (UINT64_MAX if a callback destroyed
 * the wheel). A backward
 * tw_advance() is a no-op and calls nothing. The hook is never called
 * while callbacks run. A backend arms its single OS timer for @next here.
 *
 * @next is UINT64_MAX both for an empty wheel and for one whose timers fire
 * only at UINT64_MAX; tw_count() tells them apart, and a loop should stay
 * alive for the second, as it would for a native timer with the largest
 * timeout. The hook may read the wheel (tw_count(), tw_next_expiry(),
 * tw_now()) and may remove itself (tw_set_notify(w, NULL, NULL)), e.g. on
 * hearing that a destroyed wheel is empty; it must not change the wheel
 * otherwise.
 *
 * An installed hook holds the wheel: a destroyed wheel's memory is
 * released only once the hook is removed (see tw_wheel_destroy()).
 *
 * Return: 1 if the hook started, moved or stopped the OS timer, else 0
 * (counted in &tw_stats.os_rearms).
 */
typedef int (*tw_notify_fn)(struct tw_wheel *w, uint64_t next, void *arg);

/**
 * tw_container_of - the struct that embeds a member
 * @ptr:    pointer to the member, e.g. the struct tw_timer * a callback gets
 * @type:   the outer struct's type
 * @member: the member's name within @type
 *
 * @ptr may point to const (e.g. in a function taking a const timer); the
 * result is a plain @type *, so keep the const yourself if it matters. The
 * arithmetic goes through an integer so that -Wcast-qual stays quiet.
 */
#define tw_container_of(ptr, type, member) \
	((type *)(uintptr_t)((uintptr_t)(ptr) - offsetof(type, member)))

/**
 * tw_version - the version of the library the program runs with
 *
 * Compare with TW_VERSION_HEX, the version the program was compiled
 * against, as libuv's uv_version() and UV_VERSION_HEX are compared.
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
 * One allocation per wheel, and none after it: 48 bytes per slot (levels
 * times 2^slot_bits slots) and about 1,900 bytes besides: 26,456 bytes with
 * the defaults on x86-64. Besides, the process-wide set of live wheel ids
 * (4 bytes per live wheel, kept at most half full) grows when more wheels
 * are alive at once than it holds, and is freed when none is.
 *
 * Return: 0, -EINVAL if @out is NULL or @cfg->slot_bits is above 6,
 * -ENOMEM if an allocation failed.
 */
TW_API int tw_wheel_create(struct tw_wheel **out, const struct tw_config *cfg, uint64_t now);

/**
 * tw_wheel_destroy - free a wheel
 * @w: the wheel, or NULL (then nothing happens)
 *
 * Timers still armed become idle at once (tw_pending() is false) and are
 * never called; their memory may be released right after this call. A
 * second call on the same wheel, while its memory is still held (below),
 * does nothing.
 *
 * The wheel's own memory is released when nothing holds it any longer:
 *
 * - From inside one of @w's callbacks, when that tw_advance() returns. No
 *   further callback of @w runs in that advance.
 * - While a notify hook is installed (a backend drives @w), when the hook
 *   is removed: tw_set_notify(@w, NULL), which tw_uv_close() and
 *   tw_uring_detach() do. Until then the backend may still read @w; the
 *   hook is called once more with UINT64_MAX (at once, or when the advance
 *   ends if the destroy came from a callback), so it can stop its OS timer.
 *
 * Until it is released, a destroyed wheel holds no timer: tw_add(),
 * tw_mod() and tw_advance() return -EINVAL (tw_advance() from a callback
 * -EBUSY), tw_set_notify() with a hook -EINVAL, tw_del() of an idle timer
 * 0, tw_count() 0 and tw_next_expiry() UINT64_MAX. Once released, @w must
 * not be used again.
 */
TW_API void tw_wheel_destroy(struct tw_wheel *w);

/**
 * tw_timer_init - prepare a timer before its first use
 * @t:  the timer
 * @fn: its callback, called with @t when it fires
 *
 * Call it once, while the timer is idle. A NULL @t is ignored.
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
 * O(1). The timer gets the wheel's default slack (&tw_config.slack_ns, 0
 * unless the wheel was created with one); tw_add_range() gives its own.
 *
 * Return: 0, -EINVAL if @w or @t is NULL, @t was not initialised with
 * tw_timer_init() (or has no callback), or @w was destroyed (see
 * tw_wheel_destroy()); -EBUSY if @t is already armed (on this wheel or
 * another).
 */
TW_API int tw_add(struct tw_wheel *w, struct tw_timer *t, uint64_t expires);

/**
 * tw_mod - arm or re-arm a timer for a new expiry, in one O(1) call
 * @w:       the wheel
 * @t:       an initialised timer, idle or armed on @w
 * @expires: the new expiry, absolute ns
 *
 * Moving an armed timer later only stores the new expiry: the timer stays
 * in its bucket, which comes due first and places it again then. So the
 * common re-arm, a timeout pushed forward on each event, touches no other
 * timer's memory. (A timer with slack stays while its bucket comes due
 * before its new window opens, or holds the tick picked in that window,
 * and moves otherwise.) The timer gets the wheel's default slack, as with
 * tw_add(); tw_mod_range() gives its own.
 *
 * Return: 1 if @t was armed before, 0 if it was idle, -EINVAL if @w or @t
 * is NULL, @t was not initialised, @t is armed on another wheel, or @w was
 * destroyed (see tw_wheel_destroy()).
 */
TW_API int tw_mod(struct tw_wheel *w, struct tw_timer *t, uint64_t expires);

/**
 * tw_add_range - arm an idle timer to fire anywhere in a window
 * @w:       the wheel
 * @t:       an initialised, idle timer
 * @expires: the start of the window, absolute ns: never earlier
 * @slack:   the window's length in ns; 0 is exact, as tw_add()
 *
 * The timer fires in [@expires, @expires + @slack rounded up to a tick]:
 * at the tick the wheel picks in that window, the coarsest one, which many
 * timers share and until which a backend sleeps, or earlier in a wake-up
 * that reaches @expires rounded up to a tick (see "Slack"). The window is kept for a periodic timer's re-arms. Like
 * Linux's hrtimer_start_range_ns() and libdispatch's leeway: pass what
 * the program can tolerate, e.g. a second on a 30 s idle timeout. O(1).
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
 * As tw_mod(), with the window of tw_add_range(): a re-arm only stores the
 * new expiry and window if the timer's bucket comes due before the new
 * window opens, or holds the new tick (the coarsest of the new window);
 * any other moves the timer, still O(1). With a slack under one tick the
 * timer is exact, and tw_mod()'s rule applies.
 *
 * Return: as tw_mod().
 */
TW_API int tw_mod_range(struct tw_wheel *w, struct tw_timer *t, uint64_t expires, uint64_t slack);

/**
 * tw_del - cancel a timer, O(1)
 * @w: the wheel
 * @t: the timer
 *
 * Cancelling an idle timer is not an error. Safe from any callback, also
 * for timers due in the same advance (they then do not fire).
 *
 * Return: 1 if @t was armed, 0 if it was idle, -EINVAL if @w or @t is NULL
 * or @t is armed on another wheel.
 */
TW_API int tw_del(struct tw_wheel *w, struct tw_timer *t);

/**
 * tw_pending - is the timer armed?
 * @t: the timer, or NULL (false)
 *
 * True from tw_add()/tw_mod() until it fires or is cancelled; a periodic
 * timer stays pending in its own callback, unless it was not re-armed
 * (period 0, or fired when `now` was UINT64_MAX).
 */
TW_API bool tw_pending(const struct tw_timer *t);

/**
 * tw_forward - move an idle timer's expiry past @now by whole periods
 * @t:      the timer, idle (typically from its own callback)
 * @now:    the time to get past
 * @period: the period in ns
 *
 * Like the kernel's hrtimer_forward(): t->expires becomes
 * expires + n * period with the smallest n that makes it later than @now.
 * Both saturate at UINT64_MAX: the expiry is then UINT64_MAX, which is not
 * later than a @now of UINT64_MAX (no time is). Arm it afterwards with
 * tw_add(). Drift-free, and skips missed periods instead of bursting.
 *
 * Return: n, the number of periods added (UINT64_MAX if it does not fit,
 * e.g. expiry 0, @now UINT64_MAX, @period 1); 0 if @t is NULL or pending,
 * @period is 0, or the expiry is already later than @now.
 */
TW_API uint64_t tw_forward(struct tw_timer *t, uint64_t now, uint64_t period);

/**
 * tw_advance - move the wheel's clock to @now and run what is due
 * @w:   the wheel
 * @now: the current time in ns
 *
 * Jumps over empty stretches through per-level bitmaps: an advance of ten
 * hours with nothing due costs a handful of bit operations. A @now earlier
 * than tw_now() is a no-op that returns 0.
 *
 * Return: the number of callbacks called, -EINVAL if @w is NULL or was
 * destroyed (see tw_wheel_destroy()), -EBUSY if called from one of @w's
 * callbacks.
 */
TW_API int tw_advance(struct tw_wheel *w, uint64_t now);

/**
 * tw_advance_budget - tw_advance(), firing at most @budget timers
 * @w:      the wheel
 * @now:    the current time in ns
 * @budget: the most callbacks to call, at least 1
 *
 * For a loop that must stay responsive when many timers come due at once
 * (after a suspend, a pause, a stalled loop): it moves the clock to @now as
 * tw_advance() does, then takes the first @budget due timers, in the order
 * of their ticks, as its batch, calls their callbacks, and leaves the
 * others due, in that order: tw_next_expiry() is tw_now() while any is
 * left, and the next advance, with or without a budget, fires them first,
 * before the timers that come due at a later tick. So the loop serves its
 * I/O between two batches. Every guarantee holds across batches: no timer
 * fires before its expiry, each fires once, the batches keep tick order,
 * and a callback may cancel or re-arm a timer still waiting, in its batch
 * or a later one (it then fires by its new expiry, or not at all). The
 * batch is taken before its first callback runs and is not refilled: a
 * timer of the batch that an earlier callback cancels or re-arms leaves
 * it, and fewer than @budget callbacks run although timers are still due
 * (the return value says how many ran). A timer armed already due, from a
 * callback or between two batches, fires after the timers left waiting. A
 * budget of UINT_MAX is no budget.
 *
 * Return: the number of callbacks called (at most @budget), -EINVAL if @w
 * is NULL or was destroyed, or @budget is 0, -EBUSY if called from one of
 * @w's callbacks.
 */
TW_API int tw_advance_budget(struct tw_wheel *w, uint64_t now, unsigned budget);

/**
 * tw_set_wake_budget - the most timers a backend fires per wake-up
 * @w:      the wheel
 * @budget: at least 1; UINT_MAX (the default) for no budget
 *
 * The libuv and io_uring backends advance their wheel with
 * tw_advance_budget(w, now, tw_wake_budget(w)) when their OS timer fires:
 * with a budget, a wake-up that finds many timers due fires that many and
 * leaves the rest for the next turn of the loop, which serves its I/O in
 * between. A loop of the program's own can do the same. A libuv backend
 * that carries timers of the uv_timer_t layer (<timerwheel/uv_timer.h>,
 * from the first tw_uv_timer_init_on() on it, or tw_uv_timer_init() for
 * the loop's own) advances its wheel without a budget and spends the
 * budget on the layer's callbacks instead: the program's own timers on
 * that wheel all fire in their wake-up. Set it on the
 * backend's wheel (tw_uv_wheel(), or the wheel given to tw_uring_attach())
 * at any time, also from a callback: it applies from the next wake-up.
 * The libuv backend arms its uv timer in libuv's whole milliseconds, so
 * the rest waits for the next millisecond: at most about @budget timers
 * per millisecond, and the loop's I/O served meanwhile.
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
 * The moment to wake for the earliest firing tick: a timer's expiry, or
 * for a timer with slack the tick the wheel picked in its window (the
 * advance that reaches it also fires every timer whose window has opened;
 * see "Slack"). Found in the first non-empty bucket of the lowest non-empty
 * level (through occupancy bitmaps, O(1)), no earlier than the lower bound
 * that bucket keeps on its timers' ticks. Never later than the earliest
 * firing tick; exactly that unless a timer left that bucket since it was
 * armed (cancelled, or re-armed to any other time: the bound is not raised
 * when a timer leaves); tw_now() if a timer is already due, also in a
 * callback while timers of the same advance are still to run.
 * Cascades happen inside the advance that reaches this moment, so a
 * cascade alone never wakes a loop that sleeps until it. Such a loop can
 * still wake without firing anything: after a cancel or a re-arm took the
 * earliest timer out of its bucket, the bucket's bound stays, and the loop
 * wakes there once for nothing (at most once per bucket left early; counted
 * in &tw_stats.idle_advances).
 *
 * Return: the time in ns, or UINT64_MAX if nothing is armed (or the
 * earliest timer fires only at UINT64_MAX, or @w is NULL).
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
 * The hook is not called when it is installed: arm the OS timer for
 * tw_next_expiry() then; from there on the hook hears every change that
 * matters (see tw_notify_fn). Removing the hook from a destroyed wheel
 * releases the wheel (see tw_wheel_destroy()); from inside the hook, once
 * it has returned.
 *
 * Return: 0, -EINVAL if @w is NULL, or @fn is not NULL and @w was
 * destroyed; -EBUSY if a hook is installed and @fn is not NULL (one backend
 * per wheel).
 */
TW_API int tw_set_notify(struct tw_wheel *w, tw_notify_fn fn, void *arg);

/**
 * tw_clock_monotonic - read CLOCK_MONOTONIC in nanoseconds
 *
 * The clock the wheel's times are counted in, for programs that have none
 * of their own: clock_gettime(CLOCK_MONOTONIC) on POSIX systems,
 * QueryPerformanceCounter() on Windows. The wheel never calls it: pass its
 * value to tw_wheel_create() and tw_advance(), and build expiries on it
 * with tw_deadline(). The libuv and io_uring backends read the same clock
 * (tw_uv_now(), tw_uring_now()).
 *
 * Return: the time in ns since an arbitrary moment before the process
 * started (on Linux, boot), never going backwards.
 */
TW_API uint64_t tw_clock_monotonic(void);

/**
 * tw_deadline - the moment @delay after @now, saturating
 * @now:   a time in ns, e.g. tw_clock_monotonic()
 * @delay: a delay in ns
 *
 * @now + @delay, or UINT64_MAX if the sum does not fit: a delay of
 * UINT64_MAX means "never" instead of wrapping into the past, where the
 * timer would fire at once. Give the result to tw_add() or tw_mod().
 *
 * Return: the deadline in ns.
 */
TW_API uint64_t tw_deadline(uint64_t now, uint64_t delay);

/**
 * tw_timeout_ms - a poll() or epoll_wait() timeout until @expires
 * @now:     the current time in ns, e.g. tw_clock_monotonic()
 * @expires: the moment to wake, e.g. tw_next_expiry()
 *
 * Whole milliseconds, rounded up, so that a loop that sleeps this long
 * never wakes before @expires: poll(fds, n, tw_timeout_ms(now,
 * tw_next_expiry(w))), then tw_advance(w, tw_clock_monotonic()). Clamped
 * to INT_MAX (about 24.8 days): a loop that wakes after that sleeps again,
 * having fired nothing.
 *
 * Return: -1 (wait without a timeout) if @expires is UINT64_MAX, nothing
 * being armed; 0 if @expires is not later than @now; else the milliseconds
 * from @now to @expires rounded up, at most INT_MAX.
 */
TW_API int tw_timeout_ms(uint64_t now, uint64_t expires);

/**
 * tw_ns_to_timespec - an absolute time as a struct timespec
 * @ts: filled with @ns: seconds and nanoseconds
 * @ns: a time in ns of CLOCK_MONOTONIC, e.g. tw_next_expiry()
 *
 * For clocks that take absolute times: the it_value of timerfd_settime()
 * with TFD_TIMER_ABSTIME (a timerfd created on CLOCK_MONOTONIC), and
 * clock_nanosleep() with TIMER_ABSTIME. Exact, except at the ends: 0
 * becomes 1 ns, as far in the past, because an all-zero it_value disarms a
 * timerfd instead of firing it; with a 32-bit time_t, a time from 2^31 s
 * on saturates to the latest a struct timespec holds, 2^31 - 1 s and
 * 999,999,999 ns (a loop woken there, 68 years after boot, finds nothing
 * due and sleeps again). UINT64_MAX, the next expiry of a wheel with
 * nothing armed, converts like any other time (with a 64-bit time_t to
 * 18,446,744,073 s and 709,551,615 ns); a timerfd is rather disarmed then
 * (an all-zero it_value). struct timespec comes from <time.h> (under
 * strict -std=c99 or -std=c11, with _POSIX_C_SOURCE 200809L defined), and
 * is the one the library was built with: on a 32-bit target, build the
 * program with the library's time_t (glibc's _TIME_BITS; Debian's i386
 * libraries use 32 bits).
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
 * Nanosecond precision, so no rounding is needed: a relative timeout
 * counts from the call, after @now, and a loop never wakes before
 * @expires. Zero when @expires is not later than @now. With a 32-bit
 * time_t a timeout of 2^31 s or more saturates as tw_ns_to_timespec()
 * does, to 2^31 - 1 s and 999,999,999 ns: the loop wakes before @expires
 * there, finds nothing due and sleeps again. struct timespec comes from
 * <time.h>, as for tw_ns_to_timespec().
 *
 * Return: 0 when @ts holds the timeout; 1 when @expires is UINT64_MAX,
 * nothing being armed: pass NULL to wait without a timeout (@ts then holds
 * UINT64_MAX ns as a timeout, whatever @now: 18,446,744,073 s and
 * 709,551,615 ns with a 64-bit time_t, saturated as above with a 32-bit
 * one, for a loop that cannot pass NULL); -EINVAL if @ts is NULL.
 */
TW_API int tw_timeout_timespec(struct timespec *ts, uint64_t now, uint64_t expires);

/**
 * tw_wake_fn - the wake hook: a request needs the owner's attention
 * @w:   the wheel
 * @arg: the argument given to tw_set_wake()
 *
 * Called from the posting thread, after the request is queued (or
 * replaced), when it re-arms a timer earlier than the owner will next look
 * at the queue (the time it last gave the notify hook; with no notify hook,
 * always), and by tw_request_wait_timeout(). It must be safe to call from
 * any thread: write to an eventfd or a pipe, uv_async_send(),
 * pthread_cond_signal(). The owner then calls tw_advance() or tw_drain().
 */
typedef void (*tw_wake_fn)(struct tw_wheel *w, void *arg);

/**
 * tw_set_wake - install the wake hook for requests from other threads
 * @w:   the wheel
 * @fn:  the hook, or NULL to remove it
 * @arg: passed to the hook
 *
 * Owner only, before other threads post. Without a wake hook requests are
 * still queued and applied, at the owner's next tw_advance() or tw_drain().
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
 * Lock-free and allocation-free: @req is queued on @w, and the owner
 * applies it at the start of its next tw_advance() or tw_drain() as
 * tw_mod(@w, @t, @expires), through the same checks, with tw_mod()'s
 * window (the wheel's default slack) and tw_mod()'s result.
 * tw_post_mod_range() gives the window of tw_mod_range(). @t and @req must
 * stay valid until @req is done; @t must not be changed by this thread
 * meanwhile (the owner's thread may use it). Wakes the owner (tw_wake_fn)
 * when @expires is earlier than it will otherwise look at the queue.
 *
 * Latest wins: posting @req again before the owner has applied it
 * replaces what it asks (operation, timer, expiry, window) in place, and
 * the earlier post is never applied; a worker that pushes a timeout twice
 * before the owner drains gets the later deadline. A post that comes
 * while the owner is applying @req is queued anew and applied after it.
 * Either way tw_request_done() becomes 1, and tw_request_result() and
 * tw_request_wait() report, only for the latest post, once applied.
 *
 * Return: 0 when queued, 1 when it replaced a post of @req still queued
 * (racing tw_wheel_destroy(), either may come with @req done with result
 * -ESHUTDOWN: see "Threads" above); -EINVAL if an argument is NULL,
 * -ESHUTDOWN if @w was destroyed (-TW_ESHUTDOWN
 * where <errno.h> has no ESHUTDOWN, as on Windows), -EBUSY
 * if another thread is posting @req at the same instant (one of two racing
 * posts of one request fails; a single poster never sees it).
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
 * As tw_post_mod(), applied as tw_mod_range(@w, @t, @expires, @slack): the
 * request sets the timer's window, or keeps it when @slack is the one it
 * was armed with (tw_post_mod() gives the wheel's default slack instead, as
 * tw_mod() does). The owner is woken when @expires is earlier than it will
 * otherwise look at the queue.
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
 * Does not wake the owner (a cancel never makes it look earlier);
 * tw_request_wait_timeout() does. When @req is done, @t will not fire
 * unless it is re-armed, and may be freed.
 *
 * Return: as tw_post_mod().
 */
TW_API int tw_post_del(struct tw_wheel *w, struct tw_request *req, struct tw_timer *t);

/**
 * tw_request_done - has the owner applied the request?
 * @req: the request (NULL gives 0)
 *
 * Any thread. After 1, the effect of the request's latest post is in
 * place, the owner no longer touches @req (reuse or free it) and
 * tw_request_result() is final.
 *
 * Return: 1 if done, 0 if new, queued, or being applied.
 */
TW_API int tw_request_done(const struct tw_request *req);

/**
 * tw_request_result - what the applied request returned
 * @req: a done request
 *
 * Return: the result of the latest post: tw_mod()'s, tw_mod_range()'s or
 * tw_del()'s return value (1 if the timer was armed, 0 if idle, -EINVAL if
 * it was not initialised or armed on another wheel), -ESHUTDOWN if the
 * wheel was destroyed first (-TW_ESHUTDOWN where <errno.h> has no
 * ESHUTDOWN, as on Windows); -EBUSY if @req is not done, -EINVAL if @req is
 * NULL.
 */
TW_API int tw_request_result(const struct tw_request *req);

/**
 * tw_request_wait_timeout - wait, at most a while, until the owner has applied a request
 * @w:          the wheel it was posted to
 * @req:        the request
 * @timeout_ns: how long to wait at most, in ns from now on the monotonic
 *              clock; 0 only looks, UINT64_MAX waits without a limit
 *
 * Wakes the owner, then sleeps on @req (a futex on Linux, a condition
 * variable elsewhere; no polling) until the owner has applied its latest
 * post or the timeout has passed: the waiting counterpart of
 * del_timer_sync(). Never from the owner's thread, which would wait for
 * itself: the owner calls tw_drain() instead. After -ETIMEDOUT the request
 * is still queued: the owner applies it later, so @req and its timer must
 * stay valid until it is done, as after any post. An owner that has
 * stopped (its loop no longer advances, its wheel not destroyed) never
 * applies it, and this returns -ETIMEDOUT when the timeout has passed.
 *
 * Return: tw_request_result(), -ETIMEDOUT if @req was not done within
 * @timeout_ns, -EINVAL if @w or @req is NULL or @req was never posted.
 */
TW_API int tw_request_wait_timeout(struct tw_wheel *w, struct tw_request *req, uint64_t timeout_ns);

/**
 * tw_request_wait - wait until the owner has applied a request
 * @w:   the wheel it was posted to
 * @req: the request
 *
 * tw_request_wait_timeout() without a limit: if the owner's loop has
 * stopped without destroying the wheel, this waits forever; a poster that
 * cannot rule that out passes a timeout instead.
 *
 * Return: tw_request_result(), -EINVAL if @w or @req is NULL or @req was
 * never posted.
 */
TW_API int tw_request_wait(struct tw_wheel *w, struct tw_request *req);

/**
 * tw_drain - apply the requests queued by other threads, now
 * @w: the wheel
 *
 * Owner only, outside callbacks. tw_advance() does this first in every
 * call.
 *
 * Return: the number of requests applied, -EINVAL if @w is NULL, -EBUSY
 * from a callback.
 */
TW_API int tw_drain(struct tw_wheel *w);

/**
 * tw_walk_fn - the visitor of tw_walk()
 * @t:       a pending timer (tw_container_of() gives the program's record)
 * @expires: its expiry, as last armed (for a periodic timer, the next one)
 * @arg:     the argument given to tw_walk()
 *
 * It may read the wheel and the timer, and change the program's own
 * fields around the timer; it must not arm, re-arm or cancel a timer of
 * the wheel, advance it or destroy it (the walk would follow links that
 * moved).
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
 * For checkpoints and orderly shutdowns: the walk reads the wheel and
 * changes nothing, not even its counters, so the program may write out
 * each timer's record with its expiry, and later restore it by arming the
 * timer again (an expiry already past fires in the next tw_advance()).
 * Every timer that tw_pending() calls pending is visited exactly once.
 * The due timers come first (those tw_timer_bucket() calls due, and in a
 * callback those still to run in its advance), in the order they will
 * fire unless cancelled or re-armed; then the timers in the wheel's slots,
 * in no specified order (neither expiry nor arming order). O(timers) plus
 * O(levels): empty slots are skipped through the occupancy bitmaps. A
 * timer with slack is visited with its expiry; its window is the
 * program's to remember.
 *
 * Allowed from a callback of @w: it then visits the timers still to run in
 * the same advance (they are pending) and not the running one, unless that
 * one was re-armed (a periodic timer is re-armed before its callback).
 *
 * Return: 0 once every timer was visited (also for an empty wheel), the
 * first non-zero value @fn returned (the walk stops there), or -EINVAL if
 * @w or @fn is NULL.
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
 * Percentiles come from tw_lateness_quantile().
 *
 * Return: 0, -EINVAL if @w or @out is NULL.
 */
TW_API int tw_get_lateness(const struct tw_wheel *w, struct tw_lateness *out);

/**
 * tw_lateness_quantile - a percentile of a lateness histogram, rounded up
 * @l:        the histogram, from tw_get_lateness()
 * @permille: which one, 0 to 1000: 500 for the median, 990 for p99
 *
 * The percentile by nearest rank: of the @l->fired firings sorted by
 * lateness, the r-th, with r = @permille * @l->fired / 1000 rounded up,
 * and at least 1 (so 0 picks the smallest lateness and 1000 the largest).
 * The histogram keeps that lateness as its bucket b, so the result is the
 * bucket's largest lateness, 2^b - 1 ns (0 for bucket 0), and no more than
 * @l->max_ns: never below the r-th lateness, less than twice it (0 when it
 * is 0), and for 1000 exactly @l->max_ns. With 3 firings, @permille 0 to
 * 333 gives the first, 334 to 666 the second, 667 to 1000 the third.
 *
 * Return: the lateness in ns; 0 if nothing fired, or @l is NULL or
 * @permille is above 1000.
 */
TW_API uint64_t tw_lateness_quantile(const struct tw_lateness *l, unsigned permille);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_H */
