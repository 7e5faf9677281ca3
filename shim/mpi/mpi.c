/* mpi.c: MPI start-up and finalize.
 *
 * Start-up registers the rank in the session folder of `popmon run` (when
 * there is one) and checks which MPI calls reach the library.
 *
 * Finalize never enters a collective that some ranks will not join (a rank
 * whose launcher did not pass LD_PRELOAD on calls PMPI_Finalize directly):
 * a point-to-point handshake with rank 0 first (READY to every rank, HELLO
 * back from every rank that carries the library, VERDICT to every rank)
 * decides who takes part, and carries the clock offsets that align the
 * Global region across ranks. Then node discovery, the region-name union,
 * the gather of per-process records to rank 0 and the call-profile
 * reductions run as collectives (O(log P) depth in both Open MPI and MPICH)
 * on MPI_COMM_WORLD, or on a communicator of the ranks present. Only PMPI
 * entry points are used, after the application's last communication, so
 * its own communicators, tags and call counts are untouched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounts.h"
#include "mpi/owncost.h"
#include "barrier.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "dispatch.h"
#include "gpu.h"
#include "intercept.h"
#include "lewi.h"
#include "live.h"
#include "mpi/mpi.h"
#include "mpi/mpidata.h"
#include "mpi/trace.h"
#include "ompt.h"
#include "output.h"
#include "reduce.h"
#include "regions.h"
#include "talp_api.h"

static const char *thread_level_name(int provided)
{
	switch (provided) {
	case MPI_THREAD_SINGLE: return "single";
	case MPI_THREAD_FUNNELED: return "funneled";
	case MPI_THREAD_SERIALIZED: return "serialized";
	case MPI_THREAD_MULTIPLE: return "multiple";
	default: return "single";
	}
}

/* ------------------------------------------------------------------ registry */

/* Under `popmon run`, every rank that carries the library registers in the
 * session folder right after MPI_Init: ranks/KEY.SIZE.RANK holding
 * "HOST PID REALTIME_NS". At finalize, the registry says whether a missing
 * rank may still come (it carries the library) or never will, and whether
 * rank 0 carries the library at all. KEY is the launcher's job id where it
 * has one; entries are removed at the end of finalize and ignored when
 * they are older than two minutes around this rank's own start. */
static char reg_dir[PATH_MAX], reg_key[128], reg_self[PATH_MAX];
static int64_t reg_time;

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void registry_key(char *out, size_t n)
{
	const char *job = getenv("PMIX_NAMESPACE");
	if (!job || !*job)
		job = getenv("OMPI_MCA_ess_base_jobid");
	char slurm[96];
	if ((!job || !*job) && getenv("SLURM_JOB_ID")) {
		snprintf(slurm, sizeof slurm, "%.40s_%.40s", getenv("SLURM_JOB_ID"),
			 getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "0");
		job = slurm;
	}
	if (!job || !*job)
		job = "job";
	size_t i = 0;
	for (; job[i] && i + 1 < n; i++) {
		char c = job[i];
		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ? c : '_';
	}
	out[i] = '\0';
}

static void registry_path(char *out, size_t n, int rank)
{
	snprintf(out, n, "%.3900s/%.100s.%d.%d", reg_dir, reg_key, popmon_proc.size, rank);
}

static void registry_join(void)
{
	const char *session = getenv("POPMON_SESSION");
	if (!session || !*session)
		return;
	snprintf(reg_dir, sizeof reg_dir, "%.3800s/ranks", session);
	if (mkdir(reg_dir, 0700) != 0 && errno != EEXIST) {
		reg_dir[0] = '\0';
		return;
	}
	registry_key(reg_key, sizeof reg_key);
	registry_path(reg_self, sizeof reg_self, popmon_proc.rank);
	reg_time = realtime_ns();
	int fd = open(reg_self, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		reg_dir[0] = reg_self[0] = '\0';
		return;
	}
	char host[64] = "host", line[160];
	gethostname(host, sizeof host - 1);
	int len = snprintf(line, sizeof line, "%.63s %d %lld\n", host, popmon_proc.pid, (long long)reg_time);
	if (write(fd, line, (size_t)len) != len)
		reg_self[0] = '\0';
	close(fd);
}

/* Whether the registry can be read here: this rank's own entry is there. */
static int registry_usable(void)
{
	struct stat st;
	return reg_self[0] && stat(reg_self, &st) == 0;
}

/* Whether rank r registered in this job: an entry written within two
 * minutes of this rank's start, by a process still alive when it is on
 * this host. */
static int registry_has(int r)
{
	if (!reg_dir[0])
		return 0;
	char path[PATH_MAX], line[160] = "", host[64] = "host", theirs[64];
	registry_path(path, sizeof path, r);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, line, sizeof line - 1);
	close(fd);
	line[k > 0 ? k : 0] = '\0';
	int pid = 0;
	long long t = 0;
	if (sscanf(line, "%63s %d %lld", theirs, &pid, &t) != 3)
		return 0;
	if (t < reg_time - 120000000000LL || t > reg_time + 120000000000LL)
		return 0;
	gethostname(host, sizeof host - 1);
	if (strcmp(host, theirs) == 0 && pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	return 1;
}

static void registry_leave(void)
{
	if (reg_self[0])
		unlink(reg_self);
	reg_self[0] = '\0';
}

static void pause_briefly(void)
{
	struct timespec ts = {0, 200000}; /* 0.2 ms: the wait costs no CPU */
	nanosleep(&ts, NULL);
}

/* Without a session folder (popmon exec, a library preloaded by hand) rank
 * 0 cannot read a registry, so the ranks that carry the library say so at
 * MPI_Init: each sends rank 0 one empty message, tag MPI_TAG_UB, on
 * MPI_COMM_WORLD, and rank 0 posts one receive per rank, from that rank, in
 * its own MPI_Init hook, before the program's first call there. MPI matches
 * a message with the earliest posted receive, so the program never sees one
 * (nor a probe of it). Rank 0 in turn sends every other rank one empty
 * message, same tag ("rank 0 carries the library"; sent and freed, no
 * wait), which each carrying rank receives into a receive it posted in its
 * own MPI_Init hook: so a rank knows at finalize whether rank 0 carries the
 * library (and will gather its records, however late it comes) or not (the
 * job's rank 0 was started without popmon: `mpirun -np 1 ./app : -np 1
 * popmon exec -- ./app`), where waiting for it would hang. Nothing waits in
 * MPI_Init. A receive completes at its rank's next MPI call, after which it
 * costs nothing: only the receives of ranks without the library stay
 * posted until finalize. At finalize rank 0 waits for the ranks that
 * announced themselves, however late, and 3 s for the others, as with a
 * registry (docs/library.md, "Finalize"); a rank that gave up waiting for
 * rank 0's message sends its HELLO marked so, which ends rank 0's wait for
 * it. Under popmon run nothing is sent: the registry says the same. */
static MPI_Request *announce_req; /* rank 0: a receive per rank; NULL when not used */
static char announce_buf, carries_buf;
static MPI_Request carries_req = MPI_REQUEST_NULL; /* other ranks: rank 0's message */
static int announcing, rank0_said;                 /* other ranks */

static int announce_tag(void)
{
	int *ub = NULL, flag = 0;
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	return flag && ub && *ub >= 32767 ? *ub : 32767;
}

/* Other ranks: whether rank 0's message has come (so far). */
static int rank0_carries(void)
{
	if (!rank0_said && carries_req != MPI_REQUEST_NULL) {
		int done = 0;
		PMPI_Test(&carries_req, &done, MPI_STATUS_IGNORE);
		rank0_said = done;
	}
	return rank0_said;
}

static void announce_init(void)
{
	const char *session = getenv("POPMON_SESSION");
	int size = popmon_proc.size;
	if ((session && *session) || size <= 1)
		return;
	int tag = announce_tag();
	if (popmon_proc.rank != 0) {
		/* The receive of rank 0's message first: posted before the
		 * program's first call, it is the one the message matches. */
		if (PMPI_Irecv(&carries_buf, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &carries_req) != MPI_SUCCESS)
			return;
		announcing = 1;
		MPI_Request r;
		if (PMPI_Isend(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r) == MPI_SUCCESS)
			PMPI_Request_free(&r);
		return;
	}
	announce_req = malloc(sizeof *announce_req * (size_t)size);
	if (!announce_req)
		return;
	announce_req[0] = MPI_REQUEST_NULL;
	for (int k = 1; k < size; k++)
		if (PMPI_Irecv(&announce_buf, 0, MPI_BYTE, k, tag, MPI_COMM_WORLD, &announce_req[k]) != MPI_SUCCESS)
			announce_req[k] = MPI_REQUEST_NULL;
	for (int k = 1; k < size; k++) {
		MPI_Request r;
		if (PMPI_Isend(NULL, 0, MPI_BYTE, k, tag, MPI_COMM_WORLD, &r) == MPI_SUCCESS)
			PMPI_Request_free(&r);
	}
}

/* Rank 0: whether rank k announced itself (so far). */
static int announced(int k)
{
	if (!announce_req)
		return 0;
	if (announce_req[k] == MPI_REQUEST_NULL)
		return 1;
	int done = 0;
	PMPI_Test(&announce_req[k], &done, MPI_STATUS_IGNORE);
	return done;
}

/* Rank 0, at the end of the handshake: the receives of ranks that never
 * announced themselves are cancelled. Other ranks: the receive of rank
 * 0's message that never came. */
