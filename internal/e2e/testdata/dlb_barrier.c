/* dlb_barrier.c: DLB's node barrier through DLB's own API (dlb.h of
 * `popmon dlb-home`), for internal/e2e/barrier_test.go. No MPI: the
 * processes are forked.
 *
 * Usage: dlb_barrier api        one process: DLB's return codes
 *        dlb_barrier wait N R   N processes, R barriers; process i arrives
 *                               i*20 ms late at each: prints per barrier
 *                               "round r last_arrival_ms A first_leave_ms L"
 *                               (times since the start, over all processes)
 *        dlb_barrier dead N     N processes; the last one exits without
 *                               DLB_Finalize before the first barrier: the
 *                               others still pass it ("dead passed_ms T")
 *        dlb_barrier named      3 processes: 0 and 1 register "pair", 2
 *                               registers "other"; 0 and 1 pass "pair"
 *                               while 2 sleeps ("named passed_ms T")
 * Prints "ok" last; exits 1 with a line on a failed check.
 * DLB_ARGS (e.g. --shm-key=KEY) is read by the library as usual. */
#define _GNU_SOURCE
#include <dlb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(e)                                                              \
	do {                                                                  \
		if (!(e)) {                                                   \
			printf("failed: %s (line %d)\n", #e, __LINE__);       \
			exit(1);                                              \
		}                                                             \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Shared between the forked processes: the start gate and the times. */
struct shared {
	volatile int ready;
	double t0;
	double arrive[16][16], leave[16][16]; /* [round][process] */
};

static struct shared *sh;

/* Forks n-1 children; every process runs body(i) after all of them called
 * DLB_Init; the parent waits for the children and returns whether all
 * exited 0. */
static int run_all(int n, int (*body)(int i, int n), const char *args)
{
	int me = 0;
	for (int i = 1; i < n; i++)
		if (fork() == 0) {
			me = i;
			break;
		}
	CHECK(DLB_Init(0, NULL, args) == DLB_SUCCESS);
	__sync_fetch_and_add(&sh->ready, 1);
	while (sh->ready < n)
		sleep_ms(1);
	int r = body(me, n);
	if (me != 0)
		_exit(r);
	int ok = r == 0;
	for (int i = 1; i < n; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			ok = 0;
	}
	return ok;
}

static int rounds;

static int body_wait(int i, int n)
{
	(void)n;
	for (int r = 0; r < rounds; r++) {
		sleep_ms(i * 20);
		sh->arrive[r][i] = now_ms() - sh->t0;
		CHECK(DLB_Barrier() == DLB_SUCCESS);
		sh->leave[r][i] = now_ms() - sh->t0;
	}
	CHECK(DLB_Finalize() == DLB_SUCCESS);
	return 0;
}

static int body_dead(int i, int n)
{
	if (i == n - 1)
		_exit(0); /* registered, never arrives, never finalizes */
	double t = now_ms();
	CHECK(DLB_Barrier() == DLB_SUCCESS);
	sh->leave[0][i] = now_ms() - t;
	CHECK(DLB_Finalize() == DLB_SUCCESS);
	return 0;
}

static int body_named(int i, int n)
{
	(void)n;
	dlb_barrier_t *b = DLB_BarrierNamedRegister(i < 2 ? "pair" : "other", DLB_BARRIER_LEWI_OFF);
	CHECK(b != NULL);
	CHECK(DLB_BarrierNamedRegister(i < 2 ? "pair" : "other", DLB_BARRIER_LEWI_OFF) == b);
	__sync_fetch_and_add(&sh->ready, 1); /* all registered */
	while (sh->ready < 6)
		sleep_ms(1);
	if (i == 2) {
		sleep_ms(500);
		CHECK(DLB_BarrierNamed(b) == DLB_SUCCESS); /* alone in "other" */
	} else {
		double t = now_ms();
		CHECK(DLB_BarrierNamed(b) == DLB_SUCCESS);
		sh->leave[0][i] = now_ms() - t;
	}
	CHECK(DLB_Finalize() == DLB_SUCCESS);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *mode = argc > 1 ? argv[1] : "api";
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	memset(sh, 0, sizeof *sh);
	sh->t0 = now_ms();
	if (strcmp(mode, "api") == 0) {
		CHECK(DLB_Barrier() == DLB_ERR_NOCOMP); /* before DLB_Init */
		CHECK(DLB_Init(0, NULL, "--barrier") == DLB_SUCCESS);
		CHECK(DLB_Barrier() == DLB_SUCCESS); /* alone */
		CHECK(DLB_BarrierAttach() == DLB_ERR_PERM);
		CHECK(DLB_BarrierDetach() == 0);
		CHECK(DLB_BarrierDetach() == DLB_ERR_PERM);
		CHECK(DLB_Barrier() == DLB_ERR_PERM); /* detached */
		CHECK(DLB_BarrierAttach() == 1);
		CHECK(DLB_Barrier() == DLB_SUCCESS);
		CHECK(DLB_BarrierNamedRegister("", DLB_BARRIER_LEWI_OFF) == NULL);
		dlb_barrier_t *b = DLB_BarrierNamedRegister("solo", DLB_BARRIER_LEWI_OFF);
		CHECK(b != NULL);
		CHECK(DLB_BarrierNamed(b) == DLB_SUCCESS);
		CHECK(DLB_BarrierNamedAttach(b) == DLB_ERR_PERM);
		CHECK(DLB_BarrierNamedDetach(b) == 0);
		CHECK(DLB_BarrierNamed((dlb_barrier_t *)&sh) == DLB_ERR_NOCOMP); /* not a handle */
		CHECK(DLB_Finalize() == DLB_SUCCESS);
		CHECK(DLB_Barrier() == DLB_ERR_NOCOMP);
		CHECK(DLB_BarrierAttach() == DLB_ERR_NOCOMP);
		CHECK(DLB_BarrierDetach() == DLB_ERR_NOCOMP);
		CHECK(DLB_Init(0, NULL, "--no-barrier") == DLB_SUCCESS);
		CHECK(DLB_Barrier() == DLB_ERR_NOCOMP); /* --no-barrier */
		CHECK(DLB_Finalize() == DLB_SUCCESS);
	} else if (strcmp(mode, "wait") == 0 && argc > 3) {
		int n = atoi(argv[2]);
		rounds = atoi(argv[3]);
		CHECK(n >= 2 && n <= 16 && rounds >= 1 && rounds <= 16);
		CHECK(run_all(n, body_wait, "--barrier"));
		for (int r = 0; r < rounds; r++) {
			double last = 0, first = 1e300;
			for (int i = 0; i < n; i++) {
				last = sh->arrive[r][i] > last ? sh->arrive[r][i] : last;
				first = sh->leave[r][i] < first ? sh->leave[r][i] : first;
			}
			printf("round %d last_arrival_ms %.3f first_leave_ms %.3f\n", r, last, first);
		}
	} else if (strcmp(mode, "dead") == 0 && argc > 2) {
		int n = atoi(argv[2]);
		CHECK(n >= 2 && n <= 16);
		CHECK(run_all(n, body_dead, "--barrier"));
		double worst = 0;
		for (int i = 0; i < n - 1; i++)
			worst = sh->leave[0][i] > worst ? sh->leave[0][i] : worst;
		printf("dead passed_ms %.3f\n", worst);
	} else if (strcmp(mode, "named") == 0) {
		CHECK(run_all(3, body_named, "--barrier"));
		double worst = sh->leave[0][0] > sh->leave[0][1] ? sh->leave[0][0] : sh->leave[0][1];
		printf("named passed_ms %.3f\n", worst);
	} else {
		printf("usage: dlb_barrier api | wait N R | dead N | named\n");
		return 2;
	}
	printf("ok\n");
	return 0;
}
