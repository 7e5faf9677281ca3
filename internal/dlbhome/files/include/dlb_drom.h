/* dlb_drom.h: DLB 3.7's DROM API (third-party resource management), written
 * for popmon's DLB-compatible prefix from DLB's documented interface, with
 * DLB's semantics and codes on popmon's node registry (docs/drom.md). */
#ifndef DLB_DROM_H
#define DLB_DROM_H

#include "dlb_errors.h"
#include "dlb_types.h"

#ifdef __cplusplus
extern "C" {
#endif

int DLB_DROM_Attach(void);
int DLB_DROM_Detach(void);
int DLB_DROM_GetNumCpus(int *ncpus);
int DLB_DROM_GetPidList(int *pidlist, int *nelems, int max_len);
int DLB_DROM_GetProcessMask(int pid, dlb_cpu_set_t mask, dlb_drom_flags_t flags);
int DLB_DROM_SetProcessMask(int pid, const_dlb_cpu_set_t mask, dlb_drom_flags_t flags);
int DLB_DROM_SetProcessMaskStr(int pid, const char *mask, dlb_drom_flags_t flags);
int DLB_DROM_PreInit(int pid, const_dlb_cpu_set_t mask, dlb_drom_flags_t flags, char ***next_environ);
int DLB_DROM_PostFinalize(int pid, dlb_drom_flags_t flags);
int DLB_DROM_RecoverStolenCpus(int pid);

#ifdef __cplusplus
}
#endif

#endif /* DLB_DROM_H */
