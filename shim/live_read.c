/* live_read.c: the third-party runtime queries (docs/library.md, "Runtime
 * query API"): DLB_TALP_Attach, Detach, GetNumCPUs, GetPidList, GetTimes,
 * GetNodeTimes and QueryPOPNodeMetrics, for a monitoring process on the
 * node that has libpopmon loaded. They read the live files of the node's
 * measured processes (live.h, docs/live-format.md) and create nothing: a
 * monitor started before the job sees it once it starts (every call looks
 * again), and values stay readable after a rank died, until `popmon run`
 * cleans its folder.
 *
 * Where: $POPMON_LIVE_DIR when set, else every /dev/shm/popmon-UID/run-*
 * folder that holds a live file of a running process, else the newest such
 * folder with live files (a job that just ended). Folders must be ours and
 * private; every file is treated as hostile: regular, ours, sized like a
 * live file, a header whose layout (the header describes it) fits the
 * record and file sizes, every count bounded, and consistent copies taken
 * with the sequence words (bounded retries) as internal/live/file.go does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POPMON_BUILDING_LIBRARY
#include "accounts.h"
#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "live.h"
#include "regions.h"
#include "talp_api.h"

enum { DLB_SUCCESS_ = 0, DLB_ERR_NOPROC_ = -6, DLB_ERR_NOENT_ = -11, DLB_ERR_NOMEM_ = -14,
       DLB_ERR_NOTALP_ = -16 };

enum { MAX_DIRS = 16, MAX_FILES = 4096, MAX_RETRIES = 10000 };

/* One mapped live file. */
struct lfile {
	const unsigned char *p;
	size_t len;
	struct popmon_live_header h; /* a copy, checked */
};

static uint64_t ld64(const struct lfile *f, size_t off)
{
	return __atomic_load_n((const uint64_t *)(const void *)(f->p + off), __ATOMIC_ACQUIRE);
}

static uint32_t ld32(const struct lfile *f, size_t off)
{
	return __atomic_load_n((const uint32_t *)(const void *)(f->p + off), __ATOMIC_ACQUIRE);
}

/* Whether the header's layout fits its own record sizes and the file
 * (the checks of internal/live/file.go readHeader), and is this build's
 * state and account set. */
static int header_ok(const struct popmon_live_header *h, size_t len)
{
	if (memcmp(h->magic, POPMON_LIVE_MAGIC, 8) != 0 || h->version != POPMON_LIVE_VERSION ||
	    h->header_size < sizeof *h || h->nstates != POPMON_NSTATES || h->nextra > 64 || h->nctr > 64 ||
	    h->nfn > 4096 || h->max_threads > (1u << 16) || h->max_regions > (1u << 16) ||
	    h->detail_threads > (1u << 12) || h->name_max == 0 || h->name_max > 4096 || h->thread_size == 0 ||
	    h->thread_size > (1u << 20) || h->region_size == 0 || h->region_size > (1u << 20) ||
	    h->ac_size > (1u << 20))
		return 0;
	uint64_t n = len, ts = h->thread_size, rs = h->region_size, as = h->ac_size;
	if ((uint64_t)h->thread_off + ts * h->max_threads > n || (uint64_t)h->region_off + rs * h->max_regions > n ||
	    (uint64_t)h->names_off + h->names_size > n)
		return 0;
#define FITS(off, count, size) ((uint64_t)(off) + 8 * (uint64_t)(count) <= (size) && (off) % 8 == 0)
	if (!FITS(h->th_seq, 1, ts) || !FITS(h->th_last, 1, ts) || h->th_state + 4ull > ts ||
	    h->th_accounted + 4ull > ts || h->th_rate + 4ull > ts || h->th_slot + 4ull > ts ||
	    !FITS(h->th_acc, h->nstates, ts) || !FITS(h->th_mpi_calls, 1, ts) || h->th_state % 4 ||
	    h->th_accounted % 4 || h->th_rate % 4)
		return 0;
	if ((uint64_t)h->rg_name + h->name_max > rs || h->rg_open + 4ull > rs || h->rg_open % 4 ||
	    !FITS(h->rg_start, 1, rs) || !FITS(h->rg_elapsed, 1, rs) || !FITS(h->rg_visits, 1, rs) ||
	    (uint64_t)h->rg_snap + as > rs || (uint64_t)h->rg_tot + as > rs || h->rg_snap % 8 || h->rg_tot % 8)
		return 0;
	if (!FITS(h->ac_t, h->nstates, as) || !FITS(h->ac_mpi_calls, 1, as))
		return 0;
#undef FITS
	return h->thread_off % 8 == 0 && h->region_off % 8 == 0 && ts % 8 == 0 && rs % 8 == 0;
}

