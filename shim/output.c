/* output.c: writes the measurement file (docs/measurement-format.md).
 *
 * Never overwrites: the file is written under a temporary name and linked to
 * its final name, which fails if that name exists; then ".1", ".2", ... are
 * tried. A file that cannot be written (a full, read-only or over-quota file
 * system) is kept where there is room (keep_elsewhere), with one line saying
 * where; any other failure becomes one warning line; the application is
 * unaffected.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounts.h"
#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "dlb_output.h"
#include "drom.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_backends.h"
#include "gpu_counters.h"
#include "lewi.h"
#include "live.h"
#include "ompt.h"
#include "output.h"
#include "reduce.h"
#include "regions.h"

#ifndef POPMON_VERSION
#error "POPMON_VERSION is passed by the build (internal/shimbuild: -DPOPMON_VERSION from popmon.Version)"
#endif

/* ns of a signed tick count. */
static int64_t signed_ns(int64_t ticks)
{
	return ticks < 0 ? -(int64_t)popmon_ticks_to_ns((uint64_t)-ticks) : (int64_t)popmon_ticks_to_ns((uint64_t)ticks);
}

/* This process's LeWI and DROM fields (output.h). */
void popmon_proc_rec_dlb(struct popmon_proc_rec *rec)
{
	int drom_cpus = 0;
	int64_t drom_delta = 0;
	if (popmon_drom_own(&drom_cpus, &drom_delta)) {
		rec->drom = 1;
		rec->drom_own_cpus = drom_cpus;
		rec->drom_own_delta_ns = signed_ns(drom_delta);
	}
	if (!popmon_lewi_used())
		return;
	struct popmon_lewi_totals t;
	popmon_lewi_totals(&t);
	rec->lewi = 1;
	rec->lewi_own_cpus = t.own_cpus;
	rec->lewi_lent_ns = (int64_t)popmon_ticks_to_ns(t.lent);
	rec->lewi_lent_caller_ns = (int64_t)popmon_ticks_to_ns(t.lent_caller);
	rec->lewi_borrowed_ns = (int64_t)popmon_ticks_to_ns(t.borrowed);
	rec->lewi_own_delta_ns = signed_ns(t.own_delta);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when the bytes there
 * are not one (RFC 3629: no overlongs, surrogates or code points above
 * U+10FFFF). */
static int utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Writes s as a JSON string. The file is always valid UTF-8: a byte that is
 * not part of a valid UTF-8 sequence (a Latin-1 command line, a name cut in
 * the middle of a character) is written as the Latin-1 character of that
 * byte (\u00XX). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		switch (*p) {
		case '"': fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		default: break;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		int n = utf8_len(p);
		if (n == 0) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		fwrite(p, 1, (size_t)n, f);
		p += n;
	}
	fputc('"', f);
}

static const char *exe_base(char *buf, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", buf, n - 1);
	if (k <= 0)
		return "app";
	buf[k] = '\0';
	const char *b = strrchr(buf, '/');
	return b ? b + 1 : buf;
}

static void write_command(FILE *f)
{
	fputs("[", f);
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[8192];
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			int first = 1;
			for (ssize_t i = 0; i < n;) {
				if (!first)
					fputs(", ", f);
				json_str(f, buf + i);
				first = 0;
				i += (ssize_t)strlen(buf + i) + 1;
			}
		}
	}
	fputs("]", f);
}

static void write_launcher(FILE *f)
{
	const char *kind = "none", *job = NULL;
	if (getenv("SLURM_JOB_ID")) {
		kind = "slurm";
		job = getenv("SLURM_JOB_ID");
	} else if (getenv("OMPI_COMM_WORLD_SIZE")) {
		kind = "openmpi";
		job = getenv("OMPI_MCA_ess_base_jobid");
	} else if (getenv("PMI_RANK") || getenv("PMI_SIZE") || getenv("HYDRA_CONTROL_FD") ||
		   getenv("PMI_FD")) {
		kind = "mpich";
	}
	fputs("{\"kind\": ", f);
	json_str(f, kind);
	if (job && *job) {
		fputs(", \"job_id\": ", f);
		json_str(f, job);
	}
	if (strcmp(kind, "slurm") == 0) {
		/* The step of srun (absent in a batch script or salloc's shell)
		 * and its nodes, else the job's. */
		const char *step = getenv("SLURM_STEP_ID"), *nodes = getenv("SLURM_STEP_NODELIST");
		if (!nodes || !*nodes)
			nodes = getenv("SLURM_JOB_NODELIST");
		if (step && *step) {
			fputs(", \"step_id\": ", f);
			json_str(f, step);
		}
		if (nodes && *nodes) {
			fputs(", \"node_list\": ", f);
			json_str(f, nodes);
		}
	}
	fputs("}", f);
}

static void rec_field(FILE *f, const char *key, int64_t v, int *first)
{
	if (v == 0 && strcmp(key, "elapsed_ns") != 0 && strcmp(key, "useful_ns") != 0 &&
	    strcmp(key, "mpi_ns") != 0 && strcmp(key, "mpi_calls") != 0)
		return;
	fprintf(f, "%s\"%s\": %lld", *first ? "" : ", ", key, (long long)v);
	*first = 0;
}

/* ------------------------------------------------------------------ GPU */

/* The run's GPU devices, merged across processes by UUID (docs/
 * measurement-format.md): idx[p * POPMON_GPU_DEVICES + ordinal] is the
 * run-wide index of a process's device, -1 when it did not use it. */
struct gpu_map {
	int n;
	int *idx;
	int *first; /* [n]: the process and ordinal that named each device first */
};

static void gpu_map_build(const struct popmon_run *run, struct gpu_map *m)
{
	memset(m, 0, sizeof *m);
	if (!run->gpu || run->ngpu != run->nprocs)
		return;
	size_t total = (size_t)run->nprocs * POPMON_GPU_DEVICES;
	m->idx = malloc(sizeof(int) * total);
	m->first = malloc(sizeof(int) * total);
	if (!m->idx || !m->first) {
		free(m->idx);
		free(m->first);
		m->idx = m->first = NULL;
		return;
	}
	for (size_t i = 0; i < total; i++)
		m->idx[i] = -1;
	for (int p = 0; p < run->nprocs; p++) {
		const struct popmon_gpu_proc *g = &run->gpu[p];
		if (g->status != POPMON_GPU_MEASURED)
			continue;
		for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
			if (g->dev[d].used <= 0)
				continue;
			int j = 0;
			for (; j < m->n; j++) {
				int q = m->first[j] / POPMON_GPU_DEVICES, e = m->first[j] % POPMON_GPU_DEVICES;
				if (strcmp(run->gpu[q].dev[e].uuid, g->dev[d].uuid) == 0)
					break;
			}
			if (j == m->n)
				m->first[m->n++] = p * POPMON_GPU_DEVICES + d;
			m->idx[p * POPMON_GPU_DEVICES + d] = j;
		}
	}
}