static void announce_end(void)
{
	if (carries_req != MPI_REQUEST_NULL) {
		PMPI_Cancel(&carries_req);
		PMPI_Wait(&carries_req, MPI_STATUS_IGNORE);
	}
	if (!announce_req)
		return;
	for (int k = 1; k < popmon_proc.size; k++) {
		if (announce_req[k] == MPI_REQUEST_NULL)
			continue;
		PMPI_Cancel(&announce_req[k]);
		PMPI_Wait(&announce_req[k], MPI_STATUS_IGNORE);
	}
	free(announce_req);
	announce_req = NULL;
}

/* srun with an --mpi= that the program's MPI does not speak starts every
 * task as a one-process MPI job: MPI_COMM_WORLD has 1 process while Slurm
 * says the step has N tasks. Writes why into why and returns 1 then. */
static int slurm_singleton(char *why, size_t n)
{
	const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
	if (!tasks || !*tasks)
		tasks = getenv("SLURM_NTASKS");
	long nt = tasks ? strtol(tasks, NULL, 10) : 0;
	if (popmon_proc.size != 1 || nt <= 1 || !getenv("SLURM_STEP_ID"))
		return 0;
#if defined(OPEN_MPI)
	const char *mpi = "Open MPI", *fix = "--mpi=pmix";
#elif defined(MPICH_NUMVERSION)
	const char *mpi = "MPICH", *fix = "--mpi=pmi2";
#else
	const char *mpi = "its MPI", *fix = "--mpi=pmix (Open MPI) or --mpi=pmi2 (MPICH)";
#endif
	snprintf(why, n,
		 "srun started each of the step's %ld tasks as its own one-process MPI job (MPI_COMM_WORLD has 1 "
		 "process): its --mpi does not match the program's MPI, %s; launch it with srun %s "
		 "(srun --mpi=list shows the choices); no measurement written",
		 nt, mpi, fix);
	return 1;
}

/* Open MPI under srun needs PMIx (--mpi=pmix): without it (--mpi=none,
 * pmi2) its MPI_Init aborts with "OMPI was not built with SLURM's PMI
 * support", which blames the installation; popmon says the fix first. */
/* The tick MPI_Init was entered (the trace's MPI_Init record). */
static uint64_t init_enter;

void popmon_mpi_pre_init_hook(void)
{
	popmon_ensure_init(); /* MPI_Init from a constructor that ran before libpopmon's */
	popmon_wake(POPMON_WAKE_MPI);        /* an MPI program named like a utility (`test`, `seq`) */
	init_enter = popmon_now();
#if defined(OPEN_MPI)
	if (popmon_proc.inert || popmon_proc.mpi_initialized)
		return;
	const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
	if (!getenv("SLURM_STEP_ID") || !tasks || strtol(tasks, NULL, 10) <= 1 || getenv("PMIX_RANK") ||
	    getenv("OMPI_COMM_WORLD_SIZE"))
		return;
	char why[512];
	snprintf(why, sizeof why,
		 "srun started the step's %ld tasks without PMIx, which Open MPI needs to start them as one job: "
		 "its --mpi does not match the program's MPI, Open MPI; launch it with srun --mpi=pmix "
		 "(srun --mpi=list shows the choices); no measurement written",
		 strtol(tasks, NULL, 10));
	popmon_proc.finalized = 1; /* nor a one-process file at exit */
	popmon_write_unmeasured(why);
#endif
}

void popmon_mpi_init_hook(void)
{
	if (popmon_proc.inert || popmon_proc.mpi_initialized)
		return;
	popmon_proc.mpi_initialized = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &popmon_proc.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &popmon_proc.size);
	char why[512];
	if (slurm_singleton(why, sizeof why)) {
		/* N one-process reports would pass for the job's: none, and one
		 * sentence (task 0, or popmon run for all). */
		popmon_proc.finalized = 1;
		popmon_write_unmeasured(why);
		return;
	}
	/* Tracing (POPMON_TRACE=1): the file, a clock synchronisation (a
	 * barrier, before Global starts). */
	popmon_trace_init(init_enter);
	if (popmon_trace_on)
		popmon_bytes_on = 1; /* the trace's bytes come from the byte accounting */
	/* popmon's own start-up (the session registry, the check of where MPI
	 * calls go: a few ms) is part of MPI_Init, not of the application's
	 * run. */
	registry_join();
	announce_init();
	popmon_talp_mpi_init();
	popmon_intercept_check();
	popmon_owncost_calibrate(); /* popmon's own cost per call (owncost.h) */
	popmon_lewi_start();        /* --lewi: this rank's CPUs in the registry */
	popmon_barrier_mpi_init();  /* DLB's interface in use: the node barrier */
	/* The Global region measures the run between MPI_Init and MPI_Finalize,
	 * as TALP does: from here, where MPI_Init returns to the program. */
	popmon_proc.init_tick = popmon_now();
	popmon_regions_restart_global(popmon_proc.init_tick);
	popmon_live_mpi_init(popmon_proc.rank, popmon_proc.size, popmon_proc.init_tick);
}

/* ------------------------------------------------------------------ handshake */

/* Tags of the finalize handshake on MPI_COMM_WORLD, after the application's
 * last message (MPI requires its communication to be complete before
 * MPI_Finalize, so nothing of the application's can match them). */
enum { TAG_READY = 32760, TAG_HELLO, TAG_VERDICT, TAG_MEMBERS, TAG_REASON };

enum { V_COMPLETE = 1, V_PARTIAL, V_EXCLUDED };

struct hello {
	int64_t sent_ns; /* the sender's clock (CLOCK_MONOTONIC) */
	uint64_t boot;   /* hash of the sender's boot id: same kernel clock */
	int64_t rank;
	int64_t gave_up; /* 1: the sender gave up waiting for rank 0 (popmon exec) */
};

struct verdict {
	int64_t hello_recv_ns; /* rank 0's clock when the hello arrived */
	int64_t sent_ns;       /* rank 0's clock when this was sent */
	int64_t status;        /* V_* */
	int64_t present;       /* ranks taking part */
	int64_t same_clock;    /* same boot as rank 0: one CLOCK_MONOTONIC */
};

/* Who takes part in the finalize collectives, and this rank's clock offset
 * to rank 0 (add it to a CLOCK_MONOTONIC time to get rank 0's). */
struct handshake {
	int status;            /* V_*, or 0 when this rank gives up (no rank 0) */
	int present;
	unsigned char *members; /* V_PARTIAL: one byte per world rank */
	int64_t offset_ns;
	char missing[256];     /* "2-3,7" (rank 0) */
	char gave_up[256];     /* the missing ranks that gave up waiting for rank 0 (rank 0) */
	int registry_known;    /* rank 0: whether the registry told who carries the library */
	int say_why;           /* another rank that gave up without a session: it says why */
};

static uint64_t boot_hash(void)
{
	static uint64_t h;
	if (h)
		return h;
	char id[64] = "";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, id, sizeof id - 1);
		id[k > 0 ? k : 0] = '\0';
		close(fd);
	}
	h = 1469598103934665603ull;
	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ? h : 1;
}

/* Appends rank r to a compact list ("2-3,7") of missing ranks. */
static void ranges_add(char *out, size_t n, int r, int *last, int *start)
{
	if (*last >= 0 && r == *last + 1) {
		*last = r;
		return;
	}
	size_t len = strlen(out);
	if (*last >= 0 && len + 24 < n) {
		if (*start != *last)
			snprintf(out + len, n - len, "-%d", *last);
		len = strlen(out);
	}
	if (len + 16 < n)
		snprintf(out + len, n - len, "%s%d", len ? "," : "", r);
	else if (len + 5 < n && !strstr(out, "..."))
		snprintf(out + len, n - len, ",...");
	*start = *last = r;
}

static void ranges_end(char *out, size_t n, int last, int start)
{
	size_t len = strlen(out);
	if (last >= 0 && start != last && len + 16 < n && !strstr(out, "..."))
		snprintf(out + len, n - len, "-%d", last);
}

/* How long another rank waits for READY at finalize when it may never
 * come, under `popmon run` (rank 0 did not register, or this rank could
 * not), and how long a rank without a session waits for rank 0's message
 * (sent from rank 0's MPI_Init hook: its coming does not depend on when
 * rank 0 reaches finalize) before it concludes that rank 0 does not carry
 * the library. Shared memory delivers that message at once; a transport
 * that needs rank 0's progress to send it (Open MPI's TCP) sends it at
 * rank 0's next MPI call: a rank 0 that makes none between MPI_Init and a
 * finalize over 10 s after this rank's leaves this rank giving up. Rank 0,
 * which saw its announcement, then gets its HELLO marked "gave up"
 * (hello_gave_up) and counts it missing, instead of waiting for it
 * forever (docs/library.md; popmon run has no such case). MPICH 4.0.2
 * over UCX's TCP can still hang in its own PMPI_Finalize on rank 0 then:
 * UCX keeps flushing that undelivered message to a rank already waiting
 * in the process manager's barrier; nothing here can take it back. */
static const int64_t UNREGISTERED_WAIT_NS = 3000000000LL, CARRIES_WAIT_NS = 10000000000LL;

