/* dlbargs.c: DLB_ARGS parsed (dlbargs.h). Bottom layer: calls nothing above
 * it. The option names, forms and defaults are DLB 3.7's documented ones
 * (`dlb -hh` of DLB 3.7); what popmon does with each is in the table and in
 * docs/coming-from-dlb.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/dlbargs.h"
#include "base/process.h"

struct popmon_dlb_args popmon_dlb;

enum kind { K_BOOL, K_INT, K_STR, K_TALP, K_SUMMARY, K_MODEL, K_PATH };

/* acted: 1 popmon acts on it; 0 parsed, and named in the one line when
 * given with another value than its default. */
static const struct opt {
	const char *name;
	enum kind kind;
	const char *dflt;
	int acted;
	const char *help;
} opts[] = {
	{"--talp", K_TALP, "none", 1,
	 "measure: components mpi, openmp, gpu, hwc, default (all), none; popmon measures every component it finds"},
	{"--talp-output-file", K_PATH, "", 1,
	 "rank 0 writes DLB's file at MPI_Finalize (at exit without MPI): *.json, *.csv (rows appended), other: text; %h %p %j %%"},
	{"--talp-summary", K_SUMMARY, "pop-metrics", 1,
	 "pop-metrics (acted on); process, pop-raw, node: not written"},
	{"--talp-model", K_MODEL, "hybrid-v2", 1, "hybrid-v2 (popmon's model talp); hybrid-v1: not available"},
	{"--talp-region-select", K_STR, "", 1, "[(include|exclude):]all|global|NAME,... regions measured"},
	{"--talp-openmp", K_BOOL, "no", 1, "deprecated (--talp=openmp): OpenMP is measured through OMPT whenever the runtime has it"},
	{"--talp-papi", K_BOOL, "no", 1, "deprecated (--talp=hwc): hardware counters through perf_event when the machine allows"},
	{"--ompt", K_BOOL, "yes", 1, "OpenMP through OMPT (always on in popmon)"},
	{"--talp-external-profiler", K_BOOL, "no", 1, "live accounts for popmon top/serve/query (always published by popmon)"},
	{"--talp-partial-output", K_BOOL, "no", 0, "one file per process: not written, rank 0 writes one file"},
	{"--talp-regions-per-proc", K_INT, "100", 0, "deprecated in DLB: popmon's region table is its own"},
	{"--talp-gpu-backend", K_STR, "", 0, "popmon chooses CUPTI or rocprofiler-sdk itself"},
	{"--verbose", K_STR, "no", 1, "any value: rank 0 says what popmon does with DLB_ARGS"},
	{"--verbose-format", K_STR, "node:spid", 0, "no DLB verbose messages"},
	{"--quiet", K_BOOL, "no", 1, "no popmon notes (warnings still)"},
	{"--silent", K_BOOL, "no", 1, "no popmon output at all but the requested files"},
	{"--shm-size-multiplier", K_INT, "1", 0, "popmon's live files have no DLB shared memory to size"},
	{"--shm-key", K_STR, "", 1, "the key of the LeWI, DROM and barrier registries (/dev/shm/popmon-lewi-UID-KEY, popmon-drom-UID-KEY, popmon-barrier-UID-KEY); no other DLB shared memory"},
	{"--lewi", K_BOOL, "no", 1, "LeWI: CPUs lent in blocking MPI calls, borrowed by OpenMP parallel regions; DLB's LeWI calls"},
	{"--drom", K_BOOL, "no", 1, "DROM: popmon taskset and DLB_DROM_* may change this process's CPUs; it adapts at its next parallel region or DLB_PollDROM"},
	{"--mngo", K_BOOL, "no", 0, "not in popmon"},
	{"--barrier", K_BOOL, "yes", 1, "DLB_Barrier: the node barrier of the processes that use DLB's interface"},
	{"--mode", K_STR, "polling", 0, "LeWI/DROM interaction: not in popmon"},
	{"--instrument", K_STR, "all", 0, "Extrae: not in popmon"},
	{"--instrument-counters", K_BOOL, "no", 0, "Extrae: not in popmon"},
	{"--instrument-extrae-nthreads", K_INT, "0", 0, "Extrae: not in popmon"},
	{"--lewi-keep-one-cpu", K_BOOL, "no", 1, "LeWI: a blocking MPI call keeps the process's first CPU"},
	{"--lewi-respect-cpuset", K_BOOL, "yes", 1, "LeWI: only registered CPUs are lent and borrowed (no: the node's CPUs no process registered are free to borrow)"},
	{"--lewi-respect-mask", K_BOOL, "yes", 1, "LeWI: deprecated (--lewi-respect-cpuset)"},
	{"--lewi-mpi", K_BOOL, "no", 0, "LeWI: not in popmon"},
	{"--lewi-mpi-calls", K_STR, "all", 1, "LeWI: the blocking MPI calls that lend: all, collectives, barrier, none"},
	{"--lewi-barrier", K_BOOL, "yes", 1, "LeWI: a process waiting in DLB_Barrier lends its CPUs"},
	{"--lewi-barrier-select", K_STR, "", 1, "LeWI: the node barriers whose waits lend (names, comma separated; default: DLB_Barrier's own); set, --lewi-barrier is not read"},
	{"--lewi-affinity", K_STR, "auto", 1, "LeWI: which lent CPUs a process borrows first: auto, mask and nearby-first (its NUMA nodes' first), nearby-only (only its NUMA nodes')"},
	{"--lewi-ompt", K_STR, "borrow", 0, "LeWI: not in popmon"},
	{"--lewi-greedy", K_BOOL, "no", 0, "LeWI: not in popmon"},
	{"--lewi-warmup", K_BOOL, "no", 0, "LeWI: not in popmon"},
	{"--lewi-max-parallelism", K_INT, "0", 1, "LeWI: the initial DLB_SetMaxParallelism"},
	{"--lewi-color", K_INT, "0", 0, "LeWI: not in popmon"},
	{"--mngo-mode", K_STR, "regions", 0, "not in popmon"},
	{"--mngo-helper-thread-interval", K_INT, "30", 0, "not in popmon"},
	{"--mngo-lb-in-threshold", K_INT, "10", 0, "not in popmon"},
	{"--mngo-lb-out-threshold", K_INT, "5", 0, "not in popmon"},
	{"--barrier-id", K_INT, "0", 0, "DLB_Barrier: not in popmon"},
	{"--preinit-pid", K_INT, "0", 0, "DLB_PreInit: not in popmon"},
	{"--ompt-thread-manager", K_STR, "omp5", 0, "LeWI: not in popmon"},
	{"--plugin", K_STR, "", 0, "DLB plugins: not in popmon"},
	{"--debug-opts", K_STR, "", 0, "DLB debugging: not in popmon"},
};
enum { NOPTS = sizeof opts / sizeof opts[0] };

