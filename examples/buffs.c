/* SPDX-License-Identifier: MIT */
/*
 * buffs: a game server where every player carries buffs that
 * apply an effect (here: heal) every 3 s and expire after their duration;
 * a dispel spell may land on a player and cancel all of their buffs.
 *
 *   buffs [-n PLAYERS] [--seed N]
 *
 * Instead of walking every player's buff list on every game tick, each buff
 * holds two timers: a drift-free periodic one (struct tw_periodic) for its
 * effect and a one-shot one for its end. Expiry stops the periodic timer;
 * a dispel cancels both with tw_del(). Nothing is polled.
 *
 * The run is checked exactly: the simulation knows in advance how many
 * effects each buff must apply, and at which moment each one is due.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <timerwheel.h>

#define MS 1000000ull
#define PERIOD_MS 3000u
#define MAX_BUFFS 3
#define LOGIN_MS 10000u  /* players log in over the first 10 s */
#define DISPEL_MAX_MS 70000u

enum buff_state { ACTIVE, EXPIRED, DISPELLED };

struct player;

struct buff {
	struct tw_periodic effect; /* every PERIOD_MS, first one a period after it was cast */
	struct tw_timer expire;    /* at the end of its duration */
	struct player *player;
	uint64_t applied_ms;
	uint32_t effects;
	uint32_t expected;
	uint8_t heal;
	uint8_t state;
};

struct player {
	struct tw_timer dispel; /* an enemy's dispel, if one is coming */
	uint64_t hp;
	uint64_t expect_hp;
	uint8_t nbuffs;
	struct buff buffs[MAX_BUFFS];
};

static struct {
	struct tw_wheel *w;
	uint64_t effects, expired, dispelled, dispels;
	uint64_t early, late_max_ms;
} g;

static uint32_t next_random(uint32_t *rng)
{
	uint32_t x = *rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*rng = x;
	return x;
}

static void on_effect(struct tw_timer *t)
{
	struct buff *b = tw_container_of(t, struct buff, effect.timer);
	uint64_t now_ms = tw_now(g.w) / MS;
	uint64_t due_ms = b->applied_ms + (uint64_t)(b->effects + 1) * PERIOD_MS;

	if (now_ms < due_ms)
		g.early++;
	else if (now_ms - due_ms > g.late_max_ms)
		g.late_max_ms = now_ms - due_ms;
	b->effects++;
	b->player->hp += b->heal;
	g.effects++;
}

static void on_expire(struct tw_timer *t)
{
	struct buff *b = tw_container_of(t, struct buff, expire);

	/* The periodic timer is re-armed before its callback runs, so it is
	 * pending here and this is what ends it. */
	tw_del(g.w, &b->effect.timer);
	b->state = EXPIRED;
	g.expired++;
}

static void on_dispel(struct tw_timer *t)
{
	struct player *p = tw_container_of(t, struct player, dispel);

	g.dispels++;
	for (int i = 0; i < p->nbuffs; i++) {
		struct buff *b = &p->buffs[i];

		if (b->state != ACTIVE)
			continue;
		tw_del(g.w, &b->effect.timer);
		tw_del(g.w, &b->expire);
		b->state = DISPELLED;
		g.dispelled++;
	}
}

/*
 * Casts a player's buffs at `at_ms` and maybe schedules a dispel. The times
 * are chosen so that no two events of one player share a millisecond (buff
 * events on even ones, dispels on odd ones), because the wheel does not
 * order timers within one tick; so the expected counts are exact.
 */
static void cast(struct player *p, uint64_t at_ms, uint32_t *rng)
{
	uint64_t dispel_after = 0;

	if (next_random(rng) % 5 == 0)
		dispel_after = 2 * (next_random(rng) % (DISPEL_MAX_MS / 2)) + 1;
	p->nbuffs = (uint8_t)(1 + next_random(rng) % MAX_BUFFS);
	for (int i = 0; i < p->nbuffs; i++) {
		struct buff *b = &p->buffs[i];
		uint32_t periods = 1 + next_random(rng) % 20;
		uint64_t duration = (uint64_t)periods * PERIOD_MS + 2 * (1 + next_random(rng) % 1499);
		uint64_t stop = dispel_after && dispel_after < duration ? dispel_after : duration;

		b->player = p;
		b->applied_ms = at_ms;
		b->heal = (uint8_t)(1 + next_random(rng) % 10);
		b->state = ACTIVE;
		/* Effects at k * PERIOD_MS for k >= 1, strictly before the end. */
		b->expected = (uint32_t)((stop - 1) / PERIOD_MS);
		p->expect_hp += (uint64_t)b->expected * b->heal;

		tw_periodic_init(&b->effect, on_effect, PERIOD_MS * MS);
		tw_add(g.w, &b->effect.timer, (at_ms + PERIOD_MS) * MS);
		tw_timer_init(&b->expire, on_expire);
		tw_add(g.w, &b->expire, (at_ms + duration) * MS);
	}
	tw_timer_init(&p->dispel, on_dispel);
	if (dispel_after)
		tw_add(g.w, &p->dispel, (at_ms + dispel_after) * MS);
}