static int cmp_kernel_key(const void *x, const void *y)
{
	const struct popmon_gpu_kernel_row *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->device > b->device) - (a->device < b->device);
}

static int cmp_kernel_time(const void *x, const void *y)
{
	const struct popmon_gpu_kernel_row *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return cmp_kernel_key(x, y);
}

/* The process that sampled run-wide device j's counters (the first), with
 * the device's ordinal in it; *out NULL when none did. */
static int gpu_sampler(const struct popmon_run *run, const struct gpu_map *m, int j,
		       const struct popmon_gpu_proc **out)
{
	*out = NULL;
	for (int p = 0; m->idx && p < run->nprocs; p++)
		for (int d = 0; d < POPMON_GC_DEVICES; d++)
			if (m->idx[p * POPMON_GPU_DEVICES + d] == j && run->gpu[p].dev[d].sampled) {
				*out = &run->gpu[p];
				return d;
			}
	return 0;
}

/* The "counters" object inside "gpu" (device counters): the mode, whether
 * any device was sampled, how, and why not (when a measured device was
 * not sampled). */
static void write_gpu_counters(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	const struct popmon_gpu_proc *first = NULL, *why = NULL;
	int64_t overflows = 0, mode = run->gpu[0].ctr_mode;
	for (int p = 0; p < run->ngpu; p++) {
		const struct popmon_gpu_proc *g = &run->gpu[p];
		overflows += g->ctr_overflows;
		if (g->ctr_status == POPMON_GPU_MEASURED && !first)
			first = g;
	}
	/* A reason matters when a device of the run has no sampler. */
	for (int j = 0; j < m->n && !why; j++) {
		const struct popmon_gpu_proc *sp;
		gpu_sampler(run, m, j, &sp);
		if (sp)
			continue;
		for (int p = 0; p < run->ngpu && !why; p++)
			for (int d = 0; d < POPMON_GPU_DEVICES && !why; d++)
				if (m->idx && m->idx[p * POPMON_GPU_DEVICES + d] == j && run->gpu[p].ctr_reason[0])
					why = &run->gpu[p];
	}
	if (!first && !why)
		for (int p = 0; p < run->ngpu && !why; p++)
			if (run->gpu[p].ctr_reason[0])
				why = &run->gpu[p];
	fputs(", \"counters\": {\"mode\": ", f);
	json_str(f, popmon_gpu_mode_names[mode >= 0 && mode <= 2 ? mode : 1]);
	fprintf(f, ", \"available\": %s", first ? "true" : "false");
	if (first) {
		fprintf(f, ", \"method\": \"cupti-pm-sampling\", \"period_ns\": %lld, \"metrics\": {",
			(long long)first->ctr_period_ns);
		int any = 0;
		for (int q = 0; q < POPMON_GC_NQ; q++) {
			if (!first->ctr_metrics[q][0])
				continue;
			fprintf(f, "%s\"%s\": ", any ? ", " : "", popmon_gc_keys[q]);
			json_str(f, first->ctr_metrics[q]);
			any = 1;
		}
		fprintf(f, "}, \"overflows\": %lld", (long long)overflows);
	}
	if (why || !first) {
		fputs(", \"reason\": ", f);
		if (why)
			json_str(f, why->ctr_reason);
		else if (mode == 0)
			json_str(f, "GPU counters were turned off (--gpu-counters off)");
		else
			json_str(f, "the GPU backend does not read device counters");
	}
	fputs("}", f);
}

/* The "gpu" object: the mode, whether and how the processes' GPUs were
 * measured, or why not, and the device counters. */
static void write_gpu_object(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	int measured = 0, unmeasured = 0, calibrated = 0;
	const struct popmon_gpu_proc *first = NULL, *why = NULL;
	int64_t dropped = 0, rejected = 0;
	for (int p = 0; p < run->ngpu; p++) {
		const struct popmon_gpu_proc *g = &run->gpu[p];
		if (g->status == POPMON_GPU_MEASURED) {
			measured++;
			if (!first)
				first = g;
			calibrated |= g->calibrated != 0;
			dropped += g->dropped;
			rejected += g->rejected;
		} else if (g->status == POPMON_GPU_UNMEASURED) {
			unmeasured++;
			if (!why)
				why = g;
		}
	}
	int64_t mode = run->gpu[0].mode;
	fputs(",\n  \"gpu\": {\"mode\": ", f);
	json_str(f, popmon_gpu_mode_names[mode >= 0 && mode <= 2 ? mode : 1]);
	fprintf(f, ", \"available\": %s", measured > 0 && unmeasured == 0 ? "true" : "false");
	const struct popmon_gpu_proc *v = first ? first : why;
	const struct popmon_gpu_ops *b = popmon_gpu_backend_of(v ? v->vendor : 0);
	if (measured > 0)
		fprintf(f, ", \"method\": \"%s\"", b->name);
	if (v && v->cupti_version)
		fprintf(f, ", \"%s\": %lld", b->version_key, (long long)v->cupti_version);
	if (v && v->driver_version)
		fprintf(f, ", \"%s\": %lld", b->runtime_key, (long long)v->driver_version);
	if (measured > 0)
		fprintf(f, ", \"clock\": \"%s\", \"dropped_records\": %lld, \"rejected_records\": %lld",
			calibrated ? "calibrated" : "monotonic", (long long)dropped, (long long)rejected);
	if (!(measured > 0 && unmeasured == 0)) {
		fputs(", \"reason\": ", f);
		json_str(f, why ? why->reason : run->gpu[0].reason);
	}
	if (measured > 0)
		write_gpu_counters(f, run, m);
	fputs("}", f);
}

/* "gpu_devices": each device once, by its index in the run. */
static void write_gpu_devices(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	fputs(",\n  \"gpu_devices\": [", f);
	for (int j = 0; j < m->n; j++) {
		int q = m->first[j] / POPMON_GPU_DEVICES, e = m->first[j] % POPMON_GPU_DEVICES;
		fprintf(f, "%s\n    {\"index\": %d, \"uuid\": ", j ? "," : "", j);
		json_str(f, run->gpu[q].dev[e].uuid);
		if (run->gpu[q].dev[e].name[0]) {
			fputs(", \"name\": ", f);
			json_str(f, run->gpu[q].dev[e].name);
		}
		fprintf(f, ", \"vendor\": \"%s\"", popmon_gpu_backend_of(run->gpu[q].vendor)->vendor_name);
		const struct popmon_gpu_proc *sp = NULL;
		int so = gpu_sampler(run, m, j, &sp);
		if (sp)
			fprintf(f, ", \"counters\": true, \"sms\": %lld, \"max_warps_per_sm\": %lld",
				(long long)sp->dev[so].sms, (long long)sp->dev[so].max_warps);
		fputs("}", f);
	}
	fputs("\n  ]", f);
}

