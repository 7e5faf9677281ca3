/* mpipoll.c: cost of the polling calls when nothing completes, for
 * scripts/bench-poll.sh.
 *
 * One rank posts NREQ non-blocking receives from itself that no send
 * matches while the loops run (pending requests the byte accounting tracks),
 * then times tight loops of MPI_Comm_rank (the cheapest wrapped call, for
 * reference) and of the polling calls on those requests: MPI_Test (one
 * request), MPI_Testany, MPI_Testsome and MPI_Testall (all NREQ),
 * MPI_Request_get_status (one request), and MPI_Iprobe and MPI_Improbe (no
 * message pending). None of them completes anything: the loops check it, and
 * the program fails if one did. At the end it sends the messages and waits
 * for the receives. Prints nanoseconds per call: NAME_ns over the whole loop,
 * and NAME_min_ns, the fastest of its chunks of CHUNK calls (each loop runs
 * as n / CHUNK chunks, timed one by one): on a shared machine the loop's
 * mean takes in every time slice another process had, the fastest chunk
 * none. Run once plain and once under the measurement library; the
 * difference is what popmon adds to a poll.
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* MPICH's mpi.h declares the status arrays with a size that GCC checks
 * MPI_STATUSES_IGNORE against. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define NREQ 4
#define TAG 4711
#define CHUNK 1000

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long done; /* completions seen: must stay 0 */
static volatile int sink;

static void loop_comm_rank(long n, MPI_Request *reqs)
{
	(void)reqs;
	int rank = 0;
	for (long i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		sink += rank;
	}
}

static void loop_test(long n, MPI_Request *reqs)
{
	int flag = 0;
	for (long i = 0; i < n; i++) {
		MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
		done += flag;
	}
}

static void loop_testany(long n, MPI_Request *reqs)
{
	int flag = 0, idx = 0;
	for (long i = 0; i < n; i++) {
		MPI_Testany(NREQ, reqs, &idx, &flag, MPI_STATUS_IGNORE);
		done += flag;
	}
}

static void loop_testsome(long n, MPI_Request *reqs)
{
	int out = 0, idx[NREQ];
	for (long i = 0; i < n; i++) {
		MPI_Testsome(NREQ, reqs, &out, idx, MPI_STATUSES_IGNORE);
		done += out;
	}
}

static void loop_testall(long n, MPI_Request *reqs)
{
	int flag = 0;
	for (long i = 0; i < n; i++) {
		MPI_Testall(NREQ, reqs, &flag, MPI_STATUSES_IGNORE);
		done += flag;
	}
}

static void loop_request_get_status(long n, MPI_Request *reqs)
{
	int flag = 0;
	for (long i = 0; i < n; i++) {
		MPI_Request_get_status(reqs[0], &flag, MPI_STATUS_IGNORE);
		done += flag;
	}
}

static void loop_iprobe(long n, MPI_Request *reqs)
{
	(void)reqs;
	int flag = 0;
	for (long i = 0; i < n; i++) {
		MPI_Iprobe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		done += flag;
	}
}

static void loop_improbe(long n, MPI_Request *reqs)
{
	(void)reqs;
	int flag = 0;
	MPI_Message m;
	for (long i = 0; i < n; i++) {
		MPI_Improbe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
		done += flag;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	MPI_Init(&argc, &argv);
	int me = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	double buf[NREQ], out[NREQ] = {0};
	MPI_Request reqs[NREQ];
	for (int k = 0; k < NREQ; k++)
		MPI_Irecv(&buf[k], 1, MPI_DOUBLE, me, TAG, MPI_COMM_WORLD, &reqs[k]);
	static const struct {
		const char *name;
		void (*loop)(long, MPI_Request *);
	} calls[] = {
		{"comm_rank", loop_comm_rank},
		{"test", loop_test},
		{"testany", loop_testany},
		{"testsome", loop_testsome},
		{"testall", loop_testall},
		{"request_get_status", loop_request_get_status},
		{"iprobe", loop_iprobe},
		{"improbe", loop_improbe},
	};
	enum { NCALLS = sizeof calls / sizeof calls[0] };
	loop_comm_rank(n / 10, reqs); /* warm-up */
	double ns[NCALLS], min[NCALLS];
	long chunks = n / CHUNK > 0 ? n / CHUNK : 1;
	for (int c = 0; c < NCALLS; c++) {
		double total = 0;
		min[c] = 1e300;
		for (long k = 0; k < chunks; k++) {
			double t0 = now();
			calls[c].loop(CHUNK, reqs);
			double t = now() - t0;
			total += t;
			if (t < min[c])
				min[c] = t;
		}
		ns[c] = total / (double)(chunks * CHUNK);
		min[c] /= CHUNK;
	}
	for (int k = 0; k < NREQ; k++)
		MPI_Send(&out[k], 1, MPI_DOUBLE, me, TAG, MPI_COMM_WORLD);
	MPI_Waitall(NREQ, reqs, MPI_STATUSES_IGNORE);
	if (done != 0) {
		fprintf(stderr, "mpipoll: %ld completions where none was expected\n", done);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int c = 0; c < NCALLS; c++)
		printf("%s_ns %.2f\n%s_min_ns %.2f\n", calls[c].name, ns[c], calls[c].name, min[c]);
	MPI_Finalize();
	return 0;
}
