/* talp_test.c: unit tests of the runtime query API's C side
 * (internal/shimbuild, TestTALPC), built with talp_api.c and
 * -DPOPMON_NO_MPI, with the rest of the library stubbed out.
 *
 *   talp_test layout   the DLB structures of shim/talp_api.h and of
 *                      examples/dlbstub/dlb_talp.h against the released
 *                      DLB 3.6/3.7 sizes and offsets; prints "ok layout".
 *   talp_test model    reads processes from stdin, one per line:
 *                        node cpus elapsed u mpi mw iser ilb isch g
 *                      (first line: omp_runtime ompt), reduces them as the
 *                      collective query does (node sums first) and prints
 *                      the metrics, one "name value" per line, for the Go
 *                      side to compare with pop.Compute.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dlb_talp.h"
#include "talp_api.h"

/* ------------------------------------------------------------------ stubs */

struct popmon_process popmon_proc;
__thread struct popmon_thread *popmon_tls __attribute__((tls_model("initial-exec")));

int popmon_region_sofar(int i, char name[POPMON_NAME_MAX], uint64_t *visits, uint64_t *elapsed_ns,
			struct popmon_accounts *ns)
{
	(void)i;
	(void)name;
	(void)visits;
	(void)elapsed_ns;
	(void)ns;
	return -1;
}

int popmon_region_find(const char *name)
{
	(void)name;
	return -1;
}

int popmon_region_of_handle(const void *h)
{
	(void)h;
	return -1;
}

int popmon_openmp_info(const char **runtime, int *ompt, const char **reason, int *max_threads)
{
	(void)runtime;
	(void)ompt;
	(void)reason;
	(void)max_threads;
	return 0;
}

int popmon_cpus(void)
{
	return 1;
}

void popmon_fortran_name(char *out, size_t n, const char *s, int len)
{
	(void)s;
	(void)len;
	if (n)
		out[0] = '\0';
}

void popmon_warn_once(const char *key, const char *fmt, ...)
{
	(void)key;
	(void)fmt;
}

/* ------------------------------------------------------------------ layout */

static int fails;

#define CHECK(cond)                                                                                         \
	do {                                                                                                \
		if (!(cond)) {                                                                              \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                              \
			fails++;                                                                            \
		}                                                                                           \
	} while (0)

/* Field f at the same offset in popmon's and the stub header's struct. */
#define SAME(a, b, f) CHECK(offsetof(a, f) == offsetof(b, f))

static void layout(void)
{
	typedef struct dlb_pop_metrics_compat P;
	typedef struct dlb_node_metrics_compat N;
	typedef struct dlb_node_times_compat T;
	CHECK(sizeof(P) == 384);
	CHECK(offsetof(P, num_cpus) == 128);
	CHECK(offsetof(P, elapsed_time) == 208);
	CHECK(offsetof(P, useful_time) == 216);
	CHECK(offsetof(P, parallel_efficiency) == 320);
	CHECK(offsetof(P, mpi_load_balance) == 332);
	CHECK(offsetof(P, gpu_orchestration_efficiency) == 376);
	CHECK(sizeof(N) == 184);
	CHECK(offsetof(N, total_useful_time) == 136);
	CHECK(offsetof(N, parallel_efficiency) == 168);
	CHECK(sizeof(T) == 24);
	CHECK(offsetof(T, useful_time) == 16);
	CHECK(sizeof(dlb_pop_metrics_t) == sizeof(P));
	CHECK(sizeof(dlb_node_metrics_t) == sizeof(N));
	CHECK(sizeof(dlb_node_times_t) == sizeof(T));
	SAME(P, dlb_pop_metrics_t, num_mpi_ranks);
	SAME(P, dlb_pop_metrics_t, num_nodes);
	SAME(P, dlb_pop_metrics_t, avg_cpus);
	SAME(P, dlb_pop_metrics_t, cycles);
	SAME(P, dlb_pop_metrics_t, num_measurements);
	SAME(P, dlb_pop_metrics_t, mpi_time);
	SAME(P, dlb_pop_metrics_t, omp_serialization_time);
	SAME(P, dlb_pop_metrics_t, min_mpi_normd_proc);
	SAME(P, dlb_pop_metrics_t, min_mpi_normd_node);
	SAME(P, dlb_pop_metrics_t, max_gpu_active_time);
	SAME(P, dlb_pop_metrics_t, mpi_communication_efficiency);
	SAME(P, dlb_pop_metrics_t, mpi_load_balance_in);
	SAME(P, dlb_pop_metrics_t, mpi_load_balance_out);
	SAME(P, dlb_pop_metrics_t, omp_parallel_efficiency);
	SAME(P, dlb_pop_metrics_t, omp_load_balance);
	SAME(P, dlb_pop_metrics_t, omp_scheduling_efficiency);
	SAME(P, dlb_pop_metrics_t, omp_serialization_efficiency);
	SAME(P, dlb_pop_metrics_t, device_offload_efficiency);
	SAME(N, dlb_node_metrics_t, node_id);
	SAME(N, dlb_node_metrics_t, processes_per_node);
	SAME(N, dlb_node_metrics_t, max_mpi_time);
	SAME(N, dlb_node_metrics_t, load_balance);
	SAME(T, dlb_node_times_t, mpi_time);
	/* The monitor handle (regions.c mirrors it) is 176 bytes in 3.6/3.7. */
	CHECK(sizeof(dlb_monitor_t) == 176);
	CHECK(offsetof(dlb_monitor_t, useful_time) == 96);
	CHECK(offsetof(dlb_monitor_t, mpi_time) == 104);
	/* The native structure: the size first, versioned. */
	CHECK(offsetof(struct popmon_metrics, size) == 0);
	CHECK(offsetof(struct popmon_metrics, version) == 4);
	if (fails == 0)
		printf("ok layout\n");
}

