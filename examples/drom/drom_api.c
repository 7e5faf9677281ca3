/* drom_api: DLB's DROM calls (<dlb_drom.h>, <dlb.h>) checked against DLB
 * 3.7's documented return codes; built against DLB's headers and linked
 * with popmon's library (a `popmon dlb-home` prefix's -ldlb). Run on a node
 * with 2 CPUs or more:
 *
 *   POPMON_DROM=1 ./drom_api      (DLB_ARGS=--drom works too)
 *   ./drom_api off                (DROM off: DLB_PollDROM is DLB_ERR_NOCOMP)
 *
 * Prints "ok" at the end, or the first call whose code was not DLB's. */
#define _GNU_SOURCE
#include <dlb.h>
#include <dlb_drom.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failed;

#define EXPECT(call, want)                                                                        \
	do {                                                                                      \
		int got_ = (call);                                                                \
		if (got_ != (want)) {                                                             \
			printf("FAIL line %d: %s = %d (%s), want %d\n", __LINE__, #call, got_,    \
			       DLB_Strerror(got_), (int)(want));                                  \
			failed = 1;                                                               \
		}                                                                                 \
	} while (0)

static cpu_set_t cpus(int a, int b)
{
	cpu_set_t m;
	CPU_ZERO(&m);
	if (a >= 0)
		CPU_SET(a, &m);
	if (b >= 0)
		CPU_SET(b, &m);
	return m;
}

/* dlb_callback_set_process_mask: the CPUs of the last mask given. */
static int cb_calls, cb_cpus = -1;