/* "gpu_kernels": every process's top rows, merged by name and device. */
static void write_gpu_kernels(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	size_t nk = 0;
	for (int p = 0; p < run->nprocs; p++)
		nk += (size_t)run->gpu[p].nkernels;
	struct popmon_gpu_kernel_row *k = nk ? malloc(sizeof *k * nk) : NULL;
	size_t n = 0;
	for (int p = 0; k && p < run->nprocs; p++) {
		for (int i = 0; i < run->gpu[p].nkernels && i < POPMON_GPU_TOP; i++) {
			const struct popmon_gpu_kernel_row *r = &run->gpu[p].kernels[i];
			if (r->device < 0 || r->device >= POPMON_GPU_DEVICES)
				continue;
			int dev = m->idx[p * POPMON_GPU_DEVICES + r->device];
			if (dev < 0)
				continue;
			k[n] = *r;
			k[n].name[sizeof k[n].name - 1] = '\0';
			k[n].device = dev;
			n++;
		}
	}
	if (n) {
		qsort(k, n, sizeof *k, cmp_kernel_key);
		size_t w = 0;
		for (size_t i = 0; i < n; i++) {
			if (w && cmp_kernel_key(&k[w - 1], &k[i]) == 0) {
				k[w - 1].count += k[i].count;
				k[w - 1].time_ns += k[i].time_ns;
				if (k[i].min_ns < k[w - 1].min_ns)
					k[w - 1].min_ns = k[i].min_ns;
				if (k[i].max_ns > k[w - 1].max_ns)
					k[w - 1].max_ns = k[i].max_ns;
			} else {
				k[w++] = k[i];
			}
		}
		qsort(k, w, sizeof *k, cmp_kernel_time);
		fputs(",\n  \"gpu_kernels\": [", f);
		for (size_t i = 0; i < w && i < POPMON_GPU_TOP; i++) {
			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
			json_str(f, k[i].name);
			fprintf(f, ", \"device\": %lld, \"count\": %lld, \"time_ns\": %lld, \"min_ns\": %lld, \"max_ns\": %lld}",
				(long long)k[i].device, (long long)k[i].count, (long long)k[i].time_ns,
				(long long)k[i].min_ns, (long long)k[i].max_ns);
		}
		fputs("\n  ]", f);
	}
	free(k);
}

/* "gpu_copies": the copies by kind, summed over the processes. */
static void write_gpu_copies(FILE *f, const struct popmon_run *run)
{
	int any = 0;
	for (int c = 0; c < POPMON_GPU_NCOPY; c++) {
		int64_t cnt = 0, bytes = 0, t = 0;
		for (int p = 0; p < run->nprocs; p++) {
			cnt += run->gpu[p].copies[c].count;
			bytes += run->gpu[p].copies[c].bytes;
			t += run->gpu[p].copies[c].time_ns;
		}
		if (cnt <= 0)
			continue;
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"count\": %lld, \"bytes\": %lld, \"time_ns\": %lld}",
			any ? "," : ",\n  \"gpu_copies\": [", popmon_gpu_copy_names[c], (long long)cnt,
			(long long)bytes, (long long)t);
		any = 1;
	}
	if (any)
		fputs("\n  ]", f);
}

/* "gpu_idle": each device's idle gaps. */
static void write_gpu_idle(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	/* Idle gaps: a device shared by processes takes the largest of
	 * theirs (each process sees only its own activity). */
	fputs(",\n  \"gpu_idle\": [", f);
	for (int j = 0; j < m->n; j++) {
		int64_t gaps = 0, idle = 0, longest = 0;
		for (int p = 0; p < run->nprocs; p++) {
			for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
				if (m->idx[p * POPMON_GPU_DEVICES + d] != j)
					continue;
				const struct popmon_gpu_proc *g = &run->gpu[p];
				if (g->dev[d].gaps > gaps)
					gaps = g->dev[d].gaps;
				if (g->dev[d].idle_ns > idle)
					idle = g->dev[d].idle_ns;
				if (g->dev[d].longest_ns > longest)
					longest = g->dev[d].longest_ns;
			}
		}
		fprintf(f, "%s\n    {\"device\": %d, \"gaps\": %lld, \"idle_ns\": %lld, \"longest_ns\": %lld}",
			j ? "," : "", j, (long long)gaps, (long long)idle, (long long)longest);
	}
	fputs("\n  ]", f);
}

/* The top-level GPU keys: "gpu", then (with devices) "gpu_devices",
 * "gpu_kernels", "gpu_copies" and "gpu_idle". */
static void write_gpu(FILE *f, const struct popmon_run *run, const struct gpu_map *m)
{
	if (!run->gpu || run->ngpu <= 0)
		return;
	write_gpu_object(f, run, m);
	if (!m->n)
		return;
	write_gpu_devices(f, run, m);
	write_gpu_kernels(f, run, m);
	write_gpu_copies(f, run);
	write_gpu_idle(f, run, m);
}

static void write_extreme(FILE *f, const char *key, const struct popmon_extreme *e, const int64_t *hist)
{
	int empty = e->min_rank == INT64_MAX;
	fprintf(f, ", \"%s\": {\"min\": %lld, \"min_rank\": %lld, \"max\": %lld, \"max_rank\": %lld, \"histogram\": [",
		key, empty ? 0LL : (long long)e->min, empty ? 0LL : (long long)e->min_rank,
		empty ? 0LL : (long long)e->max, empty ? 0LL : (long long)e->max_rank);
	for (int b = 0; b < POPMON_HIST_BINS; b++)
		fprintf(f, "%s%lld", b ? ", " : "", (long long)hist[b]);
	fputs("]}", f);
}

/* A region's "summary" object (measure.RegionSummary). Doubles as %.17g:
 * they read back exactly. */
static void write_summary(FILE *f, const struct popmon_region_sum *s, int with_counters)
{
	int none = s->procs <= 0;
	fprintf(f, "{\"processes\": %lld, \"nodes\": %lld, \"cpus\": %lld, \"max_cpus\": %lld, \"sum\": {\"rank\": 0, \"cpus\": %lld",
		(long long)s->procs, (long long)s->nodes, (long long)s->cpus, (long long)s->max_cpus, (long long)s->cpus);
	for (int k = 0; k < POPMON_NSUM; k++) {
		if (!with_counters && (k == POPMON_SUM_CYCLES || k == POPMON_SUM_INSTRUCTIONS))
			continue;
		if (k == POPMON_SUM_INSTR && s->sum[k] == 0)
			continue; /* absent, as in files of older libraries */
		fprintf(f, ", \"%s\": %lld", popmon_sum_keys[k], (long long)s->sum[k]);
	}
	fprintf(f, "}, \"elapsed_max_ns\": %lld, \"min_mpi_process_ns\": %.17g, \"min_mpi_node_ns\": %.17g, "
		   "\"thread_useful_max_ns\": %lld, \"non_mpi_sum_ns\": %.17g, \"non_mpi_max_ns\": %.17g, "
		   "\"non_mpi_weighted_ns\": %.17g, \"parallel_weighted_ns\": %.17g, \"serial_weighted_ns\": %.17g, "
		   "\"serial_idle_ns\": %.17g, \"without_thread_accounts\": %lld, \"multi_cpu\": %lld, "
		   "\"talp_derived\": %lld, \"with_thread_useful\": %lld",
		(long long)s->elapsed_max, none || s->min_mpi_proc > 1e300 ? 0.0 : s->min_mpi_proc,
		none || s->min_mpi_node > 1e300 ? 0.0 : s->min_mpi_node, (long long)s->thr_useful_max, s->nonmpi_sum,
		s->nonmpi_max, s->nonmpi_w, s->par_w, s->ser_w, s->ser_idle, (long long)s->without_thr,
		(long long)s->multi_cpu, (long long)s->talp_derived, (long long)s->with_thr_useful);
	write_extreme(f, "useful_ns", &s->useful, s->hist[0]);
	write_extreme(f, "mpi_ns", &s->mpi, s->hist[1]);
	fputs("}", f);
}

