/* dispatch.c: where the exported MPI entry points go, and which MPI the
 * program runs (docs/library.md, "Which MPI, and where calls go").
 *
 * libpopmon exports every MPI_ and PMPI_ function name of the MPI libraries
 * (mpi_wrappers.c). On x86-64 each is a stub of one or two instructions
 * that jumps through a table, leaving every register and the stack as the
 * caller set them:
 *  - MPI_X (measured) jumps to popmon_entry[id]: its C wrapper, which calls
 *    popmon_next[id]: another PMPI tool's MPI_X when one is loaded after
 *    libpopmon (so both tools see the call), else the MPI library's PMPI_X;
 *  - PMPI_X, and both names of the functions popmon does not measure
 *    (conversions, MPI_Wtime, MPI_T_*), jump to popmon_real[slot]: the
 *    program's MPI library's own function, resolved on first use by
 *    popmon_lazy_real (so a call before libpopmon's constructor works too).
 * Why own the PMPI_ names too: libpopmon is linked against the MPI it was
 * built for, and when that is not the program's MPI (a job popmon could not
 * look into), the dynamic linker may resolve the program's MPI references
 * to libpopmon's MPI first — its Fortran bindings, for one, call PMPI_
 * functions. Owning every name sends each call to the program's MPI.
 *
 * The program's MPI is the loaded object that defines PMPI_Comm_rank; when
 * two do (libpopmon's dependency and the program's own), the program's is
 * the one of the other MPI family, or the one libpopmon does not depend on.
 * A library built for another MPI than the program's is inert: popmon_entry
 * then points at the program's MPI too, and libpopmon never calls MPI.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef POPMON_NO_MPI
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "intercept.h"

/* The program's MPI library, and whether it is the MPI this libpopmon was
 * built for. */
static void *mpi_handle;
static struct link_map *mpi_object;
static int mpi_checked, mpi_mismatch, mpi_static;
static char mpi_name[256];

/* Whether object lm itself defines sym (dlsym on a handle also searches
 * its dependencies). */
static void *defined_in(void *h, struct link_map *lm, const char *sym)
{
	void *p = dlsym(h, sym);
	return p && popmon_object_of(p) == lm ? p : NULL;
}

/* The file names of the loaded objects (off the hot path: once). */
struct objects {
	char (*names)[512];
	int n, cap;
};

static int list_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct objects *o = data;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 64;
		char (*p)[512] = realloc(o->names, sizeof *p * (size_t)cap);
		if (!p)
			return 1;
		o->names = p;
		o->cap = cap;
	}
	snprintf(o->names[o->n++], sizeof o->names[0], "%s", info->dlpi_name);
	return 0;
}

/* The libraries libpopmon itself depends on (DT_NEEDED), by file name. */
static int self_needs(const char *base)
{
	struct link_map *me = popmon_self_object();
	if (!me || !me->l_ld)
		return 0;
	const char *strtab = NULL;
	for (const ElfW(Dyn) *d = me->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)d->d_un.d_ptr;
	if (!strtab)
		return 0;
	for (const ElfW(Dyn) *d = me->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_NEEDED && strcmp(strtab + d->d_un.d_val, base) == 0)
			return 1;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Finds the program's MPI library (once; dl_iterate_phdr lists the loaded
 * objects, dlopen is called outside its callback). */
static void find_mpi(void)
{
	if (__atomic_load_n(&mpi_checked, __ATOMIC_ACQUIRE))
		return;
	struct link_map *me = popmon_self_object(), *mainlm = popmon_main_object();
	void *mainh = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (mainh && mainlm && defined_in(mainh, mainlm, "PMPI_Comm_rank")) {
		/* MPI linked into the program itself. */
		mpi_handle = mainh;
		mpi_object = mainlm;
		mpi_static = 1;
		mpi_mismatch = 1;
		popmon_object_name(mainlm, mpi_name, sizeof mpi_name);
		__atomic_store_n(&mpi_checked, 1, __ATOMIC_RELEASE);
		return;
	}
	struct objects list = {0}, *objs = &list;
	dl_iterate_phdr(list_objects, objs);
	void *cand[2] = {NULL, NULL};
	struct link_map *cand_lm[2] = {NULL, NULL};
	int n = 0;
	for (int i = 0; i < objs->n && n < 2; i++) {
		void *h = dlopen(objs->names[i], RTLD_LAZY | RTLD_NOLOAD);
		struct link_map *lm = NULL;
		if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm == me || !defined_in(h, lm, "PMPI_Comm_rank")) {
			if (h)
				dlclose(h);
			continue;
		}
		cand[n] = h;
		cand_lm[n++] = lm;
	}
	free(list.names);
	if (n == 0)
		return; /* no MPI (yet: a program may load it later): look again then */
#if defined(OPEN_MPI)
	int ours_ompi = 1;
#else
	int ours_ompi = 0;
