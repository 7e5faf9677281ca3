/* intercept.c: which MPI calls reach the library, and through which MPI.
 *
 * At MPI_Init (docs/library.md, "What is measured, what is refused"; the
 * MPI library's identity and the calls' routing are dispatch.c's):
 *  - bypass: a function whose calls resolve to another object
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

#include "intercept.h"


static struct popmon_intercept result;

/* The object (link map) that holds address p, or NULL. */
struct link_map *popmon_object_of(const void *p)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!p || !dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP))
		return NULL;
	return lm;
}

struct link_map *popmon_self_object(void)
{
	return popmon_object_of((const void *)&popmon_intercept_result);
}

struct link_map *popmon_main_object(void)
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
void popmon_object_name(struct link_map *lm, char *out, size_t n)
{
	if (!lm) {
		snprintf(out, n, "an unknown object");
		return;
	}
	if (lm == popmon_main_object() || !lm->l_name || !*lm->l_name) {
		char exe[256];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = '\0';
		snprintf(out, n, "%s", k > 0 ? exe : "the program");
		return;
	}
	const char *b = strrchr(lm->l_name, '/');
	snprintf(out, n, "%s", b ? b + 1 : lm->l_name);
}

#ifndef POPMON_NO_MPI
/* The handle of libpopmon itself (for lookups that start at it). */
static void *self_handle(void)
{
	struct link_map *me = popmon_self_object();
	if (!me || !me->l_name || !*me->l_name)
		return NULL;
	return dlopen(me->l_name, RTLD_LAZY | RTLD_NOLOAD);
}

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
	struct link_map *me = popmon_self_object(), *mainlm = popmon_main_object();
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
		if (!ours || popmon_object_of(ours) != me)
			continue; /* not wrapped for this MPI version */
		void *first = dlsym(RTLD_DEFAULT, popmon_fn_names[i]);
		if (!first || first == ours)
			continue;
		struct link_map *lm = popmon_object_of(first);
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
		static_mpi = pinit && popmon_object_of(pinit) == mainlm;
	}
	dlclose(self);
	if (!result.bypassed)
		return;
	char name[256];
	popmon_object_name(from_main ? mainlm : by, name, sizeof name);
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
