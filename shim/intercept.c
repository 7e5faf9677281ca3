/* intercept.c: which MPI calls reach the library, and through which MPI.
 *
 * Three checks, all off the hot path (docs/library.md, "What is measured,
 * what is refused"):
 *  - identity (constructor): the MPI library the program's calls resolve to
 *    must be the one libpopmon was built against (its own dependency);
 *    otherwise the library goes inert: its wrappers pass every call through
 *    untouched and it never calls MPI itself (a library built for Open MPI
 *    passing Open MPI handles to MPICH crashes the application);
 *  - chaining (constructor): another PMPI tool loaded after libpopmon (later
 *    in LD_PRELOAD) keeps working: each wrapper calls the next definition of
 *    its function instead of PMPI_ directly;
 *  - bypass (MPI_Init): a function whose calls resolve to another object
 *    first (the program itself: its own PMPI wrappers, or MPI linked
 *    statically; or a library earlier in LD_PRELOAD) never reaches the
 *    library; the measurement then says so and the reports show no tree.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifndef POPMON_NO_MPI
#include <mpi.h>
#endif

#include "core.h"

void *popmon_chain[POPMON_FN_COUNT];

static struct popmon_intercept result;

/* The object (link map) that holds address p, or NULL. */
static struct link_map *object_of(const void *p)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!p || !dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP))
		return NULL;
	return lm;
}

static struct link_map *self_object(void)
{
	return object_of((const void *)&popmon_intercept_result);
}

static struct link_map *main_object(void)
{
	void *h = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	struct link_map *lm = NULL;
	if (h) {
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0)
			lm = NULL;
		dlclose(h);
	}
	return lm;
}

/* A short, printable name of object lm: the program's path for the main
 * program, the file name otherwise. */
static void object_name(struct link_map *lm, char *out, size_t n)
{
	if (!lm) {
		snprintf(out, n, "an unknown object");
		return;
	}
	if (lm == main_object() || !lm->l_name || !*lm->l_name) {
		char exe[256];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = '\0';
		snprintf(out, n, "%s", k > 0 ? exe : "the program");
		return;
	}
	const char *b = strrchr(lm->l_name, '/');
	snprintf(out, n, "%s", b ? b + 1 : lm->l_name);
}

/* The handle of libpopmon itself (for lookups that start at it). */
static void *self_handle(void)
{
	struct link_map *me = self_object();
	if (!me || !me->l_name || !*me->l_name)
		return NULL;
	return dlopen(me->l_name, RTLD_LAZY | RTLD_NOLOAD);
}

int popmon_mpi_identity(char *why, size_t n)
{
	why[0] = '\0';
	void *self = self_handle();
	if (!self)
		return 1; /* cannot tell: trust the build */
	/* libpopmon defines no PMPI_Init: a lookup from its handle finds the
	 * one of the MPI library it was linked against; the program's calls
	 * (and libpopmon's own PMPI_ calls) use the first in the process. */
	void *ours = dlsym(self, "PMPI_Init");
	void *used = dlsym(RTLD_DEFAULT, "PMPI_Init");
	dlclose(self);
	if (!ours || !used || ours == used)
		return 1;
	char built[256], loaded[256];
	struct link_map *ul = object_of(used);
	object_name(object_of(ours), built, sizeof built);
	object_name(ul, loaded, sizeof loaded);
#if defined(OPEN_MPI)
	const char *family = "Open MPI";
#elif defined(MPICH_VERSION)
	const char *family = "MPICH";
#else
	const char *family = "another MPI";
#endif
	if (ul && ul == main_object())
		snprintf(why, n,
			 "MPI is linked statically into %s: popmon cannot see its MPI calls; relink it with "
			 "the shared MPI library (mpicc without -static)",
			 loaded);
	else
		snprintf(why, n,
			 "the program uses the MPI library %s, but this libpopmon was built for %s (%s): "
			 "not measuring; run popmon with the MPI compiler wrapper of the program's MPI "
			 "(popmon run --mpicc mpicc.mpich or mpicc.openmpi)",
			 loaded, family, built);
	return 0;
}

void popmon_chain_init(void)
{
#ifndef POPMON_NO_MPI
	char pname[96];
	for (int i = 0; i < POPMON_FN_COUNT; i++) {
		void *next = dlsym(RTLD_NEXT, popmon_fn_names[i]);
		if (!next)
			continue;
		snprintf(pname, sizeof pname, "P%s", popmon_fn_names[i]);
		/* The MPI library's MPI_X is an alias of its PMPI_X: only a
		 * different function is another tool's wrapper. */
		if (next != dlsym(RTLD_NEXT, pname))
			popmon_chain[i] = next;
	}
#endif
}

#ifndef POPMON_NO_MPI
/* Appends name to the comma-separated list out (cut at its size). */
static void list_add(char *out, size_t n, const char *name)
{
	size_t len = strlen(out);
	if (len + strlen(name) + 3 >= n) {
		if (len + 4 < n && strcmp(out + (len >= 3 ? len - 3 : 0), "...") != 0)
			strcat(out, ", ...");
		return;
	}
	if (len)
		strcat(out, ", ");
	strcat(out, name);
}
#endif

void popmon_intercept_check(void)
{
#ifndef POPMON_NO_MPI
	void *self = self_handle();
	struct link_map *me = self_object(), *mainlm = main_object();
	if (!self || !me)
		return;
	struct link_map *by = NULL;
	int from_main = 0, static_mpi = 0;
	for (int i = 0; i < POPMON_FN_COUNT; i++) {
		void *ours = dlsym(self, popmon_fn_names[i]);
		if (!ours || object_of(ours) != me)
			continue; /* not wrapped for this MPI version */
		void *first = dlsym(RTLD_DEFAULT, popmon_fn_names[i]);
		if (!first || first == ours)
			continue;
		struct link_map *lm = object_of(first);
		result.bypassed++;
		list_add(result.names, sizeof result.names, popmon_fn_names[i]);
		if (!by)
			by = lm;
		from_main |= lm == mainlm;
	}
	if (result.bypassed && from_main) {
		void *pinit = dlsym(RTLD_DEFAULT, "PMPI_Init");
		static_mpi = pinit && object_of(pinit) == mainlm;
	}
	dlclose(self);
	if (!result.bypassed)
		return;
	char name[256];
	object_name(from_main ? mainlm : by, name, sizeof name);
	if (static_mpi) {
		result.kind = POPMON_BYPASS_STATIC;
		snprintf(result.reason, sizeof result.reason,
			 "MPI is linked statically into %s: relink it with the shared MPI library", name);
	} else if (from_main) {
		result.kind = POPMON_BYPASS_PROGRAM;
		snprintf(result.reason, sizeof result.reason,
			 "%s defines %s itself (its own PMPI wrappers): those calls do not reach popmon; "
			 "build it without its own wrappers to measure it",
			 name, result.names);
	} else {
		result.kind = POPMON_BYPASS_PRELOAD;
		snprintf(result.reason, sizeof result.reason,
			 "%s wraps %s and comes before libpopmon in LD_PRELOAD: put libpopmon first "
			 "(popmon run and popmon exec do; a job script that sets LD_PRELOAD must keep it "
			 "first), then both tools see every call",
			 name, result.names);
	}
#endif
}

const struct popmon_intercept *popmon_intercept_result(void)
{
	return &result;
}
