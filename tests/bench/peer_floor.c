/* SPDX-License-Identifier: MIT */
/*
 * Peer "floor": the memory touches of each operation with no timer logic,
 * the cost below which no timer structure with a 40-byte handle can go.
 * Its handle is a 40-byte record (the size of a struct tw_timer), in the same
 * { handle; uint64_t deadline; } containers as every peer, 48 bytes each,
 * the same layout as timerwheel's. Per operation:
 *
 *   arm (idle timer)        write record i (5 x 8 bytes); no read
 *   cancel, re-arm, fire    read record i (5 x 8 bytes, into a checksum)
 *                           and write it (5 x 8 bytes)
 *   advance                 read the next entry of the schedule, compare
 *
 * The index i comes from the driver (or, for a fire, from the schedule),
 * never from a record, so successive operations' misses overlap. The writes
 * do not depend on the reads either. The checksum of every record read is
 * printed at exit, so no read can be optimised away; the writes go to
 * memory the program reads later.
 *
 * Which timers fire at which advance is timer logic, so the floor does not
 * work it out: PEER_REHEARSE makes the driver run each workload once
 * untimed first, with the same calls in the same order. In that rehearsal
 * the floor is the heap of heapk.c and logs each advance's fires (timer
 * indices) into a schedule; in the timed repetitions it replays the
 * schedule: each advance reads how many fires it has (one 4-byte entry,
 * sequential), and each fire reads the next index (4 bytes, sequential),
 * touches the record and calls the harness's check, as every peer's
 * callback does. The checks (early, late, duplicate, missed) run on the
 * replay; a replay whose calls differ from the rehearsal's aborts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "heapk.h"

#define PEER_REHEARSE 1

struct frec {
	uint64_t w[5];
};

struct ctimer {
	struct frec r;
	uint64_t deadline;
};

const char peer_name[] = "floor";
const uint64_t peer_slack_ns = 0;

static struct ctimer *ct;
static uint64_t floor_sum; /* every word read from a record */

/* The schedule: fires[] in order, adv_end[k] = fires done after advance k. */
static uint32_t *fires, *adv_end;
static size_t nfires, nadv, cap_fires, cap_adv;
static size_t fpos, adv_k; /* replay cursors */

/* Rehearsal only: the heap that decides what fires. */
static struct hk_heap heap;
static struct hk_timer *rt;
static bool rehearsing_now;

size_t peer_handle_size(void)
{
	return sizeof(struct frec);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(struct frec);
}

static void *grow(void *p, size_t *cap, size_t elem)
{
	size_t c = *cap ? 2 * *cap : 4096;

	p = realloc(p, c * elem);
	if (!p) {
		fprintf(stderr, "floor: out of memory for the schedule\n");
		exit(2);
	}
	*cap = c;
	return p;
}

static inline void rec_write(uint32_t i, uint64_t a)
{
	struct frec *f = &ct[i].r;

	f->w[0] = a;
	f->w[1] = i;
	f->w[2] = a ^ i;
	f->w[3] = ~a;
	f->w[4] = a + i;
}

static inline void rec_touch(uint32_t i, uint64_t a)
{
	const struct frec *f = &ct[i].r;

	floor_sum += f->w[0] ^ f->w[1] ^ f->w[2] ^ f->w[3] ^ f->w[4];
	rec_write(i, a);
}

static void rehearsal_fire(struct hk_timer *t)
{
	uint32_t i = (uint32_t)(t - rt);

	if (nfires == cap_fires)
		fires = grow(fires, &cap_fires, sizeof(*fires));
	fires[nfires++] = i;
	bench_fired(&ct[i].deadline, i);
}

int peer_open(uint32_t n)
{
	rehearsing_now = bench_rehearsal;
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		rec_write(i, 0);
		ct[i].deadline = 0;
	}
	if (rehearsing_now) {
		rt = malloc((size_t)n * sizeof(*rt));
		if (!rt) {
			free(ct);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n; i++) {
			rt[i].fn = rehearsal_fire;
			rt[i].slot = HK_IDLE;
		}
		hk_init(&heap);
		nfires = nadv = 0;
	}
	fpos = adv_k = 0;
	return 0;
}

void peer_close(void)
{
	if (rehearsing_now) {
		hk_free(&heap);
		free(rt);
		rt = NULL;
	} else if (adv_k != nadv || fpos != nfires) {
		fprintf(stderr, "floor: the replay made %zu advances and %zu fires, the rehearsal %zu and %zu\n",
			adv_k, fpos, nadv, nfires);
		abort();
	}
	free(ct);
	ct = NULL;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (rehearsing_now) {
		if (hk_add(&heap, &rt[i], deadline))
			abort();
		return;
	}
	rec_write(i, deadline);
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (rehearsing_now) {
		if (hk_mod(&heap, &rt[i], deadline))
			abort();
		return;
	}
	rec_touch(i, deadline);
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	if (rehearsing_now) {
		hk_del(&heap, &rt[i]);
		return;
	}
	rec_touch(i, 0);
}

void peer_advance(uint64_t now)
{
	size_t end;

	if (rehearsing_now) {
		hk_run(&heap, now);
		if (nadv == cap_adv)
			adv_end = grow(adv_end, &cap_adv, sizeof(*adv_end));
		adv_end[nadv++] = (uint32_t)nfires;
		return;
	}
	if (adv_k == nadv) {
		fprintf(stderr, "floor: the replay advances more often than the rehearsal (%zu)\n", nadv);
		abort();
	}
	end = adv_end[adv_k++];
	while (fpos < end) {
		uint32_t i = fires[fpos++];

		rec_touch(i, 0);
		bench_fired(&ct[i].deadline, i);
	}
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}

__attribute__((destructor)) static void floor_report(void)
{
	printf("# floor checksum %016" PRIx64 " (every record word it read)\n", floor_sum);
	free(fires);
	free(adv_end);
}
