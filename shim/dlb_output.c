/* dlb_output.c: DLB's end-of-run output (--talp-output-file, --talp alone)
 * from the measurement rank 0 has just written. The TALP layouts have one
 * owner, popmon's Go side (internal/talpjson): the library runs the popmon
 * binary of its prefix (`popmon dlb-home` puts it in libexec/, beside lib/),
 * `popmon report --format talp-json|talp-csv|talp-text`, once, after the
 * measurement is complete, and waits for it (ARCHITECTURE.md). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/dlbargs.h"
#include "base/warn.h"
#include "dlb_output.h"

extern char **environ;

/* The popmon binary: $POPMON_BIN, else libexec/popmon beside this
 * library's folder (the prefix's lib/), else "popmon" on PATH (spawnp). */
static void find_popmon(char *out, size_t n)
{
	const char *bin = getenv("POPMON_BIN");
	if (bin && *bin && access(bin, X_OK) == 0) {
		snprintf(out, n, "%s", bin);
		return;
	}
	Dl_info info;
	if (dladdr((void *)find_popmon, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", info.dli_fname);
		*strrchr(dir, '/') = '\0';
		snprintf(out, n, "%s/../libexec/popmon", dir);
		if (access(out, X_OK) == 0)
			return;
	}
	snprintf(out, n, "popmon");
}

/* The job's environment without the preloaded library (the converter is
 * popmon itself, a static binary; no child of it should load us). */
static char **child_env(void)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[k++] = environ[i];
	return env;
}

/* Runs popmon report; its stdout to fd out_fd (-1: its own). 0 or -1. */
static int run_report(const char *format, const char *measurement, const char *to, int out_fd, char *why, size_t nwhy)
{
	char popmon[PATH_MAX];
	find_popmon(popmon, sizeof popmon);
	char *argv[12];
	int a = 0;
	argv[a++] = popmon;
	argv[a++] = "report";
	argv[a++] = "--format";
	argv[a++] = (char *)format;
	if (to) {
		argv[a++] = "--force";
		argv[a++] = "-o";
		argv[a++] = (char *)to;
	}
	argv[a++] = (char *)measurement;
	argv[a] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	char **env = child_env();
	pid_t pid;
	int rc = posix_spawnp(&pid, popmon, &fa, NULL, argv, env ? env : environ);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc != 0) {
		snprintf(why, nwhy, "cannot run %s: %s", popmon, strerror(rc));
		return -1;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, nwhy, "waiting for %s: %s", popmon, strerror(errno));
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(why, nwhy, "%s report failed (status %d)", popmon, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return 0;
}

/* Copies from into to: replaced, or for CSV appended without from's first
 * line (the header) when to already has rows, as DLB appends. */
static int place(const char *from, const char *to, int csv, char *why, size_t nwhy)
{
	struct stat st;
	int append = csv && stat(to, &st) == 0 && st.st_size > 0;
	FILE *in = fopen(from, "r");
	if (!in) {
		snprintf(why, nwhy, "%s: %s", from, strerror(errno));
		return -1;
	}
	FILE *out = fopen(to, append ? "a" : "w");
	if (!out) {
		snprintf(why, nwhy, "%s", strerror(errno));
		fclose(in);
		return -1;
	}
	int c, skip = append;
	while ((c = getc(in)) != EOF) {
		if (skip) {
			skip = c != '\n';
			continue;
		}
		putc(c, out);
	}
	fclose(in);
	int bad = ferror(out);
	if (fclose(out) != 0 || bad) {
		snprintf(why, nwhy, "write error");
		return -1;
	}
	return 0;
}

int popmon_dlb_output(const char *measurement, int under_popmon)
{
	const struct popmon_dlb_args *a = &popmon_dlb;
	char why[PATH_MAX + 200] = "";
	if (!a->talp)
		return 0;
	if (a->format == POPMON_DLB_OUT_NONE) {
		/* DLB prints its summary on stderr; popmon run prints its own
		 * report of the same measurement. */
		if (under_popmon || a->silent || !a->summary_pop)
			return 0;
		fflush(stderr);
		if (run_report("talp-text", measurement, NULL, 2, why, sizeof why) != 0) {
			popmon_warn_once("dlbout", "cannot print DLB's summary: %s; the measurement is %s", why,
					 measurement);
			return -1;
		}
		return 0;
	}
	const char *format = a->format == POPMON_DLB_OUT_JSON ? "talp-json"
			     : a->format == POPMON_DLB_OUT_CSV ? "talp-csv"
								: "talp-text";
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.talp", measurement);
	int rc = run_report(format, measurement, tmp, -1, why, sizeof why);
	if (rc == 0)
		rc = place(tmp, a->output, a->format == POPMON_DLB_OUT_CSV, why, sizeof why);
	unlink(tmp);
	if (rc != 0) {
		popmon_warn_once("dlbout", "cannot write DLB's output file %s: %s; the measurement is %s", a->output,
				 why, measurement);
		return -1;
	}
	return 0;
}