#endif
	int pick = 0;
	int ompi0 = dlsym(cand[0], "ompi_mpi_comm_world") != NULL;
	if (n == 2) {
		/* Two MPIs (libpopmon's dependency and the program's): the
		 * program's is the other family, else the one libpopmon does not
		 * depend on. */
		int ompi1 = dlsym(cand[1], "ompi_mpi_comm_world") != NULL;
		if (ompi0 != ompi1)
			pick = ompi0 == ours_ompi ? 1 : 0;
		else
			pick = self_needs(base_name(cand_lm[0]->l_name)) ? 1 : 0;
		mpi_mismatch = 1;
		dlclose(cand[1 - pick]);
	} else if (ompi0 != ours_ompi) {
		/* One MPI, of the other family (libpopmon's own dependency was
		 * dropped at link time when nothing needed it). */
		mpi_mismatch = 1;
	}
	mpi_handle = cand[pick];
	mpi_object = cand_lm[pick];
	popmon_object_name(mpi_object, mpi_name, sizeof mpi_name);
	__atomic_store_n(&mpi_checked, 1, __ATOMIC_RELEASE);
}

int popmon_mpi_identity(char *why, size_t n)
{
	why[0] = '\0';
	find_mpi();
	if (!mpi_mismatch)
		return 1;
#if defined(OPEN_MPI)
	const char *family = "Open MPI";
#elif defined(MPICH_VERSION)
	const char *family = "MPICH";
#else
	const char *family = "another MPI";
#endif
	if (mpi_static)
		snprintf(why, n,
			 "MPI is linked statically into %.200s: popmon cannot see its MPI calls; relink it with "
			 "the shared MPI library (mpicc without -static)",
			 mpi_name);
	else
		snprintf(why, n,
			 "the program uses the MPI library %.200s, but this libpopmon was built for %s: "
			 "not measuring; run popmon with the MPI compiler wrapper of the program's MPI "
			 "(popmon run --mpicc mpicc.mpich or mpicc.openmpi)",
			 mpi_name, family);
	return 0;
}

/* ------------------------------------------------------------------ tables */

/* Returns an MPI error for a function the program's MPI does not have. */
static int missing_function(void)
{
	return MPI_ERR_OTHER;
}

/* The name behind slot of popmon_real (POPMON_FN_COUNT measured functions'
 * PMPI_ names, then each pass-through function's MPI_ and PMPI_ names). */
static void real_name(unsigned slot, char *out, size_t n)
{
	if (slot < POPMON_FN_COUNT) {
		snprintf(out, n, "P%s", popmon_fn_names[slot]);
		return;
	}
	unsigned k = slot - POPMON_FN_COUNT;
	snprintf(out, n, "%s%s", k % 2 ? "P" : "", popmon_pass_names[k / 2]);
}

void *popmon_resolve_real(unsigned slot)
{
	if (slot >= POPMON_REAL_COUNT)
		return (void *)(uintptr_t)missing_function;
	find_mpi();
	char name[128];
	real_name(slot, name, sizeof name);
	void *p = mpi_handle ? dlsym(mpi_handle, name) : NULL;
	if (!p && slot < POPMON_FN_COUNT && mpi_handle)
		p = dlsym(mpi_handle, name + 1); /* no PMPI_ version: its MPI_ */
	if (!p)
		p = (void *)(uintptr_t)missing_function;
	__atomic_store_n(&popmon_real[slot], p, __ATOMIC_RELEASE);
	return p;
}

void *popmon_resolve_next(int id)
{
	void *p = popmon_chain[id];
	if (!p) {
		p = __atomic_load_n(&popmon_real[id], __ATOMIC_ACQUIRE);
		if (p == (void *)popmon_lazy_real)
			p = popmon_resolve_real((unsigned)id);
	}
	__atomic_store_n(&popmon_next[id], p, __ATOMIC_RELEASE);
	return p;
}

void *popmon_real_fn(int id)
{
	void *p = __atomic_load_n(&popmon_real[id], __ATOMIC_ACQUIRE);
	return p == (void *)popmon_lazy_real ? popmon_resolve_real((unsigned)id) : p;
}

void popmon_entry_passthrough(void)
{
	for (int i = 0; i < POPMON_FN_COUNT; i++)
		if (popmon_entry[i])
			popmon_entry[i] = popmon_real_fn(i);
}

void *popmon_chain[POPMON_FN_COUNT];

void popmon_chain_init(void)
{
	char pname[96];
	for (int i = 0; i < POPMON_FN_COUNT; i++) {
		void *next = dlsym(RTLD_NEXT, popmon_fn_names[i]);
		if (!next)
			continue;
		/* The MPI library's MPI_X is an alias of its PMPI_X (or its own
		 * MPI_X): only another object's is a tool's wrapper. */
		struct link_map *lm = popmon_object_of(next);
		snprintf(pname, sizeof pname, "P%s", popmon_fn_names[i]);
		if (lm && lm != mpi_object && next != dlsym(RTLD_NEXT, pname))
			popmon_chain[i] = next;
	}
}

/* ------------------------------------------------------------------ lazy */