/* 1, 0, or -1 for a word that is no boolean. */
static int bool_word(const char *v)
{
	static const char *const yes[] = {"yes", "true", "1", "on", NULL}, *const no[] = {"no", "false", "0", "off", NULL};
	for (int i = 0; yes[i]; i++)
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
	for (int i = 0; no[i]; i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	return -1;
}

static void append(char *dst, size_t n, const char *s)
{
	size_t l = strlen(dst);
	if (l + 1 < n)
		snprintf(dst + l, n - l, "%s%s", l ? ", " : "", s);
}

/* Expands --talp-output-file's tokens: %h host, %p pid, %j the job id, %%. */
static void expand(const char *in, char *out, size_t n)
{
	size_t o = 0;
	for (const char *p = in; *p && o + 1 < n; p++) {
		char tok[128] = "";
		if (*p != '%' || !p[1]) {
			out[o++] = *p;
			continue;
		}
		switch (*++p) {
		case 'h':
			gethostname(tok, sizeof tok - 1);
			break;
		case 'p':
			snprintf(tok, sizeof tok, "%d", (int)getpid());
			break;
		case 'j': {
			const char *j = getenv("SLURM_JOB_ID");
			if (!j)
				j = getenv("FLUX_JOB_ID");
			snprintf(tok, sizeof tok, "%s", j ? j : "0");
			break;
		}
		case '%':
			tok[0] = '%';
			break;
		default:
			tok[0] = '%';
			tok[1] = *p;
			break;
		}
		for (const char *t = tok; *t && o + 1 < n; t++)
			out[o++] = *t;
	}
	out[o] = '\0';
}

static void set_talp(const char *v, char *bad, size_t nbad)
{
	struct popmon_dlb_args *a = &popmon_dlb;
	a->mpi = a->openmp = a->gpu = a->hwc = 0;
	a->talp = 1;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	for (char *save = NULL, *c = strtok_r(buf, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		if (strcasecmp(c, "default") == 0 || bool_word(c) == 1)
			a->mpi = a->openmp = a->gpu = a->hwc = 1;
		else if (strcasecmp(c, "none") == 0 || bool_word(c) == 0)
			a->talp = 0;
		else if (strcasecmp(c, "mpi") == 0)
			a->mpi = 1;
		else if (strcasecmp(c, "openmp") == 0)
			a->openmp = 1;
		else if (strcasecmp(c, "gpu") == 0)
			a->gpu = 1;
		else if (strcasecmp(c, "hwc") == 0)
			a->hwc = 1;
		else {
			char what[300];
			snprintf(what, sizeof what, "--talp=%s (unknown component %s)", v, c);
			append(bad, nbad, what);
		}
	}
}

static void set_select(const char *v)
{
	struct popmon_dlb_args *a = &popmon_dlb;
	a->select_set = 1;
	a->select_include = 1;
	if (strncasecmp(v, "include:", 8) == 0)
		v += 8;
	else if (strncasecmp(v, "exclude:", 8) == 0) {
		v += 8;
		a->select_include = 0;
	}
	snprintf(a->select, sizeof a->select, ",%s,", v);
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", v);
	for (char *save = NULL, *c = strtok_r(buf, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		if (strcasecmp(c, "all") == 0)
			a->select_all = 1;
		else if (strcasecmp(c, "global") == 0)
			a->select_global = 1;
	}
}

int popmon_dlb_region_selected(const char *name)
{
	const struct popmon_dlb_args *a = &popmon_dlb;
	if (!a->select_set)
		return 1;
	int listed = a->select_all;
	if (!name || strcasecmp(name, "Global") == 0)
		listed = listed || a->select_global;
	else if (!listed) {
		char key[300];
		snprintf(key, sizeof key, ",%s,", name);
		listed = strstr(a->select, key) != NULL;
	}
	return a->select_include ? listed : !listed;
}

static void apply(const struct opt *o, const char *v, int has_value, char *ignored, size_t ni, char *bad, size_t nb)
{
	struct popmon_dlb_args *a = &popmon_dlb;
	char what[600];
	int b = 1;
	if (o->kind == K_BOOL) {
		b = has_value ? bool_word(v) : 1;
		if (b < 0) {
			snprintf(what, sizeof what, "%s=%s (not yes or no)", o->name, v);
			append(bad, nb, what);
			return;
		}
	}
	const char *name = o->name;
	/* LeWI's options are kept for lewi.c (and named below while the
	 * automatic LeWI is not wired in). */
	if (strcmp(name, "--lewi") == 0)
		a->lewi = b;
	else if (strcmp(name, "--lewi-keep-one-cpu") == 0)
		a->lewi_keep_one_cpu = b;
	else if (strcmp(name, "--lewi-respect-cpuset") == 0 || strcmp(name, "--lewi-respect-mask") == 0)
		a->lewi_respect_cpuset = b;
	else if (strcmp(name, "--lewi-affinity") == 0) {
		if (strcasecmp(v, "auto") == 0 || strcasecmp(v, "mask") == 0 || strcasecmp(v, "nearby-first") == 0)
			a->lewi_nearby_only = 0;
		else if (strcasecmp(v, "nearby-only") == 0)
			a->lewi_nearby_only = 1;
		else if (strcasecmp(v, "none") == 0 || strcasecmp(v, "spread-ifempty") == 0) {
			snprintf(what, sizeof what, "--lewi-affinity=%s (popmon's LeWI binds threads and borrows nearby CPUs first)", v);
			append(ignored, ni, what);
		} else {
			snprintf(what, sizeof what, "%s=%s (not auto, none, mask, nearby-first, nearby-only or spread-ifempty)", o->name, v);
			append(bad, nb, what);
		}
	}
	else if (strcmp(name, "--lewi-mpi-calls") == 0) {
		static const char *const w[] = {"none", "barrier", "collectives", "all"};
		static const int m[] = {0, POPMON_LEWI_CALLS_BARRIER,
					POPMON_LEWI_CALLS_BARRIER | POPMON_LEWI_CALLS_COLLECTIVE,
					POPMON_LEWI_CALLS_BARRIER | POPMON_LEWI_CALLS_COLLECTIVE | POPMON_LEWI_CALLS_P2P};
		int k = -1;
		for (int i = 0; i < 4; i++)
			if (strcasecmp(v, w[i]) == 0)
				k = i;
		if (k < 0) {
			snprintf(what, sizeof what, "%s=%s (not none, barrier, collectives or all)", o->name, v);
			append(bad, nb, what);
			return;
		}
		a->lewi_mpi_calls = m[k];
	}
	else if (strcmp(name, "--lewi-max-parallelism") == 0 && has_value) {
		char *end;
		long m = strtol(v, &end, 10);
		if (*end || m < 0 || m > 1000000) {
			snprintf(what, sizeof what, "%s=%s (not a count)", o->name, v);
			append(bad, nb, what);
			return;
		}
		a->lewi_max_parallelism = (int)m;
	} else if (strcmp(name, "--shm-key") == 0)
		snprintf(a->shm_key, sizeof a->shm_key, "%s", v);
	else if (strcmp(name, "--drom") == 0)
		a->drom = b;
	else if (strcmp(name, "--barrier") == 0)
		a->barrier = b;
	else if (strcmp(name, "--lewi-barrier") == 0)
		a->lewi_barrier = b;
	else if (strcmp(name, "--lewi-barrier-select") == 0)
		snprintf(a->lewi_barrier_select, sizeof a->lewi_barrier_select, "%s", v);
	if (strcmp(name, "--talp") == 0)
		set_talp(has_value ? v : "default", bad, nb);
	else if (strcmp(name, "--talp-output-file") == 0) {
		expand(v, a->output, sizeof a->output);
		const char *dot = strrchr(a->output, '.'), *slash = strrchr(a->output, '/');
		if (dot && (!slash || dot > slash) && strcmp(dot, ".json") == 0)
			a->format = POPMON_DLB_OUT_JSON;
		else if (dot && (!slash || dot > slash) && strcmp(dot, ".csv") == 0)
			a->format = POPMON_DLB_OUT_CSV;
		else
			a->format = *a->output ? POPMON_DLB_OUT_TEXT : POPMON_DLB_OUT_NONE;
	} else if (strcmp(name, "--talp-summary") == 0) {
		a->summary_pop = 0;
		char buf[256];
		snprintf(buf, sizeof buf, "%s", v);
		for (char *save = NULL, *c = strtok_r(buf, ":", &save); c; c = strtok_r(NULL, ":", &save)) {
			if (strcasecmp(c, "pop-metrics") == 0 || strcasecmp(c, "pop-raw") == 0)
				a->summary_pop = 1;
			else {
				snprintf(what, sizeof what, "--talp-summary=%s", c);
				append(ignored, ni, what);
			}
		}
	} else if (strcmp(name, "--talp-model") == 0) {
		if (strcasecmp(v, "hybrid-v2") != 0) {
			snprintf(what, sizeof what, "--talp-model=%s (popmon computes hybrid-v2)", v);
			append(ignored, ni, what);
		}
	} else if (strcmp(name, "--talp-region-select") == 0) {
		set_select(v);
		if (!popmon_dlb_region_selected("Global"))
			append(ignored, ni, "--talp-region-select leaving out global (popmon always measures Global)");
	}
	else if (strcmp(name, "--talp-openmp") == 0) {
		if (b)
			a->openmp = 1;
	} else if (strcmp(name, "--talp-papi") == 0) {
		if (b)
			a->hwc = 1;
	} else if (strcmp(name, "--ompt") == 0) {
		if (!b)
			append(ignored, ni, "--no-ompt (popmon always uses OMPT)");
	} else if (strcmp(name, "--talp-external-profiler") == 0)
		a->external_profiler = b;
	else if (strcmp(name, "--verbose") == 0)
		a->verbose = !has_value || bool_word(v) != 0;
	else if (strcmp(name, "--quiet") == 0)
		a->quiet = b;
	else if (strcmp(name, "--silent") == 0)
		a->silent = b;
	else if (!o->acted) {
		/* Said only when it asks for something: its default is what
		 * popmon does anyway. */
		const char *given = o->kind == K_BOOL ? (b ? "yes" : "no") : (has_value ? v : "yes");
		if (strcasecmp(given, o->dflt) != 0) {
			if (o->kind == K_BOOL)
				snprintf(what, sizeof what, "%s%s", b ? "--" : "--no-", o->name + 2);
			else
				snprintf(what, sizeof what, "%s=%s", o->name, given);
			append(ignored, ni, what);
		}
	}
}

/* Parses one option string (DLB_ARGS' form) into popmon_dlb. */
static void parse_string(const char *str, char *ignored, size_t ni, char *bad, size_t nb)
{
	char buf[8192];
	snprintf(buf, sizeof buf, "%s", str);
	for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(w, '=');
		const char *v = eq ? eq + 1 : "";
		if (eq)
			*eq = '\0';
		int neg = 0;
		const struct opt *o = NULL;
		for (int i = 0; i < NOPTS && !o; i++)
			if (strcmp(w, opts[i].name) == 0)
				o = &opts[i];
		if (!o && strncmp(w, "--no-", 5) == 0) {
			char pos[256];
			snprintf(pos, sizeof pos, "--%s", w + 5);
			for (int i = 0; i < NOPTS && !o; i++)
				if (strcmp(pos, opts[i].name) == 0 && (opts[i].kind == K_BOOL || opts[i].kind == K_TALP))
					o = &opts[i];
			neg = o != NULL;
		}
		if (!o) {
			char what[300];
			snprintf(what, sizeof what, "%s (unknown)", w);
			append(bad, nb, what);
			continue;
		}
		if (neg)
			apply(o, "no", 1, ignored, ni, bad, nb);
		else if (o->kind != K_BOOL && o->kind != K_TALP && o->kind != K_STR && !eq) {
			char what[300];
			snprintf(what, sizeof what, "%s (needs =VALUE)", w);
			append(bad, nb, what);
		} else
			apply(o, v, eq != NULL, ignored, ni, bad, nb);
	}
}

/* One `popmon:` line (one write) for what a parse of source ("DLB_ARGS",
 * "DLB_Init") ignored or did not understand; with --verbose-format, what
 * TALP does. */
static void say(const char *source, const char *ignored, const char *bad)
{
	const struct popmon_dlb_args *a = &popmon_dlb;
	if (!*ignored && !*bad && !a->verbose)
		return;
	if (a->silent || !popmon_warns_aloud())
		return;
	char line[4400];
	int n = 0;
	if (*ignored && *bad)
		n = snprintf(line, sizeof line, "popmon: %s: popmon does not act on %s; not understood: %s\n", source,
			     ignored, bad);
	else if (*ignored)
		n = snprintf(line, sizeof line, "popmon: %s: popmon does not act on %s\n", source, ignored);
	else if (*bad)
		n = snprintf(line, sizeof line, "popmon: %s: not understood: %s\n", source, bad);
	if (a->verbose && n >= 0 && n < (int)sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n,
			      "popmon: %s: TALP %s, output %s%s\n", source, a->talp ? "on" : "off",
			      a->format == POPMON_DLB_OUT_NONE ? "the summary on stderr" : a->output,
			      a->select_set ? ", regions selected" : "");
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1;
	if (n > 0 && write(2, line, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
}

void popmon_dlb_args_parse(void)
{
	struct popmon_dlb_args *a = &popmon_dlb;
	if (a->parsed)
		return;
	a->parsed = 1;
	a->summary_pop = 1;
	a->barrier = a->lewi_barrier = a->lewi_respect_cpuset = 1;
	a->lewi_mpi_calls = POPMON_LEWI_CALLS_BARRIER | POPMON_LEWI_CALLS_COLLECTIVE | POPMON_LEWI_CALLS_P2P;
	char ignored[3072] = "", bad[1024] = "";
	const char *env = getenv("DLB_ARGS");
	if (env && *env) {
		a->set = 1;
		parse_string(env, ignored, sizeof ignored, bad, sizeof bad);
	}
	/* popmon run/exec --lewi's options, in DLB's form (not DLB_ARGS: the
	 * library is not loaded as DLB for them). */
	const char *lw = getenv("POPMON_LEWI_ARGS");
	if (lw && *lw)
		parse_string(lw, ignored, sizeof ignored, bad, sizeof bad);
	say("DLB_ARGS", ignored, bad);
}

void popmon_dlb_args_add(const char *args)
{
	popmon_dlb_args_parse();
	if (args == NULL || !*args)
		return;
	char ignored[3072] = "", bad[1024] = "";
	struct popmon_dlb_args before = popmon_dlb;
	parse_string(args, ignored, sizeof ignored, bad, sizeof bad);
	/* TALP's options: the measurement and its output were decided at
	 * load; they stay as they were. */
	struct popmon_dlb_args *a = &popmon_dlb, after = popmon_dlb;
	a->talp = before.talp;
	a->mpi = before.mpi, a->openmp = before.openmp, a->gpu = before.gpu, a->hwc = before.hwc;
	a->summary_pop = before.summary_pop;
	a->external_profiler = before.external_profiler;
	a->format = before.format;
	memcpy(a->output, before.output, sizeof a->output);
	a->select_set = before.select_set, a->select_include = before.select_include;
	a->select_all = before.select_all, a->select_global = before.select_global;
	memcpy(a->select, before.select, sizeof a->select);
	if (memcmp(a, &after, sizeof after) != 0)
		append(ignored, sizeof ignored, "--talp* (TALP measures from the start: DLB_ARGS or popmon run)");
	say("DLB_Init", ignored, bad);
}

void popmon_dlb_help(FILE *f, int level)
{
	popmon_dlb_args_parse();
	fprintf(f, "DLB - Dynamic Load Balancing (popmon's TALP), DLB 3.7 interface.\n\n"
		   "DLB_ARGS options (current value from DLB_ARGS, else the default):\n");
	const char *env = getenv("DLB_ARGS");
	for (int i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		if (level < 2 && !o->acted)
			continue;
		const char *cur = o->dflt;
		char val[512];
		if (env) {
			const char *p = strstr(env, o->name);
			size_t n = strlen(o->name);
			while (p && p[n] && p[n] != '=' && p[n] != ' ')
				p = strstr(p + 1, o->name);
			if (p) {
				if (p[n] == '=') {
					size_t k = strcspn(p + n + 1, " \t");
					snprintf(val, sizeof val, "%.*s", (int)k, p + n + 1);
				} else
					snprintf(val, sizeof val, "%s", o->kind == K_TALP ? "default" : "yes");
				cur = val;
			}
		}
		fprintf(f, "  %-28s %-14s %s%s\n", o->name, *cur ? cur : "(none)", o->acted ? "" : "[not acted on] ",
			level >= 2 ? o->help : "");
	}
	if (level < 2)
		fputs("\nRun dlb -hh for every DLB option and what popmon does with it.\n", f);
}

int popmon_dlb_loaded_as(void)
{
	Dl_info info;
	if (!dladdr((void *)popmon_dlb_loaded_as, &info) || !info.dli_fname)
		return 0;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return strncmp(base, "libdlb", 6) == 0;
}

void popmon_dlb_affinity(FILE *f)
{
	cpu_set_t set;
	char host[64] = "", list[4096] = "";
	gethostname(host, sizeof host - 1);
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (!CPU_ISSET(c, &set))
				continue;
			int e = c;
			while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
				e++;
			char r[32];
			if (e > c)
				snprintf(r, sizeof r, "%s%d-%d", *list ? "," : "", c, e);
			else
				snprintf(r, sizeof r, "%s%d", *list ? "," : "", c);
			if (strlen(list) + strlen(r) < sizeof list)
				strcat(list, r);
			c = e;
		}
	}
	fprintf(f, "DLB[%s:%d]: Process affinity: [%s]\n", host, (int)getpid(), list);
}

int popmon_dlb_barrier_lends(const char *name, int flags)
{
	popmon_dlb_args_parse();
	int lewi_barrier = popmon_dlb.lewi_barrier;
	const char *select = popmon_dlb.lewi_barrier_select;
	if (strcmp(name, "default") == 0) {
		if (!*select)
			return lewi_barrier;
	} else if (flags == 1) {
		return 1; /* DLB_BARRIER_LEWI_ON */
	} else if (flags == 0) {
		return 0; /* DLB_BARRIER_LEWI_OFF */
	}
	/* DLB_BARRIER_LEWI_RUNTIME (or "default" with a selection): named? */
	size_t n = strlen(name);
	for (const char *p = select; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k + (e != NULL);
	}
	return 0;
}