/* ------------------------------------------------------------------ model */

enum { MAXP = 256 };

static int model(void)
{
	int rt = 0, ompt = 0;
	if (scanf("%d %d", &rt, &ompt) != 2)
		return 1;
	struct popmon_talp_proc p[MAXP];
	int node[MAXP], n = 0;
	while (n < MAXP) {
		memset(&p[n], 0, sizeof p[n]);
		if (scanf("%d %lf %lf %lf %lf %lf %lf %lf %lf %lf", &node[n], &p[n].cpus, &p[n].elapsed, &p[n].u,
			  &p[n].mpi, &p[n].mw, &p[n].iser, &p[n].ilb, &p[n].isch, &p[n].g) != 10)
			break;
		p[n].present = 1;
		p[n].visits = 1;
		p[n].omp_runtime = rt;
		p[n].ompt = ompt;
		p[n].omp_hint = p[n].cpus > 1 || p[n].iser > 0 || p[n].ilb > 0 || p[n].isch > 0 || p[n].mw > 0;
		n++;
	}
	/* As reduce() in talp_api.c: the node's sums first, then every
	 * process's part into one vector. */
	double s[POPMON_TS_N];
	popmon_talp_sums_zero(s);
	for (int i = 0; i < n; i++) {
		double nm = 0, nc = 0, np = 0;
		for (int j = 0; j < n; j++) {
			if (node[j] != node[i])
				continue;
			nm += p[j].mpi + p[j].mw;
			nc += p[j].cpus >= 1 ? p[j].cpus : 1;
			np++;
		}
		double part[POPMON_TS_N];
		popmon_talp_sums_zero(part);
		popmon_talp_sums_add(part, &p[i], nm, nc, 1.0 / np);
		popmon_talp_sums_merge(s, part);
	}
	struct popmon_metrics m;
	memset(&m, 0, sizeof m);
	int rc = popmon_talp_compute(s, &m);
	struct dlb_pop_metrics_compat d;
	popmon_talp_fill_dlb(s, &m, "r", &d);
	printf("rc %d\nprocesses %d\nnodes %d\ncpus %d\nflags %u\n", rc, m.processes, m.nodes, m.cpus, m.flags);
	printf("parallel_efficiency %.12g\n", m.parallel_efficiency);
	printf("mpi_parallel_efficiency %.12g\n", m.mpi_parallel_efficiency);
	printf("mpi_communication_efficiency %.12g\n", m.mpi_communication_efficiency);
	printf("mpi_load_balance %.12g\n", m.mpi_load_balance);
	printf("mpi_load_balance_in %.12g\n", m.mpi_load_balance_in);
	printf("mpi_load_balance_out %.12g\n", m.mpi_load_balance_out);
	printf("omp_parallel_efficiency %.12g\n", m.omp_parallel_efficiency);
	printf("omp_serialization_efficiency %.12g\n", m.omp_serialization_efficiency);
	printf("omp_load_balance %.12g\n", m.omp_load_balance);
	printf("omp_scheduling_efficiency %.12g\n", m.omp_scheduling_efficiency);
	printf("dlb_load_balance %.7g\n", (double)d.mpi_load_balance);
	printf("dlb_num_mpi_ranks %d\n", d.num_mpi_ranks);
	printf("dlb_elapsed_time %lld\n", (long long)d.elapsed_time);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "layout") == 0) {
		layout();
		return fails != 0;
	}
	if (argc == 2 && strcmp(argv[1], "model") == 0)
		return model();
	fprintf(stderr, "usage: talp_test layout|model\n");
	return 2;
}
