/* gpu_cupti_pm.c: NVIDIA device counters through CUPTI's PM sampling
 * (CUPTI >= 12.6), for the CUPTI backend (gpu_cupti.c).
 *
 * Per device the process creates a context on (up to POPMON_GC_DEVICES):
 * the chip's counter availability, a host object that picks, for each
 * quantity of gpu_counters.h, the first metric the chip knows among a few
 * candidates (dropping optional quantities until the set needs one pass:
 * never a replay), a PM sampling object sampling every period
 * (POPMON_GPU_COUNTERS_PERIOD_US, default 1000 µs) into a hardware buffer,
 * and a counter data image decoded on this file's thread every 50 ms and
 * at every flush (region boundaries). Each completed sample's timestamps
 * (the GPU's global timer, ns of CLOCK_REALTIME) are moved onto
 * CLOCK_MONOTONIC with a calibrated offset and handed to gpu_counters.c.
 *
 * Nothing here runs on the program's threads but at a context's creation
 * (set-up, once per device) and at region boundaries (a decode). Every
 * failure leaves the counters of that device absent with one reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_cupti_pm.h"
#include "gpu_counters.h"

/* Candidate metrics per quantity, in the order tried; per_sm: an average
 * over the SMs, times their number is the sum. Required: the first three
 * (without them no computational metric exists). A chip may need several
 * passes for some sets under PM sampling, which reads one: the first
 * combination of required candidates that one pass reads wins
 * (choose_required), then per optional quantity the first candidate that
 * keeps one pass. */
struct candidate {
	const char *name;
	int per_sm;
};
#define NCAND 4
static const struct candidate candidates[POPMON_GC_NQ][NCAND] = {
	[POPMON_GC_INST] = {{"sm__inst_executed_realtime.sum", 0}, {"sm__inst_executed.sum", 0},
			    {"sm__inst_executed_realtime.avg", 1}, {NULL, 0}},
	[POPMON_GC_ACTIVE] = {{"sm__cycles_active.sum", 0}, {"sm__cycles_active.avg", 1}, {NULL, 0}, {NULL, 0}},
	[POPMON_GC_ELAPSED] = {{"sm__cycles_elapsed.sum", 0}, {"sm__cycles_elapsed.avg", 1},
			       {"gpc__cycles_elapsed.max", 1}, {"gr__cycles_elapsed.max", 1}},
	[POPMON_GC_WARPS] = {{"sm__warps_active_realtime.sum", 0}, {"sm__warps_active.sum", 0},
			     {"sm__warps_active_realtime.avg", 1}, {NULL, 0}},
	[POPMON_GC_DRAM_RD] = {{"dram__bytes_read.sum", 0}, {"dramc__bytes_read.sum", 0}, {NULL, 0}, {NULL, 0}},
	[POPMON_GC_DRAM_WR] = {{"dram__bytes_write.sum", 0}, {"dramc__bytes_write.sum", 0}, {NULL, 0}, {NULL, 0}},
};
#define REQUIRED 3
/* The order quantities are chosen in: the required ones, then DRAM
 * traffic before the warps (occupancy). */
static const int choose_order[POPMON_GC_NQ] = {POPMON_GC_INST,    POPMON_GC_ACTIVE,   POPMON_GC_ELAPSED,
					       POPMON_GC_DRAM_RD, POPMON_GC_DRAM_WR, POPMON_GC_WARPS};

#define MAX_SAMPLES 2048
#define HW_BUFFER (32u << 20)
#define DECODE_MS 50