/* Rank 0's side: READY to every rank that may carry the library, HELLO
 * back from those that do, then VERDICT to them (a rank that arrives after
 * the decision finds its verdict waiting). Under `popmon run` the registry
 * says which ranks carry the library: only they are contacted (a rank
 * without it, already in PMPI_Finalize, gets no message: some MPIs hang
 * when one arrives there) and waited for, however late; a rank that
 * registers during the first 3 s is contacted then (the wait ends as soon
 * as every rank has come). Without a registry (popmon exec, a library
 * preloaded by hand) the ranks that announced themselves at MPI_Init
 * (announce_init) play its part; when neither can be had (out of memory)
 * every rank is contacted and waited for; with a session whose registry
 * rank 0 cannot read, for as long as HELLOs keep coming (60 s after the
 * last). A HELLO marked "gave up" (it may come before rank 0 posts its
 * receive: that one then matches it) counts its rank missing and gets no
 * VERDICT; READY is sent and freed, so a rank that never receives it
 * holds nothing up. */
static void handshake_root(struct handshake *hs, int size)
{
	MPI_Comm w = MPI_COMM_WORLD;
	int64_t *arrived = calloc((size_t)size, sizeof *arrived);
	struct hello *hellos = calloc((size_t)size, sizeof *hellos);
	MPI_Request *req = calloc((size_t)size, sizeof *req);
	unsigned char *contacted = calloc((size_t)size, 1);
	unsigned char *gave_up = calloc((size_t)size, 1);
	if (!arrived || !hellos || !req || !contacted || !gave_up) {
		/* Cannot track the ranks: the collectives alone (as before). */
		hs->status = V_COMPLETE;
		goto out;
	}
	int usable = registry_usable();
	int session = getenv("POPMON_SESSION") && *getenv("POPMON_SESSION");
	hs->registry_known = usable;
	/* Who carries the library: the registry's entries, or the ranks that
	 * announced themselves; either way the others get 3 s. */
	int selective = usable || announce_req != NULL;
	static const char ready = 1; /* sent and freed: it outlives this call */
	for (int k = 0; k < size; k++)
		req[k] = MPI_REQUEST_NULL;
	int pending = 0, came = 0, quit = 0;
	/* Contacts the ranks that may carry the library (registered ones when
	 * the registry is usable). */
	int64_t now = (int64_t)popmon_monotonic_ns();
	int64_t grace_end = now + 3000000000LL, last_progress = now, next_check = now;
	for (;;) {
		if (now >= next_check && (!selective || now <= grace_end)) {
			for (int k = 1; k < size; k++) {
				if (contacted[k] || (selective && !(usable ? registry_has(k) : announced(k))))
					continue;
				contacted[k] = 1;
				pending++;
				/* Sent and freed: a rank that gave up never
				 * receives it, which must not hold rank 0. */
				MPI_Request rr;
				if (PMPI_Isend(&ready, 1, MPI_CHAR, k, TAG_READY, w, &rr) == MPI_SUCCESS)
					PMPI_Request_free(&rr);
				PMPI_Irecv(&hellos[k], (int)sizeof hellos[k], MPI_BYTE, k, TAG_HELLO, w, &req[k]);
			}
			next_check = selective ? now + 100000000LL : INT64_MAX; /* look again every 0.1 s */
		}
		int which = MPI_UNDEFINED, flag = 0;
		if (pending > 0)
			PMPI_Testany(size, req, &which, &flag, MPI_STATUS_IGNORE);
		now = (int64_t)popmon_monotonic_ns();
		if (flag && which != MPI_UNDEFINED) {
			last_progress = now;
			pending--;
			if (hellos[which].gave_up) {
				/* It gave up waiting for rank 0 (its HELLO says
				 * so): missing, and it waits for no VERDICT. */
				gave_up[which] = 1;
				quit++;
			} else {
				arrived[which] = now;
				came++;
			}
			if (came + quit == size - 1)
				break; /* every rank has come or given up */
			continue;
		}
		if (pending == 0 && (!selective || now > grace_end))
			break; /* every rank that may come has come */
		if (!selective && session && now - last_progress > 60000000000LL)
			break; /* a broken session folder: no HELLO for 60 s */
		pause_briefly();
	}
	announce_end();
	int present = 1, last = -1, start = -1, glast = -1, gstart = -1;
	for (int k = 1; k < size; k++) {
		if (arrived[k]) {
			present++;
			continue;
		}
		if (req[k] != MPI_REQUEST_NULL) {
			PMPI_Cancel(&req[k]);
			PMPI_Wait(&req[k], MPI_STATUS_IGNORE);
		}
		ranges_add(hs->missing, sizeof hs->missing, k, &last, &start);
		if (gave_up[k])
			ranges_add(hs->gave_up, sizeof hs->gave_up, k, &glast, &gstart);
	}
	ranges_end(hs->missing, sizeof hs->missing, last, start);
	ranges_end(hs->gave_up, sizeof hs->gave_up, glast, gstart);
	hs->present = present;
	hs->status = present == size ? V_COMPLETE : V_PARTIAL;
	if (hs->status == V_PARTIAL) {
		hs->members = calloc((size_t)size, 1);
		if (hs->members) {
			hs->members[0] = 1;
			for (int k = 1; k < size; k++)
				hs->members[k] = arrived[k] != 0;
		}
	}
	for (int k = 1; k < size; k++) {
		if (!contacted[k] || gave_up[k])
			continue; /* a rank that gave up is in PMPI_Finalize: nothing for it */
		int st = hs->status;
		if (!arrived[k] || (st == V_PARTIAL && !hs->members))
			st = V_EXCLUDED;
		struct verdict v = {.hello_recv_ns = arrived[k], .status = st, .present = present,
				    .same_clock = arrived[k] && hellos[k].boot == boot_hash()};
		v.sent_ns = (int64_t)popmon_monotonic_ns();
		PMPI_Send(&v, (int)sizeof v, MPI_BYTE, k, TAG_VERDICT, w);
		if (v.status == V_PARTIAL)
			PMPI_Send(hs->members, size, MPI_BYTE, k, TAG_MEMBERS, w);
	}
	if (hs->status == V_PARTIAL && !hs->members)
		hs->status = 0; /* out of memory: measure nothing rather than hang */
out:
	announce_end(); /* no receive of popmon's left posted into PMPI_Finalize */
	free(arrived);
	free(hellos);
	free(req);
	free(contacted);
	free(gave_up);
}

/* A rank without a session that gives up waiting for rank 0 still sends
 * it a HELLO, marked "gave up" (sent and freed: it waits for nothing).
 * Rank 0's message may merely be late (over a network it can leave rank 0
 * only at rank 0's next MPI call), and a rank 0 that carries the library
 * and saw this rank's announcement waits for its HELLO however late: this
 * one ends that wait with the rank counted missing. A rank 0 without the
 * library gets it unreceived, as it does the announcement. */
static void hello_gave_up(void)
{
	static struct hello h; /* outlives the freed send */
	h.boot = boot_hash();
	h.rank = popmon_proc.rank;
	h.gave_up = 1;
	h.sent_ns = (int64_t)popmon_monotonic_ns();
	MPI_Request r;
	if (PMPI_Isend(&h, (int)sizeof h, MPI_BYTE, 0, TAG_HELLO, MPI_COMM_WORLD, &r) == MPI_SUCCESS)
		PMPI_Request_free(&r);
}

/* Another rank's side: wait for rank 0's READY, HELLO, wait for the
 * VERDICT (rank 0 sends it to every rank it contacted). The wait for READY
 * is bounded when it may never come: under `popmon run` (3 s) when rank 0
 * did not register (it does not carry the library) or this rank could not
 * register (rank 0 does not see it); under `popmon exec` (10 s) while rank
 * 0's message saying that it carries the library has not come (then it
 * sends rank 0 a HELLO marked "gave up": hello_gave_up). Once that
 * message is here, READY is waited for however late rank 0 comes. */
static void handshake_rank(struct handshake *hs, int size)
{
	MPI_Comm w = MPI_COMM_WORLD;
	char ready = 0;
	MPI_Request r;
	PMPI_Irecv(&ready, 1, MPI_CHAR, 0, TAG_READY, w, &r);
	int session = getenv("POPMON_SESSION") && *getenv("POPMON_SESSION");
	int bounded = session ? !registry_usable() || !registry_has(0) : announcing && !rank0_carries();
	int64_t give_up = (int64_t)popmon_monotonic_ns() + (session ? UNREGISTERED_WAIT_NS : CARRIES_WAIT_NS);
	int done = 0;
	for (;;) {
		PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
		if (done)
			break;
		if (bounded && !session && rank0_carries())
			bounded = 0; /* rank 0 carries the library: it comes, however late */
		if (bounded && (int64_t)popmon_monotonic_ns() > give_up) {
			MPI_Status st;
			int cancelled = 1;
			PMPI_Cancel(&r);
			PMPI_Wait(&r, &st);
			PMPI_Test_cancelled(&st, &cancelled);
			if (!cancelled)
				break; /* READY came meanwhile: the normal path */
			announce_end();
			hs->status = 0;
			hs->say_why = !session; /* popmon run says it for every rank */
			if (!session)
				hello_gave_up();
			return;
		}
		pause_briefly();
	}
	announce_end();
	struct verdict v;
	/* Poll rather than block: a busy-waiting MPI would take a core from
	 * the ranks still computing. */
	PMPI_Irecv(&v, (int)sizeof v, MPI_BYTE, 0, TAG_VERDICT, w, &r);
	struct hello h = {.boot = boot_hash(), .rank = popmon_proc.rank};
	h.sent_ns = (int64_t)popmon_monotonic_ns();
	PMPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_HELLO, w);
	for (;;) {
		PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
		if (done)
			break;
		pause_briefly();
	}
	int64_t got = (int64_t)popmon_monotonic_ns();
	hs->status = (int)v.status;
	hs->present = (int)v.present;
	/* NTP-style: hello k->0 then verdict 0->k; half the delay asymmetry is
	 * the error, rank 0's waiting for other ranks cancels out. */
	if (v.hello_recv_ns && !v.same_clock)
		hs->offset_ns = ((v.hello_recv_ns - h.sent_ns) - (got - v.sent_ns)) / 2;
	if (hs->status == V_PARTIAL) {
		hs->members = calloc((size_t)size, 1);
		if (hs->members)
			PMPI_Recv(hs->members, size, MPI_BYTE, 0, TAG_MEMBERS, w, MPI_STATUS_IGNORE);
		else
			hs->status = 0;
	}
}

