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
	for (unsigned lane = 0; lane < tw::lanes; lane++)
		n += list_length(slot.lane[lane]);
	return n;
}

void dump_expiries(const tw_timer *t, FILE *out)
{
	for (; t; t = t->tw__next)
		fprintf(out, "      timer %p expires %llu ns\n", (const void *)t, (unsigned long long)t->expires);
}

} // namespace

void tw_wheel::dump(FILE *out, bool verbose) const
{
	unsigned slots_per_level = 1u << slot_bits;
	fprintf(out, "wheel: now %llu ns (tick %llu), tick %llu ns, %u levels of %u slots, %zu armed\n",
		(unsigned long long)now_ns, (unsigned long long)now_tick, (unsigned long long)tick_ns, levels,
		slots_per_level, count);
	fprintf(out, "  due      %zu\n", list_length(due.first));
	if (verbose)
		dump_expiries(due.first, out);

	unsigned top = level_mask ? tw::msb64(level_mask) : 0;
	for (unsigned level = 0; level <= top; level++) {
		unsigned clock_digit = tw::calc_wheel_slot(now_tick, level, slot_bits, slot_mask);
		unsigned long long width = 1ull << (level * slot_bits);
		fprintf(out, "  level %-2u slot = %llu tick%s: ", level, width, width == 1 ? "" : "s");
		if (slots_per_level <= 16) {
			for (unsigned s = 0; s < slots_per_level; s++) {
				size_t n = slot_length(slots[index_of(level, s)]);
				char mark = s == clock_digit ? '>' : ' ';
				if (n)
					fprintf(out, "[%c%2zu]", mark, n);
				else
					fprintf(out, "[%c .]", mark);
			}
		} else {
			fprintf(out, "clock at slot %u;", clock_digit);
			if (!occupied[level])
				fprintf(out, " empty");
			for (unsigned s = 0; s < slots_per_level; s++)
				if (occupied[level] >> s & 1)
					fprintf(out, " slot %u: %zu", s, slot_length(slots[index_of(level, s)]));
		}
		fputc('\n', out);
		if (verbose)
			for (unsigned s = 0; s < slots_per_level; s++)
				if (occupied[level] >> s & 1) {
					fprintf(out, "    slot %u (due at tick %llu):\n", s,
						(unsigned long long)slot_start(index_of(level, s)));
					for (unsigned lane = 0; lane < tw::lanes; lane++)
						dump_expiries(slots[index_of(level, s)].lane[lane], out);
				}
	}
}