static int verify(const struct player *players, uint64_t n, uint64_t *buffs, uint64_t *expected)
{
	int bad = 0;

	*buffs = *expected = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct player *p = &players[i];

		for (int j = 0; j < p->nbuffs; j++) {
			const struct buff *b = &p->buffs[j];

			(*buffs)++;
			*expected += b->expected;
			if (b->effects != b->expected || b->state == ACTIVE ||
			    tw_pending(&b->effect.timer) || tw_pending(&b->expire)) {
				if (bad++ < 5)
					printf("  player %llu buff %d: %u effects, expected %u, state %d\n",
					       (unsigned long long)i, j, b->effects, b->expected, b->state);
			}
		}
		if (p->hp != p->expect_hp || tw_pending(&p->dispel))
			bad++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	uint64_t n = 100000, buffs, expected, wakeups = 0, t0, t1;
	uint32_t rng = 88172645u;
	struct player *players;
	struct tw_stats st;
	int bad;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			n = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			rng = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [-n PLAYERS] [--seed N]\n", argv[0]);
			return 2;
		}
	}
	if (n == 0 || rng == 0) {
		fprintf(stderr, "buffs: need at least one player and a non-zero seed\n");
		return 2;
	}

	players = calloc(n, sizeof(*players));
	if (!players || tw_wheel_create(&g.w, NULL, 0) < 0) {
		fprintf(stderr, "buffs: out of memory\n");
		return 1;
	}
	t0 = tw_clock_monotonic();
	/* Players log in one after another; the wheel runs meanwhile, so the
	 * first buffs tick while later players are still arriving. Even
	 * milliseconds only, see cast(). */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t at_ms = 2 * (i * (LOGIN_MS / 2) / n);

		tw_advance(g.w, at_ms * MS);
		cast(&players[i], at_ms, &rng);
	}
	/* Then simulated time jumps from one due moment to the next. */
	while (tw_count(g.w) > 0) {
		uint64_t next = tw_next_expiry(g.w);

		if (next == UINT64_MAX)
			break;
		tw_advance(g.w, next);
		wakeups++;
	}

	t1 = tw_clock_monotonic();

	bad = verify(players, n, &buffs, &expected);
	tw_get_stats(g.w, &st);
	printf("buffs: %llu players logged in over %u s carrying %llu buffs (an effect every %u s,\n"
	       "       each lasting 1 to 20 periods), %llu dispels landed\n",
	       (unsigned long long)n, LOGIN_MS / 1000, (unsigned long long)buffs, PERIOD_MS / 1000,
	       (unsigned long long)g.dispels);
	printf("  simulated %.1f s of game time in %llu wake-ups (advancing to tw_next_expiry)\n",
	       (double)tw_now(g.w) / 1e9, (unsigned long long)wakeups);
	printf("  took %.1f ms of real time: %.2f M timer callbacks/s\n", (double)(t1 - t0) / 1e6,
	       (double)st.fired / ((double)(t1 - t0) / 1e9) / 1e6);
	printf("  effects: %llu applied, %llu expected; %llu early, latest %llu ms after due\n",
	       (unsigned long long)g.effects, (unsigned long long)expected,
	       (unsigned long long)g.early, (unsigned long long)g.late_max_ms);
	printf("  buffs: %llu expired, %llu dispelled\n", (unsigned long long)g.expired,
	       (unsigned long long)g.dispelled);
	printf("  wheel: %llu fired, %llu cancelled, %llu cascaded, %zu left armed\n",
	       (unsigned long long)st.fired, (unsigned long long)st.cancelled,
	       (unsigned long long)st.cascaded, tw_count(g.w));
	printf("  memory: %zu B per buff (periodic %zu B + expiry %zu B timers), %zu B per player\n",
	       sizeof(struct buff), sizeof(struct tw_periodic), sizeof(struct tw_timer),
	       sizeof(struct player));

	if (bad || g.early || g.effects != expected || g.expired + g.dispelled != buffs ||
	    st.fired != g.effects + g.expired + g.dispels || tw_count(g.w) != 0) {
		printf("buffs: FAILED (%d players or buffs wrong)\n", bad);
		bad = 1;
	} else {
		printf("buffs: OK, every buff applied exactly its expected number of effects\n");
	}
	tw_wheel_destroy(g.w);
	free(players);
	return bad ? 1 : 0;
}
