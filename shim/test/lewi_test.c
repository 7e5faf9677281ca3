/* lewi_test.c: LeWI's registry (lewi_shm.c) and DLB's LeWI semantics
 * (lewi.c) with real processes on one registry, without MPI or OpenMP.
 *
 * Built and run by internal/shimbuild's TestLewiC:
 *
 *   ./lewi_test SCENARIO     prints "ok SCENARIO" when every check passed
 *
 * with POPMON_LEWI_KEY set to a key of its own (the registry is removed at
 * the end). The parent forks "processes" (children that each register
 * their CPUs and then run the DLB calls the parent sends through a pipe,
 * answering with the return code) and reads the registry itself to check
 * each CPU's owner, guest and state. Everything has a timeout: a child that
 * does not answer in 5 s fails the test, alarm() ends a hung run. The CPU
 * ids are the registry's, not necessarily the machine's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/process.h"
#include "lewi.h"
#include "lewi_shm.h"
#include "seam.h"

struct proc {
	pid_t pid;
	int to, from; /* pipes: commands, answers */
	int slot;
};

static void child_loop(int in, int out, const char *mask)
{
	alarm(30);
	FILE *f = fdopen(in, "r");
	char line[256];
	while (f && fgets(line, sizeof line, f)) {
		char cmd[64] = "";
		int a = 0;
		sscanf(line, "%63s %d", cmd, &a);
		int r = -100;
		char extra[200] = "";
		if (strcmp(cmd, "init") == 0) {
			cpu_set_t m;
			CPU_ZERO(&m);
			for (const char *p = mask; *p; p++)
				if (*p >= '0' && *p <= '9')
					CPU_SET(*p - '0', &m);
			/* On its CPUs where they exist (the lending thread's
			 * own CPU is among those it lends); "23" does not on
			 * 2 CPUs: EINVAL, left unbound. */
			(void)sched_setaffinity(0, sizeof m, &m);
			r = popmon_lewi_init(&m);
			snprintf(extra, sizeof extra, " %d", popmon_lewi_slot());
		} else if (strcmp(cmd, "lend") == 0)
			r = popmon_lewi_lend();
		else if (strcmp(cmd, "lendcpu") == 0)
			r = popmon_lewi_lend_cpu(a);
		else if (strcmp(cmd, "lendcpus") == 0)
			r = popmon_lewi_lend_cpus(a);
		else if (strcmp(cmd, "reclaim") == 0)
			r = popmon_lewi_reclaim();
		else if (strcmp(cmd, "reclaimcpu") == 0)
			r = popmon_lewi_reclaim_cpu(a);
		else if (strcmp(cmd, "reclaimcpus") == 0)
			r = popmon_lewi_reclaim_cpus(a);
		else if (strcmp(cmd, "acquirecpu") == 0)
			r = popmon_lewi_acquire_cpu(a);
		else if (strcmp(cmd, "acquirecpus") == 0)
			r = popmon_lewi_acquire_cpus(a);
		else if (strcmp(cmd, "borrow") == 0)
			r = popmon_lewi_borrow();
		else if (strcmp(cmd, "borrowcpu") == 0)
			r = popmon_lewi_borrow_cpu(a);
		else if (strcmp(cmd, "borrowcpus") == 0)
			r = popmon_lewi_borrow_cpus(a);
		else if (strcmp(cmd, "return") == 0)
			r = popmon_lewi_return();
		else if (strcmp(cmd, "returncpu") == 0)
			r = popmon_lewi_return_cpu(a);
		else if (strcmp(cmd, "check") == 0)
			r = popmon_lewi_check_cpu_availability(a);
		else if (strcmp(cmd, "setmax") == 0)
			r = popmon_lewi_set_max_parallelism(a);
		else if (strcmp(cmd, "unsetmax") == 0)
			r = popmon_lewi_unset_max_parallelism();
		else if (strcmp(cmd, "into") == 0)
			r = popmon_lewi_into_blocking_call();
		else if (strcmp(cmd, "outof") == 0)
			r = popmon_lewi_out_of_blocking_call();
		else if (strcmp(cmd, "ended") == 0) {
			popmon_lewi_blocking_call_ended();
			r = 0;
		} else if (strcmp(cmd, "sleep") == 0)
			r = popmon_lewi_lent_sleep(a * 1000L);
		else if (strcmp(cmd, "finalize") == 0)
			r = popmon_lewi_finalize();
		else if (strcmp(cmd, "team") == 0) {
			int cpus[64];
			r = popmon_lewi_team(cpus, 64);
			for (int i = 0; i < r; i++) {
				size_t n = strlen(extra);
				snprintf(extra + n, sizeof extra - n, "%s%d", i ? "," : " ", cpus[i]);
			}
		} else if (strcmp(cmd, "respect") == 0) {
			/* --lewi-respect-cpuset for this process, before init. */
			popmon_dlb_args_parse();
			popmon_dlb.lewi_respect_cpuset = a;
			r = 0;
		} else if (strcmp(cmd, "mask") == 0) {
			/* DROM's new mask, its bits in a: 5 is CPUs 0 and 2. */
			cpu_set_t m;
			CPU_ZERO(&m);
			for (int c = 0; c < 31; c++)
				if (a & 1 << c)
					CPU_SET(c, &m);
			r = popmon_lewi_update_mask(&m);
		} else if (strcmp(cmd, "own") == 0) {
			struct popmon_lewi_totals tt;
			popmon_lewi_totals(&tt);
			long long d = tt.own_delta < 0 ? -(long long)popmon_ticks_to_ns((uint64_t)-tt.own_delta)
						       : (long long)popmon_ticks_to_ns((uint64_t)tt.own_delta);
			snprintf(extra, sizeof extra, " %d %lld", tt.own_cpus, d / 1000000);
			r = 0;
		} else if (strcmp(cmd, "teamend") == 0) {
			popmon_lewi_team_end();
			r = 0;
		} else if (strcmp(cmd, "ticks") == 0) {
			struct popmon_lewi_totals tt;
			popmon_lewi_totals(&tt);
			snprintf(extra, sizeof extra, " %llu %llu %llu", (unsigned long long)popmon_ticks_to_ns(tt.lent) / 1000000,
				 (unsigned long long)popmon_ticks_to_ns(tt.borrowed) / 1000000,
				 (unsigned long long)popmon_ticks_to_ns(tt.lent_caller) / 1000000);
			r = 0;
		} else if (strcmp(cmd, "exit") == 0)
			_exit(0);
		else if (strcmp(cmd, "spin") == 0) {
			/* Lends, borrows, reclaims and returns in a loop for
			 * a ms, checking nothing: the stress scenario's
			 * traffic (and a process killed inside it). */
			struct timespec t0, t;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			long n = 0;
			do {
				int cpus[64];
				popmon_lewi_into_blocking_call();
				popmon_lewi_team(cpus, 64);
				popmon_lewi_out_of_blocking_call();
				popmon_lewi_borrow();
				popmon_lewi_team(cpus, 64);
				popmon_lewi_return();
				n++;
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < a);
			r = n > 0 ? 0 : -1;
		}
		char ans[300];
		int len = snprintf(ans, sizeof ans, "%d%s\n", r, extra);
		if (write(out, ans, (size_t)len) != len)
			_exit(3);
	}
	_exit(0);
}

