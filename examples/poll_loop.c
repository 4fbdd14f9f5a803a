/* SPDX-License-Identifier: MIT */
/*
 * poll_loop: the plain poll() loop, with the loop kit doing the arithmetic.
 *
 *	for (;;) {
 *		poll(fds, nfds, tw_timeout_ms(tw_clock_monotonic(), tw_next_expiry(w)));
 *		... read what is ready ...
 *		tw_advance(w, tw_clock_monotonic());
 *	}
 *
 * tw_timeout_ms() rounds up to whole milliseconds (poll() could not wake
 * before the next expiry) and gives -1 when nothing is armed.
 *
 * Something to wait for: JOBS jobs, each handed to a "worker" that answers
 * through a pipe after a random delay (a timer of the same wheel stands in
 * for the worker), and each with a deadline. An answer that arrives before
 * the deadline cancels it with tw_del(); a job whose worker never answers
 * (one in four) times out. Every job must end exactly once, answered or
 * timed out, and no timer may fire before its expiry.
 *
 *   poll_loop [JOBS]     (default 2000)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <timerwheel.h>

#define MS 1000000ull

struct job {
	struct tw_timer answer;   /* the worker's reply, sent through the pipe */
	struct tw_timer deadline; /* the job's timeout */
	uint64_t answer_at, deadline_at;
	int ended;                /* answered or timed out: exactly once */
};

static struct tw_wheel *wheel;
static struct job *jobs;
static int pipe_fds[2];
static unsigned long early, answered, timed_out, twice;

static void check_not_early(uint64_t expires)
{
	if (tw_clock_monotonic() < expires || tw_now(wheel) < expires)
		early++;
}

static void end_job(struct job *j)
{
	if (j->ended++)
		twice++;
}

/* The worker answers: the job's index goes through the pipe. */
static void on_answer(struct tw_timer *t)
{
	struct job *j = tw_container_of(t, struct job, answer);
	unsigned idx = (unsigned)(j - jobs);

	check_not_early(j->answer_at);
	if (write(pipe_fds[1], &idx, sizeof(idx)) != (ssize_t)sizeof(idx)) {
		perror("write");
		exit(1);
	}
}

static void on_deadline(struct tw_timer *t)
{
	struct job *j = tw_container_of(t, struct job, deadline);

	check_not_early(j->deadline_at);
	timed_out++;
	end_job(j);
}

static void read_answers(void)
{
	unsigned idx;

	while (read(pipe_fds[0], &idx, sizeof(idx)) == (ssize_t)sizeof(idx)) {
		struct job *j = &jobs[idx];

		/* In time if the deadline is still armed: cancel it. An answer
		 * that comes after the timeout is too late and ignored. */
		if (tw_del(wheel, &j->deadline) == 1) {
			answered++;
			end_job(j);
		}
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	uint64_t start, rng = 42;
	unsigned long silent = 0;
	int err, wakeups = 0;

	jobs = calloc(n > 0 ? (size_t)n : 1, sizeof(*jobs));
	if (n < 1 || !jobs || pipe(pipe_fds) < 0 || fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK) < 0) {
		fprintf(stderr, "usage: poll_loop [JOBS >= 1]\n");
		return 2;
	}
	start = tw_clock_monotonic();
	err = tw_wheel_create(&wheel, NULL, start);
	if (err < 0) {
		fprintf(stderr, "tw_wheel_create: %d\n", err);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct job *j = &jobs[i];

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		/* Deadlines 100 to 300 ms out; answers up to 200 ms out, so that
		 * some come after their deadline; every fourth worker never does. */
		j->deadline_at = tw_deadline(start, 100 * MS + (rng >> 33) % (200 * MS));
		j->answer_at = tw_deadline(start, (rng >> 17) % (200 * MS));
		tw_timer_init(&j->deadline, on_deadline);
		tw_timer_init(&j->answer, on_answer);
		tw_add(wheel, &j->deadline, j->deadline_at);
		if (i % 4 == 3)
			silent++;
		else
			tw_add(wheel, &j->answer, j->answer_at);
	}

	struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };

	while (tw_count(wheel) > 0) {
		int timeout = tw_timeout_ms(tw_clock_monotonic(), tw_next_expiry(wheel));

		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) {
			perror("poll");
			return 1;
		}
		if (pfd.revents & POLLIN)
			read_answers();
		tw_advance(wheel, tw_clock_monotonic());
		wakeups++;
	}
	read_answers(); /* answers written by the last advance: all too late */
	tw_wheel_destroy(wheel);

	unsigned long ended = 0;
	for (int i = 0; i < n; i++)
		ended += jobs[i].ended == 1;
	free(jobs);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	printf("poll_loop: %d jobs, %lu answered in time, %lu timed out (%lu never answered), %d wake-ups\n", n,
	       answered, timed_out, silent, wakeups);
	if (early || twice || ended != (unsigned long)n || answered + timed_out != (unsigned long)n ||
	    timed_out < silent) {
		printf("poll_loop: FAILED: %lu early, %lu ended twice, %lu of %d ended once\n", early, twice, ended,
		       n);
		return 1;
	}
	printf("poll_loop: OK, every job ended exactly once, no timer fired early\n");
	return 0;
}