static void on_mask(const_dlb_cpu_set_t mask, void *arg)
{
	cb_calls++;
	cb_cpus = CPU_COUNT((const cpu_set_t *)mask);
	*(int *)arg = 1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The child: registered on CPU 1 (its affinity); adopts a new mask only
 * when told (SIGUSR1), so that its pending changes stay pending. */
static volatile sig_atomic_t poll_now;

static void on_usr1(int sig)
{
	(void)sig;
	poll_now = 1;
}

static void child(void)
{
	signal(SIGUSR1, on_usr1);
	for (;;) {
		if (poll_now) {
			poll_now = 0;
			int n;
			cpu_set_t m;
			DLB_PollDROM(&n, &m);
		}
		sleep_ms(2);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		child();
	if (argc > 1 && strcmp(argv[1], "quiet") == 0)
		return 0; /* started on its parent's CPUs: not registered, no line */
	int n = 0;
	cpu_set_t m, two = cpus(0, 1);
	if (argc > 1 && strcmp(argv[1], "off") == 0) {
		EXPECT(DLB_PollDROM(&n, &m), DLB_ERR_NOCOMP);
		EXPECT(DLB_PollDROM_Update(), DLB_ERR_NOCOMP);
		printf("%s\n", failed ? "failed" : "ok");
		return failed;
	}
	sched_setaffinity(0, sizeof two, &two); /* registered at start with what it had: make it 0-1 */
	pid_t me = getpid();
	/* The process side. */
	EXPECT(DLB_PollDROM(&n, &m), DLB_NOUPDT);
	EXPECT(DLB_DROM_Attach(), DLB_SUCCESS);
	EXPECT(DLB_DROM_GetNumCpus(&n), DLB_SUCCESS);
	int pids[16], np = 0;
	EXPECT(DLB_DROM_GetPidList(pids, &np, 16), DLB_SUCCESS);
	if (np != 1 || pids[0] != me)
		printf("FAIL: pid list has %d entries (first %d), want this process %d\n", np, np ? pids[0] : 0, me), failed = 1;
	/* Its own mask: a new one with DLB_NO_SYNC is pending until asked. */
	cpu_set_t zero = cpus(0, -1);
	EXPECT(DLB_DROM_SetProcessMask(me, &zero, DLB_NO_SYNC), DLB_SUCCESS);
	EXPECT(DLB_DROM_GetProcessMask(0, &m, DLB_DROM_FLAGS_NONE), DLB_NOTED);
	if (!CPU_EQUAL(&m, &zero))
		printf("FAIL: GetProcessMask gave %d CPUs, want CPU 0\n", CPU_COUNT(&m)), failed = 1;
	EXPECT(DLB_DROM_GetProcessMask(me, &m, DLB_DROM_FLAGS_NONE), DLB_SUCCESS);
	EXPECT(DLB_DROM_SetProcessMask(0, &two, DLB_NO_SYNC), DLB_SUCCESS);
	EXPECT(DLB_PollDROM(&n, &m), DLB_SUCCESS);
	if (n != 2 || !CPU_EQUAL(&m, &two))
		printf("FAIL: PollDROM gave %d CPUs, want 0-1\n", n), failed = 1;
	EXPECT(DLB_PollDROM(&n, &m), DLB_NOUPDT);
	/* Without DLB_NO_SYNC the process adopts it at once, and calls the
	 * program's set_process_mask callback. */
	int cb_arg = 0;
	EXPECT(DLB_CallbackSet(dlb_callback_set_process_mask, (dlb_callback_t)on_mask, &cb_arg), DLB_SUCCESS);
	EXPECT(DLB_DROM_SetProcessMask(0, &zero, DLB_DROM_FLAGS_NONE), DLB_SUCCESS);
	if (cb_calls != 1 || cb_cpus != 1 || !cb_arg)
		printf("FAIL: set_process_mask callback: %d calls, %d CPUs, want 1 call with CPU 0\n", cb_calls, cb_cpus), failed = 1;
	EXPECT(DLB_CallbackSet(dlb_callback_set_process_mask, NULL, NULL), DLB_SUCCESS);
	EXPECT(DLB_PollDROM(&n, &m), DLB_NOUPDT);
	sched_getaffinity(0, sizeof m, &m);
	if (!CPU_EQUAL(&m, &zero))
		printf("FAIL: affinity has %d CPUs after SetProcessMask(0, {0}), want CPU 0\n", CPU_COUNT(&m)), failed = 1;
	/* Another process, on CPU 1. */
	pid_t c = fork();
	if (c == 0) {
		cpu_set_t one = cpus(1, -1);
		sched_setaffinity(0, sizeof one, &one);
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	int up = 0;
	for (int i = 0; i < 500 && !up; i++) {
		up = DLB_DROM_GetProcessMask(c, &m, DLB_DROM_FLAGS_NONE) == DLB_SUCCESS;
		if (!up)
			sleep_ms(10);
	}
	cpu_set_t one = cpus(1, -1);
	if (!up || !CPU_EQUAL(&m, &one))
		printf("FAIL: the child did not register on CPU 1\n"), failed = 1;
	EXPECT(DLB_DROM_GetPidList(pids, &np, 16), DLB_SUCCESS);
	if (np != 2)
		printf("FAIL: pid list has %d entries, want 2\n", np), failed = 1;
	/* The child gets CPU 0, stolen from this process (both dirty now). */
	EXPECT(DLB_DROM_SetProcessMask(c, &two, DLB_DROM_FLAGS_NONE), DLB_SUCCESS);
	EXPECT(DLB_DROM_SetProcessMask(c, &zero, DLB_DROM_FLAGS_NONE), DLB_ERR_PDIRTY);
	EXPECT(DLB_DROM_GetProcessMask(c, &m, DLB_DROM_FLAGS_NONE), DLB_SUCCESS); /* the new one */
	if (!CPU_EQUAL(&m, &two))
		printf("FAIL: the child's pending mask has %d CPUs, want 0-1\n", CPU_COUNT(&m)), failed = 1;
	EXPECT(DLB_DROM_GetProcessMask(c, &m, DLB_SYNC_QUERY), DLB_ERR_TIMEOUT); /* it does not poll */
	EXPECT(DLB_PollDROM(&n, &m), DLB_SUCCESS);
	if (n != 0)
		printf("FAIL: this process has %d CPUs after CPU 0 was stolen, want 0\n", n), failed = 1;
	/* CPU 0's new owner has not adopted it: not stealable. */
	EXPECT(DLB_DROM_SetProcessMask(0, &zero, DLB_DROM_FLAGS_NONE), DLB_ERR_PERM);
	EXPECT(DLB_DROM_SetProcessMask(99999999, &zero, DLB_DROM_FLAGS_NONE), DLB_ERR_NOPROC);
	EXPECT(DLB_DROM_GetProcessMask(99999999, &m, DLB_DROM_FLAGS_NONE), DLB_ERR_NOPROC);
	kill(c, SIGUSR1);
	int adopted = 0;
	for (int i = 0; i < 100 && !adopted; i++) {
		adopted = DLB_DROM_GetProcessMask(c, &m, DLB_SYNC_QUERY) == DLB_SUCCESS && CPU_EQUAL(&m, &two);
		if (!adopted)
			kill(c, SIGUSR1);
	}
	if (!adopted)
		printf("FAIL: the child did not adopt 0-1\n"), failed = 1;
	/* The child killed: its entry is cleaned by the next toucher, and the
	 * stolen CPU comes back with DLB_DROM_RecoverStolenCpus. */
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	EXPECT(DLB_DROM_GetProcessMask(c, &m, DLB_DROM_FLAGS_NONE), DLB_ERR_NOPROC);
	EXPECT(DLB_DROM_GetPidList(pids, &np, 16), DLB_SUCCESS);
	if (np != 1)
		printf("FAIL: pid list has %d entries after SIGKILL, want 1\n", np), failed = 1;
	EXPECT(DLB_DROM_RecoverStolenCpus(me), DLB_SUCCESS);
	EXPECT(DLB_DROM_RecoverStolenCpus(me), DLB_NOUPDT);
	EXPECT(DLB_PollDROM(&n, &m), DLB_SUCCESS);
	if (!CPU_EQUAL(&m, &zero))
		printf("FAIL: %d CPUs recovered, want CPU 0\n", CPU_COUNT(&m)), failed = 1;
	/* PreInit and PostFinalize for a process to come. */
	pid_t s = fork();
	if (s == 0) {
		pause();
		_exit(0);
	}
	EXPECT(DLB_DROM_PreInit(s, &one, DLB_DROM_FLAGS_NONE, NULL), DLB_SUCCESS);
	EXPECT(DLB_DROM_PreInit(s, &one, DLB_DROM_FLAGS_NONE, NULL), DLB_ERR_INIT);
	EXPECT(DLB_DROM_PreInit(s + 100000000, &zero, DLB_DROM_FLAGS_NONE, NULL), DLB_ERR_PERM); /* CPU 0 is this one's */
	EXPECT(DLB_DROM_PostFinalize(s, DLB_DROM_FLAGS_NONE), DLB_SUCCESS);
	EXPECT(DLB_DROM_PostFinalize(s, DLB_DROM_FLAGS_NONE), DLB_ERR_NOPROC);
	kill(s, SIGKILL);
	waitpid(s, NULL, 0);
	/* A program this one starts on its own CPUs stays quiet. */
	pid_t q = fork();
	if (q == 0) {
		execl("/proc/self/exe", argv[0], "quiet", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(q, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		printf("FAIL: the quiet child ended with status %d\n", status), failed = 1;
	EXPECT(DLB_DROM_Detach(), DLB_SUCCESS);
	printf("%s\n", failed ? "failed" : "ok");
	return failed;
}
