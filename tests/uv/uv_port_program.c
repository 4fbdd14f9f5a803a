/* SPDX-License-Identifier: MIT */
/*
 * A libuv program that closes, refs, unrefs, walks and inspects its timers
 * through libuv's generic handle calls, written for libuv alone. The tests
 * build it twice, as is and with -include timerwheel/uv_port.h, and
 * require the same output: what it prints is what libuv's rules decide
 * (counts, states, orders), never a time. Apart from two timers far in
 * the future, one timer at a time is active: each callback starts the
 * next, so the order does not depend on how fast either build runs. The
 * shutdown's close callbacks are printed sorted: a walk's order is
 * libuv's own business, and in one turn the layer's close callbacks run
 * together (its header says where).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

static uv_loop_t loop;
static uv_timer_t repeat, once, victim, stopper, watchdog, zero;
static uv_check_t check;
static int repeats, closes, checks;
static int shutting_down;
static const char *shut[16];
static int nshut;

static const char *name(const uv_handle_t *h)
{
	return h->data ? (const char *)h->data : "?";
}

static void on_close(uv_handle_t *h)
{
	closes++;
	if (shutting_down)
		shut[nshut++] = name(h);
	else
		printf("closed %s\n", name(h));
}

static void show(const char *when, uv_timer_t *t)
{
	uv_handle_t *h = (uv_handle_t *)t;

	printf("%s: %s active=%d closing=%d ref=%d type=%s loop=%d\n", when, name(h), uv_is_active(h),
	       uv_is_closing(h), uv_has_ref(h), uv_handle_type_name(uv_handle_get_type(h)),
	       uv_handle_get_loop(h) == &loop && h->loop == &loop);
}

/* A table indexed by handle type, sized as libuv's types are: a type
 * outside them would write past its end. */
static int by_type[UV_HANDLE_TYPE_MAX];

static void walk_count(uv_handle_t *h, void *arg)
{
	int *n = arg;

	if ((unsigned)h->type >= UV_HANDLE_TYPE_MAX) {
		printf("walk: type %d is outside libuv's handle types\n", (int)h->type);
		exit(1);
	}
	by_type[h->type]++;
	if (h->type == UV_TIMER)
		n[0]++;
	else
		n[1]++;
}

static void walk_close(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, on_close);
}

static void on_repeat(uv_timer_t *t);
static void on_once(uv_timer_t *t);
static void on_stopper(uv_timer_t *t);

static void on_zero(uv_timer_t *t)
{
	printf("zero fired, due_in=%llu\n", (unsigned long long)uv_timer_get_due_in(t));
	show("in zero", t);
	uv_timer_start(&repeat, on_repeat, 10, 10);
}

static void on_victim(uv_timer_t *t)
{
	(void)t;
	printf("victim fired (must not)\n");
}

static void on_stopper(uv_timer_t *t)
{
	printf("stopper fired\n");
	uv_timer_stop(&victim);
	show("victim stopped", &victim);
	uv_close((uv_handle_t *)&once, on_close);
	uv_close((uv_handle_t *)&victim, on_close);
	uv_close((uv_handle_t *)t, on_close);
	show("stopper closing", t);
}

static void on_once(uv_timer_t *t)
{
	int n[2] = { 0, 0 };

	printf("once fired\n");
	show("in once", t);
	uv_walk(&loop, walk_count, n);
	printf("walk: %d timers, %d others\n", n[0], n[1]);
	uv_timer_start(&stopper, on_stopper, 10, 0);
	show("stopper started", &stopper);
}

static void on_repeat(uv_timer_t *t)
{
	repeats++;
	printf("repeat %d repeat=%llu\n", repeats, (unsigned long long)uv_timer_get_repeat(t));
	if (repeats == 2) {
		uv_timer_set_repeat(t, 30);
		printf("again=%d\n", uv_timer_again(t));
	}
	if (repeats == 4) {
		uv_timer_stop(t);
		show("repeat stopped", t);
		uv_timer_start(&once, on_once, 10, 0);
	}
}

static void on_watchdog(uv_timer_t *t)
{
	(void)t;
	printf("watchdog fired (must not: the loop ends first)\n");
}

static void on_check(uv_check_t *c)
{
	(void)c;
	checks++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(void)
{
	int n[2] = { 0, 0 };
	int r;

	uv_loop_init(&loop);
	repeat.data = "repeat";
	once.data = "once";
	victim.data = "victim";
	stopper.data = "stopper";
	watchdog.data = "watchdog";
	zero.data = "zero";
	check.data = "check";
	uv_timer_init(&loop, &repeat);
	uv_timer_init(&loop, &once);
	uv_timer_init(&loop, &victim);
	uv_timer_init(&loop, &stopper);
	uv_timer_init(&loop, &watchdog);
	uv_timer_init(&loop, &zero);
	uv_check_init(&loop, &check);
	uv_check_start(&check, on_check);
	uv_unref((uv_handle_t *)&check);
	show("new", &once);
	printf("size: timer=%d check=%d; names: %s %s\n", uv_handle_size(UV_TIMER) == sizeof(uv_timer_t),
	       uv_handle_size(UV_CHECK) == sizeof(uv_check_t), uv_handle_type_name(UV_TIMER),
	       uv_handle_type_name(UV_CHECK));

	/* Far in the future: the victim is stopped, the watchdog outlives
	 * the run, whatever the machine's speed. */
	uv_timer_start(&victim, on_victim, 60000, 0);
	uv_timer_start(&watchdog, on_watchdog, 60000, 0);
	uv_unref((uv_handle_t *)&watchdog);
	show("watchdog", &watchdog);
	uv_ref((uv_handle_t *)&watchdog);
	show("watchdog ref", &watchdog);
	uv_unref((uv_handle_t *)&watchdog);
	uv_timer_start(&zero, on_zero, 0, 0);
	show("zero started", &zero);

	uv_walk(&loop, walk_count, n);
	printf("walk: %d timers, %d others; by type: %d timers, %d checks\n", n[0], n[1], by_type[UV_TIMER],
	       by_type[UV_CHECK]);
	r = uv_run(&loop, UV_RUN_DEFAULT);
	printf("run=%d repeats=%d closes=%d checks>0=%d\n", r, repeats, closes, checks > 0);
	show("after", &watchdog);
	show("after", &repeat);

	/* The usual shutdown, with timers armed (watchdog), stopped (repeat)
	 * and closing (zero): close what is left, run, close the loop. */
	n[0] = n[1] = 0;
	uv_walk(&loop, walk_count, n);
	printf("walk: %d timers, %d others\n", n[0], n[1]);
	shutting_down = 1;
	uv_close((uv_handle_t *)&zero, on_close); /* closing when the walk comes */
	n[0] = n[1] = 0;
	uv_walk(&loop, walk_count, n);
	printf("walk: %d timers, %d others\n", n[0], n[1]);
	uv_walk(&loop, walk_close, NULL);
	r = uv_run(&loop, UV_RUN_DEFAULT);
	qsort(shut, (size_t)nshut, sizeof(shut[0]), by_name);
	for (int i = 0; i < nshut; i++)
		printf("closed %s\n", shut[i]);
	printf("run=%d closes=%d loop_close=%d\n", r, closes, uv_loop_close(&loop));
	return 0;
}
