/* mpi.c: MPI start-up and finalize: node discovery, the region-name union,
 * the gather of per-process records to rank 0 and the call-profile
 * reductions. Everything runs on a private duplicate of MPI_COMM_WORLD, with
 * collectives only (O(log P) depth in both Open MPI and MPICH), and only PMPI
 * entry points, so the application's own communicators, tags and call
 * counts are untouched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

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

void popmon_mpi_init_hook(void)
{
	if (popmon_proc.inert || popmon_proc.mpi_initialized)
		return;
	popmon_proc.mpi_initialized = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &popmon_proc.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &popmon_proc.size);
	/* The Global region measures the run between MPI_Init and MPI_Finalize,
	 * as TALP does. */
	popmon_regions_restart_global(popmon_now());
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
static void counters_of_run(struct popmon_run *run, const struct popmon_proc_rec *procs, int size)
{
	static const char *const modes[] = {"off", "auto", "on"};
	int64_t m = procs[0].ctr_mode;
	run->ctr_mode = modes[m >= 0 && m <= 2 ? m : 1];
	int failed = 0, first = -1, all_rdpmc = 1;
	for (int p = 0; p < size; p++) {
		if (procs[p].ctr_method == 0) {
			failed++;
			if (first < 0)
				first = p;
		}
		all_rdpmc &= procs[p].ctr_method == 2;
	}
	run->ctr_available = failed == 0;
	run->ctr_method = failed ? "" : all_rdpmc ? "rdpmc" : "read";
	run->ctr_reason[0] = '\0';
	if (!failed)
		return;
	char why[sizeof procs[0].ctr_reason + 1];
	snprintf(why, sizeof why, "%.*s", (int)sizeof procs[0].ctr_reason, procs[first].ctr_reason);
	if (failed < size)
		snprintf(run->ctr_reason, sizeof run->ctr_reason, "%s (rank %lld; %d of %d processes)", why,
			 (long long)procs[first].rank, failed, size);
	else
		snprintf(run->ctr_reason, sizeof run->ctr_reason, "%s", why);
}