/* Maps the live file at path (read-only) into f: 0, or -1 when it is not
 * a ready live file of ours. */
static int lfile_open(const char *path, struct lfile *f)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || st.st_size < POPMON_LIVE_HEADER ||
	    (uint64_t)st.st_size > (1ull << 34)) {
		close(fd);
		return -1;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	f->p = p;
	f->len = (size_t)st.st_size;
	memcpy(&f->h, p, sizeof f->h);
	if (!header_ok(&f->h, f->len)) {
		munmap(p, f->len);
		return -1;
	}
	return 0;
}

static void lfile_close(struct lfile *f)
{
	if (f->p)
		munmap((void *)(uintptr_t)f->p, f->len);
	f->p = NULL;
}

static uint32_t lfile_state(const struct lfile *f)
{
	return ld32(f, offsetof(struct popmon_live_header, state));
}

/* Whether the file's process runs: between MPI_Init and the end of
 * MPI_Finalize, and alive. */
static int lfile_running(const struct lfile *f)
{
	uint32_t state = lfile_state(f);
	if (state != POPMON_LIVE_RUNNING && state != POPMON_LIVE_FINALIZING)
		return 0;
	return f->h.pid > 0 && (kill(f->h.pid, 0) == 0 || errno == EPERM);
}

/* The folders to read (see the top): their number, paths into dirs. */
static int live_dirs(char dirs[MAX_DIRS][PATH_MAX])
{
	const char *env = getenv("POPMON_LIVE_DIR");
	if (env && *env) {
		if (!popmon_live_dir_ok(env) || strlen(env) >= PATH_MAX)
			return 0;
		snprintf(dirs[0], PATH_MAX, "%s", env);
		return 1;
	}
	char base[PATH_MAX];
	snprintf(base, sizeof base, "/dev/shm/popmon-%u", (unsigned)getuid());
	if (!popmon_live_dir_ok(base))
		return 0;
	DIR *d = opendir(base);
	if (!d)
		return 0;
	int n = 0;
	char newest[PATH_MAX] = "";
	struct timespec newest_t = {0, 0};
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "run-", 4) != 0)
			continue;
		char dir[PATH_MAX];
		if (snprintf(dir, sizeof dir, "%s/%s", base, e->d_name) >= (int)sizeof dir || !popmon_live_dir_ok(dir))
			continue;
		DIR *r = opendir(dir);
		if (!r)
			continue;
		int files = 0, running = 0;
		struct dirent *fe;
		while ((fe = readdir(r)) != NULL && !running) {
			size_t k = strlen(fe->d_name);
			if (k < 6 || strcmp(fe->d_name + k - 5, ".live") != 0)
				continue;
			char path[PATH_MAX];
			if (snprintf(path, sizeof path, "%s/%s", dir, fe->d_name) >= (int)sizeof path)
				continue;
			struct lfile f = {0};
			if (lfile_open(path, &f) != 0)
				continue;
			files++;
			running = lfile_running(&f);
			lfile_close(&f);
		}
		closedir(r);
		if (running && n < MAX_DIRS)
			snprintf(dirs[n++], PATH_MAX, "%s", dir);
		struct stat st;
		if (files && stat(dir, &st) == 0 &&
		    (st.st_mtim.tv_sec > newest_t.tv_sec ||
		     (st.st_mtim.tv_sec == newest_t.tv_sec && st.st_mtim.tv_nsec > newest_t.tv_nsec))) {
			newest_t = st.st_mtim;
			snprintf(newest, sizeof newest, "%s", dir);
		}
	}
	closedir(d);
	if (n == 0 && newest[0])
		snprintf(dirs[n++], PATH_MAX, "%s", newest);
	return n;
}

