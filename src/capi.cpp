// SPDX-License-Identifier: MIT
//
// The C ABI: every public tw_ function, in one place. Arguments are checked
// here or by the checked entries (entry.hpp), so the wheel's own methods can
// assume they are sound; nothing here changes state before its checks have
// passed.
#include <errno.h>

#include <timerwheel/debug.h>

#include "advance.hpp"
#include "entry.hpp"

#if TW_DEBUG_CHECKS && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TW_MAKE_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif
#endif
#ifndef TW_MAKE_DEFINED
#define TW_MAKE_DEFINED(p, n) ((void)0)
#endif

extern "C" {

TW_API unsigned tw_version(void)
{
	return TW_VERSION_HEX;
}

#define TW_STR_(x) #x
#define TW_STR(x) TW_STR_(x)

TW_API const char *tw_version_string(void)
{
	return TW_STR(TW_VERSION_MAJOR) "." TW_STR(TW_VERSION_MINOR) "." TW_STR(TW_VERSION_PATCH);
}

TW_API int tw_wheel_create(tw_wheel **out, const tw_config *cfg, uint64_t now)
{
	uint64_t tick_ns = cfg && cfg->tick_ns ? cfg->tick_ns : TW_DEFAULT_TICK_NS;
	unsigned slot_bits = cfg && cfg->slot_bits ? cfg->slot_bits : TW_DEFAULT_SLOT_BITS;
	uint64_t slack_ns = cfg ? cfg->slack_ns : 0;
	if (!out || slot_bits > TW_MAX_SLOT_BITS)
		return -EINVAL;
#if TW_DEBUG_CHECKS
	tw_wheel *w;
	int err = tw_wheel::create(&w, tick_ns, slot_bits, slack_ns, now);
	if (err)
		return err;
	if (!tw::debug::wheel_created(w, w->owner_id())) {
		w->destroy();
		tw::release_if_unused(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
#else
	return tw_wheel::create(out, tick_ns, slot_bits, slack_ns, now);
#endif
}

TW_API void tw_wheel_destroy(tw_wheel *w)
{
	if (!w)
		return;
	TW_LIVE(w);
	if (w->destroyed())
		return;
	w->destroy();
	tw::release_if_unused(w);
}

TW_API void tw_timer_init(tw_timer *t, void (*fn)(tw_timer *t))
{
	if (!t)
		return;
#if TW_DEBUG_CHECKS
	// The timer is usually uninitialised memory, which is about to be
	// overwritten anyway: tell memcheck so, or every init is an error.
	TW_MAKE_DEFINED(t, sizeof(*t));
	if (t->tw__magic == tw::timer_magic && t->tw__where != tw::where_idle && tw::debug::id_live(t->tw__owner) &&
	    t->tw__pprev && *t->tw__pprev == t)
		tw::debug::misuse(__func__, "timer %p is armed: re-initialising it would corrupt its wheel (tw_del() it first)",
				  (const void *)t);
#endif
	*t = tw_timer{};
	t->fn = fn;
	t->tw__magic = tw::timer_magic;
}

TW_API int tw_periodic_init(tw_periodic *p, void (*fn)(tw_timer *t), uint64_t period)
{
	if (!p || !fn || !period)
		return -EINVAL;
	tw_timer_init(&p->timer, fn);
	p->timer.tw__flags = tw::flag_periodic;
	p->period = period;
	return 0;
}

TW_API int tw_add(tw_wheel *w, tw_timer *t, uint64_t expires)
{
	return tw::entry::add_checked(w, t, expires, nullptr, __func__);
}

TW_API int tw_add_range(tw_wheel *w, tw_timer *t, uint64_t expires, uint64_t slack)
{
	return tw::entry::add_checked(w, t, expires, &slack, __func__);
}

TW_API int tw_mod(tw_wheel *w, tw_timer *t, uint64_t expires)
{
	return tw::entry::mod_checked(w, t, expires, nullptr, __func__);
}

TW_API int tw_mod_range(tw_wheel *w, tw_timer *t, uint64_t expires, uint64_t slack)
{
	return tw::entry::mod_checked(w, t, expires, &slack, __func__);
}

TW_API int tw_del(tw_wheel *w, tw_timer *t)
{
	return tw::entry::del_checked(w, t, __func__);
}

TW_API bool tw_pending(const tw_timer *t)
{
	return t && t->tw__where != tw::where_idle;
}

TW_API uint64_t tw_forward(tw_timer *t, uint64_t now, uint64_t period)
{
	if (!t || t->tw__where != tw::where_idle || !period)
		return 0;
	return tw__forward(t, now, period);
}

TW_API int tw_advance(tw_wheel *w, uint64_t now)
{
	if (!w)
		return -EINVAL;
	TW_LIVE(w);
	return w->advance(now); // releases a wheel that a callback destroyed, if unused

}

TW_API int tw_advance_budget(tw_wheel *w, uint64_t now, unsigned budget)
{
	if (!w || !budget)
		return -EINVAL;
	TW_LIVE(w);
	return w->advance_budget(now, budget); // releases a wheel that a callback destroyed, if unused
}

TW_API int tw_set_wake_budget(tw_wheel *w, unsigned budget)
{
	if (!w || !budget)
		return -EINVAL;
	TW_LIVE(w);
	w->policy.set_wake_budget(budget);
	return 0;
}

TW_API unsigned tw_wake_budget(const tw_wheel *w)
{
	if (!w)
		return tw_wheel::no_budget;
	TW_LIVE(w);
	return w->policy.wake_budget();
}

TW_API uint64_t tw_next_expiry(const tw_wheel *w)
{
	if (!w)
		return UINT64_MAX;
	TW_LIVE(w);
	return w->next_expiry();
}

TW_API uint64_t tw_now(const tw_wheel *w)
{
	if (!w)
		return 0;
	TW_LIVE(w);
	return w->clock.ns();
}

TW_API size_t tw_count(const tw_wheel *w)
{
	if (!w)
		return 0;
	TW_LIVE(w);
	return w->counts.count();
}

TW_API uint64_t tw_tick(const tw_wheel *w)
{
	if (!w)
		return 0;
	TW_LIVE(w);
	return w->geo.tick_ns();
}

TW_API int tw_set_notify(tw_wheel *w, tw_notify_fn fn, void *arg)
{
	if (!w)
		return -EINVAL;
	TW_LIVE(w);
	if (fn && w->destroyed())
		return -EINVAL;
	if (fn && w->hook.installed())
		return -EBUSY;
	w->set_notify(fn, arg);
	tw::release_if_unused(w); // the backend let go of a destroyed wheel
	return 0;
}

TW_API int tw_set_wake(tw_wheel *w, tw_wake_fn fn, void *arg)
{
	if (!w)
		return -EINVAL;
	TW_LIVE(w);
	w->requests.set_wake(fn, arg);
	(void)w->publish_horizon(w->hook.told());
	return 0;
}

// Other threads: no debug registry lookup (it is the owner's), only the
// request queue's atomics (request_queue.hpp). The owner applies each
// request through the entry of the call it stands for.
static int post(tw_wheel *w, tw_request *req, tw::request_op op, tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (!w || !req || !t)
		return -EINVAL;
	return w->requests.post(w, req, tw::request_payload{ op, t, expires, slack });
}

TW_API int tw_post_mod(tw_wheel *w, tw_request *req, tw_timer *t, uint64_t expires)
{
	return post(w, req, tw::request_op::mod, t, expires, 0);
}

TW_API int tw_post_mod_range(tw_wheel *w, tw_request *req, tw_timer *t, uint64_t expires, uint64_t slack)
{
	return post(w, req, tw::request_op::mod_range, t, expires, slack);
}

TW_API int tw_post_del(tw_wheel *w, tw_request *req, tw_timer *t)
{
	return post(w, req, tw::request_op::del, t, 0, 0);
}

TW_API int tw_drain(tw_wheel *w)
{
	if (!w)
		return -EINVAL;
	TW_LIVE(w);
	if (w->running())
		return -EBUSY;
	return w->drain();
}

TW_API int tw_get_stats(const tw_wheel *w, tw_stats *out)
{
	if (!w || !out)
		return -EINVAL;
	TW_LIVE(w);
	*out = w->counts.stats();
	return 0;
}

TW_API int tw_walk(const tw_wheel *w, tw_walk_fn fn, void *arg)
{
	if (!w || !fn)
		return -EINVAL;
	TW_LIVE(w);
	return w->walk(fn, arg);
}

TW_API int tw_get_lateness(const tw_wheel *w, tw_lateness *out)
{
	if (!w || !out)
		return -EINVAL;
	TW_LIVE(w);
	w->get_lateness(out);
	return 0;
}

TW_API int tw_check(const tw_wheel *w)
{
	if (!w)
		return -EINVAL;
	TW_LIVE(w);
	return w->check();
}

TW_API int tw_timer_bucket(const tw_wheel *w, const tw_timer *t, unsigned *level, unsigned *slot)
{
	if (!w || !t || !level || !slot)
		return -EINVAL;
	TW_LIVE(w);
	if (t->tw__where == tw::where_idle)
		return -ENOENT;
	if (!w->owns(t))
		return -EINVAL;
	if (t->tw__where == tw::where_due)
		return 1;
	*level = w->geo.level_of(tw_wheel::index_of(t));
	*slot = w->geo.slot_of(tw_wheel::index_of(t));
	return 0;
}

TW_API int tw_dump(const tw_wheel *w, FILE *out, bool verbose)
{
	if (!w || !out)
		return -EINVAL;
	TW_LIVE(w);
	w->dump(out, verbose);
	return 0;
}

} // extern "C"