/* The measurement's opening keys: the format and its version, the tool,
 * the time, the command, its folder and launcher, the MPI library, and
 * what the measurement does not cover. */
static void write_header(FILE *f, const struct popmon_run *run)
{
	char ts[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* Version 2 marks a measurement that does not cover the whole job: a
	 * reader that does not know the "incomplete" object must not take it
	 * for a complete one. Complete measurements stay version 1. */
	fprintf(f, "{\n  \"format\": \"popmon-measurement\",\n  \"version\": %d,\n",
		run->sums ? 4 : run->incomplete_reason ? 2 : 1);
	fputs("  \"tool\": {\"name\": \"popmon\", \"version\": \"" POPMON_VERSION "\"},\n", f);
	fprintf(f, "  \"timestamp\": \"%s\",\n  \"command\": ", ts);
	write_command(f);
	char cwd[PATH_MAX];
	fputs(",\n  \"cwd\": ", f);
	json_str(f, getcwd(cwd, sizeof cwd) ? cwd : "");
	fputs(",\n  \"launcher\": ", f);
	write_launcher(f);
	if (run->with_mpi) {
		fputs(",\n  \"mpi\": {\"library\": ", f);
		json_str(f, run->mpi_library);
		fputs(", \"standard\": ", f);
		json_str(f, run->mpi_standard);
		fputs(", \"thread_level\": ", f);
		json_str(f, run->thread_level ? run->thread_level : "single");
		fputs("}", f);
	}
	if (run->incomplete_reason) {
		fprintf(f, ",\n  \"incomplete\": {\"processes\": %d, \"measured\": %d, \"missing_ranks\": ",
			run->world_size, run->nprocs);
		json_str(f, run->missing ? run->missing : "");
		fputs(", \"reason\": ", f);
		json_str(f, run->incomplete_reason);
		fputs("}", f);
	}
	if (run->bypass_reason) {
		fprintf(f, ",\n  \"interception\": {\"complete\": false, \"processes\": %d, \"reason\": ",
			run->bypass_processes);
		json_str(f, run->bypass_reason);
		fputs("}", f);
	}
	/* The summary form has no per-process records: its sums were reduced. */
	long long lewi_n = run->lewi_processes, lewi_lent = run->lewi_lent_ns, lewi_borrowed = run->lewi_borrowed_ns;
	for (int p = 0; !run->sums && run->procs && p < run->nprocs; p++)
		if (run->procs[p].lewi) {
			lewi_n++;
			lewi_lent += run->procs[p].lewi_lent_ns;
			lewi_borrowed += run->procs[p].lewi_borrowed_ns;
		}
	if (lewi_n)
		fprintf(f, ",\n  \"lewi\": {\"processes\": %lld, \"lent_cpu_ns\": %lld, \"borrowed_cpu_ns\": %lld}",
			lewi_n, lewi_lent, lewi_borrowed);
	if (run->aligned)
		fprintf(f, ",\n  \"global_alignment\": {\"start_skew_ns\": %lld, \"end_skew_ns\": %lld}",
			(long long)run->start_skew_ns, (long long)run->end_skew_ns);
}

/* "git": the version-control state popmon run passed (POPMON_GIT_*). */
static void write_git(FILE *f)
{
	const char *commit = getenv("POPMON_GIT_COMMIT");
	if (commit && *commit) {
		static const char *const keys[][2] = {
			{"branch", "POPMON_GIT_BRANCH"},
			{"timestamp", "POPMON_GIT_TIMESTAMP"},
			{"default_branch", "POPMON_GIT_DEFAULT_BRANCH"},
		};
		fputs(",\n  \"git\": {\"commit\": ", f);
		json_str(f, commit);
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			const char *v = getenv(keys[k][1]);
			if (v && *v) {
				fprintf(f, ", \"%s\": ", keys[k][0]);
				json_str(f, v);
			}
		}
		const char *mr = getenv("POPMON_GIT_MERGE_REQUEST");
		if (mr && *mr && strcmp(mr, "0") != 0)
			fputs(", \"is_merge_request\": true", f);
		fputs("}", f);
	}
}

/* "clock", "counters" and "resources". */
static void write_resources(FILE *f, const struct popmon_run *run, int64_t cpus, int gpus)
{
	fprintf(f, ",\n  \"clock\": {\"source\": \"%s\"},\n", popmon_clock_tsc ? "tsc" : "monotonic");
	fputs("  \"counters\": {\"mode\": ", f);
	json_str(f, run->ctr_mode ? run->ctr_mode : "auto");
	fprintf(f, ", \"available\": %s", run->ctr_available ? "true" : "false");
	if (run->ctr_available) {
		fputs(", \"method\": ", f);
		json_str(f, run->ctr_method && *run->ctr_method ? run->ctr_method : "read");
	} else {
		fputs(", \"reason\": ", f);
		json_str(f, run->ctr_reason[0] ? run->ctr_reason : "counters unavailable");
	}
	fputs("},\n", f);
	fprintf(f,
		"  \"resources\": {\"processes\": %d, \"nodes\": %d, \"cpus\": %lld, \"gpus\": %d, "
		"\"hardware_counters\": %s},\n",
		run->nprocs, run->nnodes, (long long)cpus, gpus, run->ctr_available ? "true" : "false");

}

