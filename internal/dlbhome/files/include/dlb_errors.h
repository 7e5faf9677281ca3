/* dlb_errors.h: DLB 3.7's return codes, written for popmon's DLB-compatible
 * prefix (`popmon dlb-home`) from DLB's documented interface: same names and
 * values, so programs built against it run with DLB too. */
#ifndef DLB_ERRORS_H
#define DLB_ERRORS_H

enum DLBErrorCodes {
	_DLB_ERROR_UPPER_BOUND = 3,
	DLB_NOUPDT = 2,       /* the operation needs no action */
	DLB_NOTED = 1,        /* noted, to be served later */
	DLB_SUCCESS = 0,      /* done */
	DLB_ERR_UNKNOWN = -1, /* unknown error */
	DLB_ERR_NOINIT = -2,  /* not initialized */
	DLB_ERR_INIT = -3,    /* already initialized */
	DLB_ERR_DISBLD = -4,  /* disabled */
	DLB_ERR_NOSHMEM = -5, /* no shared memory */
	DLB_ERR_NOPROC = -6,  /* no such process */
	DLB_ERR_PDIRTY = -7,  /* the process has an operation pending */
	DLB_ERR_PERM = -8,    /* the resource cannot be acquired */
	DLB_ERR_TIMEOUT = -9, /* timed out */
	DLB_ERR_NOCBK = -10,  /* no such callback */
	DLB_ERR_NOENT = -11,  /* no such entry (region) */
	DLB_ERR_NOCOMP = -12, /* not compatible with the options (e.g. DLB_PollDROM without --drom) */
	DLB_ERR_REQST = -13,  /* too many requests */
	DLB_ERR_NOMEM = -14,  /* no room in the shared memory */
	DLB_ERR_NOPOL = -15,  /* not defined in the current policy */
	DLB_ERR_NOTALP = -16, /* TALP not enabled */
	DLB_ERR_NOLEWI = -17, /* LeWI not enabled (popmon: always) */
	_DLB_ERROR_LOWER_BOUND = -18
};

#endif /* DLB_ERRORS_H */