/* ------------------------------------------------------------------ accounts */

/* The writer's clock now (live.h: ticks of the TSC or CLOCK_MONOTONIC). */
static uint64_t writer_now(const struct lfile *f, double *ns_per_tick)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	*ns_per_tick = 1.0;
#if defined(__x86_64__) || defined(__i386__)
	if (f->h.clock_tsc) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		uint64_t tick = ((uint64_t)hi << 32) | lo;
		/* Calibrated over the process's life, from its start to now. */
		if (tick > f->h.t0_tick && ns > f->h.t0_ns)
			*ns_per_tick = (double)(ns - f->h.t0_ns) / (double)(tick - f->h.t0_tick);
		return tick;
	}
#else
	(void)f; /* CLOCK_MONOTONIC only (popmon_now) */
#endif
	return ns;
}

/* A process's accounts of one region so far, in nanoseconds: the region's
 * totals plus, when it is open, the threads' accounts since its start. */
struct racc {
	double t[POPMON_NSTATES];
	double elapsed, visits, mpi_calls;
	int present;
};

/* Copies n bytes at off of f into out while the 64-bit word at seq is even
 * and unchanged (bounded retries; the last copy otherwise). */
static void consistent(const struct lfile *f, size_t seq, size_t off, size_t n, void *out)
{
	for (int try = 0; try < MAX_RETRIES; try++) {
		uint64_t s1 = ld64(f, seq);
		if (s1 & 1)
			continue;
		memcpy(out, f->p + off, n);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (ld64(f, seq) == s1)
			return;
	}
	memcpy(out, f->p + off, n);
}

/* Reads region name (NULL: Global, index 0) of file f into a. Returns 0, or
 * -1 when the file has no such region (or no memory). */
