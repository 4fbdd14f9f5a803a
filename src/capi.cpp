// SPDX-License-Identifier: MIT
//
// The C ABI: every public tw_ function, in one place. Arguments are checked
// here, so the wheel's own methods can assume they are sound; nothing here
// changes state before its checks have passed.
#include <errno.h>

#include "wheel.hpp"

extern "C" {

TW_API int tw_wheel_create(tw_wheel **out, const tw_config *cfg, uint64_t now)
{
	uint64_t tick_ns = cfg && cfg->tick_ns ? cfg->tick_ns : TW_DEFAULT_TICK_NS;
	unsigned slot_bits = cfg && cfg->slot_bits ? cfg->slot_bits : TW_DEFAULT_SLOT_BITS;
	if (!out || slot_bits > TW_MAX_SLOT_BITS)
		return -EINVAL;
	return tw_wheel::create(out, tick_ns, slot_bits, now);
}

TW_API void tw_wheel_destroy(tw_wheel *w)
{
	if (w && !w->dying)
		w->destroy();
}

TW_API void tw_timer_init(tw_timer *t, void (*fn)(tw_timer *t))
{
	if (!t)
		return;
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

static bool timer_usable(const tw_timer *t)
{
	return t && t->tw__magic == tw::timer_magic && t->fn;
}

TW_API int tw_add(tw_wheel *w, tw_timer *t, uint64_t expires)
{
	if (!w || !timer_usable(t))
		return -EINVAL;
	return w->add(t, expires);
}

TW_API int tw_mod(tw_wheel *w, tw_timer *t, uint64_t expires)
{
	if (!w || !timer_usable(t))
		return -EINVAL;
	return w->mod(t, expires);
}

TW_API int tw_del(tw_wheel *w, tw_timer *t)
{
	if (!w || !t)
		return -EINVAL;
	return w->del(t);
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
	return w->advance(now);
}

TW_API uint64_t tw_next_expiry(const tw_wheel *w)
{
	return w ? w->next_expiry() : UINT64_MAX;
}

TW_API uint64_t tw_now(const tw_wheel *w)
{
	return w ? w->now_ns : 0;
}

TW_API size_t tw_count(const tw_wheel *w)
{
	return w ? w->count : 0;
}

TW_API uint64_t tw_tick(const tw_wheel *w)
{
	return w ? w->tick_ns : 0;
}

TW_API int tw_set_notify(tw_wheel *w, tw_notify_fn fn, void *arg)
{
	if (!w)
		return -EINVAL;
	if (fn && w->notify)
		return -EBUSY;
	w->notify = fn;
	w->notify_arg = fn ? arg : nullptr;
	return 0;
}

TW_API int tw_get_stats(const tw_wheel *w, tw_stats *out)
{
	if (!w || !out)
		return -EINVAL;
	*out = w->stats;
	return 0;
}

TW_API int tw_check(const tw_wheel *w)
{
	if (!w)
		return -EINVAL;
	return w->check();
}

TW_API int tw_timer_bucket(const tw_wheel *w, const tw_timer *t, unsigned *level, unsigned *slot)
{
	if (!w || !t || !level || !slot)
		return -EINVAL;
	if (t->tw__where == tw::where_idle)
		return -ENOENT;
	if (t->tw__owner != w->id)
		return -EINVAL;
	if (t->tw__where == tw::where_due)
		return 1;
	size_t index = t->tw__where - tw::where_slot0;
	*level = static_cast<unsigned>(index >> w->slot_bits);
	*slot = static_cast<unsigned>(index & w->slot_mask);
	return 0;
}

TW_API int tw_dump(const tw_wheel *w, FILE *out, bool verbose)
{
	if (!w || !out)
		return -EINVAL;
	w->dump(out, verbose);
	return 0;
}

} // extern "C"