static struct proc spawn(const char *mask)
{
	int a[2], b[2];
	struct proc p = {0};
	if (pipe(a) != 0 || pipe(b) != 0) {
		perror("pipe");
		exit(2);
	}
	fflush(stdout);
	p.pid = fork();
	if (p.pid == 0) {
		close(a[1]);
		close(b[0]);
		child_loop(a[0], b[1], mask);
	}
	close(a[0]);
	close(b[1]);
	p.to = a[1];
	p.from = b[0];
	return p;
}

/* Sends cmd to p and returns the code; the rest of the answer into rest. */
static int ask(struct proc *p, const char *cmd, char *rest, size_t nrest)
{
	char buf[300];
	int len = snprintf(buf, sizeof buf, "%s\n", cmd);
	if (write(p->to, buf, (size_t)len) != len) {
		printf("FAIL: %s: cannot write to %d\n", cmd, (int)p->pid);
		failures++;
		return -999;
	}
	size_t got = 0;
	while (got < sizeof buf - 1) {
		struct pollfd pfd = {p->from, POLLIN, 0};
		if (poll(&pfd, 1, 5000) <= 0) {
			printf("FAIL: %s: process %d did not answer in 5 s\n", cmd, (int)p->pid);
			failures++;
			return -999;
		}
		ssize_t n = read(p->from, buf + got, 1);
		if (n <= 0) {
			printf("FAIL: %s: process %d is gone\n", cmd, (int)p->pid);
			failures++;
			return -999;
		}
		if (buf[got++] == '\n')
			break;
	}
	buf[got] = '\0';
	int r = atoi(buf);
	const char *sp = strchr(buf, ' ');
	if (rest)
		snprintf(rest, nrest, "%s", sp ? sp + 1 : "");
	if (rest) {
		size_t n = strlen(rest);
		if (n && rest[n - 1] == '\n')
			rest[n - 1] = '\0';
	}
	return r;
}