static void handshake(struct handshake *hs)
{
	memset(hs, 0, sizeof *hs);
	int size = popmon_proc.size;
	if (size <= 1) {
		hs->status = V_COMPLETE;
		hs->present = 1;
		return;
	}
	if (popmon_proc.rank == 0)
		handshake_root(hs, size);
	else
		handshake_rank(hs, size);
}

/* Why ranks are missing: those that gave up waiting for rank 0 (their
 * HELLO said so) and the others, which the library did not reach. */
static void incomplete_reason(const struct handshake *hs, char *out, size_t n)
{
	int size = popmon_proc.size;
	const char *quit = hs->gave_up;
	const char *quit_why =
		"gave up waiting for rank 0 at MPI_Finalize: rank 0's message that it carries the library, sent at its "
		"MPI_Init, had not come after 10 s (over a network it can leave rank 0 only at rank 0's next MPI call, "
		"and rank 0 made none before reaching MPI_Finalize later; popmon run has no such wait)";
	if (*quit && strcmp(quit, hs->missing) == 0) {
		snprintf(out, n, "rank%s %s of %d %s", strpbrk(quit, ",-") ? "s" : "", quit, size, quit_why);
		return;
	}
	int len = snprintf(out, n,
			   "the measurement library did not reach rank%s %s of %d: their processes ran "
			   "without LD_PRELOAD (a launcher that does not pass the environment on to other "
			   "nodes, or a library file that is not visible there)",
			   strpbrk(hs->missing, ",-") ? "s" : "", hs->missing, size);
	if (*quit && len > 0 && (size_t)len < n)
		snprintf(out + len, n - (size_t)len, "; of these, rank%s %s %s", strpbrk(quit, ",-") ? "s" : "", quit,
			 quit_why);
}

/* Appends names (NUL-separated) to a growing buffer. */
struct namebuf {
	char *p;
	int len, cap;
};

static int nb_add(struct namebuf *b, const char *s)
{
	int n = (int)strlen(s) + 1;
	if (b->len + n > b->cap) {
		int cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n)
			cap *= 2;
		char *q = realloc(b->p, (size_t)cap);
		if (!q)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, (size_t)n);
	b->len += n;
	return 0;
}

static int nb_has(const struct namebuf *b, const char *s)
{
	for (int i = 0; i < b->len; i += (int)strlen(b->p + i) + 1)
		if (strcmp(b->p + i, s) == 0)
			return 1;
	return 0;
}

/* Region names of this process worth reporting: Global and visited ones. */
static int local_names(struct namebuf *b)
{
	int n = popmon_region_count();
	for (int r = 0; r < n; r++) {
		const char *name;
		uint64_t visits, elapsed;
		struct popmon_accounts a;
		if (popmon_region_get(r, &name, &visits, &elapsed, &a) || r == 0)
			if (nb_add(b, name) != 0)
				return -1;
	}
	return 0;
}

/* Makes every rank hold the union of all ranks' region names, in rank 0's
 * order followed by other ranks' extras in rank order. */
static int union_names(MPI_Comm comm, int rank, int size, struct namebuf *all)
{
	struct namebuf mine = {0}, extra = {0};
	int rc = -1;
	int *counts = NULL, *displs = NULL;
	char *gathered = NULL;
	if (local_names(&mine) != 0)
		goto out;
	int len = rank == 0 ? mine.len : 0;
	PMPI_Bcast(&len, 1, MPI_INT, 0, comm);
	if (rank == 0) {
		*all = mine;
		mine.p = NULL;
	} else {
		all->p = malloc((size_t)len + 1);
		all->len = all->cap = len;
		if (!all->p)
			goto out; /* the Bcast below would then be unmatched: abort path */
	}
	PMPI_Bcast(all->p, len, MPI_CHAR, 0, comm);
	if (rank != 0)
		for (int i = 0; i < mine.len; i += (int)strlen(mine.p + i) + 1)
			if (!nb_has(all, mine.p + i) && nb_add(&extra, mine.p + i) != 0)
				goto out;
	int elen = extra.len, maxlen = 0;
	PMPI_Allreduce(&elen, &maxlen, 1, MPI_INT, MPI_MAX, comm);
	if (maxlen > 0) {
		if (rank == 0) {
			counts = calloc((size_t)size, sizeof *counts);
			displs = calloc((size_t)size, sizeof *displs);
		}
		PMPI_Gather(&elen, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
		int total = 0;
		if (rank == 0) {
			for (int i = 0; i < size; i++) {
				displs[i] = total;
				total += counts[i];
			}
			gathered = malloc((size_t)total + 1);
		}
		PMPI_Gatherv(extra.p, elen, MPI_CHAR, gathered, counts, displs, MPI_CHAR, 0, comm);
		if (rank == 0)
			for (int i = 0; i < total; i += (int)strlen(gathered + i) + 1)
				if (!nb_has(all, gathered + i))
					nb_add(all, gathered + i);
		int flen = rank == 0 ? all->len : 0;
		PMPI_Bcast(&flen, 1, MPI_INT, 0, comm);
		if (rank != 0) {
			char *q = realloc(all->p, (size_t)flen + 1);
			if (!q)
				goto out;
			all->p = q;
			all->len = all->cap = flen;
		}
		PMPI_Bcast(all->p, flen, MPI_CHAR, 0, comm);
	}
	rc = 0;
out:
	free(mine.p);
	free(extra.p);
	free(counts);
	free(displs);
	free(gathered);
	return rc;
}

/* The run's "counters" object from every process's: available when every
 * process measured them (rdpmc when all did so), else the first failing
 * process's reason, with how many processes failed when not all did. */
static void counters_set(struct popmon_run *run, int64_t mode, int64_t failed, int all_rdpmc, int64_t first_rank,
			 const char *reason, int size)
{
	static const char *const modes[] = {"off", "auto", "on"};
	run->ctr_mode = modes[mode >= 0 && mode <= 2 ? mode : 1];
	run->ctr_available = failed == 0;
	run->ctr_method = failed ? "" : all_rdpmc ? "rdpmc" : "read";
	run->ctr_reason[0] = '\0';
	if (!failed)
		return;
	char why[sizeof ((struct popmon_proc_rec *)0)->ctr_reason + 1];
	snprintf(why, sizeof why, "%.*s", (int)sizeof why - 1, reason);
	if (failed < size)
		snprintf(run->ctr_reason, sizeof run->ctr_reason, "%s (rank %lld; %lld of %d processes)", why,
			 (long long)first_rank, (long long)failed, size);
	else
		snprintf(run->ctr_reason, sizeof run->ctr_reason, "%s", why);
}

static void counters_of_run(struct popmon_run *run, const struct popmon_proc_rec *procs, int size)
{
	int failed = 0, first = -1, all_rdpmc = 1;
	for (int p = 0; p < size; p++) {
		if (procs[p].ctr_method == 0) {
			failed++;
			if (first < 0)
				first = p;
		}
		all_rdpmc &= procs[p].ctr_method == 2;
	}
	counters_set(run, procs[0].ctr_mode, failed, all_rdpmc, failed ? procs[first].rank : 0,
		     failed ? procs[first].ctr_reason : "", size);
}

/* ------------------------------------------------------------------ summary form */

/* The per-process record limit: POPMON_MAX_PROCESS_RECORDS (rank 0's;
 * default 4096). Above it, finalize reduces instead of gathering. */
static int record_limit(MPI_Comm comm, int rank)
{
	int limit = 4096;
	if (rank == 0) {
		limit = (int)popmon_env_int("POPMON_MAX_PROCESS_RECORDS", 4096, 0, INT_MAX);
	}
	PMPI_Bcast(&limit, 1, MPI_INT, 0, comm);
	return limit;
}

static void sum_op_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const struct popmon_region_sum *a = in;
	struct popmon_region_sum *b = inout;
	for (int i = 0; i < *len; i++)
		popmon_sum_combine(&a[i], &b[i]);
}

/* The run's facts that the full form takes from every process's record,
 * reduced: node count, CPUs, counters, interception. */
struct run_facts {
	int64_t nodes, cpus, ctr_failed, ctr_rdpmc, bypassed; /* sums */
	int64_t lewi, lewi_lent_ns, lewi_borrowed_ns;         /* sums (LeWI's processes) */
	int64_t ctr_first, bypass_first;                      /* world ranks (rank 0) */
	char ctr_reason[200], bypass_reason[600];
};

/* This process's share of the run's facts, as one more summary in the
 * regions' reduction (no collective of its own): sums of the leader flag,
 * CPUs, counter failures, rdpmc, bypasses and LeWI's CPU time; the first failing process's
 * rank in comm (world order) as the minimum of the useful (counters) and
 * MPI (interception) extremes. */
