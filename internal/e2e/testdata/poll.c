/* poll.c: a 2-rank program that polls (the polling calls' validation: their
 * call counts, the bytes of the receives they complete, and their MPI time).
 *
 * Usage: poll [D]      D: the delay in ms before each message (default 50)
 *
 * Rank 0 posts receives and polls in tight loops until they complete; rank 1
 * sends each message D ms after the phase starts (a barrier), so every loop
 * polls for about D ms, completing nothing, before its requests complete:
 *   1. MPI_Test: one MPI_Irecv (posted 1000 B) of 100 B, MPI_STATUS_IGNORE.
 *   2. MPI_Testany over {MPI_REQUEST_NULL, 200 B, 300 B} (MPI_Irecv, posted
 *      1000 B each), MPI_STATUS_IGNORE.
 *   3. MPI_Testsome over three MPI_Irecv (posted 100 B) of 40, 50 and 60 B,
 *      sent in the reverse order, with a status array.
 *   4. MPI_Testall over {70 B, MPI_REQUEST_NULL, 80 B} (posted 1000 B),
 *      MPI_STATUSES_IGNORE.
 *   5. A persistent receive (MPI_Recv_init, posted 512 B) of 64 B, started 3
 *      times, each completed by MPI_Test polls (D ms each).
 *   6. MPI_Request_get_status on an MPI_Irecv (posted 1000 B) of 90 B until it
 *      is complete; MPI_Wait then frees it (the bytes count there).
 *   7. MPI_Iprobe until a message of 110 B is there; MPI_Recv receives it.
 *   8. MPI_Improbe until a message of 120 B is there; MPI_Imrecv receives it,
 *      completed by MPI_Test polls.
 *   9. MPI_Testany over 20 requests (a longer array than the wrapper keeps
 *      itself): MPI_Irecv of 130 and 140 B (posted 1000 B) at indices 5 and
 *      17, MPI_REQUEST_NULL elsewhere.
 *  10. MPI_Testall over 1100 requests (longer than the request table):
 *      MPI_Irecv of 150 and 160 B (posted exactly, as MPI_STATUSES_IGNORE
 *      over so many requests counts posted sizes) at indices 3 and 1050.
 * Expected call profile: MPI_Irecv received 1570 B in 13 messages (100, 200,
 * 300, 40, 50, 60, 70, 80, 90, 130, 140, 150, 160), MPI_Recv_init 192 B (3
 * of 64), MPI_Recv 110 B, MPI_Imrecv 120 B; MPI_Send sent 1992 B in 18
 * messages; the polling calls carry no bytes of their own.
 * Rank 0 prints, per polling function, "calls NAME N" (its calls) and
 * "loop_ns NAME T" (the wall time of its loops that call only NAME), then
 * "ok". A watchdog ends the program after 60 s.
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* GCC flags MPICH's MPI_STATUSES_IGNORE (a null pointer cast) as an
 * overflow of the status array: a false positive. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

enum { F_TEST, F_TESTANY, F_TESTSOME, F_TESTALL, F_GET_STATUS, F_IPROBE, F_IMPROBE, NF };
static const char *const names[NF] = {"MPI_Test",	       "MPI_Testany", "MPI_Testsome", "MPI_Testall",
				      "MPI_Request_get_status", "MPI_Iprobe",  "MPI_Improbe"};
static long calls[NF];
static double loop_ns[NF];
static int delay_ms = 50;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pause_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Rank 1: after the delay, one message of each size, with its tag. */
static void send_after_delay(int n, const int *bytes, const int *tags)
{
	static char buf[1024];
	pause_ms(delay_ms);
	for (int k = 0; k < n; k++)
		MPI_Send(buf, bytes[k], MPI_CHAR, 0, tags[k], MPI_COMM_WORLD);
}

/* Polls req with MPI_Test until it completes. */
static void poll_test(MPI_Request *req)
{
	int flag = 0;
	double t0 = now();
	while (!flag) {
		MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		calls[F_TEST]++;
	}
	loop_ns[F_TEST] += now() - t0;
}