#define EXPECT(p, cmd, want)                                                                      \
	do {                                                                                      \
		int r_ = ask(&(p), cmd, NULL, 0);                                                 \
		CHECK(r_ == (want), "%s %s: %d, want %d (%s)", #p, cmd, r_, (int)(want), #want); \
	} while (0)

/* The team of p's next parallel region, "0,1,..." */
#define TEAM(p, want)                                                                         \
	do {                                                                                  \
		char rest_[200];                                                              \
		ask(&(p), "team", rest_, sizeof rest_);                                       \
		CHECK(strcmp(rest_, want) == 0, "%s team: [%s], want [%s]", #p, rest_, want); \
	} while (0)

static void init(struct proc *p)
{
	char rest[64];
	int r = ask(p, "init", rest, sizeof rest);
	p->slot = atoi(rest);
	CHECK(r == POPMON_DLB_SUCCESS && p->slot > 0, "init of %d: %d slot %d", (int)p->pid, r, p->slot);
	CHECK(popmon_lewi_shm_pid(p->slot) == p->pid, "slot %d: pid %d, want %d", p->slot,
	      (int)popmon_lewi_shm_pid(p->slot), (int)p->pid);
}

/* CPU c's owner, guest (procs or 0) and state, as the registry says. */
#define CPU(c, o, g, st)                                                                                   \
	do {                                                                                               \
		struct popmon_lewi_cpu w_;                                                                 \
		popmon_lewi_shm_cpu(c, &w_);                                                               \
		CHECK(w_.owner == (o) && w_.guest == (g) && w_.state == (st),                              \
		      "cpu %d: owner %d guest %d state %d, want %d %d %d (%s %s %s)", c, w_.owner, w_.guest, \
		      w_.state, (int)(o), (int)(g), (int)(st), #o, #g, #st);                               \
	} while (0)

enum { DIS = POPMON_LEWI_DISABLED, BUSY = POPMON_LEWI_BUSY, LENT = POPMON_LEWI_LENT };

static void stop(struct proc *p)
{
	if (write(p->to, "exit\n", 5) != 5)
		failures++;
	close(p->to);
	close(p->from);
	waitpid(p->pid, NULL, 0);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The documented states of DLB's calls, two processes A {0,1}, B {2,3}. */
static void scenario_sequence(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	int a = A.slot, b = B.slot;
	EXPECT(A, "init", POPMON_DLB_ERR_INIT);
	CPU(0, a, a, BUSY);
	CPU(3, b, b, BUSY);
	TEAM(A, "0,1");
	TEAM(B, "2,3");

	/* Lend, borrow, reclaim, return. */
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	CPU(0, a, 0, LENT);
	CPU(1, a, 0, LENT);
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	EXPECT(B, "borrow", POPMON_DLB_SUCCESS);
	CPU(0, a, b, LENT);
	CPU(1, a, b, LENT);
	EXPECT(B, "borrow", POPMON_DLB_NOUPDT);
	TEAM(B, "2,3,0,1");
	EXPECT(A, "reclaim", POPMON_DLB_NOTED); /* B still runs there */
	CPU(0, a, b, BUSY);
	TEAM(A, "0,1");                         /* its own, busy again */
	TEAM(B, "2,3");                         /* returned at B's next region */
	CPU(0, a, a, BUSY);
	CPU(1, a, a, BUSY);
	EXPECT(A, "reclaim", POPMON_DLB_NOUPDT);
	EXPECT(B, "return", POPMON_DLB_NOUPDT);

	/* One CPU at a time. */
	EXPECT(A, "lendcpu 1", POPMON_DLB_SUCCESS);
	EXPECT(B, "acquirecpu 1", POPMON_DLB_SUCCESS);
	EXPECT(B, "acquirecpu 1", POPMON_DLB_NOUPDT);
	EXPECT(B, "check 1", POPMON_DLB_SUCCESS);
	EXPECT(A, "check 1", POPMON_DLB_NOUPDT); /* mine, lent, not reclaimed */
	EXPECT(A, "acquirecpu 1", POPMON_DLB_NOTED);
	EXPECT(B, "check 1", POPMON_DLB_ERR_PERM); /* reclaimed: give it back */
	CPU(1, a, b, BUSY);
	EXPECT(B, "returncpu 1", POPMON_DLB_SUCCESS);
	CPU(1, a, a, BUSY);
	EXPECT(B, "returncpu 1", POPMON_DLB_ERR_PERM);
	EXPECT(A, "lendcpu 0", POPMON_DLB_SUCCESS);
	EXPECT(A, "reclaimcpu 0", POPMON_DLB_SUCCESS); /* idle: back at once */
	CPU(0, a, a, BUSY);
	EXPECT(A, "reclaimcpu 2", POPMON_DLB_ERR_PERM);
	EXPECT(B, "borrowcpu 0", POPMON_DLB_NOUPDT);
	EXPECT(A, "lendcpus 1", POPMON_DLB_ERR_NOPOL);
	EXPECT(B, "borrowcpus 0", POPMON_DLB_NOUPDT);

	/* Counts. */
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	EXPECT(B, "borrowcpus 1", POPMON_DLB_SUCCESS);
	CPU(0, a, b, LENT);
	CPU(1, a, 0, LENT);
	EXPECT(A, "reclaimcpus 1", POPMON_DLB_NOTED); /* CPU 0 first: B's guest */
	CPU(0, a, b, BUSY);
	CPU(1, a, 0, LENT);
	EXPECT(A, "acquirecpus 1", POPMON_DLB_SUCCESS); /* CPU 1, idle */
	CPU(1, a, a, BUSY);
	EXPECT(B, "return", POPMON_DLB_SUCCESS);
	CPU(0, a, a, BUSY);

	/* Maximum parallelism: B keeps 1 CPU, A may borrow the other. */
	EXPECT(B, "setmax 1", POPMON_DLB_SUCCESS);
	CPU(3, b, 0, LENT);
	TEAM(B, "2");
	TEAM(A, "0,1,3");
	EXPECT(B, "unsetmax", POPMON_DLB_SUCCESS);
	EXPECT(B, "reclaimcpu 3", POPMON_DLB_NOTED);
	TEAM(A, "0,1");
	TEAM(B, "2,3");
	EXPECT(A, "setmax 1", POPMON_DLB_SUCCESS);
	EXPECT(B, "lend", POPMON_DLB_SUCCESS);
	TEAM(A, "0"); /* CPU 1 lent by setmax; no borrowing beyond 1 */
	EXPECT(A, "unsetmax", POPMON_DLB_SUCCESS);
	TEAM(A, "0,1,2,3");
	EXPECT(B, "reclaim", POPMON_DLB_NOTED);
	TEAM(A, "0,1");
	TEAM(B, "2,3");

	/* The MPI hook: a blocking call lends everything (no
	 * --lewi-keep-one-cpu), leaving it reclaims. */
	EXPECT(A, "into", POPMON_DLB_SUCCESS);
	CPU(0, a, 0, LENT);
	CPU(1, a, 0, LENT);
	TEAM(B, "2,3,0,1");
	EXPECT(A, "outof", POPMON_DLB_NOTED);
	TEAM(A, "0,1");
	TEAM(B, "2,3");
	EXPECT(A, "into", POPMON_DLB_SUCCESS);
	EXPECT(A, "outof", POPMON_DLB_SUCCESS); /* nobody came: back at once */
	CPU(0, a, a, BUSY);
	EXPECT(A, "outof", POPMON_DLB_NOUPDT);  /* not inside */
	EXPECT(A, "into", POPMON_DLB_SUCCESS);

	/* A third process cannot register CPUs a live one owns. */
	struct proc C = spawn("2");
	EXPECT(C, "init", POPMON_DLB_ERR_PERM);
	EXPECT(C, "lend", POPMON_DLB_ERR_NOINIT);
	stop(&C);

	/* Finalize: A's CPUs disabled and nobody's; B returns a borrowed one. */
	TEAM(B, "2,3,0,1");
	EXPECT(A, "finalize", POPMON_DLB_SUCCESS);
	CPU(0, 0, b, DIS);
	EXPECT(A, "lend", POPMON_DLB_ERR_NOINIT);
	EXPECT(B, "borrowcpu 0", POPMON_DLB_ERR_PERM);
	TEAM(B, "2,3");
	CPU(0, 0, 0, DIS);
	CHECK(popmon_lewi_shm_pid(a) == 0, "finalized slot %d still taken", a);
	stop(&A);
	stop(&B);
}

/* --lewi-keep-one-cpu (DLB_ARGS="--lewi --lewi-keep-one-cpu"): a blocking
 * call keeps the process's first CPU. */
static void scenario_keep(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	EXPECT(A, "into", POPMON_DLB_SUCCESS);
	CPU(0, A.slot, A.slot, BUSY);
	CPU(1, A.slot, 0, LENT);
	TEAM(B, "2,3,1");
	EXPECT(A, "outof", POPMON_DLB_NOTED);
	TEAM(B, "2,3");
	TEAM(A, "0,1");
	stop(&A);
	stop(&B);
}

/* A blocking call that ends within its eager polls (ended) gives back the
 * CPUs the process borrowed: their owner, leaving the same collective, gets
 * them back at once (DLB_SUCCESS, not DLB_NOTED with the guest's next
 * region on them). The lender's sleep waits on a CPU a guest holds
 * (returns 1) and sleeps plainly otherwise (0). */
static void scenario_giveback(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	int a = A.slot, b = B.slot;
	EXPECT(A, "into", POPMON_DLB_SUCCESS);
	EXPECT(A, "sleep 10", 0); /* lent, idle: a plain sleep */
	TEAM(B, "2,3,0,1");
	CPU(0, a, b, LENT);
	EXPECT(A, "sleep 10", 1); /* B on it: waits for B (1 ms at most) */
	EXPECT(B, "ended", 0);
	CPU(0, a, 0, LENT);
	CPU(1, a, 0, LENT);
	CPU(2, b, b, BUSY);
	EXPECT(A, "outof", POPMON_DLB_SUCCESS);
	CPU(0, a, a, BUSY);
	TEAM(B, "2,3");
	EXPECT(B, "ended", 0); /* nothing borrowed: nothing changes */
	CPU(2, b, b, BUSY);
	CPU(0, a, a, BUSY);
	stop(&A);
	stop(&B);
}

/* The CPU time lent and borrowed: A in a blocking call for 200 ms with its
 * 2 CPUs lent, B running a region on them meanwhile: each at least 400
 * CPU-ms (2 CPUs x 200 ms), and well below 800 (4 CPUs' worth), the pipe
 * round trips around the sleep being the slack. Of A's, 200-350 ms were the
 * CPU its lending thread ran on (this machine's CPUs are 0 and 1, A's). */
static void scenario_account(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	EXPECT(A, "into", POPMON_DLB_SUCCESS);
	TEAM(B, "2,3,0,1");
	sleep_ms(200);
	EXPECT(B, "teamend", 0);
	EXPECT(A, "outof", POPMON_DLB_NOTED);
	char rest[200];
	unsigned long long l = 0, b = 0, lc = 0;
	ask(&A, "ticks", rest, sizeof rest);
	sscanf(rest, "%llu %llu %llu", &l, &b, &lc);
	CHECK(l >= 400 && l < 700 && b == 0, "A lent %llu ms, borrowed %llu ms; want 400-700 and 0", l, b);
	CHECK(lc >= 200 && lc < 350, "A lent its own thread's CPU for %llu ms; want 200-350", lc);
	ask(&B, "ticks", rest, sizeof rest);
	sscanf(rest, "%llu %llu %llu", &l, &b, &lc);
	CHECK(l == 0 && lc == 0 && b >= 400 && b < 700, "B lent %llu ms (its thread's CPU %llu), borrowed %llu ms; want 0, 0 and 400-700", l, lc, b);
	/* B's next region returns them: nothing more is counted. */
	TEAM(B, "2,3");
	sleep_ms(50);
	ask(&B, "ticks", rest, sizeof rest);
	unsigned long long b2 = 0;
	sscanf(rest, "%llu %llu", &l, &b2);
	CHECK(b2 == b, "B borrowed %llu ms after returning, was %llu", b2, b);
	stop(&A);
	stop(&B);
}

/* DROM changes the own CPUs (popmon_lewi_update_mask, DLB's
 * update_ownership): A {0,1} shrunk to {0} gives CPU 1 up (disabled,
 * nobody's: not lendable, not borrowable); grown to {0,1,2} it takes CPU 2
 * from B, whose thread there stays its guest until B's next region returns
 * it; B's team then lacks it, and B shrunk to {3} in turn changes nothing
 * of A's. A's own CPU time follows: 200 ms at one CPU fewer is -200 CPU-ms
 * against its 2 registered CPUs. */
static void scenario_drom(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	int a = A.slot, b = B.slot;
	EXPECT(A, "mask 1", POPMON_DLB_SUCCESS);
	CPU(0, a, a, BUSY);
	CPU(1, 0, 0, DIS);
	EXPECT(A, "mask 1", POPMON_DLB_NOUPDT);
	TEAM(A, "0");
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	CPU(1, 0, 0, DIS); /* not A's to lend */
	EXPECT(B, "borrowcpu 1", POPMON_DLB_ERR_PERM);
	EXPECT(A, "reclaim", POPMON_DLB_SUCCESS);
	sleep_ms(200);
	EXPECT(A, "mask 7", POPMON_DLB_SUCCESS);
	CPU(1, a, a, BUSY);
	CPU(2, a, b, BUSY); /* B's thread there until it returns it */
	TEAM(A, "0,1,2");
	TEAM(B, "3");
	CPU(2, a, a, BUSY);
	EXPECT(B, "mask 8", POPMON_DLB_NOUPDT); /* CPU 2 is A's already */
	CPU(2, a, a, BUSY);
	CPU(3, b, b, BUSY);
	char rest[200];
	int n = 0;
	long long d = 0;
	ask(&A, "own", rest, sizeof rest);
	sscanf(rest, "%d %lld", &n, &d);
	/* -200 ms (one CPU fewer), then +1 CPU since: at most a few ms. */
	CHECK(n == 2 && d <= -190 && d > -260, "A's own CPUs %d, their change %lld CPU-ms; want 2 and about -200", n, d);
	stop(&A);
	stop(&B);
}

/* --lewi-respect-cpuset=no: A registers CPU 0 only; CPU 1, nobody's, is
 * free: A's regions borrow it. B registering CPU 1 makes it B's (A's thread
 * there stays until A's next region returns it). A killed: its CPU 0 is
 * free, not disabled; C, registered with the default --lewi-respect-cpuset,
 * leaves it alone; B's regions borrow it. */
static void scenario_public(void)
{
	struct proc A = spawn("0");
	init(&A);
	int a = A.slot;
	CPU(1, 0, 0, LENT);
	TEAM(A, "0,1");
	CPU(1, 0, a, LENT);
	struct proc B = spawn("1");
	init(&B);
	int b = B.slot;
	CPU(1, b, a, BUSY);
	TEAM(B, "1");
	TEAM(A, "0");
	CPU(1, b, b, BUSY);
	kill(A.pid, SIGKILL);
	waitpid(A.pid, NULL, 0);
	close(A.to);
	close(A.from);
	CHECK(popmon_lewi_shm_sweep(0) == 1, "the killed A was not cleaned");
	CPU(0, 0, 0, LENT);
	struct proc C = spawn("2");
	EXPECT(C, "respect 1", 0);
	init(&C);
	TEAM(C, "2");
	EXPECT(C, "borrowcpu 0", POPMON_DLB_ERR_PERM);
	CPU(0, 0, 0, LENT);
	TEAM(B, "1,0");
	CPU(0, 0, b, LENT);
	stop(&B);
	stop(&C);
}

/* --lewi-affinity (the harness's POPMON_SYSFS: NUMA node 0 is CPUs 0-1,
 * node 1 CPUs 2-3): A on CPU 2, B on 0 and C on 3 lend theirs; A limited
 * to 2 CPUs borrows C's (its node's) before B's (lower id); without the
 * limit, nearby-first borrows B's too, nearby-only never (only_near). */
static void scenario_nearby(int only_near)
{
	struct proc A = spawn("2"), B = spawn("0"), C = spawn("3");
	init(&A);
	init(&B);
	init(&C);
	int a = A.slot;
	EXPECT(B, "lend", POPMON_DLB_SUCCESS);
	EXPECT(C, "lend", POPMON_DLB_SUCCESS);
	EXPECT(A, "setmax 2", POPMON_DLB_SUCCESS);
	TEAM(A, "2,3");
	CPU(3, C.slot, a, LENT);
	CPU(0, B.slot, 0, LENT);
	EXPECT(A, "unsetmax", POPMON_DLB_SUCCESS);
	if (only_near) {
		TEAM(A, "2,3");
		CPU(0, B.slot, 0, LENT);
	} else {
		TEAM(A, "2,0,3");
		CPU(0, B.slot, a, LENT);
	}
	stop(&A);
	stop(&B);
	stop(&C);
}

/* LeWI off: every call DLB_ERR_NOLEWI, as DLB without --lewi. */
static void scenario_off(void)
{
	CHECK(popmon_lewi_enabled() == 0, "LeWI on without --lewi");
	CHECK(popmon_lewi_init(NULL) == POPMON_DLB_ERR_NOLEWI, "init without --lewi");
	CHECK(popmon_lewi_lend() == POPMON_DLB_ERR_NOLEWI, "lend without --lewi");
	CHECK(popmon_lewi_borrow() == POPMON_DLB_ERR_NOLEWI, "borrow without --lewi");
	CHECK(popmon_lewi_set_max_parallelism(2) == POPMON_DLB_ERR_NOLEWI, "max without --lewi");
	int cpus[4];
	CHECK(popmon_lewi_team(cpus, 4) == 0, "team without --lewi");
	CHECK(popmon_lewi_into_blocking_call() == POPMON_DLB_NOUPDT, "into without --lewi");

	/* Liveness: this process, with its start time or none, is alive;
	 * with another start time it is a reused pid; a reaped child and a
	 * zombie are dead. */
	pid_t me = getpid();
	uint64_t start = popmon_proc_start_time(me);
	CHECK(start > 0, "no start time for %d", (int)me);
	CHECK(popmon_lewi_shm_alive(me, start), "alive with its start time");
	CHECK(popmon_lewi_shm_alive(me, 0), "alive without a start time");
	CHECK(!popmon_lewi_shm_alive(me, start + 1), "another start time: the pid reused, not this process");
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	for (int i = 0; i < 500 && popmon_lewi_shm_alive(z, 0); i++)
		sleep_ms(2);
	CHECK(!popmon_lewi_shm_alive(z, 0), "zombie %d alive", (int)z);
	waitpid(z, NULL, 0);
	CHECK(!popmon_lewi_shm_alive(z, 0), "reaped %d alive", (int)z);
	CHECK(!popmon_lewi_shm_alive(0, 0) && !popmon_lewi_shm_alive(-1, 0), "pid 0 or -1 alive");

	/* A registry file that is open to others, or of another layout, is
	 * refused, in one sentence. */
	char name[256], why[512];
	const char *key = "lewi-test-hostile";
	popmon_lewi_shm_name(key, name, sizeof name);
	unlink(name);
	int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && fchmod(fd, 0644) == 0 && ftruncate(fd, 100) == 0, "cannot make %s", name);
	CHECK(popmon_lewi_shm_attach(key, why, sizeof why) == POPMON_DLB_ERR_NOSHMEM && strstr(why, "open to other users"),
	      "0644 registry: %s", why);
	CHECK(fchmod(fd, 0600) == 0, "chmod");
	CHECK(popmon_lewi_shm_attach(key, why, sizeof why) == POPMON_DLB_ERR_NOSHMEM && strstr(why, "another layout"),
	      "registry of 100 bytes: %s", why);
	close(fd);
	unlink(name);
}

/* A process SIGKILLed while its CPUs are lent and borrowed: the borrower
 * gives them up at its next region, the registry frees its slot, and a new
 * process can own them. The killed one is left a zombie (not reaped). */
static void scenario_kill_lent(void)
{
	struct proc A = spawn("01"), B = spawn("23");
	init(&A);
	init(&B);
	int a = A.slot, b = B.slot;
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	TEAM(B, "2,3,0,1");
	kill(A.pid, SIGKILL);
	sleep_ms(150); /* past B's 100 ms between looks for the dead */
	TEAM(B, "2,3");
	CPU(0, 0, 0, DIS);
	CPU(1, 0, 0, DIS);
	CPU(2, b, b, BUSY);
	CHECK(popmon_lewi_shm_pid(a) == 0, "dead A's slot %d still taken", a);
	struct proc C = spawn("01");
	init(&C);
	CPU(0, C.slot, C.slot, BUSY);
	waitpid(A.pid, NULL, 0);
	close(A.to);
	close(A.from);
	stop(&B);
	stop(&C);
}

/* A process SIGKILLed while it holds borrowed CPUs (reaped): the owner's
 * reclaim gets them back at once (DLB_SUCCESS, not NOTED), and the owner's
 * blocking-call exit too. */
static void scenario_kill_borrowed(void)
{
	struct proc A = spawn("01"), B = spawn("23"), D = spawn("4");
	init(&A);
	init(&B);
	init(&D);
	int a = A.slot, b = B.slot;
	EXPECT(A, "lend", POPMON_DLB_SUCCESS);
	EXPECT(D, "into", POPMON_DLB_SUCCESS);
	TEAM(B, "2,3,0,1,4");
	kill(B.pid, SIGKILL);
	waitpid(B.pid, NULL, 0);
	close(B.to);
	close(B.from);
	EXPECT(A, "reclaimcpu 0", POPMON_DLB_SUCCESS); /* not NOTED: B is dead */
	CPU(0, a, a, BUSY);
	CPU(1, a, 0, LENT); /* B's cleaning made it idle */
	CHECK(popmon_lewi_shm_pid(b) == 0, "dead B's slot %d still taken", b);
	EXPECT(A, "reclaim", POPMON_DLB_SUCCESS);
	CPU(1, a, a, BUSY);
	CPU(2, 0, 0, DIS);
	EXPECT(D, "outof", POPMON_DLB_SUCCESS);
	CPU(4, D.slot, D.slot, BUSY);
	TEAM(A, "0,1");
	TEAM(D, "4");
	stop(&A);
	stop(&D);
}

/* Four processes lend, borrow, reclaim and return as fast as they can for
 * 300 ms while one of them is SIGKILLed in the middle: nothing hangs, and
 * afterwards every survivor has exactly its own CPUs. */
static void scenario_stress(void)
{
	const char *masks[4] = {"0", "12", "3", "45"};
	struct proc P[4];
	for (int i = 0; i < 4; i++) {
		P[i] = spawn(masks[i]);
		init(&P[i]);
	}
	char cmd[32];
	snprintf(cmd, sizeof cmd, "spin %d", 300);
	for (int i = 0; i < 4; i++)
		if (write(P[i].to, "spin 300\n", 9) != 9)
			failures++;
	sleep_ms(100);
	kill(P[1].pid, SIGKILL);
	waitpid(P[1].pid, NULL, 0);
	for (int i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		char buf[64];
		size_t got = 0;
		struct pollfd pfd = {P[i].from, POLLIN, 0};
		while (got < sizeof buf - 1 && poll(&pfd, 1, 5000) > 0 && read(P[i].from, buf + got, 1) == 1)
			if (buf[got++] == '\n')
				break;
		buf[got] = '\0';
		CHECK(strcmp(buf, "0\n") == 0, "spin of %d: %s", (int)P[i].pid, buf);
	}
	/* Settle: survivors leave any blocking call, reclaim, return. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 4; i++)
			if (i != 1) {
				ask(&P[i], "reclaim", NULL, 0);
				ask(&P[i], "team", NULL, 0);
			}
	sleep_ms(150);
	ask(&P[0], "team", NULL, 0);
	TEAM(P[0], "0");
	TEAM(P[2], "3");
	TEAM(P[3], "4,5");
	CPU(0, P[0].slot, P[0].slot, BUSY);
	CPU(3, P[2].slot, P[2].slot, BUSY);
	CPU(4, P[3].slot, P[3].slot, BUSY);
	CPU(5, P[3].slot, P[3].slot, BUSY);
	CPU(1, 0, 0, DIS);
	CPU(2, 0, 0, DIS);
	for (int i = 0; i < 4; i++)
		if (i != 1)
			stop(&P[i]);
	close(P[1].to);
	close(P[1].from);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	alarm(60);
	signal(SIGPIPE, SIG_IGN);
	popmon_clock_start(NULL); /* the library's clock (TSC where there is one) */
	const char *s = argv[1];
	const char *key = getenv("POPMON_LEWI_KEY");
	if (!key || !*key) {
		printf("FAIL: POPMON_LEWI_KEY not set\n");
		return 1;
	}
	char name[256];
	popmon_lewi_shm_name(key, name, sizeof name);
	if (strcmp(s, "off") == 0) {
		scenario_off();
	} else {
		char why[512] = "";
		int r = popmon_lewi_shm_attach(key, why, sizeof why);
		if (r != POPMON_DLB_SUCCESS) {
			printf("FAIL: attach: %d %s\n", r, why);
			return 1;
		}
		struct stat st;
		CHECK(stat(name, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid(),
		      "%s: mode %o uid %d", name, (unsigned)st.st_mode & 0777, (int)st.st_uid);
		if (strcmp(s, "sequence") == 0)
			scenario_sequence();
		else if (strcmp(s, "keep") == 0)
			scenario_keep();
		else if (strcmp(s, "kill-lent") == 0)
			scenario_kill_lent();
		else if (strcmp(s, "kill-borrowed") == 0)
			scenario_kill_borrowed();
		else if (strcmp(s, "stress") == 0)
			scenario_stress();
		else if (strcmp(s, "account") == 0)
			scenario_account();
		else if (strcmp(s, "giveback") == 0)
			scenario_giveback();
		else if (strcmp(s, "drom") == 0)
			scenario_drom();
		else if (strcmp(s, "public") == 0)
			scenario_public();
		else if (strcmp(s, "nearby") == 0)
			scenario_nearby(0);
		else if (strcmp(s, "nearby-only") == 0)
			scenario_nearby(1);
		else {
			printf("FAIL: unknown scenario %s\n", s);
			failures++;
		}
		unlink(name);
	}
	if (failures)
		return 1;
	printf("ok %s\n", s);
	return 0;
}