/* "summary" (summary form) and "processes". */
static void write_processes(FILE *f, const struct popmon_run *run)
{
	if (run->sums)
		fprintf(f, "  \"summary\": {\"processes\": %d, \"limit\": %d},\n", run->nprocs, run->summary_limit);
	fputs("  \"processes\": [", f);
	for (int p = 0; !run->sums && p < run->nprocs; p++) {
		const struct popmon_proc_rec *pr = &run->procs[p];
		fprintf(f, "%s\n    {\"rank\": %lld, \"node\": %lld, \"hostname\": ", p ? "," : "",
			(long long)pr->rank, (long long)pr->node);
		json_str(f, pr->hostname);
		fprintf(f, ", \"pid\": %lld, \"cpus\": %lld", (long long)pr->pid, (long long)pr->cpus);
		if (pr->mpi_threads > 0)
			fprintf(f, ", \"mpi_threads\": %lld", (long long)pr->mpi_threads);
		if (pr->affinity_cpus > 0)
			fprintf(f, ", \"affinity_cpus\": %lld", (long long)pr->affinity_cpus);
		if (pr->lewi)
			fprintf(f,
				", \"lewi\": {\"own_cpus\": %lld, \"lent_cpu_ns\": %lld, \"lent_caller_ns\": %lld, "
				"\"borrowed_cpu_ns\": %lld, \"own_change_cpu_ns\": %lld}",
				(long long)pr->lewi_own_cpus, (long long)pr->lewi_lent_ns, (long long)pr->lewi_lent_caller_ns,
				(long long)pr->lewi_borrowed_ns, (long long)pr->lewi_own_delta_ns);
		if (pr->drom)
			fprintf(f, ", \"drom\": {\"own_cpus\": %lld, \"own_change_cpu_ns\": %lld}",
				(long long)pr->drom_own_cpus, (long long)pr->drom_own_delta_ns);
		fputs("}", f);
	}
	fputs("\n  ]", f);
}

/* One process's record of one region: its times, counts and devices. */
static void write_region_rec(FILE *f, const struct popmon_run *run, const struct gpu_map *gm, int p,
			     const struct popmon_region_rec *x)
{
	int first = 1;
	rec_field(f, "elapsed_ns", x->elapsed_ns, &first);
	rec_field(f, "useful_ns", x->t[POPMON_ST_USEFUL], &first);
	rec_field(f, "mpi_ns", x->t[POPMON_ST_MPI], &first);
	rec_field(f, "mpi_worker_idle_ns", x->t[POPMON_ST_MPI_WORKER_IDLE], &first);
	rec_field(f, "omp_serialization_ns", x->t[POPMON_ST_OMP_SERIALIZATION], &first);
	rec_field(f, "omp_load_imbalance_ns", x->t[POPMON_ST_OMP_LOAD_IMBALANCE], &first);
	rec_field(f, "omp_scheduling_ns", x->t[POPMON_ST_OMP_SCHEDULING], &first);
	rec_field(f, "gpu_runtime_ns", x->t[POPMON_ST_GPU_RUNTIME], &first);
	rec_field(f, "instrumentation_ns", x->instr, &first);
	rec_field(f, "mpi_calls", x->mpi_calls, &first);
	rec_field(f, "omp_parallels", x->omp_parallels, &first);
	rec_field(f, "omp_tasks", x->omp_tasks, &first);
	rec_field(f, "gpu_runtime_calls", x->gpu_calls, &first);
	if (run->ctr_available) {
		/* Absent, never 0, without counters. */
		rec_field(f, "cycles", x->cycles, &first);
		rec_field(f, "instructions", x->instructions, &first);
	}
	rec_field(f, "primary_useful_ns", x->prim_useful, &first);
	rec_field(f, "primary_serial_useful_ns", x->prim_serial_useful, &first);
	rec_field(f, "primary_mpi_ns", x->prim_mpi, &first);
	rec_field(f, "primary_parallel_ns", x->prim_parallel, &first);
	rec_field(f, "parallel_useful_ns", x->par_useful, &first);
	rec_field(f, "thread_useful_max_ns", x->thr_useful_max, &first);
	int firstdev = 1;
	for (int d = 0; gm->idx && d < POPMON_GPU_DEVICES; d++) {
		int dev = gm->idx[p * POPMON_GPU_DEVICES + d];
		if (dev < 0)
			continue;
		/* K is inside A; the bounded windows may round A
		 * below K by a little: never write active < useful. */
		int64_t k = x->gpu_k[d], a = x->gpu_a[d] > k ? x->gpu_a[d] : k;
		fprintf(f, "%s{\"device\": %d, \"useful_ns\": %lld, \"active_ns\": %lld",
			firstdev ? ", \"gpu_devices\": [" : ", ", dev, (long long)k, (long long)a);
		const struct popmon_gpu_proc *g = &run->gpu[p];
		if (d < POPMON_GC_DEVICES && g->dev[d].sampled) {
			fputs(", \"counters\": {", f);
			int firstq = 1;
			for (int q = 0; q < POPMON_GC_N; q++) {
				if (q < POPMON_GC_NQ && !g->ctr_metrics[q][0])
					continue; /* not read on this GPU: absent, never 0 */
				fprintf(f, "%s\"%s\": %lld", firstq ? "" : ", ", popmon_gc_keys[q],
					(long long)x->gpu_c[d][q]);
				firstq = 0;
			}
			fputs("}", f);
		}
		fputs("}", f);
		firstdev = 0;
	}
	if (!firstdev)
		fputs("]", f);
}

/* "regions": the summary of each region, or each one's processes. */
static void write_regions(FILE *f, const struct popmon_run *run, const struct gpu_map *gm)
{
	fputs(",\n  \"regions\": [", f);
	int firstregion = 1;
	for (int r = 0; run->sums && r < run->nregions; r++) {
		if (run->sums[r].procs <= 0 && r != 0)
			continue;
		fprintf(f, "%s\n    {\"name\": ", firstregion ? "" : ",");
		firstregion = 0;
		json_str(f, run->region_names[r]);
		fputs(", \"processes\": [], \"summary\": ", f);
		write_summary(f, &run->sums[r], run->ctr_available);
		fputs("}", f);
	}
	for (int r = 0; !run->sums && r < run->nregions; r++) {
		int any = 0;
		for (int p = 0; p < run->nprocs; p++)
			any |= run->recs[(size_t)p * (size_t)run->nregions + (size_t)r].visits > 0;
		if (!any && r != 0)
			continue;
		fprintf(f, "%s\n    {\"name\": ", firstregion ? "" : ",");
		firstregion = 0;
		json_str(f, run->region_names[r]);
		fputs(", \"processes\": [", f);
		int firstp = 1;
		for (int p = 0; p < run->nprocs; p++) {
			const struct popmon_region_rec *x =
				&run->recs[(size_t)p * (size_t)run->nregions + (size_t)r];
			if (x->visits <= 0)
				continue;
			fprintf(f, "%s\n      {\"rank\": %lld, \"cpus\": %lld, \"visits\": %lld, ",
				firstp ? "" : ",", (long long)run->procs[p].rank, (long long)x->cpus,
				(long long)x->visits);
			if (x->threads > 0)
				fprintf(f, "\"threads\": %lld, ", (long long)x->threads);
			firstp = 0;
			write_region_rec(f, run, gm, p, x);
			fputs("}", f);
		}
		fputs("\n    ]}", f);
	}
	fputs("\n  ]", f);
}

