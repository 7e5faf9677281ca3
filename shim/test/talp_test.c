/* talp_test.c: unit tests of the runtime query API's C side
 * (internal/shimbuild, TestTALPC), built with talp_api.c, live_read.c and
 * the bottom layer (shim/base) and -DPOPMON_NO_MPI, with the subsystems it
 * calls (regions, OpenMP, the live file) stubbed out.
 *
 *   talp_test layout   the DLB structures of shim/talp_api.h and of
 *                      internal/dlbhome/files/include/dlb_talp.h against the released
 *                      DLB 3.6/3.7 sizes and offsets; prints "ok layout".
 *   talp_test model    reads processes from stdin, one per line:
 *                        node cpus elapsed u mpi mw iser ilb isch g
 *                      (first line: omp_runtime ompt), reduces them as the
 *                      collective query does (node sums first) and prints
 *                      the metrics, one "name value" per line, for the Go
 *                      side to compare with pop.Compute.
 *   talp_test window   popmon_metrics_local's windows on scripted accounts
 *                      (a CPU joining between two calls); prints "ok window".
 *   talp_test live     the third-party queries (live_read.c) on live files
 *                      written here: a well-formed one (values checked), then
 *                      thousands of corrupted ones (random bytes in the
 *                      header and records, sizes cut): no crash, no read
 *                      outside the file; prints "ok live".
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accounts.h"
#include "base/process.h"
#include "base/threads.h"
#include "dlb_talp.h"
#include "live.h"
#include "ompt.h"
#include "regions.h"
#include "talp_api.h"

/* ------------------------------------------------------------------ stubs */

/* The accounts region 0 ("Global") has so far, set by the "window" test;
 * no region without it. */
static int script_on;
static uint64_t script_elapsed, script_t[POPMON_NSTATES];

int popmon_region_sofar(int i, char name[POPMON_NAME_MAX], uint64_t *visits, uint64_t *elapsed_ns,
			struct popmon_accounts *ns)
{
	if (!script_on || i != 0)
		return -1;
	strcpy(name, "Global");
	*visits = 0; /* open */
	*elapsed_ns = script_elapsed;
	memset(ns, 0, sizeof *ns);
	memcpy(ns->t, script_t, sizeof script_t);
	return 1;
}

int popmon_region_find(const char *name)
{
	(void)name;
	return -1;
}