static void facts_share(struct popmon_region_sum *s, const struct popmon_proc_rec *me, int is_leader, int crank)
{
	popmon_sum_init(s);
	s->sum[0] = is_leader;
	s->sum[1] = me->cpus;
	s->sum[2] = me->ctr_method == 0;
	s->sum[3] = me->ctr_method == 2;
	s->sum[4] = me->bypass_kind != 0;
	s->sum[5] = me->lewi != 0;
	s->sum[6] = me->lewi ? me->lewi_lent_ns : 0;
	s->sum[7] = me->lewi ? me->lewi_borrowed_ns : 0;
	if (me->ctr_method == 0)
		s->useful.min = s->useful.max = s->useful.min_rank = s->useful.max_rank = crank;
	if (me->bypass_kind)
		s->mpi.min = s->mpi.max = s->mpi.min_rank = s->mpi.max_rank = crank;
}

/* The run's facts from the reduced shares; the first failing process
 * sends its world rank and reason to rank 0 point to point (every rank
 * knows whether a message comes). */
static void facts_of(MPI_Comm comm, const struct popmon_region_sum *g, const struct popmon_proc_rec *me,
		     struct run_facts *f)
{
	int crank;
	PMPI_Comm_rank(comm, &crank);
	memset(f, 0, sizeof *f);
	f->nodes = g->sum[0];
	f->cpus = g->sum[1];
	f->ctr_failed = g->sum[2];
	f->ctr_rdpmc = g->sum[3];
	f->bypassed = g->sum[4];
	f->lewi = g->sum[5];
	f->lewi_lent_ns = g->sum[6];
	f->lewi_borrowed_ns = g->sum[7];
	struct {
		int64_t rank;
		char text[600];
	} msg;
	for (int k = 0; k < 2; k++) {
		int64_t first = k == 0 ? g->useful.min_rank : g->mpi.min_rank;
		char *dst = k == 0 ? f->ctr_reason : f->bypass_reason;
		size_t cap = k == 0 ? sizeof f->ctr_reason : sizeof f->bypass_reason;
		const char *mine = k == 0 ? me->ctr_reason : me->bypass_reason;
		int64_t *wrank = k == 0 ? &f->ctr_first : &f->bypass_first;
		if (first == INT64_MAX)
			continue;
		if (crank == first) {
			memset(&msg, 0, sizeof msg);
			msg.rank = me->rank;
			snprintf(msg.text, sizeof msg.text, "%s", mine);
			if (crank != 0)
				PMPI_Send(&msg, (int)sizeof msg, MPI_BYTE, 0, TAG_REASON, comm);
		}
		if (crank == 0) {
			if (first != 0)
				PMPI_Recv(&msg, (int)sizeof msg, MPI_BYTE, (int)first, TAG_REASON, comm, MPI_STATUS_IGNORE);
			msg.text[sizeof msg.text - 1] = '\0';
			snprintf(dst, cap, "%s", msg.text);
			*wrank = msg.rank;
		}
	}
}

/* Every region's summary at rank 0 (out, nreg entries; NULL elsewhere):
 * the node terms over node_comm, then one all-reduction over comm (every
 * rank learns the extremes, the histograms' ranges) and one reduction of
 * the histograms. O(log P) steps of nreg summaries each. */
static int reduce_regions(MPI_Comm comm, MPI_Comm node_comm, int rank, const struct popmon_region_rec *mine,
			  int nreg, const struct popmon_proc_rec *me, int is_leader, struct run_facts *facts,
			  struct popmon_region_sum *out)
{
	int n = nreg + 1; /* the regions, then the run's facts */
	struct popmon_region_sum *loc = malloc(sizeof *loc * (size_t)n), *glob = malloc(sizeof *glob * (size_t)n);
	double *nin = calloc((size_t)n * 2, sizeof *nin), *nout = calloc((size_t)n * 2, sizeof *nout);
	int ok = loc && glob && nin && nout && (rank != 0 || out), all_ok = 0;
	PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
	if (!all_ok) {
		popmon_warn_once("nomem", "out of memory at finalize: no measurement written");
		free(loc);
		free(glob);
		free(nin);
		free(nout);
		return -1;
	}
	for (int r = 0; r < nreg; r++) {
		const struct popmon_region_rec *x = &mine[r];
		popmon_sum_init(&loc[r]);
		popmon_sum_proc(&loc[r], x, popmon_proc.rank, 1); /* counters dropped at writing without them */
		if (x->visits > 0) {
			nin[2 * r] = (double)x->t[POPMON_ST_MPI] + (double)x->t[POPMON_ST_MPI_WORKER_IDLE];
			nin[2 * r + 1] = (double)(x->cpus > 1 ? x->cpus : 1);
		}
	}
	int local = 0;
	if (node_comm != MPI_COMM_NULL) {
		PMPI_Comm_rank(node_comm, &local);
		PMPI_Reduce(nin, nout, 2 * nreg, MPI_DOUBLE, MPI_SUM, 0, node_comm);
	} else {
		memcpy(nout, nin, sizeof *nin * (size_t)n * 2);
	}
	if (local == 0)
		for (int r = 0; r < nreg; r++)
			popmon_sum_node(&loc[r], nout[2 * r], (int64_t)nout[2 * r + 1]);
	MPI_Datatype type;
	MPI_Op op;
	PMPI_Type_contiguous((int)sizeof *loc, MPI_BYTE, &type);
	PMPI_Type_commit(&type);
	PMPI_Op_create(sum_op_fn, 1, &op);
	facts_share(&loc[nreg], me, is_leader, rank);
	PMPI_Allreduce(loc, glob, nreg + 1, type, op, comm);
	facts_of(comm, &glob[nreg], me, facts);
	for (int r = 0; r < nreg; r++) {
		popmon_sum_init(&loc[r]);
		popmon_sum_hist(&loc[r], &glob[r], &mine[r]);
	}
	PMPI_Reduce(loc, rank == 0 ? out : NULL, nreg, type, op, 0, comm);
	PMPI_Op_free(&op);
	PMPI_Type_free(&type);
	if (rank == 0)
		for (int r = 0; r < nreg; r++) {
			memcpy(glob[r].hist, out[r].hist, sizeof glob[r].hist);
			out[r] = glob[r];
		}
	free(loc);
	free(glob);
	free(nin);
	free(nout);
	return 0;
}

/* Packs this process's warnings ("text\0text\0...") for the gather. */
static int pack_warnings(char **out)
{
	int n = popmon_warning_count(), len = 0;
	for (int i = 0; i < n; i++)
		len += (int)strlen(popmon_warning(i)) + 1;
	*out = malloc((size_t)len + 1);
	if (!*out)
		return 0;
	int off = 0;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(popmon_warning(i)) + 1;
		memcpy(*out + off, popmon_warning(i), l);
		off += (int)l;
	}
	return len;
}

/* Every process's warnings to rank 0, merged: each distinct text once, with
 * how many processes printed it when not all did. Returns the count; the
 * texts live in *store (free both). */
static int gather_warnings(MPI_Comm comm, int rank, int size, char ***lines, char **store)
{
	*lines = NULL;
	*store = NULL;
	char *mine = NULL;
	int len = pack_warnings(&mine);
	int *counts = NULL, *displs = NULL, total = 0;
	char *all = NULL;
	if (rank == 0) {
		counts = calloc((size_t)size, sizeof *counts);
		displs = calloc((size_t)size, sizeof *displs);
	}
	PMPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
	if (rank == 0 && counts && displs) {
		for (int p = 0; p < size; p++) {
			displs[p] = total;
			total += counts[p];
		}
		all = malloc((size_t)total + 1);
	}
	PMPI_Gatherv(mine, len, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, comm);
	free(mine);
	int n = 0;
	if (rank == 0 && all) {
		/* Distinct texts with the number of processes that have them. */
		int cap = 16;
		char **text = calloc((size_t)cap, sizeof *text);
		int *procs = calloc((size_t)cap, sizeof *procs);
		for (int p = 0; text && procs && p < size; p++) {
			for (int off = displs[p]; off < displs[p] + counts[p];) {
				char *t = all + off;
				off += (int)strlen(t) + 1;
				int j = 0;
				while (j < n && strcmp(text[j], t) != 0)
					j++;
				if (j == n) {
					if (n == cap) {
						char **t2 = realloc(text, sizeof *text * (size_t)cap * 2);
						int *p2 = t2 ? realloc(procs, sizeof *procs * (size_t)cap * 2) : NULL;
						if (t2)
							text = t2;
						if (!p2)
							break;
						procs = p2;
						cap *= 2;
					}
					text[n] = t;
					procs[n++] = 0;
				}
				procs[j]++;
			}
		}
		char **out = text && procs ? calloc((size_t)n + 1, sizeof *out) : NULL;
		for (int j = 0; out && j < n; j++) {
			size_t l = strlen(text[j]) + 48;
			out[j] = malloc(l);
			if (!out[j])
				continue;
			if (procs[j] < size)
				snprintf(out[j], l, "%s (%d of %d processes)", text[j], procs[j], size);
			else
				snprintf(out[j], l, "%s", text[j]);
		}
		free(text);
		free(procs);
		if (!out)
			n = 0;
		*lines = out;
		*store = all;
		all = NULL;
	}
	free(all);
	free(counts);
	free(displs);
	return n;
}

/* Aligns the Global region across the ranks of comm (docs/library.md,
 * "Finalize"): on rank 0's clock, Global spans from the first rank's exit
 * of MPI_Init to the last rank's entry into MPI_Finalize in every process,
 * the time before its own start and after its own end being time inside
 * MPI (MPI_Init, MPI_Finalize) for the process, with its other CPUs idle.
 * Rank start/end skew then never counts as useful time. */