static int region_of(const struct lfile *f, const char *name, struct racc *a)
{
	const struct popmon_live_header *h = &f->h;
	memset(a, 0, sizeof *a);
	unsigned char *rec = malloc(h->region_size);
	if (!rec)
		return -1;
	uint32_t nreg = ld32(f, offsetof(struct popmon_live_header, nregions));
	if (nreg > h->max_regions)
		nreg = h->max_regions;
	int found = -1;
	size_t seq = offsetof(struct popmon_live_header, regions_seq);
	for (uint32_t i = 0; i < nreg && found < 0; i++) {
		size_t off = h->region_off + (size_t)i * h->region_size;
		if (name == NULL) {
			found = 0;
		} else {
			char nm[POPMON_NAME_MAX];
			size_t k = h->name_max < sizeof nm ? h->name_max : sizeof nm;
			consistent(f, seq, off + h->rg_name, k, nm);
			nm[k - 1] = '\0';
			if (strcmp(nm, name) == 0 || (i == 0 && strcasecmp(name, "Global") == 0))
				found = (int)i;
		}
		if (found >= 0)
			consistent(f, seq, off, h->region_size, rec);
	}
	if (found < 0) {
		free(rec);
		return -1;
	}
	uint32_t open;
	uint64_t start, elapsed, visits, tot[POPMON_NSTATES], snap[POPMON_NSTATES], tcalls, scalls;
	memcpy(&open, rec + h->rg_open, 4);
	memcpy(&start, rec + h->rg_start, 8);
	memcpy(&elapsed, rec + h->rg_elapsed, 8);
	memcpy(&visits, rec + h->rg_visits, 8);
	memcpy(tot, rec + h->rg_tot + h->ac_t, sizeof tot);
	memcpy(snap, rec + h->rg_snap + h->ac_t, sizeof snap);
	memcpy(&tcalls, rec + h->rg_tot + h->ac_mpi_calls, 8);
	memcpy(&scalls, rec + h->rg_snap + h->ac_mpi_calls, 8);
	free(rec);
	double nspt;
	uint64_t now = writer_now(f, &nspt);
	double t[POPMON_NSTATES];
	for (int s = 0; s < POPMON_NSTATES; s++)
		t[s] = (double)tot[s];
	double calls = (double)tcalls, el = (double)elapsed;
	if (open) {
		/* The open visit: every accounted thread's accounts now (its
		 * interval in progress included) less the region's snapshot. */
		uint64_t cur[POPMON_NSTATES] = {0}, curcalls = 0;
		uint32_t nthr = ld32(f, offsetof(struct popmon_live_header, nthreads));
		if (nthr > h->max_threads)
			nthr = h->max_threads;
		unsigned char *th = malloc(h->thread_size);
		if (!th)
			return -1;
		for (uint32_t i = 0; i < nthr; i++) {
			size_t off = h->thread_off + (size_t)i * h->thread_size;
			consistent(f, off + h->th_seq, off, h->thread_size, th);
			uint64_t acc[POPMON_NSTATES], last, mc;
			uint32_t state, rate, accounted;
			memcpy(acc, th + h->th_acc, sizeof acc);
			memcpy(&last, th + h->th_last, 8);
			memcpy(&state, th + h->th_state, 4);
			memcpy(&rate, th + h->th_rate, 4);
			memcpy(&accounted, th + h->th_accounted, 4);
			memcpy(&mc, th + h->th_mpi_calls, 8);
			curcalls += mc;
			if (!accounted)
				continue;
			uint64_t d = popmon_delta(last, now);
			if (state < POPMON_NSTATES) {
				acc[state] += d;
				if (rate)
					acc[popmon_charge_state(state)] += d * rate;
			}
			for (int s = 0; s < POPMON_NSTATES; s++)
				cur[s] += acc[s];
		}
		free(th);
		for (int s = 0; s < POPMON_NSTATES; s++)
			t[s] += cur[s] > snap[s] ? (double)(cur[s] - snap[s]) : 0;
		calls += curcalls > scalls ? (double)(curcalls - scalls) : 0;
		el += (double)popmon_delta(start, now);
	}
	for (int s = 0; s < POPMON_NSTATES; s++)
		a->t[s] = t[s] * nspt;
	a->elapsed = el * nspt;
	a->visits = (double)visits;
	a->mpi_calls = calls;
	a->present = visits > 0 || open;
	return 0;
}

/* ------------------------------------------------------------------ the node */

/* One process of the node, as the queries need it. */
struct nproc {
	int pid, rank, running, cpus;
	struct racc a;
	int has; /* the region asked for */
};

