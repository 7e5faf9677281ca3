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
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	/* libpopmon defines no PMPI_Comm_rank: a lookup from its handle finds
	 * the one of the MPI library it was linked against; the program's
	 * calls (and libpopmon's own PMPI_ calls) use the first in the
	 * process. */
	void *ours = dlsym(self, "PMPI_Comm_rank");
	void *used = dlsym(RTLD_DEFAULT, "PMPI_Comm_rank");
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
/* Whether name is one of the MPI functions libpopmon wraps. */
static int wrapped_name(const char *name, size_t len)
{
	for (int i = 0; i < POPMON_FN_COUNT; i++)
		if (strncmp(popmon_fn_names[i], name, len) == 0 && popmon_fn_names[i][len] == '\0')
			return 1;
	return 0;
}

/* Reads the symbol tables of the program's own file (/proc/self/exe), which
 * may define MPI functions without exporting them: its calls to those bind
 * inside the program and never reach a preloaded library, whatever the
 * dynamic linker does. Fills names with some of them (comma-separated),
 * returns how many, and sets *pmpi when the program defines PMPI_Init (MPI
 * linked statically). Bounded: a 64-bit ELF file of the running machine's
 * kind, mapped read-only, every offset checked against its size. */
static int program_defines(char *names, size_t n, int *pmpi, void (*add)(char *, size_t, const char *))
{
	*pmpi = 0;
	names[0] = '\0';
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return 0;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	int found = 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		goto out;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(map + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset > size ||
		    sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		const Elf64_Shdr *strs = &sh[sh[i].sh_link];
		if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
			continue;
		const char *str = (const char *)map + strs->sh_offset;
		const Elf64_Sym *sym = (const Elf64_Sym *)(map + sh[i].sh_offset);
		size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
		for (size_t k = 0; k < count; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
			    sym[k].st_name >= strs->sh_size)
				continue;
			const char *name = str + sym[k].st_name;
			size_t max = strs->sh_size - sym[k].st_name;
			size_t len = strnlen(name, max);
			if (len == max || len < 5)
				continue;
			if (len == 9 && memcmp(name, "PMPI_Init", 9) == 0)
				*pmpi = 1;
			if (memcmp(name, "MPI_", 4) != 0 || !wrapped_name(name, len))
				continue;
			/* The same name in .symtab and .dynsym counts once. */
			char one[96];
			snprintf(one, sizeof one, "%.*s", (int)(len < 90 ? len : 90), name);
			if (strstr(names, one) && (strstr(names, one)[len] == ',' || strstr(names, one)[len] == '\0'))
				continue;
			found++;
			add(names, n, one);
		}
	}
out:
	munmap((void *)map, size);
	return found;
}

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
	/* Functions the program defines without exporting them. */
	int pmpi = 0;
	int own = program_defines(result.names, sizeof result.names, &pmpi, list_add);
	if (own) {
		result.bypassed += own;
		from_main = 1;
		static_mpi = pmpi;
	}
	for (int i = 0; i < POPMON_FN_COUNT; i++) {
		void *ours = dlsym(self, popmon_fn_names[i]);
		if (!ours || object_of(ours) != me)
			continue; /* not wrapped for this MPI version */
		void *first = dlsym(RTLD_DEFAULT, popmon_fn_names[i]);
		if (!first || first == ours)
			continue;
		struct link_map *lm = object_of(first);
		if (lm == mainlm && own)
			continue; /* already counted from the program's own tables */
		result.bypassed++;
		list_add(result.names, sizeof result.names, popmon_fn_names[i]);
		if (!by)
			by = lm;
		from_main |= lm == mainlm;
	}
	if (result.bypassed && from_main && !static_mpi) {
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
			 "MPI is linked statically into %.200s: relink it with the shared MPI library", name);
	} else if (from_main) {
		result.kind = POPMON_BYPASS_PROGRAM;
		snprintf(result.reason, sizeof result.reason,
			 "%.200s defines %.150s itself (its own PMPI wrappers): those calls do not reach popmon; "
			 "build it without its own wrappers to measure it",
			 name, result.names);
	} else {
		result.kind = POPMON_BYPASS_PRELOAD;
		snprintf(result.reason, sizeof result.reason,
			 "%.200s wraps %.150s and comes before libpopmon in LD_PRELOAD: put libpopmon first "
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

#ifndef POPMON_NO_MPI
int popmon_program_mpi_static(void)
{
	char names[200];
	int pmpi = 0;
	program_defines(names, sizeof names, &pmpi, list_add);
	return pmpi;
}
#else
int popmon_program_mpi_static(void)
{
	return 0;
}
#endif