static void receiver(void)
{
	static char buf[20][1024];
	static MPI_Request many[1100];
	MPI_Request reqs[3];
	MPI_Status sts[3];
	int flag = 0, idx = 0, out = 0, indices[3];
	double t0;

	/* 1. MPI_Test */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Irecv(buf[0], 1000, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &reqs[0]);
	poll_test(&reqs[0]);

	/* 2. MPI_Testany */
	MPI_Barrier(MPI_COMM_WORLD);
	reqs[0] = MPI_REQUEST_NULL;
	MPI_Irecv(buf[1], 1000, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &reqs[1]);
	MPI_Irecv(buf[2], 1000, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &reqs[2]);
	t0 = now();
	for (int done = 0; done < 2;) {
		MPI_Testany(3, reqs, &idx, &flag, MPI_STATUS_IGNORE);
		calls[F_TESTANY]++;
		done += flag && idx != MPI_UNDEFINED;
	}
	loop_ns[F_TESTANY] += now() - t0;

	/* 3. MPI_Testsome */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < 3; k++)
		MPI_Irecv(buf[k], 100, MPI_CHAR, 1, 4 + k, MPI_COMM_WORLD, &reqs[k]);
	t0 = now();
	for (int done = 0; done < 3;) {
		MPI_Testsome(3, reqs, &out, indices, sts);
		calls[F_TESTSOME]++;
		if (out != MPI_UNDEFINED)
			done += out;
	}
	loop_ns[F_TESTSOME] += now() - t0;

	/* 4. MPI_Testall */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Irecv(buf[0], 1000, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &reqs[0]);
	reqs[1] = MPI_REQUEST_NULL;
	MPI_Irecv(buf[2], 1000, MPI_CHAR, 1, 8, MPI_COMM_WORLD, &reqs[2]);
	t0 = now();
	for (flag = 0; !flag;) {
		MPI_Testall(3, reqs, &flag, MPI_STATUSES_IGNORE);
		calls[F_TESTALL]++;
	}
	loop_ns[F_TESTALL] += now() - t0;

	/* 5. A persistent receive, started 3 times. */
	MPI_Recv_init(buf[0], 512, MPI_CHAR, 1, 9, MPI_COMM_WORLD, &reqs[0]);
	for (int i = 0; i < 3; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Start(&reqs[0]);
		poll_test(&reqs[0]);
	}
	MPI_Request_free(&reqs[0]);

	/* 6. MPI_Request_get_status, then MPI_Wait. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Irecv(buf[0], 1000, MPI_CHAR, 1, 10, MPI_COMM_WORLD, &reqs[0]);
	t0 = now();
	for (flag = 0; !flag;) {
		MPI_Request_get_status(reqs[0], &flag, MPI_STATUS_IGNORE);
		calls[F_GET_STATUS]++;
	}
	loop_ns[F_GET_STATUS] += now() - t0;
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

	/* 7. MPI_Iprobe, then MPI_Recv. */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now();
	for (flag = 0; !flag;) {
		MPI_Iprobe(1, 11, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		calls[F_IPROBE]++;
	}
	loop_ns[F_IPROBE] += now() - t0;
	MPI_Recv(buf[0], 1000, MPI_CHAR, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

	/* 8. MPI_Improbe, then MPI_Imrecv completed by MPI_Test. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Message msg = MPI_MESSAGE_NULL;
	t0 = now();
	for (flag = 0; !flag;) {
		MPI_Improbe(1, 12, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
		calls[F_IMPROBE]++;
	}
	loop_ns[F_IMPROBE] += now() - t0;
	MPI_Imrecv(buf[0], 1000, MPI_CHAR, &msg, &reqs[0]);
	poll_test(&reqs[0]);

	/* 9. MPI_Testany over 20 requests. */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < 20; k++)
		many[k] = MPI_REQUEST_NULL;
	MPI_Irecv(buf[5], 1000, MPI_CHAR, 1, 13, MPI_COMM_WORLD, &many[5]);
	MPI_Irecv(buf[17], 1000, MPI_CHAR, 1, 14, MPI_COMM_WORLD, &many[17]);
	t0 = now();
	for (int done = 0; done < 2;) {
		MPI_Testany(20, many, &idx, &flag, MPI_STATUS_IGNORE);
		calls[F_TESTANY]++;
		done += flag && idx != MPI_UNDEFINED;
	}
	loop_ns[F_TESTANY] += now() - t0;

	/* 10. MPI_Testall over 1100 requests. */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < 1100; k++)
		many[k] = MPI_REQUEST_NULL;
	MPI_Irecv(buf[3], 150, MPI_CHAR, 1, 15, MPI_COMM_WORLD, &many[3]);
	MPI_Irecv(buf[10], 160, MPI_CHAR, 1, 16, MPI_COMM_WORLD, &many[1050]);
	t0 = now();
	for (flag = 0; !flag;) {
		MPI_Testall(1100, many, &flag, MPI_STATUSES_IGNORE);
		calls[F_TESTALL]++;
	}
	loop_ns[F_TESTALL] += now() - t0;
}

static void sender(void)
{
	MPI_Barrier(MPI_COMM_WORLD); /* 1 */
	send_after_delay(1, (int[]){100}, (int[]){1});
	MPI_Barrier(MPI_COMM_WORLD); /* 2 */
	send_after_delay(2, (int[]){200, 300}, (int[]){2, 3});
	MPI_Barrier(MPI_COMM_WORLD); /* 3: the reverse order */
	send_after_delay(3, (int[]){60, 50, 40}, (int[]){6, 5, 4});
	MPI_Barrier(MPI_COMM_WORLD); /* 4 */
	send_after_delay(2, (int[]){70, 80}, (int[]){7, 8});
	for (int i = 0; i < 3; i++) { /* 5 */
		MPI_Barrier(MPI_COMM_WORLD);
		send_after_delay(1, (int[]){64}, (int[]){9});
	}
	MPI_Barrier(MPI_COMM_WORLD); /* 6 */
	send_after_delay(1, (int[]){90}, (int[]){10});
	MPI_Barrier(MPI_COMM_WORLD); /* 7 */
	send_after_delay(1, (int[]){110}, (int[]){11});
	MPI_Barrier(MPI_COMM_WORLD); /* 8 */
	send_after_delay(1, (int[]){120}, (int[]){12});
	MPI_Barrier(MPI_COMM_WORLD); /* 9 */
	send_after_delay(2, (int[]){130, 140}, (int[]){13, 14});
	MPI_Barrier(MPI_COMM_WORLD); /* 10 */
	send_after_delay(2, (int[]){150, 160}, (int[]){15, 16});
}

int main(int argc, char **argv)
{
	alarm(60); /* a hang ends the program */
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		delay_ms = atoi(argv[1]);
	if (size != 2 || delay_ms < 0) {
		if (rank == 0)
			fprintf(stderr, "poll: needs exactly 2 ranks and D >= 0\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0)
		receiver();
	else
		sender();
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (int f = 0; f < NF; f++)
			printf("calls %s %ld\nloop_ns %s %.0f\n", names[f], calls[f], names[f], loop_ns[f]);
		printf("ok\n");
	}
	MPI_Finalize();
	return 0;
}