static void finalize_measure(void)
{
	uint64_t now = popmon_now();
	popmon_regions_close_all(now);

	/* The application has finished communicating (it is in MPI_Finalize), so
	 * collectives on MPI_COMM_WORLD cannot mix with its own; no duplicate
	 * is needed, which saves a collective: on oversubscribed cores with a
	 * busy-waiting MPI every collective costs a scheduler time slice. */
	MPI_Comm comm = MPI_COMM_WORLD, node_comm;
	int rank, size;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);

	/* Nodes: the lowest world rank of each shared-memory domain, found
	 * locally from the split (keys are equal, so ranks keep world order). */
	int leader = rank;
	if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm) ==
	    MPI_SUCCESS) {
		MPI_Group wg, ng;
		int zero = 0;
		PMPI_Comm_group(comm, &wg);
		PMPI_Comm_group(node_comm, &ng);
		PMPI_Group_translate_ranks(ng, 1, &zero, wg, &leader);
		PMPI_Group_free(&ng);
		PMPI_Group_free(&wg);
		PMPI_Comm_free(&node_comm);
	}

	struct namebuf names = {0};
	if (union_names(comm, rank, size, &names) != 0) {
		popmon_warn_once("nomem", "out of memory at finalize: no measurement written");
		PMPI_Abort(MPI_COMM_WORLD, 1); /* unreachable in practice; a half-done
						   collective cannot be left behind */
	}
	int nreg = 0;
	for (int i = 0; i < names.len; i += (int)strlen(names.p + i) + 1)
		nreg++;
	const char **region_names = calloc((size_t)nreg + 1, sizeof *region_names);
	struct popmon_region_rec *mine = calloc((size_t)nreg + 1, sizeof *mine);
	int cpus = popmon_cpus();
	{
		int r = 0;
		for (int i = 0; i < names.len; i += (int)strlen(names.p + i) + 1, r++) {
			region_names[r] = names.p + i;
			int idx = popmon_region_find(names.p + i);
			if (idx >= 0)
				popmon_region_rec(idx, cpus, &mine[r]);
		}
	}

	struct popmon_proc_rec me = {.rank = rank, .node = leader, .pid = popmon_proc.pid, .cpus = cpus};
	gethostname(me.hostname, sizeof me.hostname - 1);
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	me.ctr_method = !ci.available ? 0 : strcmp(ci.method, "rdpmc") == 0 ? 2 : 1;
	me.ctr_mode = strcmp(ci.mode, "off") == 0 ? 0 : strcmp(ci.mode, "on") == 0 ? 2 : 1;
	snprintf(me.ctr_reason, sizeof me.ctr_reason, "%s", ci.reason);

	/* Per-process records to rank 0, in one gather: the process record,
	 * then one record per region. */
	size_t block = sizeof me + (size_t)nreg * sizeof *mine;
	unsigned char *sendbuf = malloc(block), *all = NULL;
	struct popmon_region_rec *recs = NULL;
	struct popmon_proc_rec *procs = NULL;
	if (sendbuf) {
		memcpy(sendbuf, &me, sizeof me);
		memcpy(sendbuf + sizeof me, mine, (size_t)nreg * sizeof *mine);
	}
	if (rank == 0) {
		all = malloc(block * (size_t)size);
		recs = calloc((size_t)size * (size_t)(nreg ? nreg : 1), sizeof *recs);
		procs = calloc((size_t)size, sizeof *procs);
	}
	PMPI_Gather(sendbuf, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, 0, comm);
	if (rank == 0 && all && recs && procs) {
		for (int p = 0; p < size; p++) {
			memcpy(&procs[p], all + (size_t)p * block, sizeof me);
			memcpy(&recs[(size_t)p * (size_t)nreg], all + (size_t)p * block + sizeof me,
			       (size_t)nreg * sizeof *mine);
		}
	}
	free(sendbuf);
	free(all);

	/* Call profile: sums, min and max (with its rank) over processes. */
	uint64_t *calls = calloc(POPMON_FN_COUNT, sizeof *calls);
	uint64_t *ticks = calloc(POPMON_FN_COUNT, sizeof *ticks);
	int64_t *ns = calloc(POPMON_FN_COUNT, sizeof *ns);
	/* [0, F): calls, [F, 2F): ns; summed in one reduction. */
	int64_t *sums_in = calloc(2 * POPMON_FN_COUNT, sizeof *sums_in);
	int64_t *sums = calloc(2 * POPMON_FN_COUNT, sizeof *sums);
	int64_t *min_ns = calloc(POPMON_FN_COUNT, sizeof *min_ns);
	struct {
		double v;
		int rank;
	} *loc = calloc(POPMON_FN_COUNT, 16), *maxloc = calloc(POPMON_FN_COUNT, 16);
	popmon_fn_totals(calls, ticks);
	for (int f = 0; f < POPMON_FN_COUNT; f++) {
		ns[f] = (int64_t)popmon_ticks_to_ns(ticks[f]);
		loc[f].v = (double)ns[f];
		loc[f].rank = rank;
	}
	for (int f = 0; f < POPMON_FN_COUNT; f++) {
		sums_in[f] = (int64_t)calls[f];
		sums_in[POPMON_FN_COUNT + f] = ns[f];
	}
	PMPI_Reduce(sums_in, sums, 2 * POPMON_FN_COUNT, MPI_INT64_T, MPI_SUM, 0, comm);
	PMPI_Reduce(ns, min_ns, POPMON_FN_COUNT, MPI_INT64_T, MPI_MIN, 0, comm);
	PMPI_Reduce(loc, maxloc, POPMON_FN_COUNT, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);

	/* OpenMP constructs: every rank's rows to rank 0, merged there by
	 * module and address (the same code in every process). */
	struct popmon_omp_row *orows = NULL, *allrows = NULL;
	int norows = popmon_omp_rows(&orows), ntotal = 0;
	int *ocounts = NULL, *odispls = NULL;
	int obytes = norows * (int)sizeof *orows;
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
		allrows = malloc((size_t)total + 1);
		ntotal = (int)(total / (long)sizeof *orows);
	}
	PMPI_Gatherv(orows, obytes, MPI_BYTE, allrows, ocounts, odispls, MPI_BYTE, 0, comm);
	int nmerged = 0;
	if (rank == 0 && allrows) {
		for (int i = 0; i < ntotal; i++) {
			struct popmon_omp_row *a = &allrows[i];
			int j = 0;
			for (; j < nmerged; j++)
				if (allrows[j].address == a->address && strcmp(allrows[j].module, a->module) == 0)
					break;
			if (j == nmerged) {
				if (j != i)
					allrows[j] = *a;
				nmerged++;
				continue;
			}
			struct popmon_omp_row *m = &allrows[j];
			m->executions += a->executions;
			if (a->threads > m->threads)
				m->threads = a->threads;
			m->wall_ns += a->wall_ns;
			m->useful_ns += a->useful_ns;
			m->imbalance_ns += a->imbalance_ns;
			m->sync_ns += a->sync_ns;
			m->limited_ns += a->limited_ns;
			m->mgmt_ns += a->mgmt_ns;
		}
	}
	free(orows);
	free(ocounts);
	free(odispls);

	if (rank == 0 && recs && procs) {
		/* Node indices in order of each node's lowest rank. */
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
		struct popmon_fn_rec *fns = calloc(POPMON_FN_COUNT, sizeof *fns);
		for (int f = 0; fns && f < POPMON_FN_COUNT; f++) {
			fns[f].calls = sums[f];
			fns[f].time_ns = sums[POPMON_FN_COUNT + f];
			fns[f].min_ns = min_ns[f];
			fns[f].max_ns = (int64_t)maxloc[f].v;
			fns[f].max_rank = maxloc[f].rank;
		}
		struct popmon_run run = {
			.nprocs = size,
			.nnodes = nnodes,
			.nregions = nreg,
			.region_names = region_names,
			.procs = procs,
			.recs = recs,
			.fns = fns,
			.with_mpi = 1,
			.omp_rows = allrows,
			.nomp_rows = nmerged,
		};
		int len = 0, version = 0, subversion = 0, provided = MPI_THREAD_SINGLE;
		char lib[MPI_MAX_LIBRARY_VERSION_STRING];
		lib[0] = '\0';
		PMPI_Get_library_version(lib, &len);
		lib[sizeof lib - 1] = '\0';
		char *nl = strchr(lib, '\n');
		if (nl)
			*nl = '\0';
		snprintf(run.mpi_library, sizeof run.mpi_library, "%.255s", lib);
		PMPI_Get_version(&version, &subversion);
		snprintf(run.mpi_standard, sizeof run.mpi_standard, "%d.%d", version, subversion);
		PMPI_Query_thread(&provided);
		run.thread_level = thread_level_name(provided);
		counters_of_run(&run, procs, size);
		popmon_write_run(&run);
		free(fns);
	}
	free(calls);
	free(ticks);
	free(ns);
	free(sums_in);
	free(sums);
	free(min_ns);
	free(loc);
	free(maxloc);
	free(allrows);
	free(recs);
	free(procs);
	free(mine);
	free(region_names);
	free(names.p);
}

void popmon_mpi_finalize_hook(void)
{
	if (popmon_proc.inert || popmon_proc.finalized || !popmon_proc.mpi_initialized)
		return;
	popmon_proc.finalized = 1;
	finalize_measure();
	popmon_counters_finish();
}