struct pmdev {
	int started, running;
	void *obj, *host;
	uint8_t *data, *pristine;
	size_t data_size;
	const char *names[POPMON_GC_NQ]; /* the metrics read, in evaluation order */
	int qty[POPMON_GC_NQ];           /* the quantity of names[i] */
	int per_sm[POPMON_GC_NQ];        /* names[i] is an average over the SMs */
	int n;
	int sms, max_warps;
};

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct popmon_gpu_backend *pmb;
static struct pmdev pd[POPMON_GC_DEVICES];
static int profiler_ready, thread_started, clock_bad;
static int64_t offset; /* CLOCK_MONOTONIC - CLOCK_REALTIME */
static uint64_t period_ns, overflows;
static char reason[256];      /* the first failure */
static const char *used[POPMON_GC_NQ]; /* the metric read per quantity */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	if (reason[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
}

static const char *chip_of(const char *chip)
{
	return chip && *chip ? chip : "unknown";
}

/* One reason per error CUPTI documents for PM sampling, with the fix. */
static void fail_rc(const char *call, int rc, const char *chip)
{
	switch (rc) {
	case POPMON_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		fail("reading the GPU's performance counters needs administrator rights on this machine "
		     "(NVreg_RestrictProfilingToAdminUsers=1 in the NVIDIA driver): run as root, or ask the "
		     "administrator to set it to 0");
		break;
	case POPMON_CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
	case POPMON_CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
		fail("the GPU is a virtual GPU whose hypervisor does not allow reading its performance counters");
		break;
	case POPMON_CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
		fail("the GPU is a MIG instance: CUPTI does not sample the performance counters of MIG instances");
		break;
	case POPMON_CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
		fail("the GPU runs in confidential computing mode, where its performance counters cannot be read");
		break;
	case POPMON_CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case POPMON_CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case POPMON_CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
	case POPMON_CUPTI_ERROR_NOT_SUPPORTED:
	case POPMON_CUPTI_ERROR_INVALID_CHIP_NAME:
		fail("this GPU (chip %s) does not support CUPTI's PM sampling (Turing or newer, not SLI, "
		     "CMP or WSL)", chip_of(chip));
		break;
	case POPMON_CUPTI_ERROR_HARDWARE_BUSY:
		fail("another process already samples this GPU's performance counters (one sampler per GPU: on "
		     "a GPU shared by several ranks, the first one samples it)");
		break;
	case POPMON_CUPTI_ERROR_INVALID_OPERATION:
		if (strcmp(call, "cuptiPmSamplingEnable") == 0) {
			fail("another tool or process already samples this GPU's performance counters (one "
			     "sampler per GPU: on a GPU shared by several ranks, the first one samples it)");
			break;
		}
		/* fall through */
	default: {
		const char *name = NULL;
		if (!pmb->result_string || pmb->result_string(rc, &name) != 0 || !name)
			name = "error";
		fail("CUPTI's %s failed (%s, %d)", call, name, rc);
	}
	}
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int realtime_stamp(uint64_t *ns)
{
	*ns = realtime_ns();
	return 0;
}

/* ------------------------------------------------------------------ set-up */

static void host_release(struct pmdev *p);

/* The configuration of p->names[0, n) for chip: its image (*image, the
 * caller's to free) and passes, p->host initialised (host_release frees
 * it): 0; 1 when CUPTI knows one of the names not (nothing kept); -1 on an
 * error, with the reason. */
static int config_for(struct pmdev *p, const char *chip, const uint8_t *avail, int n, uint8_t **image,
		      size_t *image_size, size_t *passes)
{
	const struct popmon_pm_backend *b = &pmb->pm;
	struct popmon_host_init_params hi = {POPMON_CUPTI_SIZE(struct popmon_host_init_params, host), NULL,
					     POPMON_CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, avail, NULL};
	int rc = b->host_initialize(&hi);
	if (rc != 0) {
		fail_rc("cuptiProfilerHostInitialize", rc, chip);
		return -1;
	}
	p->host = hi.host;
	for (int i = 0; i < n; i++) {
		struct popmon_host_add_params ap = {POPMON_CUPTI_SIZE(struct popmon_host_add_params, n), NULL,
						    p->host, &p->names[i], 1};
		if (b->host_add_metrics(&ap) != 0) {
			host_release(p);
			return 1;
		}
	}
	struct popmon_host_image_params is = {POPMON_CUPTI_SIZE(struct popmon_host_image_params, image_size), NULL,
					      p->host, 0, NULL};
	uint8_t *img = NULL;
	if ((rc = b->host_image_size(&is)) != 0 || is.image_size == 0) {
		fail_rc("cuptiProfilerHostGetConfigImageSize", rc, chip);
	} else if (!(img = malloc(is.image_size))) {
		fail("no memory for the PM sampling configuration");
	} else {
		struct popmon_host_image_params gi = {POPMON_CUPTI_SIZE(struct popmon_host_image_params, image), NULL,
						      p->host, is.image_size, img};
		if ((rc = b->host_image(&gi)) == 0) {
			struct popmon_host_passes_params pp = {
				POPMON_CUPTI_SIZE(struct popmon_host_passes_params, passes), NULL, is.image_size, img, 1};
			if (b->host_passes && b->host_passes(&pp) != 0)
				pp.passes = 1;
			*image = img;
			*image_size = is.image_size;
			*passes = pp.passes;
			return 0;
		}
		free(img);
		fail_rc("cuptiProfilerHostGetConfigImage", rc, chip);
	}
	host_release(p);
	return -1;
}

static void host_release(struct pmdev *p)
{
	if (p->host && pmb->pm.host_deinitialize) {
		struct popmon_host_obj_params hd = {POPMON_CUPTI_SIZE(struct popmon_host_obj_params, host), NULL, p->host};
		pmb->pm.host_deinitialize(&hd);
	}
	p->host = NULL;
}

static void *pm_thread(void *arg);
static unsigned pm_cupti_version; /* cuptiGetVersion's, from the backend (popmon_cupti_pm_context) */

/* CUPTI's profiler started (once), the chip's name (chip, 64 bytes) and
 * its counter availability image (*availp, the caller's to free) of device
 * dev: 0, or -1 with the reason. */
static int counter_availability(const struct popmon_pm_backend *b, int dev, char *chip, uint8_t **availp)
{
	int rc;
	if (!profiler_ready) {
		struct popmon_cupti_plain_params ip = {POPMON_CUPTI_SIZE(struct popmon_cupti_plain_params, priv), NULL};
		if ((rc = b->profiler_initialize(&ip)) != 0) {
			fail_rc("cuptiProfilerInitialize", rc, NULL);
			return -1;
		}
		profiler_ready = 1;
	}
	struct popmon_cupti_chip_params cp = {POPMON_CUPTI_SIZE(struct popmon_cupti_chip_params, chip), NULL,
					      (size_t)dev, NULL};
	if ((rc = b->chip_name(&cp)) != 0) {
		fail_rc("cuptiDeviceGetChipName", rc, NULL);
		return -1;
	}
	snprintf(chip, 64, "%s", cp.chip ? cp.chip : "");
	struct popmon_pm_availability_params av = {
		POPMON_CUPTI_SIZE(struct popmon_pm_availability_params, image), NULL, (size_t)dev, 0, NULL};
	if ((rc = b->availability(&av)) != 0 || av.image_size == 0) {
		fail_rc("cuptiPmSamplingGetCounterAvailability", rc, chip);
		return -1;
	}
	uint8_t *avail = malloc(av.image_size);
	if (!avail) {
		fail("no memory for the counter availability image");
		return -1;
	}
	av.image = avail;
	if ((rc = b->availability(&av)) != 0) {
		free(avail);
		fail_rc("cuptiPmSamplingGetCounterAvailability", rc, chip);
		return -1;
	}
	*availp = avail;
	return 0;
}

static const char *const quantity_names[REQUIRED] = {"instructions", "SM active cycles", "SM elapsed cycles"};

/* Candidate k of quantity q as p's metric i; 0 when it cannot be (none, or
 * an average while the SMs are unknown). */
static int set_candidate(struct pmdev *p, int i, int q, int k)
{
	const struct candidate *c = &candidates[q][k];
	if (!c->name || (c->per_sm && p->sms <= 0))
		return 0;
	p->names[i] = c->name;
	p->qty[i] = q;
	p->per_sm[i] = c->per_sm;
	return 1;
}

/* The passes p->names[0, n) need (*passes): 0; 1 when CUPTI knows one of
 * them not; -1 on an error (the reason set). Nothing kept. */
static int passes_of(struct pmdev *p, const char *chip, const uint8_t *avail, int n, size_t *passes)
{
	uint8_t *img = NULL;
	size_t size = 0;
	int rc = config_for(p, chip, avail, n, &img, &size, passes);
	if (rc == 0) {
		free(img);
		host_release(p);
	}
	return rc;
}

/* The required quantities' metrics (p->names[0, REQUIRED)): the first
 * combination of known candidates that one pass reads (a chip may read
 * each alone in one pass and some pairs only in two): 0, or -1 with the
 * reason. */
static int choose_required(struct pmdev *p, const char *chip, const uint8_t *avail)
{
	int known[REQUIRED][NCAND] = {{0}};
	size_t most = 0, passes = 0;
	for (int q = 0; q < REQUIRED; q++) {
		int any = 0;
		for (int k = 0; k < NCAND; k++) {
			if (!set_candidate(p, 0, q, k))
				continue;
			int rc = passes_of(p, chip, avail, 1, &passes);
			if (rc < 0)
				return -1;
			if (rc == 0) {
				known[q][k] = any = 1;
				most = passes > most ? passes : most;
			}
		}
		if (!any) {
			fail("CUPTI knows no PM sampling metric for %s on this GPU (chip %s; tried %s)", quantity_names[q],
			     chip, candidates[q][0].name);
			return -1;
		}
	}
	for (int i = 0; i < NCAND * NCAND * NCAND; i++) {
		int k[REQUIRED] = {i / (NCAND * NCAND), i / NCAND % NCAND, i % NCAND};
		if (!known[0][k[0]] || !known[1][k[1]] || !known[2][k[2]])
			continue;
		for (int q = 0; q < REQUIRED; q++)
			set_candidate(p, q, q, k[q]);
		int rc = passes_of(p, chip, avail, REQUIRED, &passes);
		if (rc < 0)
			return -1;
		if (rc == 0 && passes <= 1) {
			p->n = REQUIRED;
			return 0;
		}
		if (rc == 0 && passes > most)
			most = passes;
	}
	fail("the device counters popmon reads need %zu passes on this GPU (chip %s): CUPTI's PM sampling reads one",
	     most, chip);
	return -1;
}

/* The metrics of device dev (p): the required ones in one pass
 * (choose_required), then per optional quantity, in choose_order, the
 * first candidate that keeps the set at one pass. Their configuration
 * image (*image, the caller's to free) with p->host kept for evaluation:
 * 0, or -1 with the reason (nothing kept). */
static int choose_metrics(struct pmdev *p, const char *chip, const uint8_t *avail, uint8_t **image,
			  size_t *image_size)
{
	p->n = 0;
	if (choose_required(p, chip, avail) != 0)
		return -1;
	for (int o = REQUIRED; o < POPMON_GC_NQ; o++) {
		int q = choose_order[o];
		for (int k = 0; k < NCAND; k++) {
			size_t passes = 0;
			if (!set_candidate(p, p->n, q, k))
				continue;
			int rc = passes_of(p, chip, avail, p->n + 1, &passes);
			if (rc < 0)
				return -1;
			if (rc == 0 && passes <= 1) {
				p->n++;
				break;
			}
		}
	}
	size_t passes = 0;
	int rc = config_for(p, chip, avail, p->n, image, image_size, &passes);
	if (rc != 0) {
		if (rc > 0)
			fail("CUPTI refused the PM sampling metrics it had taken on this GPU (chip %s)", chip);
		return -1;
	}
	return 0;
}

/* Starts sampling device dev (pm_lock held): 0, or -1 with the reason. */
static int start_device(int dev)
{
	const struct popmon_pm_backend *b = &pmb->pm;
	struct pmdev *p = &pd[dev];
	int rc;
	if (!b->profiler_initialize || !b->chip_name || !b->availability || !b->host_initialize ||
	    !b->host_add_metrics || !b->host_image_size || !b->host_image || !b->host_evaluate || !b->enable ||
	    !b->set_config || !b->start || !b->decode || !b->data_size || !b->data_init || !b->data_info ||
	    !b->sample_info) {
		fail("this CUPTI (API version %u) has no PM sampling: device counters need CUDA 12.6 or newer",
		     pm_cupti_version);
		return -1;
	}
	char chip[64];
	uint8_t *avail = NULL, *image = NULL;
	size_t image_size = 0;
	if (counter_availability(b, dev, chip, &avail) != 0)
		return -1;
	if (b->device_attribute) { /* the SMs: sums of per-SM averages (choose_metrics) */
		b->device_attribute(&p->sms, POPMON_CU_ATTR_MULTIPROCESSOR_COUNT, dev);
		int threads = 0;
		if (b->device_attribute(&threads, POPMON_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, dev) == 0)
			p->max_warps = threads / 32;
	}
	rc = choose_metrics(p, chip, avail, &image, &image_size);
	free(avail);
	if (rc != 0)
		return -1;
	struct popmon_pm_enable_params en = {POPMON_CUPTI_SIZE(struct popmon_pm_enable_params, obj), NULL, (size_t)dev,
					     NULL};
	if ((rc = b->enable(&en)) != 0) {
		free(image);
		host_release(p);
		fail_rc("cuptiPmSamplingEnable", rc, chip);
		return -1;
	}
	p->obj = en.obj;
	struct popmon_pm_config_params sc = {POPMON_CUPTI_SIZE(struct popmon_pm_config_params, trigger), NULL, p->obj,
					     image_size, image, HW_BUFFER, period_ns, POPMON_CUPTI_PM_TRIGGER_TIME};
	rc = b->set_config(&sc);
	if (rc == POPMON_CUPTI_ERROR_NOT_SUPPORTED) {
		/* Turing and GA100 trigger on the sys clock only: about 1 GHz,
		 * so the period is then approximate (samples carry their own
		 * times). */
		sc.trigger = POPMON_CUPTI_PM_TRIGGER_SYSCLK;
		rc = b->set_config(&sc);
	}
	free(image);
	struct popmon_pm_data_size_params ds = {POPMON_CUPTI_SIZE(struct popmon_pm_data_size_params, data_size), NULL,
						p->obj, p->names, (size_t)p->n, MAX_SAMPLES, 0};
	if (rc != 0 || (rc = b->data_size(&ds)) != 0 || ds.data_size == 0 ||
	    !(p->data = malloc(ds.data_size)) || !(p->pristine = malloc(ds.data_size))) {
		fail_rc(rc ? "cuptiPmSamplingSetConfig" : "cuptiPmSamplingGetCounterDataSize", rc ? rc : -1, chip);
		goto undo;
	}
	p->data_size = ds.data_size;
	struct popmon_pm_data_init_params di = {POPMON_CUPTI_SIZE(struct popmon_pm_data_init_params, data), NULL,
						p->obj, p->data_size, p->data};
	if ((rc = b->data_init(&di)) != 0) {
		fail_rc("cuptiPmSamplingCounterDataImageInitialize", rc, chip);
		goto undo;
	}
	memcpy(p->pristine, p->data, p->data_size);
	struct popmon_pm_obj_params st = {POPMON_CUPTI_SIZE(struct popmon_pm_obj_params, obj), NULL, p->obj};
	if ((rc = b->start(&st)) != 0) {
		fail_rc("cuptiPmSamplingStart", rc, chip);
		goto undo;
	}
	for (int i = 0; i < p->n; i++)
		if (!used[p->qty[i]])
			used[p->qty[i]] = p->names[i];
	p->running = 1;
	if (!thread_started) {
		thread_started = 1;
		popmon_helper_thread(pm_thread);
	}
	return 0;
undo:
	if (b->disable) {
		struct popmon_pm_obj_params dp = {POPMON_CUPTI_SIZE(struct popmon_pm_obj_params, obj), NULL, p->obj};
		b->disable(&dp);
	}
	p->obj = NULL;
	free(p->data);
	free(p->pristine);
	p->data = p->pristine = NULL;
	host_release(p);
	return -1;
}

void popmon_cupti_pm_context(const struct popmon_gpu_backend *b, void *ctx, unsigned cupti_version)
{
	if (popmon_gpu_counters_mode() == 0)
		return;
	int dev = -1;
	void *old = NULL;
	if (b->pm.ctx_push && b->pm.ctx_pop && b->pm.ctx_push(ctx) == 0) {
		if (b->pm.ctx_device)
			b->pm.ctx_device(&dev);
		b->pm.ctx_pop(&old);
	} else if (b->pm.ctx_device) {
		b->pm.ctx_device(&dev);
	}
	pthread_mutex_lock(&pm_lock);
	pmb = b;
	pm_cupti_version = cupti_version;
	if (!period_ns) {
		period_ns = (uint64_t)popmon_env_int("POPMON_GPU_COUNTERS_PERIOD_US", 1000, 10, 1000000) * 1000u;
		if (popmon_gpu_calibrate(realtime_stamp, &offset) != 0)
			offset = (int64_t)popmon_monotonic_ns() - (int64_t)realtime_ns();
	}
	if (dev < 0)
		fail("the device of a CUDA context could not be found (cuCtxGetDevice)");
	else if (dev >= POPMON_GC_DEVICES)
		fail("device counters are read on device ordinals 0-%d of a process; device %d is not sampled",
		     POPMON_GC_DEVICES - 1, dev);
	else if (!pd[dev].started) {
		pd[dev].started = 1;
		start_device(dev);
	}
	pthread_mutex_unlock(&pm_lock);
}

/* ------------------------------------------------------------------ decoding */

/* Decodes what device dev's hardware buffer holds (pm_lock held). */
static void decode_device(int dev)
{
	const struct popmon_pm_backend *b = &pmb->pm;
	struct pmdev *p = &pd[dev];
	for (int round = 0; round < 16 && p->running; round++) {
		struct popmon_pm_decode_params dp = {POPMON_CUPTI_SIZE(struct popmon_pm_decode_params, overflow), NULL,
						     p->obj, p->data, p->data_size, 0, 0};
		int rc = b->decode(&dp);
		if (rc == POPMON_CUPTI_ERROR_OUT_OF_MEMORY || dp.overflow)
			overflows++;
		if (rc != 0 && rc != POPMON_CUPTI_ERROR_OUT_OF_MEMORY)
			return;
		struct popmon_pm_data_info_params in = {POPMON_CUPTI_SIZE(struct popmon_pm_data_info_params, completed),
							NULL, p->data, p->data_size, 0, 0, 0};
		if (b->data_info(&in) != 0)
			return;
		for (size_t i = 0; i < in.completed; i++) {
			struct popmon_pm_sample_params sp = {POPMON_CUPTI_SIZE(struct popmon_pm_sample_params, end), NULL,
							     p->obj, p->data, p->data_size, i, 0, 0};
			double vals[POPMON_GC_NQ], v[POPMON_GC_NQ] = {0};
			struct popmon_host_eval_params ev = {POPMON_CUPTI_SIZE(struct popmon_host_eval_params, values), NULL,
							     p->host, p->data, p->data_size, i, p->names, (size_t)p->n,
							     vals};
			if (b->sample_info(&sp) != 0 || b->host_evaluate(&ev) != 0)
				continue;
			for (int k = 0; k < p->n; k++)
				v[p->qty[k]] = vals[k] * (p->per_sm[k] ? (double)p->sms : 1.0);
			int64_t s = (int64_t)sp.start + offset, e = (int64_t)sp.end + offset;
			if (!clock_bad) {
				/* The samples' clock must be the host's: a sample
				 * outside the process's life says it is not. */
				int64_t now = (int64_t)popmon_monotonic_ns();
				if (s < (int64_t)popmon_proc.t0_ns - 10000000000ll || e > now + 10000000000ll) {
					clock_bad = 1;
					fail("the GPU's sample times are not on the host's clock (CLOCK_REALTIME): device "
					     "counters cannot be attributed to regions");
				}
			}
			if (clock_bad)
				continue;
			popmon_gpu_counters_sample(dev, (uint64_t)s, (uint64_t)e, v);
		}
		memcpy(p->data, p->pristine, p->data_size);
		if (rc == POPMON_CUPTI_ERROR_OUT_OF_MEMORY || dp.stop_reason != POPMON_CUPTI_PM_DECODE_STOP_FULL)
			return;
	}
}

void popmon_cupti_pm_flush(void)
{
	if (!__atomic_load_n(&thread_started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&pm_lock);
	for (int d = 0; d < POPMON_GC_DEVICES; d++)
		if (pd[d].running)
			decode_device(d);
	pthread_mutex_unlock(&pm_lock);
}

static void *pm_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = {0, DECODE_MS * 1000000L};
		nanosleep(&ts, NULL);
		popmon_cupti_pm_flush();
	}
	return NULL;
}

/* ------------------------------------------------------------------ finish */

void popmon_cupti_pm_finish(struct popmon_gpu_proc *out)
{
	int mode = popmon_gpu_counters_mode();
	if (mode == 0)
		return;
	pthread_mutex_lock(&pm_lock);
	int any = 0;
	for (int d = 0; d < POPMON_GC_DEVICES; d++) {
		struct pmdev *p = &pd[d];
		if (!p->running)
			continue;
		decode_device(d);
		struct popmon_pm_obj_params st = {POPMON_CUPTI_SIZE(struct popmon_pm_obj_params, obj), NULL, p->obj};
		pmb->pm.stop(&st);
		decode_device(d); /* what the stop completed */
		p->running = 0;
		if (clock_bad)
			continue;
		any = 1;
		out->dev[d].sampled = 1;
		out->dev[d].sms = p->sms;
		out->dev[d].max_warps = p->max_warps;
	}
	out->ctr_period_ns = (int64_t)period_ns;
	out->ctr_overflows = (int64_t)overflows;
	for (int q = 0; q < POPMON_GC_NQ; q++)
		snprintf(out->ctr_metrics[q], sizeof out->ctr_metrics[q], "%s", used[q] ? used[q] : "");
	snprintf(out->ctr_reason, sizeof out->ctr_reason, "%s", reason);
	if (any)
		out->ctr_status = POPMON_GPU_MEASURED;
	else if (pmb || reason[0])
		out->ctr_status = POPMON_GPU_UNMEASURED;
	pthread_mutex_unlock(&pm_lock);
	if (!any && reason[0] && mode == 2)
		popmon_warn_once("gpu-counters", "GPU counters requested but %s", reason);
	if (overflows)
		popmon_warn_once("gpu-counters-lost", "the GPU's counter sample buffer overflowed %llu times: "
				 "device counters are lower bounds (set POPMON_GPU_COUNTERS_PERIOD_US higher)",
				 (unsigned long long)overflows);
}