int popmon_region_threads(int i)
{
	(void)i;
	return 0; /* no region measured per thread */
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

void popmon_fortran_name(char *out, size_t n, const char *s, int len)
{
	(void)s;
	(void)len;
	if (n)
		out[0] = '\0';
}

int popmon_live_dir_ok(const char *dir)
{
	(void)dir;
	return 1;
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
	/* Version 1's layout, as shim/popmon.f90 and the ctypes snippet of
	 * docs/library.md declare it: later versions only append. */
	CHECK(offsetof(struct popmon_metrics, window) == 136);
	CHECK(offsetof(struct popmon_metrics, visits) == 160);
	CHECK(offsetof(struct popmon_metrics, parallel_efficiency) == 240);
	CHECK(sizeof(struct popmon_metrics) == 328);
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

/* ------------------------------------------------------------------ window */

/* popmon_metrics_local's windows (talp_api.c, my_part): the since-last
 * window counts the time between calls only, also when a CPU joined in
 * between (the library charges its idle time before it joined to the
 * region, all of it at once: the window must not see the part before its
 * start). */
static int window(void)
{
	script_on = 1;
	struct popmon_metrics m = {.size = sizeof m};
	/* 1 CPU, 1000 ns of useful time. */
	script_elapsed = 1000;
	script_t[POPMON_ST_USEFUL] = 1000;
	CHECK(popmon_api_metrics_local(NULL, POPMON_WINDOW_SINCE_LAST, &m) == 0 && m.elapsed_ns == 1000 &&
	      m.parallel_efficiency == 1.0 && m.version == POPMON_METRICS_VERSION && strcmp(m.region, "Global") == 0);
	/* 1000 ns more, then a second CPU joins: 2000 ns of its idle time
	 * before it joined are charged (serialization), then both work
	 * 1000 ns. */
	script_elapsed = 2000;
	script_t[POPMON_ST_USEFUL] = 2000;
	CHECK(popmon_api_metrics_local(NULL, POPMON_WINDOW_SINCE_LAST, &m) == 0 && m.elapsed_ns == 1000 &&
	      m.parallel_efficiency == 1.0);
	popmon_omp_cpus = 2; /* the process's CPUs (base/threads.c's popmon_cpus) */
	script_elapsed = 3000;
	script_t[POPMON_ST_USEFUL] = 4000;
	script_t[POPMON_ST_OMP_SERIALIZATION] = 2000;
	CHECK(popmon_api_metrics_local(NULL, POPMON_WINDOW_SINCE_LAST, &m) == 0 && m.elapsed_ns == 1000 &&
	      m.cpus == 2 && m.useful_ns == 2000 && m.omp_serialization_ns == 0 && m.parallel_efficiency == 1.0);
	/* The run so far: 4000 useful of 6000. */
	CHECK(popmon_api_metrics_local(NULL, POPMON_WINDOW_RUN, &m) == 0 && m.elapsed_ns == 3000 &&
	      m.parallel_efficiency > 0.6666 && m.parallel_efficiency < 0.6667);
	/* Nothing happened since: no process in the window. */
	CHECK(popmon_api_metrics_local(NULL, POPMON_WINDOW_SINCE_LAST, &m) == POPMON_ERR_NOENT &&
	      m.processes == 0);
	/* A structure of an older, smaller version: only its bytes are written. */
	unsigned char small[16 + 8];
	memset(small, 0xAB, sizeof small);
	uint32_t sz = 16;
	memcpy(small, &sz, 4);
	popmon_api_metrics_local(NULL, POPMON_WINDOW_RUN, (struct popmon_metrics *)(void *)small);
	CHECK(small[16] == 0xAB && small[23] == 0xAB);
	CHECK(popmon_api_metrics_local(NULL, 7, &m) == POPMON_ERR_UNKNOWN);
	CHECK(popmon_api_metrics_local("unknown", POPMON_WINDOW_RUN, &m) == POPMON_ERR_NOENT);
	script_on = 0;
	if (fails == 0)
		printf("ok window\n");
	return fails != 0;
}

/* ------------------------------------------------------------------ live */

int DLB_TALP_GetPidList(int *pidlist, int *nelems, int max_len);
int DLB_TALP_GetTimes(int pid, double *mpi_time, double *useful_time);
int DLB_TALP_GetNodeTimes(const char *name, dlb_node_times_t *list, int *nelems, int max_len);
int DLB_TALP_QueryPOPNodeMetrics(const char *name, dlb_node_metrics_t *metrics);

enum { TH_OFF = 4096, TH_SIZE = 256, NTH = 4, RG_OFF = TH_OFF + TH_SIZE * NTH, RG_SIZE = 640, NRG = 4,
       FILE_SIZE = RG_OFF + RG_SIZE * NRG, AC_T = 0, AC_CALLS = 64, RG_SNAP = 160, RG_TOT = 336 };

/* A well-formed live file of a running process (the parent's pid, alive)
 * with Global: 1 visit, 3 s useful and 1 s MPI (nanosecond clock). */
static void well_formed(unsigned char *f)
{
	memset(f, 0, FILE_SIZE);
	struct popmon_live_header *h = (struct popmon_live_header *)(void *)f;
	memcpy(h->magic, POPMON_LIVE_MAGIC, 8);
	h->version = POPMON_LIVE_VERSION;
	h->header_size = POPMON_LIVE_HEADER;
	h->nstates = POPMON_NSTATES;
	h->nextra = POPMON_NEXTRA;
	h->nfn = 1;
	h->nctr = POPMON_CTR_N;
	h->detail_threads = 4;
	h->name_max = 128;
	h->thread_off = TH_OFF;
	h->thread_size = TH_SIZE;
	h->max_threads = NTH;
	h->region_off = RG_OFF;
	h->region_size = RG_SIZE;
	h->max_regions = NRG;
	h->names_off = FILE_SIZE;
	h->th_seq = 0, h->th_last = 8, h->th_state = 16, h->th_accounted = 20, h->th_rate = 24;
	h->th_slot = 28, h->th_kind = 32, h->th_acc = 40, h->th_extra = 104, h->th_mpi_calls = 144;
	h->th_fn_calls = 152, h->th_fn_ticks = 160, h->th_ctr_acc = 168;
	h->rg_name = 0, h->rg_open = 128, h->rg_anon = 132, h->rg_start = 136, h->rg_elapsed = 144;
	h->rg_visits = 152, h->rg_snap = RG_SNAP, h->rg_tot = RG_TOT, h->rg_thr = 512;
	h->ac_size = 176, h->ac_t = AC_T, h->ac_mpi_calls = AC_CALLS, h->ac_omp_parallels = 72;
	h->ac_omp_tasks = 80, h->ac_gpu_calls = 88, h->ac_x = 96, h->ac_prim_useful = 136;
	h->ac_prim_mpi = 144, h->ac_thr_useful_max = 152, h->ac_ctr = 160;
	h->pid = (int32_t)getppid();
	h->rank = 0;
	h->size = 1;
	h->state = POPMON_LIVE_RUNNING;
	h->nthreads = 1;
	h->nregions = 1;
	h->cpus = 1;
	unsigned char *g = f + RG_OFF;
	strcpy((char *)g, "Global");
	uint64_t one = 1, elapsed = 4000000000ull, u = 3000000000ull, m = 1000000000ull;
	memcpy(g + 152, &one, 8);
	memcpy(g + 144, &elapsed, 8);
	memcpy(g + RG_TOT + AC_T + 8 * POPMON_ST_USEFUL, &u, 8);
	memcpy(g + RG_TOT + AC_T + 8 * POPMON_ST_MPI, &m, 8);
}

static void put(const char *path, const unsigned char *f, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, f, n) != (ssize_t)n) {
		printf("FAIL cannot write %s\n", path);
		exit(1);
	}
	close(fd);
}