static int by_pid(const void *x, const void *y)
{
	const struct nproc *a = x, *b = y;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Reads the node's processes (and their region name, NULL: Global) into a
 * new array, sorted by pid: their number, or -1 without memory. */
static int node_procs(const char *name, struct nproc **out)
{
	*out = NULL;
	char (*dirs)[PATH_MAX] = malloc(sizeof(char[MAX_DIRS][PATH_MAX]));
	if (!dirs)
		return -1;
	int nd = live_dirs(dirs), n = 0, cap = 0;
	struct nproc *v = NULL;
	for (int i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)) != NULL && n < MAX_FILES) {
			size_t k = strlen(e->d_name);
			if (k < 6 || strcmp(e->d_name + k - 5, ".live") != 0)
				continue;
			char path[PATH_MAX];
			if (snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name) >= (int)sizeof path)
				continue;
			struct lfile f = {0};
			if (lfile_open(path, &f) != 0)
				continue;
			if (n == cap) {
				int c = cap ? 2 * cap : 16;
				struct nproc *w = realloc(v, sizeof *v * (size_t)c);
				if (!w) {
					lfile_close(&f);
					break;
				}
				v = w;
				cap = c;
			}
			/* Not the monitor's own file (when it has one), and only
			 * processes past MPI_Init, as in DLB: before it the Global
			 * region is not yet the run's (MPI_Init restarts it). */
			if (f.h.pid == (int32_t)getpid() || lfile_state(&f) == POPMON_LIVE_STARTING ||
			    lfile_state(&f) == POPMON_LIVE_SINGLE) {
				lfile_close(&f);
				continue;
			}
			struct nproc *p = &v[n++];
			memset(p, 0, sizeof *p);
			p->pid = f.h.pid;
			p->rank = f.h.rank;
			p->running = lfile_running(&f);
			uint32_t c = ld32(&f, offsetof(struct popmon_live_header, cpus));
			p->cpus = c >= 1 && c <= (1u << 20) ? (int)c : 1;
			p->has = region_of(&f, name, &p->a) == 0 && p->a.present;
			lfile_close(&f);
		}
		closedir(d);
	}
	free(dirs);
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, by_pid);
	*out = v;
	return n;
}

/* The node's sums of region name over the processes that have it. */
static int node_sums(const char *name, double s[POPMON_TS_N], int *node_id)
{
	struct nproc *v;
	int n = node_procs(name, &v);
	if (n < 0)
		return DLB_ERR_NOMEM_;
	double nm = 0, nc = 0, np = 0;
	int lowest = -1;
	for (int i = 0; i < n; i++) {
		if (!v[i].has)
			continue;
		nm += v[i].a.t[POPMON_ST_MPI] + v[i].a.t[POPMON_ST_MPI_WORKER_IDLE];
		nc += v[i].cpus;
		np++;
		if (lowest < 0 || (v[i].rank >= 0 && v[i].rank < lowest))
			lowest = v[i].rank;
	}
	popmon_talp_sums_zero(s);
	for (int i = 0; i < n; i++) {
		if (!v[i].has)
			continue;
		const struct racc *a = &v[i].a;
		struct popmon_talp_proc p = {
			.present = 1, .cpus = v[i].cpus, .elapsed = a->elapsed, .u = a->t[POPMON_ST_USEFUL],
			.mpi = a->t[POPMON_ST_MPI], .mw = a->t[POPMON_ST_MPI_WORKER_IDLE],
			.iser = a->t[POPMON_ST_OMP_SERIALIZATION], .ilb = a->t[POPMON_ST_OMP_LOAD_IMBALANCE],
			.isch = a->t[POPMON_ST_OMP_SCHEDULING], .g = a->t[POPMON_ST_GPU_RUNTIME],
			.visits = a->visits, .mpi_calls = a->mpi_calls,
		};
		p.omp_hint = p.cpus > 1 || p.iser > 0 || p.ilb > 0 || p.isch > 0 || p.mw > 0;
		popmon_talp_sums_add(s, &p, nm, nc, 1.0 / np);
	}
	free(v);
	*node_id = lowest < 0 ? 0 : lowest;
	return np > 0 ? DLB_SUCCESS_ : DLB_ERR_NOENT_;
}

/* ------------------------------------------------------------------ DLB names */

int DLB_TALP_Attach(void);
int DLB_TALP_Detach(void);
int DLB_TALP_GetNumCPUs(int *ncpus);
int DLB_TALP_GetPidList(int *pidlist, int *nelems, int max_len);
int DLB_TALP_GetTimes(int pid, double *mpi_time, double *useful_time);
int DLB_TALP_GetNodeTimes(const char *name, struct dlb_node_times_compat *list, int *nelems, int max_len);
int DLB_TALP_QueryPOPNodeMetrics(const char *name, struct dlb_node_metrics_compat *metrics);