/* popmon_lazy_real: where every popmon_real slot starts. The PMPI stub that
 * jumped here left its slot in r11 (x17 on AArch64); the argument registers
 * are saved, the slot resolved, the registers restored, and the call goes
 * on to the real function as if nothing happened. */
#if defined(__x86_64__)
__asm__(".text\n"
	"\t.globl popmon_lazy_real\n"
	"\t.hidden popmon_lazy_real\n"
	"\t.type popmon_lazy_real,@function\n"
	"\t.p2align 4\n"
	"popmon_lazy_real:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tsub $192, %rsp\n"
	"\tmov %rdi, 0(%rsp)\n"
	"\tmov %rsi, 8(%rsp)\n"
	"\tmov %rdx, 16(%rsp)\n"
	"\tmov %rcx, 24(%rsp)\n"
	"\tmov %r8, 32(%rsp)\n"
	"\tmov %r9, 40(%rsp)\n"
	"\tmov %rax, 48(%rsp)\n"
	"\tmovdqu %xmm0, 64(%rsp)\n"
	"\tmovdqu %xmm1, 80(%rsp)\n"
	"\tmovdqu %xmm2, 96(%rsp)\n"
	"\tmovdqu %xmm3, 112(%rsp)\n"
	"\tmovdqu %xmm4, 128(%rsp)\n"
	"\tmovdqu %xmm5, 144(%rsp)\n"
	"\tmovdqu %xmm6, 160(%rsp)\n"
	"\tmovdqu %xmm7, 176(%rsp)\n"
	"\tmov %r11d, %edi\n"
	"\tcall popmon_resolve_real\n"
	"\tmov %rax, %r11\n"
	"\tmov 0(%rsp), %rdi\n"
	"\tmov 8(%rsp), %rsi\n"
	"\tmov 16(%rsp), %rdx\n"
	"\tmov 24(%rsp), %rcx\n"
	"\tmov 32(%rsp), %r8\n"
	"\tmov 40(%rsp), %r9\n"
	"\tmov 48(%rsp), %rax\n"
	"\tmovdqu 64(%rsp), %xmm0\n"
	"\tmovdqu 80(%rsp), %xmm1\n"
	"\tmovdqu 96(%rsp), %xmm2\n"
	"\tmovdqu 112(%rsp), %xmm3\n"
	"\tmovdqu 128(%rsp), %xmm4\n"
	"\tmovdqu 144(%rsp), %xmm5\n"
	"\tmovdqu 160(%rsp), %xmm6\n"
	"\tmovdqu 176(%rsp), %xmm7\n"
	"\tleave\n"
	"\tjmp *%r11\n"
	"\t.size popmon_lazy_real,.-popmon_lazy_real\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	"\t.globl popmon_lazy_real\n"
	"\t.hidden popmon_lazy_real\n"
	"\t.type popmon_lazy_real,%function\n"
	"\t.p2align 4\n"
	"popmon_lazy_real:\n"
	"\tstp x29, x30, [sp, #-224]!\n"
	"\tmov x29, sp\n"
	"\tstp x0, x1, [sp, #16]\n"
	"\tstp x2, x3, [sp, #32]\n"
	"\tstp x4, x5, [sp, #48]\n"
	"\tstp x6, x7, [sp, #64]\n"
	"\tstr x8, [sp, #80]\n"
	"\tstp q0, q1, [sp, #96]\n"
	"\tstp q2, q3, [sp, #128]\n"
	"\tstp q4, q5, [sp, #160]\n"
	"\tstp q6, q7, [sp, #192]\n"
	"\tmov w0, w17\n"
	"\tbl popmon_resolve_real\n"
	"\tmov x16, x0\n"
	"\tldp x0, x1, [sp, #16]\n"
	"\tldp x2, x3, [sp, #32]\n"
	"\tldp x4, x5, [sp, #48]\n"
	"\tldp x6, x7, [sp, #64]\n"
	"\tldr x8, [sp, #80]\n"
	"\tldp q0, q1, [sp, #96]\n"
	"\tldp q2, q3, [sp, #128]\n"
	"\tldp q4, q5, [sp, #160]\n"
	"\tldp q6, q7, [sp, #192]\n"
	"\tldp x29, x30, [sp], #224\n"
	"\tbr x16\n"
	"\t.size popmon_lazy_real,.-popmon_lazy_real\n");
#else
/* No stubs on this architecture: the C wrappers are the entry points and
 * PMPI_ names are the MPI library's; nothing jumps here. */
void popmon_lazy_real(void)
{
}
#endif

void *popmon_dlsym_next(const char *const *names)
{
	for (; names && *names; names++) {
		void *p = dlsym(RTLD_NEXT, *names);
		if (p)
			return p;
	}
	return NULL;
}

#else /* POPMON_NO_MPI: no MPI, nothing to dispatch */

#include <stddef.h>

#include "dispatch.h"

int popmon_mpi_identity(char *why, size_t n)
{
	if (n)
		why[0] = '\0';
	return 1;
}

void popmon_entry_passthrough(void)
{
}

void popmon_chain_init(void)
{
}

#endif /* POPMON_NO_MPI */
