// SPDX-License-Identifier: MIT
//
// tw_dump(): the wheel drawn as text, for the curious and for debugging.
// Small levels are drawn cell by cell (the clock's digit marked with '>'),
// wide ones as a list of occupied slots.
#include "level.hpp"
#include "wheel.hpp"

namespace {

size_t list_length(const tw_timer *t)
{
	size_t n = 0;
	for (; t; t = t->tw__next)
		n++;
	return n;
}

size_t slot_length(const tw::slot &slot)
{
	size_t n = 0;
	slot.each([&n](const tw_timer *, tw_timer *const *) { return n++, 0; });
	return n;
}

void dump_expiry(const tw_timer *t, FILE *out)
{
	fprintf(out, "      timer %p expires %llu ns\n", (const void *)t, (unsigned long long)t->expires);
}

} // namespace

// One level's line: cell by cell for small levels, else its occupied slots.
void tw_wheel::dump_level(FILE *out, unsigned level) const
{
	unsigned slots_per_level = geo.slots_per_level();
	unsigned clock_digit = geo.digit_of(clock.tick(), level);
	unsigned long long width = geo.slot_width(level);
	fprintf(out, "  level %-2u slot = %llu tick%s: ", level, width, width == 1 ? "" : "s");
	if (slots_per_level <= 16) {
		for (unsigned s = 0; s < slots_per_level; s++) {
			size_t n = slot_length(buckets[geo.index_of(level, s)]);
			char mark = s == clock_digit ? '>' : ' ';
			if (n)
				fprintf(out, "[%c%2zu]", mark, n);
			else
				fprintf(out, "[%c .]", mark);
		}
	} else {
		fprintf(out, "clock at slot %u;", clock_digit);
		if (!buckets.bitmap(level))
			fprintf(out, " empty");
		for (unsigned s = 0; s < slots_per_level; s++)
			if (buckets.occupied(level, s))
				fprintf(out, " slot %u: %zu", s, slot_length(buckets[geo.index_of(level, s)]));
	}
	fputc('\n', out);
}

// Every timer of a level's occupied slots, with its expiry.
void tw_wheel::dump_level_timers(FILE *out, unsigned level) const
{
	for (unsigned s = 0; s < geo.slots_per_level(); s++) {
		if (!buckets.occupied(level, s))
			continue;
		size_t index = geo.index_of(level, s);
		fprintf(out, "    slot %u (due at tick %llu):\n", s, (unsigned long long)slot_start(index));
		buckets[index].each([out](const tw_timer *t, tw_timer *const *) { return dump_expiry(t, out), 0; });
	}
}

void tw_wheel::dump(FILE *out, bool verbose) const
{
	fprintf(out, "wheel: now %llu ns (tick %llu), tick %llu ns, %u levels of %u slots, %zu armed\n",
		(unsigned long long)clock.ns(), (unsigned long long)clock.tick(), (unsigned long long)geo.tick_ns(),
		geo.levels(), geo.slots_per_level(), counts.count());
	fprintf(out, "  due      %zu\n", list_length(*due.due_head()));
	if (verbose)
		for (const tw_timer *t = *due.due_head(); t; t = t->tw__next)
			dump_expiry(t, out);
	unsigned top = buckets.level_mask() ? tw::msb64(buckets.level_mask()) : 0;
	for (unsigned level = 0; level <= top; level++) {
		dump_level(out, level);
		if (verbose)
			dump_level_timers(out, level);
	}
}
