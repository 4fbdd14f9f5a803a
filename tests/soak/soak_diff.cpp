// SPDX-License-Identifier: MIT
//
// The differential soak: the fuzz harness driven by a PRNG for a very long
// time, one wheel geometry per run, ticks from 1 ns to 1 s and slot_bits 1
// to 6, every fourth with a default slack (and timers armed with windows of
// their own throughout). Each run ends by advancing to the end of time:
// every timer armed must have fired or been cancelled.
//
// Usage: soak_diff [operations [ops_per_run [check_every]]]
//        (defaults 10^6, 10^5, 64); TW_SEED picks the seed.
#include <time.h>

#include "../fuzz/harness.hpp"

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t total = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1000000;
	uint64_t per_run = argc > 2 ? strtoull(argv[2], nullptr, 0) : 100000;
	uint64_t check_every = argc > 3 ? strtoull(argv[3], nullptr, 0) : 64;
	const char *seed_env = getenv("TW_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, nullptr, 0) : 0x50a6;
	if (!per_run)
		per_run = 1;
	printf("soak: %llu operations, %llu per geometry, full check every %llu, seed %llu (TW_SEED)\n",
	       (unsigned long long)total, (unsigned long long)per_run, (unsigned long long)check_every,
	       (unsigned long long)seed);
	fflush(stdout);

	twh::harness h;
	twh::options o;
	o.ntimers = 256;
	o.check_every = check_every ? check_every : 1;
	o.dump = false;
	o.rewheel = false;
	h.src.random = true;
	h.src.state = seed;
	h.start(o);

	double t0 = seconds(), last = t0;
	uint64_t runs = 0, min_tick = UINT64_MAX, max_tick = 0;
	unsigned bits_seen = 0;
	while (h.ops < total) {
		// Log-uniform ticks from 1 ns to 1 s, with both ends now and then.
		uint64_t r = h.src.rand64();
		uint64_t tick = r % 16 == 0 ? 1 : r % 16 == 1 ? 1000000000 : 1 + h.src.rand64() % (uint64_t{1} << (r >> 8) % 30);
		if (tick > 1000000000)
			tick = 1000000000;
		unsigned bits = 1 + static_cast<unsigned>(h.src.rand64() % TW_MAX_SLOT_BITS);
		uint64_t start = h.src.rand64() >> (h.src.rand64() % 64);
		h.tick = tick; // random_slack() scales by it
		uint64_t slack = runs % 4 == 3 ? h.random_slack() : 0; // a default slack on every 4th wheel
		h.new_wheel(tick, bits, slack, start);
		min_tick = tick < min_tick ? tick : min_tick;
		max_tick = tick > max_tick ? tick : max_tick;
		bits_seen |= 1u << bits;
		uint64_t end = h.ops + per_run < total ? h.ops + per_run : total;
		while (h.ops < end)
			h.step();
		h.drain();
		runs++;
		double t = seconds();
		if (t - last >= 60) {
			last = t;
			printf("  %llu ops, %llu fired, %llu geometries, %.0f s\n", (unsigned long long)h.ops,
			       (unsigned long long)h.fired_total, (unsigned long long)runs, t - t0);
			fflush(stdout);
		}
	}
	h.finish();
	double t = seconds() - t0;
	printf("soak: %llu operations (%llu advances, %llu callbacks, %llu timers freed) on %llu geometries "
	       "(tick %llu..%llu ns, slot_bits mask %#x) in %.1f s (%.2f us/op): no divergence\n",
	       (unsigned long long)h.ops, (unsigned long long)h.advances, (unsigned long long)h.fired_total,
	       (unsigned long long)h.frees, (unsigned long long)runs, (unsigned long long)min_tick,
	       (unsigned long long)max_tick, bits_seen, t, t * 1e6 / (double)(h.ops ? h.ops : 1));
	return 0;
}