static void align_global(MPI_Comm comm, const struct handshake *hs, struct popmon_region_rec *g, int cpus,
			 int64_t *start_skew, int64_t *end_skew)
{
	int64_t mine[2], lo[2], hi[2];
	mine[0] = popmon_tick_monotonic_ns(popmon_proc.init_tick) + hs->offset_ns;
	mine[1] = popmon_tick_monotonic_ns(popmon_proc.fin_tick) + hs->offset_ns;
	int64_t neg[2] = {-mine[0], -mine[1]};
	PMPI_Allreduce(mine, hi, 2, MPI_INT64_T, MPI_MAX, comm);
	PMPI_Allreduce(neg, lo, 2, MPI_INT64_T, MPI_MAX, comm);
	int64_t first_start = -lo[0], last_start = hi[0], first_end = -lo[1], last_end = hi[1];
	*start_skew = last_start - first_start;
	*end_skew = last_end - first_end;
	int64_t before = mine[0] - first_start, after = last_end - mine[1];
	if (before < 0)
		before = 0;
	if (after < 0)
		after = 0;
	if (g->visits <= 0)
		return;
	int64_t extra = before + after;
	g->elapsed_ns += extra;
	g->t[POPMON_ST_MPI] += extra;
	g->t[POPMON_ST_MPI_WORKER_IDLE] += extra * (cpus > 1 ? cpus - 1 : 0);
	g->prim_mpi += extra;
}

/* The MiniMaxLoc pairs of the call profile. */
struct dbl_int {
	double v;
	int rank;
};

/* Completes run at rank 0 (call profile, incompleteness, MPI library) and
 * writes it: the same for the full and the summary form. */
static void finish_run(struct popmon_run *run, const struct handshake *hs, const int64_t *sums,
		       const int64_t *min_ns, const struct dbl_int *maxloc)
{
	struct popmon_fn_rec *fns = calloc(POPMON_FN_COUNT, sizeof *fns);
	for (int f = 0; fns && f < POPMON_FN_COUNT; f++) {
		fns[f].calls = sums[f];
		fns[f].time_ns = sums[POPMON_FN_COUNT + f];
		fns[f].min_ns = min_ns[f];
		fns[f].max_ns = (int64_t)maxloc[f].v;
		fns[f].max_rank = maxloc[f].rank;
	}
	const int64_t *dsum = sums + 2 * POPMON_FN_COUNT;
	for (int d = 0; fns && d < POPMON_DFN_COUNT; d++) {
		struct popmon_fn_rec *fn = &fns[popmon_dfn_fn[d]];
		const int64_t *x = dsum + (size_t)d * (2 + POPMON_SIZE_BINS);
		fn->has_bytes = 1;
		fn->bytes_sent = x[0];
		fn->bytes_recv = x[1];
		memcpy(fn->hist, x + 2, sizeof fn->hist);
	}
	run->fns = fns;
	char incomplete[1024];
	if (hs->status == V_PARTIAL) {
		run->missing = hs->missing;
		incomplete_reason(hs, incomplete, sizeof incomplete);
		run->incomplete_reason = incomplete;
	}
	int len = 0, version = 0, subversion = 0, provided = MPI_THREAD_SINGLE;
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	lib[0] = '\0';
	PMPI_Get_library_version(lib, &len);
	lib[sizeof lib - 1] = '\0';
	char *nl = strchr(lib, '\n');
	if (nl)
		*nl = '\0';
	/* MPICH writes "MPICH Version:\t4.0.2": tabs and runs of blanks
	 * become one space. */
	size_t w = 0;
	for (size_t r = 0; lib[r]; r++) {
		char c = lib[r] == '\t' || lib[r] == '\r' ? ' ' : lib[r];
		if (c == ' ' && (w == 0 || lib[w - 1] == ' '))
			continue;
		lib[w++] = c;
	}
	while (w > 0 && lib[w - 1] == ' ')
		w--;
	lib[w] = '\0';
	snprintf(run->mpi_library, sizeof run->mpi_library, "%.255s", lib);
	PMPI_Get_version(&version, &subversion);
	snprintf(run->mpi_standard, sizeof run->mpi_standard, "%d.%d", version, subversion);
	PMPI_Query_thread(&provided);
	run->thread_level = thread_level_name(provided);
	popmon_write_run(run);
	free(fns);
}

/* The lowest rank of comm in this process's shared-memory domain (its node's
 * leader), found locally from the split (keys are equal, so ranks keep their
 * order); the node's communicator kept in node_comm for the summary form
 * (MPI_COMM_NULL otherwise). Returns whether comm spans several nodes. */
static int split_nodes(MPI_Comm comm, int rank, int size, int summary, int *leader, MPI_Comm *node_comm)
{
	int multinode = 0;
	*leader = rank;
	*node_comm = MPI_COMM_NULL;
	if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_comm) ==
	    MPI_SUCCESS) {
		MPI_Group wg, ng;
		int zero = 0, local = size;
		PMPI_Comm_size(*node_comm, &local);
		multinode = local < size;
		PMPI_Comm_group(comm, &wg);
		PMPI_Comm_group(*node_comm, &ng);
		PMPI_Group_translate_ranks(ng, 1, &zero, wg, leader);
		PMPI_Group_free(&ng);
		PMPI_Group_free(&wg);
		if (!summary)
			PMPI_Comm_free(node_comm);
	} else {
		*node_comm = MPI_COMM_NULL;
	}
	return multinode;
}

/* The regions of every process of comm, by name (names), and this
 * process's record of each (mine, with the names in region_names).
 * Returns their number. */
static int own_regions(MPI_Comm comm, int rank, int size, int cpus, struct namebuf *names,
		       const char ***region_names, struct popmon_region_rec **mine)
{
	if (union_names(comm, rank, size, names) != 0) {
		popmon_warn_once("nomem", "out of memory at finalize: no measurement written");
		PMPI_Abort(MPI_COMM_WORLD, 1); /* unreachable in practice; a half-done
						   collective cannot be left behind */
	}
	int nreg = 0;
	for (int i = 0; i < names->len; i += (int)strlen(names->p + i) + 1)
		nreg++;
	*region_names = calloc((size_t)nreg + 1, sizeof **region_names);
	*mine = calloc((size_t)nreg + 1, sizeof **mine);
	int r = 0;
	for (int i = 0; i < names->len; i += (int)strlen(names->p + i) + 1, r++) {
		(*region_names)[r] = names->p + i;
		int idx = popmon_region_find(names->p + i);
		if (idx >= 0)
			popmon_region_rec(idx, cpus, &(*mine)[r]);
	}
	return nreg;
}

/* This process's record: where it ran, its CPUs, whether MPI calls
 * bypassed the library, its counters. */
static void own_process(struct popmon_proc_rec *me, int leader, int cpus)
{
	*me = (struct popmon_proc_rec){.rank = popmon_proc.rank, .node = leader, .pid = popmon_proc.pid,
				       .cpus = cpus, .mpi_threads = popmon_mpi_thread_count(),
				       .affinity_cpus = popmon_affinity_cpus()};
	popmon_proc_rec_dlb(me);
	const struct popmon_intercept *ic = popmon_intercept_result();
	if (ic->bypassed) {
		me->bypass_kind = ic->kind;
		snprintf(me->bypass_reason, sizeof me->bypass_reason, "%s", ic->reason);
	}
	gethostname(me->hostname, sizeof me->hostname - 1);
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	me->ctr_method = !ci.available ? 0 : strcmp(ci.method, "rdpmc") == 0 ? 2 : 1;
	me->ctr_mode = strcmp(ci.mode, "off") == 0 ? 0 : strcmp(ci.mode, "on") == 0 ? 2 : 1;
	snprintf(me->ctr_reason, sizeof me->ctr_reason, "%s", ci.reason);
}

/* Per-process records to rank 0, in one gather (the process record, then
 * one record per region): rank 0's procs and recs (NULL elsewhere, or
 * without memory). */
static void gather_records(MPI_Comm comm, int rank, int size, const struct popmon_proc_rec *me,
			   const struct popmon_region_rec *mine, int nreg, struct popmon_proc_rec **procs,
			   struct popmon_region_rec **recs)
{
	size_t block = sizeof *me + (size_t)nreg * sizeof *mine;
	unsigned char *sendbuf = malloc(block), *all = NULL;
	if (sendbuf) {
		memcpy(sendbuf, me, sizeof *me);
		memcpy(sendbuf + sizeof *me, mine, (size_t)nreg * sizeof *mine);
	}
	if (rank == 0) {
		all = malloc(block * (size_t)size);
		*recs = calloc((size_t)size * (size_t)(nreg ? nreg : 1), sizeof **recs);
		*procs = calloc((size_t)size, sizeof **procs);
	}
	PMPI_Gather(sendbuf, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, 0, comm);
	if (rank == 0 && all && *recs && *procs) {
		for (int p = 0; p < size; p++) {
			memcpy(&(*procs)[p], all + (size_t)p * block, sizeof *me);
			memcpy(&(*recs)[(size_t)p * (size_t)nreg], all + (size_t)p * block + sizeof *me,
			       (size_t)nreg * sizeof *mine);
		}
	}
	free(sendbuf);
	free(all);
}

/* The call profile: sums, min and max (with its rank) over processes. */
struct call_profile {
	uint64_t *calls, *ticks;
	int64_t *ns;
	/* [0, F): calls, [F, 2F): ns; summed in one reduction. */
	int64_t *sums_in, *sums;
	int64_t *min_ns;
	struct dbl_int *loc, *maxloc;
};