/* "mpi_calls": each MPI function called, its time and bytes. */
static void write_mpi_calls(FILE *f, const struct popmon_run *run)
{
	fputs(",\n  \"mpi_calls\": [", f);
#ifdef POPMON_NO_MPI
	(void)run;
#else
	if (run->fns) {
		int first = 1;
		for (int i = 0; i < POPMON_FN_COUNT; i++) {
			const struct popmon_fn_rec *fn = &run->fns[i];
			if (fn->calls <= 0)
				continue;
			fprintf(f,
				"%s\n    {\"name\": \"%s\", \"calls\": %lld, \"time_ns\": %lld, "
				"\"min_time_ns\": %lld, \"max_time_ns\": %lld, \"max_rank\": %lld",
				first ? "" : ",", popmon_fn_names[i], (long long)fn->calls,
				(long long)fn->time_ns, (long long)fn->min_ns, (long long)fn->max_ns,
				(long long)fn->max_rank);
			/* Bytes of the calls that start transfers (even 0: the
			 * library counted them); the histogram without its
			 * trailing empty buckets. */
			if (fn->has_bytes) {
				fprintf(f, ", \"bytes_sent\": %lld, \"bytes_recv\": %lld", (long long)fn->bytes_sent,
					(long long)fn->bytes_recv);
				int last = -1;
				for (int b = 0; b < POPMON_SIZE_BINS; b++)
					if (fn->hist[b] > 0)
						last = b;
				for (int b = 0; b <= last; b++)
					fprintf(f, "%s%lld", b ? ", " : ", \"size_hist\": [", (long long)fn->hist[b]);
				if (last >= 0)
					fputs("]", f);
			}
			fputs("}", f);
			first = 0;
		}
	}
#endif
	fputs("\n  ]", f);
}

/* "openmp" and "omp_regions". */
static void write_openmp(FILE *f, const struct popmon_run *run)
{
	const char *rt, *reason;
	int ompt, maxthr;
	if (popmon_openmp_info(&rt, &ompt, &reason, &maxthr)) {
		fputs(",\n  \"openmp\": {\"runtime\": ", f);
		json_str(f, rt);
		fprintf(f, ", \"ompt\": %s", ompt ? "true" : "false");
		if (ompt && *popmon_openmp_method()) {
			fputs(", \"method\": ", f);
			json_str(f, popmon_openmp_method());
		}
		if (reason && *reason) {
			fputs(", \"reason\": ", f);
			json_str(f, reason);
		}
		if (maxthr > 0)
			fprintf(f, ", \"max_threads\": %d", maxthr);
		fputs("}", f);
	}
	if (run->nomp_rows > 0) {
		fputs(",\n  \"omp_regions\": [", f);
		for (int i = 0; i < run->nomp_rows; i++) {
			const struct popmon_omp_row *o = &run->omp_rows[i];
			fputs(i ? ",\n    {\"module\": " : "\n    {\"module\": ", f);
			json_str(f, o->module);
			fprintf(f,
				", \"address\": %llu, \"executions\": %lld, \"threads\": %lld, "
				"\"wall_ns\": %lld, \"useful_ns\": %lld, \"imbalance_ns\": %lld, "
				"\"synchronization_ns\": %lld, \"limited_parallelism_ns\": %lld, "
				"\"thread_management_ns\": %lld}",
				(unsigned long long)o->address, (long long)o->executions,
				(long long)o->threads, (long long)o->wall_ns, (long long)o->useful_ns,
				(long long)o->imbalance_ns, (long long)o->sync_ns, (long long)o->limited_ns,
				(long long)o->mgmt_ns);
		}
		fputs("\n  ]", f);
	}
}

/* "warnings": the run's, or this process's. */
static void write_warnings(FILE *f, const struct popmon_run *run)
{
	fputs(",\n  \"warnings\": [", f);
	if (run->warnings) {
		for (int i = 0; i < run->nwarnings; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, run->warnings[i] ? run->warnings[i] : "");
		}
	} else {
		for (int i = 0; i < popmon_warning_count(); i++) {
			fputs(i ? ", " : "", f);
			json_str(f, popmon_warning(i));
		}
	}
}

static void write_json(FILE *f, const struct popmon_run *run)
{
	int64_t cpus = run->sums ? run->cpus : 0;
	for (int p = 0; !run->sums && p < run->nprocs; p++)
		cpus += run->procs[p].cpus;
	struct gpu_map gm;
	gpu_map_build(run, &gm);
	write_header(f, run);
	write_git(f);
	write_resources(f, run, cpus, gm.n);
	write_processes(f, run);
	write_regions(f, run, &gm);
	write_mpi_calls(f, run);
	write_openmp(f, run);
	write_gpu(f, run, &gm);
	free(gm.idx);
	free(gm.first);
	write_warnings(f, run);
	fputs("]\n}\n", f);
}

/* Links tmp to base (or base.1, base.2, ...) without overwriting; returns
 * the name used in out, or -1. */
