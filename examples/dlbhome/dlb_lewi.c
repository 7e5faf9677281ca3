/* dlb_lewi.c: DLB's LeWI calls between two processes on one node, built
 * against a `popmon dlb-home` prefix (-I$DLB_HOME/include -ldlb) as a DLB
 * user builds it, no MPI. Run with DLB_ARGS=--lewi (and a key of its own,
 * POPMON_LEWI_KEY or --shm-key).
 *
 * The process forks; parent A registers CPU 0 (DLB_Init with a mask), child
 * B CPU 1, and they take turns (pipes): A lends, B borrows and may run on
 * CPU 0, A reclaims (noted: B still there), B returns, A reclaims again
 * (nothing left), A's DLB_LendCpus (not in DLB's mask policy), both
 * finalize, A lends once more (not initialized). A prints
 *
 *   ok lewi INIT_A INIT_B LEND BORROW CHECK RECLAIM RETURN RECLAIM2 LENDCPUS FIN_B FIN_A AFTER
 *
 * with DLB: "ok lewi 0 0 0 0 0 1 0 2 -15 0 0 -2". Without --lewi every LeWI
 * call is DLB_ERR_NOLEWI (-17) and DLB_Init succeeds. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlb.h>

static int ab[2], ba[2]; /* A to B, B to A */

static void say(int fd, int v)
{
	if (write(fd, &v, sizeof v) != sizeof v)
		exit(3);
}

static int hear(int fd)
{
	int v;
	if (read(fd, &v, sizeof v) != sizeof v)
		exit(3);
	return v;
}

int main(void)
{
	if (pipe(ab) != 0 || pipe(ba) != 0)
		return 2;
	alarm(30);
	cpu_set_t mask;
	CPU_ZERO(&mask);
	pid_t b = fork();
	if (b == 0) { /* B: CPU 1 */
		CPU_SET(1, &mask);
		say(ba[1], DLB_Init(0, &mask, NULL));
		hear(ab[0]); /* A lent */
		say(ba[1], DLB_Borrow());
		say(ba[1], DLB_CheckCpuAvailability(0));
		hear(ab[0]); /* A reclaimed */
		say(ba[1], DLB_Return());
		hear(ab[0]);
		say(ba[1], DLB_Finalize());
		return 0;
	}
	CPU_SET(0, &mask);
	int init_a = DLB_Init(0, &mask, NULL);
	int init_b = hear(ba[0]);
	int lend = DLB_Lend();
	say(ab[1], 0);
	int borrow = hear(ba[0]), check = hear(ba[0]);
	int reclaim = DLB_Reclaim();
	say(ab[1], 0);
	int ret = hear(ba[0]);
	int reclaim2 = DLB_Reclaim();
	int lendcpus = DLB_LendCpus(1);
	say(ab[1], 0);
	int fin_b = hear(ba[0]);
	int fin_a = DLB_Finalize();
	int after = DLB_Lend();
	waitpid(b, NULL, 0);
	printf("ok lewi %d %d %d %d %d %d %d %d %d %d %d %d\n", init_a, init_b, lend, borrow, check, reclaim, ret,
	       reclaim2, lendcpus, fin_b, fin_a, after);
	return 0;
}