static void reduce_profile(MPI_Comm comm, struct call_profile *cp)
{
	cp->calls = calloc(POPMON_FN_COUNT, sizeof *cp->calls);
	cp->ticks = calloc(POPMON_FN_COUNT, sizeof *cp->ticks);
	cp->ns = calloc(POPMON_FN_COUNT, sizeof *cp->ns);
	cp->sums_in = calloc(2 * POPMON_FN_COUNT + POPMON_DSUMS, sizeof *cp->sums_in);
	cp->sums = calloc(2 * POPMON_FN_COUNT + POPMON_DSUMS, sizeof *cp->sums);
	cp->min_ns = calloc(POPMON_FN_COUNT, sizeof *cp->min_ns);
	cp->loc = calloc(POPMON_FN_COUNT, sizeof *cp->loc);
	cp->maxloc = calloc(POPMON_FN_COUNT, sizeof *cp->maxloc);
	popmon_fn_totals(cp->calls, cp->ticks);
	for (int f = 0; f < POPMON_FN_COUNT; f++) {
		cp->ns[f] = popmon_owncost_fn_ns(cp->calls[f], (int64_t)popmon_ticks_to_ns(cp->ticks[f]));
		cp->loc[f].v = (double)cp->ns[f];
		cp->loc[f].rank = popmon_proc.rank;
	}
	for (int f = 0; f < POPMON_FN_COUNT; f++) {
		cp->sums_in[f] = (int64_t)cp->calls[f];
		cp->sums_in[POPMON_FN_COUNT + f] = cp->ns[f];
	}
	/* [2F, 2F + D(2 + B)): bytes sent, received and the size histogram
	 * of each call that starts transfers (mpidata.c). */
	popmon_dfn_totals(cp->sums_in + 2 * POPMON_FN_COUNT);
	PMPI_Reduce(cp->sums_in, cp->sums, 2 * POPMON_FN_COUNT + POPMON_DSUMS, MPI_INT64_T, MPI_SUM, 0, comm);
	PMPI_Reduce(cp->ns, cp->min_ns, POPMON_FN_COUNT, MPI_INT64_T, MPI_MIN, 0, comm);
	PMPI_Reduce(cp->loc, cp->maxloc, POPMON_FN_COUNT, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
}

static void free_profile(struct call_profile *cp)
{
	free(cp->calls);
	free(cp->ticks);
	free(cp->ns);
	free(cp->sums_in);
	free(cp->sums);
	free(cp->min_ns);
	free(cp->loc);
	free(cp->maxloc);
}

/* OpenMP constructs: every rank's rows to rank 0, merged there by module
 * and address (the same code in every process). Returns rank 0's rows
 * merged (allrows, theirs to free) and their number. */
static int gather_omp_rows(MPI_Comm comm, int rank, int size, struct popmon_omp_row **allrows)
{
	struct popmon_omp_row *orows = NULL;
	int norows = popmon_omp_rows(&orows), ntotal = 0;
	int *ocounts = NULL, *odispls = NULL;
	int obytes = norows * (int)sizeof *orows;
	*allrows = NULL;
	/* Bounded: the gather's displacements are ints, and rank 0 holds the
	 * rows; above 256 MiB in all (some 480,000 rows), rank 0's only. */
	int64_t mybytes = obytes, allbytes = 0;
	PMPI_Allreduce(&mybytes, &allbytes, 1, MPI_INT64_T, MPI_SUM, comm);
	if (allbytes <= ((int64_t)256 << 20)) {
		if (rank == 0) {
			ocounts = calloc((size_t)size, sizeof *ocounts);
			odispls = calloc((size_t)size, sizeof *odispls);
		}
		PMPI_Gather(&obytes, 1, MPI_INT, ocounts, 1, MPI_INT, 0, comm);
		if (rank == 0 && ocounts && odispls) {
			long total = 0;
			for (int p = 0; p < size; p++) {
				odispls[p] = (int)total;
				total += ocounts[p];
			}
			*allrows = malloc((size_t)total + 1);
			ntotal = (int)(total / (long)sizeof *orows);
		}
		PMPI_Gatherv(orows, obytes, MPI_BYTE, *allrows, ocounts, odispls, MPI_BYTE, 0, comm);
	} else if (rank == 0) {
		popmon_warn_once("omprows", "%lld MiB of OpenMP construct rows in all: omp_regions has rank 0's only",
				 (long long)(allbytes >> 20));
		*allrows = orows;
		orows = NULL;
		ntotal = norows;
	}
	int nmerged = 0;
	if (rank == 0 && *allrows)
		nmerged = popmon_omp_merge(*allrows, ntotal);
	free(orows);
	free(ocounts);
	free(odispls);
	return nmerged;
}

/* GPU: every process's record to rank 0 when any process used CUDA (else
 * rank 0's own, gme, says why there is none): rank 0's records (NULL
 * elsewhere or when none were gathered). Before the warnings: mode on
 * warns here. */
static struct popmon_gpu_proc *gather_gpu(MPI_Comm comm, int rank, int size, int summary, int limit,
					   struct popmon_gpu_proc *gme)
{
	int gused = gme->status != POPMON_GPU_UNUSED, anyused = 0;
	PMPI_Allreduce(&gused, &anyused, 1, MPI_INT, MPI_MAX, comm);
	struct popmon_gpu_proc *gall = NULL;
	if (anyused && !summary) {
		if (rank == 0)
			gall = malloc(sizeof *gall * (size_t)size);
		PMPI_Gather(gme, (int)sizeof *gme, MPI_BYTE, gall, (int)sizeof *gme, MPI_BYTE, 0, comm);
	} else if (anyused && rank == 0) {
		/* The summary form does not reduce device accounts (yet): say so
		 * rather than show a device tree of rank 0's devices alone. */
		gme->status = POPMON_GPU_UNMEASURED;
		snprintf(gme->reason, sizeof gme->reason,
			 "GPU device times are not kept above the per-process record limit (%d processes, limit %d): "
			 "set POPMON_MAX_PROCESS_RECORDS=%d (popmon run --max-process-records) to measure them",
			 size, limit, size);
	}
	return gall;
}

/* The per-process form's own fields (rank 0): the processes, their
 * region records, node indices in order of each node's lowest rank, the
 * processes whose calls bypassed the library, the counters. */
static void run_records(struct popmon_run *run, struct popmon_proc_rec *procs, struct popmon_region_rec *recs,
			int size)
{
	int nnodes = 0;
	int *node_of_leader = calloc((size_t)size, sizeof *node_of_leader);
	for (int p = 0; p < size; p++)
		node_of_leader[p] = -1;
	for (int p = 0; p < size; p++) {
		int l = (int)procs[p].node;
		if (l < 0 || l >= size)
			l = p;
		if (node_of_leader[l] < 0)
			node_of_leader[l] = nnodes++;
		procs[p].node = node_of_leader[l];
	}
	free(node_of_leader);
	run->nnodes = nnodes;
	run->procs = procs;
	run->recs = recs;
	for (int p = 0; p < size; p++) {
		if (!procs[p].bypass_kind)
			continue;
		if (!run->bypass_reason)
			run->bypass_reason = procs[p].bypass_reason;
		run->bypass_processes++;
	}
	counters_of_run(run, procs, size);
}

/* The summary form's own fields (rank 0): the regions' summaries and the
 * run's facts, reduced. */
static void run_summary(struct popmon_run *run, struct popmon_region_sum *rsums, const struct run_facts *facts,
			int64_t ctr_mode, int limit, int size)
{
	run->nnodes = (int)facts->nodes;
	run->sums = rsums;
	run->summary_limit = limit;
	run->cpus = facts->cpus;
	counters_set(run, ctr_mode, facts->ctr_failed, facts->ctr_rdpmc == size, facts->ctr_first,
		     facts->ctr_reason, size);
	if (facts->bypassed) {
		run->bypass_reason = facts->bypass_reason;
		run->bypass_processes = (int)facts->bypassed;
	}
	run->lewi_processes = facts->lewi;
	run->lewi_lent_ns = facts->lewi_lent_ns;
	run->lewi_borrowed_ns = facts->lewi_borrowed_ns;
}

/* Returns whether comm spans several nodes. */
static int finalize_measure(MPI_Comm comm, const struct handshake *hs)
{
	int rank, size;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);
	int leader;
	int limit = record_limit(comm, rank), summary = size > limit;
	MPI_Comm node_comm;
	int multinode = split_nodes(comm, rank, size, summary, &leader, &node_comm);

	struct namebuf names = {0};
	const char **region_names;
	struct popmon_region_rec *mine;
	int cpus = popmon_cpus();
	int nreg = own_regions(comm, rank, size, cpus, &names, &region_names, &mine);
	int64_t start_skew = 0, end_skew = 0;
	if (nreg > 0 && strcmp(region_names[0], "Global") == 0)
		align_global(comm, hs, &mine[0], cpus, &start_skew, &end_skew);
	struct popmon_proc_rec me;
	own_process(&me, leader, cpus);

	/* Up to the limit: per-process records to rank 0, in one gather. Above
	 * it: every region's summary and the run's facts, reduced. */
	struct popmon_region_rec *recs = NULL;
	struct popmon_proc_rec *procs = NULL;
	struct popmon_region_sum *rsums = NULL;
	struct run_facts facts = {0};
	if (summary) {
		if (rank == 0)
			rsums = calloc((size_t)(nreg ? nreg : 1), sizeof *rsums);
		if (reduce_regions(comm, node_comm, rank, mine, nreg, &me, node_comm == MPI_COMM_NULL || rank == leader,
				   &facts, rsums) != 0) {
			free(rsums);
			rsums = NULL;
		}
		if (node_comm != MPI_COMM_NULL)
			PMPI_Comm_free(&node_comm);
	} else {
		gather_records(comm, rank, size, &me, mine, nreg, &procs, &recs);
	}
	struct call_profile cp;
	reduce_profile(comm, &cp);
	struct popmon_omp_row *allrows;
	int nmerged = gather_omp_rows(comm, rank, size, &allrows);
	struct popmon_gpu_proc *gme = popmon_run_gpu(POPMON_GPU_WINDOW_GLOBAL);
	struct popmon_gpu_proc *gall = gather_gpu(comm, rank, size, summary, limit, gme);
	char **warn_lines = NULL, *warn_store = NULL;
	int nwarn = gather_warnings(comm, rank, size, &warn_lines, &warn_store);

	/* What both forms share; then the form's own fields. */
	struct popmon_run run;
	popmon_run_assemble(&run, 1, size, nreg, (const char *const *)region_names, allrows, nmerged,
			    gall ? gall : gme, gall ? size : 1);
	run.world_size = popmon_proc.size;
	run.aligned = 1;
	run.start_skew_ns = start_skew;
	run.end_skew_ns = end_skew;
	run.warnings = (const char *const *)warn_lines;
	run.nwarnings = nwarn;
	if (rank == 0 && rsums) {
		run_summary(&run, rsums, &facts, me.ctr_mode, limit, size);
		finish_run(&run, hs, cp.sums, cp.min_ns, cp.maxloc);
	}
	if (rank == 0 && recs && procs) {
		run_records(&run, procs, recs, size);
		finish_run(&run, hs, cp.sums, cp.min_ns, cp.maxloc);
	}

	for (int i = 0; warn_lines && i < nwarn; i++)
		free(warn_lines[i]);
	free(warn_lines);
	free(warn_store);
	free_profile(&cp);
	free(rsums);
	free(allrows);
	free(gall);
	free(recs);
	free(procs);
	free(mine);
	free(region_names);
	free(names.p);
	return multinode;
}