int DLB_TALP_Attach(void)
{
	/* Nothing to map or create: every query reads the live files afresh. */
	return DLB_SUCCESS_;
}

int DLB_TALP_Detach(void)
{
	return DLB_SUCCESS_;
}

int DLB_TALP_GetNumCPUs(int *ncpus)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus)
		*ncpus = n > 0 ? (int)n : 1;
	return DLB_SUCCESS_;
}

int DLB_TALP_GetPidList(int *pidlist, int *nelems, int max_len)
{
	struct nproc *v;
	int n = node_procs(NULL, &v), k = 0;
	if (n < 0)
		return DLB_ERR_NOMEM_;
	for (int i = 0; i < n; i++)
		if (v[i].running && k < max_len && pidlist)
			pidlist[k++] = v[i].pid;
	free(v);
	if (nelems)
		*nelems = k;
	return DLB_SUCCESS_;
}

int DLB_TALP_GetTimes(int pid, double *mpi_time, double *useful_time)
{
	double m = 0, u = 0;
	if (pid == 0 || pid == popmon_proc.pid) {
		/* This process: its own accounts, not a file. */
		if (popmon_proc.inert)
			return DLB_ERR_NOTALP_;
		char name[POPMON_NAME_MAX];
		uint64_t visits, elapsed;
		struct popmon_accounts a;
		if (popmon_region_sofar(0, name, &visits, &elapsed, &a) < 0)
			return DLB_ERR_NOTALP_;
		m = (double)(a.t[POPMON_ST_MPI] + a.t[POPMON_ST_MPI_WORKER_IDLE]);
		u = (double)a.t[POPMON_ST_USEFUL];
	} else {
		struct nproc *v;
		int n = node_procs(NULL, &v), found = 0;
		if (n < 0)
			return DLB_ERR_NOMEM_;
		for (int i = 0; i < n && !found; i++) {
			if (v[i].pid != pid || !v[i].has)
				continue;
			found = 1;
			m = v[i].a.t[POPMON_ST_MPI] + v[i].a.t[POPMON_ST_MPI_WORKER_IDLE];
			u = v[i].a.t[POPMON_ST_USEFUL];
		}
		free(v);
		if (!found)
			return DLB_ERR_NOPROC_;
	}
	if (mpi_time)
		*mpi_time = m / 1e9;
	if (useful_time)
		*useful_time = u / 1e9;
	return DLB_SUCCESS_;
}

int DLB_TALP_GetNodeTimes(const char *name, struct dlb_node_times_compat *list, int *nelems, int max_len)
{
	struct nproc *v;
	int n = node_procs(name, &v), k = 0;
	if (n < 0)
		return DLB_ERR_NOMEM_;
	for (int i = 0; i < n; i++) {
		if (!v[i].has || !list || k >= max_len)
			continue;
		list[k].pid = v[i].pid;
		list[k].mpi_time = (int64_t)(v[i].a.t[POPMON_ST_MPI] + v[i].a.t[POPMON_ST_MPI_WORKER_IDLE]);
		list[k].useful_time = (int64_t)v[i].a.t[POPMON_ST_USEFUL];
		k++;
	}
	free(v);
	if (nelems)
		*nelems = k;
	return DLB_SUCCESS_;
}

int DLB_TALP_QueryPOPNodeMetrics(const char *name, struct dlb_node_metrics_compat *metrics)
{
	double s[POPMON_TS_N];
	int node_id = 0;
	int rc = node_sums(name, s, &node_id);
	if (rc != DLB_SUCCESS_)
		return rc;
	struct popmon_metrics m;
	memset(&m, 0, sizeof m);
	popmon_talp_compute(s, &m);
	if (metrics)
		popmon_talp_fill_node(s, &m, name ? name : "Global", node_id, metrics);
	return DLB_SUCCESS_;
}