static int publish(const char *tmp, const char *base, char *out, size_t n)
{
	/* run.json -> run.1.json, run.2.json, ... (as popmon run does) */
	size_t blen = strlen(base);
	int ext = blen > 5 && strcmp(base + blen - 5, ".json") == 0 ? 5 : 0;
	for (int i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(out, n, "%s", base);
		else
			snprintf(out, n, "%.*s.%d%s", (int)(blen - (size_t)ext), base, i,
				 ext ? ".json" : "");
		if (link(tmp, out) == 0) {
			unlink(tmp);
			return 0;
		}
		if (errno != EEXIST) {
			/* File systems without hard links: fall back to an
			 * exclusive create and a copy. */
			if (errno == EPERM || errno == ENOTSUP || errno == EXDEV) {
				int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
				if (fd < 0) {
					if (errno == EEXIST)
						continue;
					return -1;
				}
				int in = open(tmp, O_RDONLY | O_CLOEXEC);
				char buf[65536];
				ssize_t k;
				int ok = in >= 0;
				while (ok && (k = read(in, buf, sizeof buf)) > 0)
					ok = write(fd, buf, (size_t)k) == k;
				if (in >= 0)
					close(in);
				close(fd);
				unlink(tmp);
				return ok ? 0 : -1;
			}
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* Writes the measurement as base: a temporary file next to it, then linked
 * to base (or base.1, base.2, ... when taken), or renamed over base when
 * force. Returns 0 with the name used in final, or -1 with errno saying why
 * (the temporary file removed: a partial file would only take the room left). */
static int write_as(const struct popmon_run *run, const char *base, int force, char *final, size_t n)
{
	char tmp[PATH_MAX + 560];
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", base, popmon_proc.pid);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		errno = e;
		return -1;
	}
	write_json(f, run);
	/* A full or over-quota file system shows at a write, at the flush or
	 * only at the close (NFS). */
	int e = fflush(f) != 0 ? errno : 0;
	if (!e && ferror(f))
		e = EIO;
	if (fclose(f) != 0 && !e)
		e = errno;
	if (!e && force && rename(tmp, base) != 0)
		e = errno;
	else if (!e && force)
		snprintf(final, n, "%s", base);
	else if (!e && publish(tmp, base, final, n) != 0)
		e = errno;
	if (e) {
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* Keeps a measurement that could not be written where it belongs (a full,
 * read-only or over-quota file system) where there is room, as
 * popmon-kept-[SESSION-]NAME: under popmon run first in the private folder
 * that holds the live folder (/dev/shm/popmon-UID: node-local memory, which
 * popmon run looks into and nothing removes), then in $TMPDIR, then in /tmp.
 * SESSION is the random part of the session folder's name, so that popmon run
 * finds its own (docs/library.md, "Output"). Returns 0 with the name used in
 * final, or -1. */
static int keep_elsewhere(const struct popmon_run *run, const char *base, char *final, size_t n)
{
	const char *name = strrchr(base, '/');
	name = name ? name + 1 : base;
	const char *session = getenv("POPMON_SESSION"), *tag = "";
	if (session && *session) {
		const char *s = strrchr(session, '/');
		tag = s ? s + 1 : session;
		if (strncmp(tag, ".popmon-session-", 16) == 0)
			tag += 16;
	}
	char live[PATH_MAX] = "";
	const char *ld = getenv("POPMON_LIVE_DIR");
	if (ld && ld[0] == '/' && snprintf(live, sizeof live, "%s", ld) < (int)sizeof live) {
		char *slash = strrchr(live, '/');
		if (slash && slash != live)
			*slash = '\0';
		else
			live[0] = '\0';
		/* The session's own live/ (no /dev/shm): its parent is the
		 * session folder, that just failed. */
		if (live[0] && ((session && strcmp(live, session) == 0) || !popmon_live_dir_ok(live)))
			live[0] = '\0';
	}
	const char *tmpdir = getenv("TMPDIR");
	const char *dirs[3] = {live, tmpdir && tmpdir[0] == '/' ? tmpdir : "", "/tmp"};
	for (int i = 0; i < 3; i++) {
		if (!dirs[i][0] || (i == 2 && strcmp(dirs[1], "/tmp") == 0))
			continue;
		char kbase[PATH_MAX + 512];
		int k = snprintf(kbase, sizeof kbase, "%s/popmon-kept-%.64s%s%.200s", dirs[i], tag, *tag ? "-" : "",
				 name);
		if (k <= 0 || k >= (int)sizeof kbase)
			continue;
		if (write_as(run, kbase, 0, final, n) == 0)
			return 0;
	}
	return -1;
}

/* One line to stderr, written with one call. */
static void say(const char *fmt, ...)
{
	char line[3 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
}

void popmon_write_run(const struct popmon_run *run)
{
	char base[PATH_MAX + 512], final[PATH_MAX + 544], exe[PATH_MAX];
	const char *out = getenv("POPMON_OUTPUT");
	const char *session = getenv("POPMON_SESSION");
	int announce = 0, dlb_temp = 0;
	if (session && *session) {
		char host[64] = "host";
		gethostname(host, sizeof host - 1);
		snprintf(base, sizeof base, "%.4000s/%s-%.64s-%d.json", session, run->with_mpi ? "mpi" : "proc",
			 host, popmon_proc.pid);
	} else if (out && *out) {
		snprintf(base, sizeof base, "%s", out);
		announce = 1;
	} else if (popmon_dlb.talp) {
		/* DLB_ARGS="--talp ...": DLB's output is what was asked for;
		 * the measurement it comes from is a temporary file. */
		const char *tmp = getenv("TMPDIR");
		snprintf(base, sizeof base, "%.3900s/popmon-dlb-%d.json", tmp && *tmp ? tmp : "/tmp", popmon_proc.pid);
		dlb_temp = 1;
	} else {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
		snprintf(base, sizeof base, "popmon-%.200s-%s.json", exe_base(exe, sizeof exe), ts);
		announce = 1;
	}
	struct stat st;
	if (stat(base, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* A device or pipe (/dev/null, /dev/stdout): write straight to it,
		 * never renamed over. A pipe nobody reads is not waited on
		 * (O_NONBLOCK for the open only): the measurement is kept. */
		int fd = open(base, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
		FILE *dev = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "w") : NULL;
		if (!dev) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			const char *why = e == ENXIO ? "no process reads the pipe" : strerror(e);
			if (keep_elsewhere(run, base, final, sizeof final) == 0)
				say("popmon: cannot write the measurement file %s: %s; the measurement was kept in %s", base,
				    why, final);
			else
				popmon_warn_once("write", "cannot write the measurement to %s: %s", base, why);
			return;
		}
		write_json(dev, run);
		fclose(dev);
		return;
	}
	/* popmon exec -o FILE --force replaces FILE (a link itself, not what
	 * it points to); otherwise nothing is overwritten. */
	int replace = dlb_temp || (announce && out && *out && popmon_env_switch("POPMON_OUTPUT_FORCE", 0, 0));
	if (write_as(run, base, replace, final, sizeof final) != 0) {
		/* Never lose what was measured to a full file system: keep it
		 * where there is room and say where. */
		int e = errno;
		if (keep_elsewhere(run, base, final, sizeof final) == 0)
			say("popmon: cannot write the measurement file %s: %s; the measurement was kept in %s", base,
			    strerror(e), final);
		else
			say("popmon: cannot write the measurement file %s: %s; no room to keep it elsewhere "
			    "either (the live folder's, $TMPDIR, /tmp): no measurement written",
			    base, strerror(e));
		return;
	}
	/* DLB_ARGS's output (dlb_output.c); the temporary measurement goes
	 * once it is written (kept, and named, when it could not be). */
	if (popmon_dlb_output(final, session && *session) == 0 && dlb_temp)
		unlink(final);
	if (announce && !popmon_env_switch("POPMON_QUIET", 0, 1) && !popmon_dlb.quiet && !popmon_dlb.silent) {
		char line[PATH_MAX + 640];
		int n = snprintf(line, sizeof line, "popmon: measurement written to %s\n", final);
		if (n > (int)sizeof line - 1)
			n = (int)sizeof line - 1;
		if (write(2, line, (size_t)n) < 0) {
			/* ignore */
		}
	}
}

/* popmon's own cost per call in ns (reduce.h). */
static void owncost_now(struct popmon_owncost *c)
{
	double ns = popmon_ns_per_tick() / 1024.0;
	c->in_ns = (double)popmon_owncost_ticks[0] * ns;
	c->out_ns = (double)popmon_owncost_ticks[1] * ns;
}

const char *popmon_region_rec(int idx, int cpus, struct popmon_region_rec *rec)
{
	const char *name = "";
	uint64_t visits = 0, elapsed = 0;
	struct popmon_accounts a = {0};
	memset(rec, 0, sizeof *rec);
	popmon_region_get(idx, &name, &visits, &elapsed, &a);
	rec->visits = (int64_t)visits;
	rec->threads = popmon_region_threads(idx);
	rec->cpus = rec->threads > 0 ? 1 : cpus; /* per thread: one thread at a time */
	rec->elapsed_ns = (int64_t)elapsed;
	for (int s = 0; s < POPMON_NSTATES; s++)
		rec->t[s] = (int64_t)a.t[s];
	rec->mpi_calls = (int64_t)a.mpi_calls;
	rec->omp_parallels = (int64_t)a.omp_parallels;
	rec->omp_tasks = (int64_t)a.omp_tasks;
	rec->gpu_calls = (int64_t)a.gpu_calls;
	rec->prim_useful = (int64_t)a.prim_useful;
	rec->prim_mpi = (int64_t)a.prim_mpi;
	rec->prim_parallel = (int64_t)a.x[POPMON_X_PAR_WALL];
	rec->par_useful = (int64_t)a.x[POPMON_X_PAR_USEFUL];
	rec->prim_serial_useful = rec->prim_useful - (int64_t)a.x[POPMON_X_PAR_SELF_USEFUL];
	if (rec->prim_serial_useful < 0)
		rec->prim_serial_useful = 0;
	rec->thr_useful_max = (int64_t)a.thr_useful_max;
	rec->cycles = (int64_t)a.ctr[POPMON_CTR_CYCLES];
	rec->instructions = (int64_t)a.ctr[POPMON_CTR_INSTRUCTIONS];
	for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
		rec->gpu_k[d] = (int64_t)a.gpu_k[d];
		rec->gpu_a[d] = (int64_t)a.gpu_a[d];
	}
	for (int d = 0; d < POPMON_GC_DEVICES; d++)
		for (int q = 0; q < POPMON_GC_N; q++)
			rec->gpu_c[d][q] = (int64_t)a.gpu_c[d][q];
	struct popmon_owncost own;
	owncost_now(&own);
	popmon_owncost_apply(rec, &own);
	return name;
}

/* Whether this non-MPI process is the one to write: under `popmon run` every
 * measured process writes into the session folder and popmon picks; under
 * `popmon exec` only the exec'ed process itself (POPMON_PID); with a manual
 * LD_PRELOAD, every measured process. */
static int single_should_write(void)
{
	if (getenv("POPMON_SESSION"))
		return 1;
	const char *pid = getenv("POPMON_PID");
	if (pid && *pid)
		return atoi(pid) == popmon_proc.pid;
	return 1;
}

void popmon_run_assemble(struct popmon_run *run, int with_mpi, int nprocs, int nregions, const char *const *names,
			 const struct popmon_omp_row *rows, int nrows, const struct popmon_gpu_proc *gpu, int ngpu)
{
	memset(run, 0, sizeof *run);
	run->with_mpi = with_mpi;
	run->nprocs = nprocs;
	run->nregions = nregions;
	run->region_names = names;
	run->omp_rows = rows;
	run->nomp_rows = nrows;
	run->gpu = gpu;
	run->ngpu = ngpu;
}

struct popmon_gpu_proc *popmon_run_gpu(int window)
{
	static struct popmon_gpu_proc g;
	uint64_t g0 = 0, g1;
	int rank = popmon_proc.rank;
	switch (window) {
	case POPMON_GPU_WINDOW_GLOBAL:
		g0 = (uint64_t)popmon_tick_monotonic_ns(popmon_proc.init_tick);
		g1 = (uint64_t)popmon_tick_monotonic_ns(popmon_proc.fin_tick);
		break;
	case POPMON_GPU_WINDOW_PROCESS:
		g0 = (uint64_t)popmon_tick_monotonic_ns(popmon_proc.t0_tick);
		g1 = popmon_monotonic_ns();
		rank = -1;
		break;
	default: /* POPMON_GPU_WINDOW_EXIT */
		g1 = popmon_monotonic_ns();
		break;
	}
	popmon_gpu_finish(&g, g0, g1, rank);
	return &g;
}

void popmon_write_single(void)
{
	if (!single_should_write())
		return;
	int nreg = popmon_region_count();
	if (nreg <= 0)
		return;
	const char **names = calloc((size_t)nreg, sizeof *names);
	struct popmon_region_rec *recs = calloc((size_t)nreg, sizeof *recs);
	if (!names || !recs) {
		free(names);
		free(recs);
		popmon_warn_once("nomem", "out of memory at exit: no measurement written");
		return;
	}
	int cpus = popmon_cpus();
	for (int r = 0; r < nreg; r++)
		names[r] = popmon_region_rec(r, cpus, &recs[r]);
	struct popmon_proc_rec proc = {.rank = 0, .node = 0, .pid = popmon_proc.pid, .cpus = cpus,
				       .affinity_cpus = popmon_affinity_cpus()};
	popmon_proc_rec_dlb(&proc);
	gethostname(proc.hostname, sizeof proc.hostname - 1);
	struct popmon_ctr_info ci; /* first: with counters on it may warn */
	popmon_counters_info(&ci);
	struct popmon_omp_row *rows = NULL;
	int nrows = popmon_omp_rows(&rows);
	const struct popmon_gpu_proc *gpu = popmon_run_gpu(POPMON_GPU_WINDOW_PROCESS);
	struct popmon_run run;
	popmon_run_assemble(&run, 0, 1, nreg, names, rows, nrows, gpu, 1);
	run.nnodes = 1;
	run.procs = &proc;
	run.recs = recs;
	run.ctr_mode = ci.mode;
	run.ctr_available = ci.available;
	run.ctr_method = ci.method;
	snprintf(run.ctr_reason, sizeof run.ctr_reason, "%s", ci.reason);
	popmon_write_run(&run);
	free(rows);
	free(names);
	free(recs);
}

void popmon_write_unmeasured(const char *why)
{
	const char *session = getenv("POPMON_SESSION");
	/* Under `popmon run`, popmon says it once for every rank. */
	if ((!session || !*session) && popmon_env_rank(NULL) <= 0) {
		char line[1024];
		int n = snprintf(line, sizeof line, "popmon: %s\n", why);
		if (n > (int)sizeof line - 1)
			n = (int)sizeof line - 1;
		if (write(2, line, (size_t)n) < 0) {
			/* ignore */
		}
	}
	if (!session || !*session)
		return;
	char host[64] = "host", path[PATH_MAX];
	gethostname(host, sizeof host - 1);
	snprintf(path, sizeof path, "%.3900s/unmeasured-%.64s-%d.txt", session, host, popmon_proc.pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	char buf[1100];
	int n = snprintf(buf, sizeof buf, "rank %d\n%s\n", popmon_env_rank(NULL), why);
	if (n > (int)sizeof buf - 1)
		n = (int)sizeof buf - 1;
	if (write(fd, buf, (size_t)n) < 0) {
		/* ignore */
	}
	close(fd);
}