/* Without a session, a rank whose rank 0 does not carry the library says
 * so: one line per node (the first such process there takes an abstract
 * socket's name for the job, which the kernel releases at its exit; no
 * file is left behind), naming the processes measured. */
static void say_rank0_absent(void)
{
	char key[128];
	registry_key(key, sizeof key);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "popmon-%u-%.60s-%d-norank0", (unsigned)getuid(), key,
			 popmon_proc.size);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
								   (size_t)n)) != 0) {
		close(fd);
		return; /* another process of this job on this node said it */
	}
	/* fd stays open until the process ends: the name stays taken. */
	char line[512];
	int len = snprintf(line, sizeof line,
			   "popmon: rank 0 did not say within 10 s that it loaded the measurement library, so the ranks "
			   "that did (rank %d of %d among them) have no rank 0 to gather their measurement: no measurement "
			   "of them written (start rank 0 with popmon too: popmon on the first part of an MPMD line; a rank "
			   "0 that has the library but whose word, sent at its MPI_Init, came late writes one without them; "
			   "popmon run -- mpirun ... does not depend on that word)\n",
			   popmon_proc.rank, popmon_proc.size);
	if (len > (int)sizeof line - 1)
		len = (int)sizeof line - 1;
	if (write(2, line, (size_t)len) < 0) {
		/* ignore */
	}
}

/* MPICH before 4.2 can hang in MPI_Finalize across nodes when a rank is
 * still waiting for a peer that has already parked in the final barrier
 * (upstream MPICH commit 08d8105b removed that barrier); the traffic of
 * popmon's finalize makes that likelier. A barrier and a pause without MPI
 * calls first let the ranks' connections settle: seen here on MPICH 4.0.2
 * (Debian), 2 nodes × 2 ranks, from hangs in 1 run of 5 without popmon to
 * none in 30. Costs 0.1 s at the end of a multi-node MPICH job only. */
static void settle_before_finalize(MPI_Comm comm, int multinode)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
	if (!multinode)
		return;
	PMPI_Barrier(comm);
	struct timespec ts = {0, 100000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
#else
	(void)comm;
	(void)multinode;
#endif
}

void popmon_mpi_finalize_hook(void)
{
	if (popmon_proc.inert || popmon_proc.finalized || !popmon_proc.mpi_initialized)
		return;
	popmon_proc.finalized = 1;
	popmon_proc.fin_tick = popmon_now();
	popmon_barrier_stop();
	popmon_lewi_stop();
	popmon_live_state(POPMON_LIVE_FINALIZING, 0);
	popmon_regions_close_all(popmon_proc.fin_tick);
	popmon_talp_finalize();
	/* POPMON_FINALIZE_STATS=1 (scripts/bench-finalize.sh): rank 0 prints
	 * how long finalize took and how much its peak RSS grew. */
	int stats = popmon_proc.rank == 0 && getenv("POPMON_FINALIZE_STATS") &&
		    strcmp(getenv("POPMON_FINALIZE_STATS"), "1") == 0;
	struct rusage ru0;
	uint64_t t0 = popmon_monotonic_ns();
	if (stats)
		getrusage(RUSAGE_SELF, &ru0);
	struct handshake hs;
	handshake(&hs);
	/* The trace's clock synchronisation needs every rank here. */
	popmon_trace_finalize(hs.status == V_COMPLETE);
	if (hs.status == V_COMPLETE) {
		/* The application has finished communicating (it is in
		 * MPI_Finalize), so collectives on MPI_COMM_WORLD cannot mix with
		 * its own; no duplicate is needed, which saves a collective: on
		 * oversubscribed cores with a busy-waiting MPI every collective
		 * costs a scheduler time slice. */
		settle_before_finalize(MPI_COMM_WORLD, finalize_measure(MPI_COMM_WORLD, &hs));
	} else if (hs.status == V_PARTIAL && hs.members && hs.members[popmon_proc.rank]) {
#if MPI_VERSION >= 3
		/* The ranks present, in a communicator of their own (created
		 * collectively over them only). */
		MPI_Group wg, pg;
		int *ranks = malloc(sizeof(int) * (size_t)hs.present), n = 0;
		for (int k = 0; ranks && k < popmon_proc.size; k++)
			if (hs.members[k])
				ranks[n++] = k;
		MPI_Comm comm = MPI_COMM_NULL;
		if (ranks && n == hs.present) {
			PMPI_Comm_group(MPI_COMM_WORLD, &wg);
			PMPI_Group_incl(wg, n, ranks, &pg);
			PMPI_Comm_create_group(MPI_COMM_WORLD, pg, TAG_MEMBERS, &comm);
			PMPI_Group_free(&pg);
			PMPI_Group_free(&wg);
		}
		free(ranks);
		if (comm != MPI_COMM_NULL) {
			settle_before_finalize(comm, finalize_measure(comm, &hs));
			PMPI_Comm_free(&comm);
		}
#endif
	} else if (hs.status == 0 && popmon_proc.rank != 0 && hs.say_why) {
		say_rank0_absent();
	} else if (hs.status == 0 && popmon_proc.rank != 0) {
		popmon_write_unmeasured("rank 0 did not take part in popmon's finalize (the measurement library "
					"did not reach it): no measurement written");
	}
	free(hs.members);
	popmon_trace_close();
	if (stats) {
		struct rusage ru1;
		getrusage(RUSAGE_SELF, &ru1);
		char line[160];
		int n = snprintf(line, sizeof line, "popmon: finalize %.3f ms, peak RSS %ld KiB (+%ld KiB)\n",
				 (double)(popmon_monotonic_ns() - t0) / 1e6, ru1.ru_maxrss, ru1.ru_maxrss - ru0.ru_maxrss);
		if (n > 0 && write(2, line, (size_t)n) < 0) {
			/* ignore */
		}
	}
	registry_leave();
	popmon_counters_finish();
	popmon_live_state(POPMON_LIVE_FINALIZED, 0);
}

/* ------------------------------------------------------------------ PMPI hooks */

/* The start-up and shut-down hooks also sit on PMPI_Init, PMPI_Init_thread
 * and PMPI_Finalize: a PMPI tool preloaded before libpopmon (or the
 * program's own wrapper of MPI_Init/MPI_Finalize) calls those, and the
 * measurement must still start and be written (it then says which calls it
 * did not see). Each forwards to the MPI library's own entry point, the
 * next definition after libpopmon; the hooks run once whichever way in. */
typedef int (*pmpi_init_fn)(int *, char ***);
typedef int (*pmpi_init_thread_fn)(int *, char ***, int, int *);
typedef int (*pmpi_finalize_fn)(void);

int PMPI_Init(int *argc, char ***argv)
{
	union {
		void *p;
		pmpi_init_fn f;
	} u = {.p = popmon_real_fn(POPMON_FN_MPI_Init)};
	popmon_mpi_pre_init_hook();
	int rc = u.f(argc, argv);
	if (rc == MPI_SUCCESS)
		popmon_mpi_init_hook();
	return rc;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	union {
		void *p;
		pmpi_init_thread_fn f;
	} u = {.p = popmon_real_fn(POPMON_FN_MPI_Init_thread)};
	popmon_mpi_pre_init_hook();
	int rc = u.f(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		popmon_mpi_init_hook();
	return rc;
}

int PMPI_Finalize(void)
{
	union {
		void *p;
		pmpi_finalize_fn f;
	} u = {.p = popmon_real_fn(POPMON_FN_MPI_Finalize)};
	popmon_mpi_finalize_hook();
	return u.f();
}