static int live(void)
{
	char dir[] = "/tmp/popmon-talp-test-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	setenv("POPMON_LIVE_DIR", dir, 1);
	char path[256];
	snprintf(path, sizeof path, "%s/host.1.live", dir);
	static unsigned char f[FILE_SIZE], g[FILE_SIZE];
	well_formed(f);
	put(path, f, FILE_SIZE);
	int pids[8], n = 0;
	double mpi = 0, useful = 0;
	dlb_node_metrics_t nm;
	dlb_node_times_t times[8];
	CHECK(DLB_TALP_GetPidList(pids, &n, 8) == 0 && n == 1 && pids[0] == (int)getppid());
	CHECK(DLB_TALP_GetTimes((int)getppid(), &mpi, &useful) == 0 && mpi == 1.0 && useful == 3.0);
	CHECK(DLB_TALP_GetTimes(1, &mpi, &useful) == -6);
	CHECK(DLB_TALP_GetNodeTimes(NULL, times, &n, 8) == 0 && n == 1 && times[0].useful_time == 3000000000);
	CHECK(DLB_TALP_QueryPOPNodeMetrics(NULL, &nm) == 0 && nm.processes_per_node == 1 &&
	      nm.parallel_efficiency == 0.75f && nm.total_mpi_time == 1000000000);
	CHECK(DLB_TALP_QueryPOPNodeMetrics("nothing", &nm) == -11);
	/* Hostile files: random bytes anywhere in the header or the records,
	 * random sizes; every call must return (the values do not matter). */
	srand(12345);
	for (int it = 0; it < 3000; it++) {
		memcpy(g, f, FILE_SIZE);
		int flips = 1 + rand() % 8;
		for (int k = 0; k < flips; k++) {
			size_t at = rand() % 2 ? (size_t)(rand() % 700) : (size_t)(rand() % FILE_SIZE);
			g[at] = (unsigned char)rand();
		}
		size_t len = rand() % 10 ? FILE_SIZE : (size_t)(rand() % FILE_SIZE);
		put(path, g, len);
		DLB_TALP_GetPidList(pids, &n, 8);
		DLB_TALP_GetTimes((int)getppid(), &mpi, &useful);
		DLB_TALP_GetNodeTimes(NULL, times, &n, 8);
		DLB_TALP_QueryPOPNodeMetrics(NULL, &nm);
		DLB_TALP_QueryPOPNodeMetrics("Global", &nm);
	}
	unlink(path);
	rmdir(dir);
	if (fails == 0)
		printf("ok live\n");
	return fails != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "layout") == 0) {
		layout();
		return fails != 0;
	}
	if (argc == 2 && strcmp(argv[1], "model") == 0)
		return model();
	if (argc == 2 && strcmp(argv[1], "live") == 0)
		return live();
	if (argc == 2 && strcmp(argv[1], "window") == 0)
		return window();
	fprintf(stderr, "usage: talp_test layout|model|live|window\n");
	return 2;
}
