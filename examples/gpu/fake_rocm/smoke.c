/* smoke.c: a standalone test of the fake HIP stack, with no popmon in it.
 *
 * Built twice (build.sh): as libsmoke_rocm.so, a rocprofiler-sdk tool that
 * uses the SDK the way a measuring tool would, with the fake's own
 * declarations (fakerocp.h) only — rocprofiler_configure (client id by
 * version), entry points through dlsym(RTLD_DEFAULT), HIP operation ids
 * mapped from names at run time, HIP runtime API callbacks for the calls
 * whose time matters (the record layout of the version), kernel symbols
 * from code object callbacks, a small LOSSLESS buffer on a callback thread
 * of its own, kernel dispatch and memory copy records, agents —; and, with
 * -DSMOKE_MAIN, as the program smoke_rocm, which links libamdhip64.so only
 * and runs a fixed workload. The tool checks everything it saw when the SDK
 * finalizes it (at exit) and prints "ok", or the first failed check and
 * exits 1:
 *
 *   LD_PRELOAD=OUT/libsmoke_rocm.so OUT/smoke_rocm             (prints ok)
 *   ROCP_TOOL_LIBRARIES=OUT/libsmoke_rocm.so OUT/smoke_rocm    (prints ok)
 *   with FAKEROCM_VERSION=0.4.0|0.6.0|1.0.0, FAKEROCM_OP_SHIFT=N,
 *   FAKEHIP_DEVICES=2 (adds a peer copy and work on device 1)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fakehip.h"
#include "fakerocp.h"

#define TINY 200 /* launches that overrun the tool's small buffer */

static int devices_from_env(void)
{
	const char *s = getenv("FAKEHIP_DEVICES");
	int n = s ? atoi(s) : 1;
	return n >= 1 && n <= 16 ? n : 1;
}

#ifdef SMOKE_MAIN /* ---- the program ------------------------------------ */

#define CHECK(x)                                                          \
	do {                                                              \
		if ((x) != 0) {                                           \
			fprintf(stderr, "smoke_rocm: %s failed\n", #x);   \
			return 1;                                         \
		}                                                         \
	} while (0)

int main(void)
{
	int n = 0, d = -1;
	CHECK(fakehip_get_device_count(&n)); /* the first call: registration */
	CHECK(fakehip_set_device(0));
	CHECK(fakehip_launch("k1", 20, 0));
	CHECK(fakehip_module_launch("k2", 10, 1));
	CHECK(fakehip_nested_launch("k3", 5, 0));
	CHECK(fakehip_memcpy(1 << 20, 10, FAKEHIP_HTOD, 0, 2, 0));
	CHECK(fakehip_memcpy(1 << 20, 5, FAKEHIP_DTOH, 1, 2, 0));
	CHECK(fakehip_memcpy(4096, 2, FAKEHIP_DTOD, 1, 3, 0));
	CHECK(fakehip_memset(4096, 1, 3));
	CHECK(fakehip_get_device(&d));
	CHECK(fakehip_get_last_error());
	CHECK(fakehip_sync());
	for (int i = 0; i < TINY; i++)
		CHECK(fakehip_launch("tiny", 0.01, 4));
	CHECK(fakehip_stream_sync(4));
	CHECK(fakehip_malloc(1 << 20, 1));
	CHECK(fakehip_free(1));
	if (n >= 2) {
		CHECK(fakehip_set_device(1));
		CHECK(fakehip_memcpy(1 << 20, 3, FAKEHIP_PTOP, 0, 0, 0));
		CHECK(fakehip_launch("k1", 2, 0));
		CHECK(fakehip_sync());
	}
	if (n != devices_from_env() || d != 0)
		return fprintf(stderr, "smoke_rocm: %d devices, current %d\n", n, d), 1;
	puts("smoke_rocm: workload done");
	fflush(stdout);
	return 0;
}

#else /* ---- the tool --------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))
#define FAIL(...)                                                     \
	do {                                                          \
		fprintf(stderr, "smoke_rocm tool: " __VA_ARGS__);     \
		fputc('\n', stderr);                                  \
		fflush(stderr);                                       \
		_exit(1);                                             \
	} while (0)

static struct {
	int (*get_version)(uint32_t *, uint32_t *, uint32_t *);
	int (*timestamp)(uint64_t *);
	int (*create_context)(frp_context_t *);
	int (*start_context)(frp_context_t);
	int (*context_is_valid)(frp_context_t, int *);
	int (*configure_cb)(frp_context_t, int32_t, const int32_t *, size_t, void (*)(void), void *);
	int (*iterate_ops)(int32_t, frp_op_iter_t, void *);
	int (*op_name)(int32_t, int32_t, const char **, uint64_t *);
	int (*create_buffer)(frp_context_t, size_t, size_t, int, frp_buffer_cb_t, void *, frp_buffer_t *);
	int (*configure_buffer)(frp_context_t, int32_t, const int32_t *, size_t, frp_buffer_t);
	int (*flush)(frp_buffer_t);
	int (*agents)(uint32_t, frp_agents_cb_t, size_t, void *);
	int (*create_thread)(frp_cb_thread_t *);
	int (*assign_thread)(frp_buffer_t, frp_cb_thread_t);
} sdk;

static const char *const wanted[] = { "hipLaunchKernel", "hipModuleLaunchKernel", "hipExtLaunchKernel",
				      "hipDeviceSynchronize", "hipStreamSynchronize", "hipMemcpy",
				      "hipMemcpyAsync", "hipMemcpyPeer", "hipMemsetAsync", "hipMalloc",
				      "hipFree", "hipSetDevice" };
#define NWANTED (int)(sizeof wanted / sizeof wanted[0])
enum { W_LAUNCH, W_MODULE, W_EXT, W_DSYNC, W_SSYNC, W_MEMCPY, W_MEMCPY_ASYNC, W_PEER, W_MEMSET, W_MALLOC, W_FREE,
       W_SET };

#define MAXK 1024
static struct {
	uint32_t version;
	int v1, v06, configured, initialized, finalized, ndev, ngpu, cpu_node;
	uint64_t gpu_agent[16], cpu_agent, t0;
	int32_t ids[NWANTED];
	int enter[NWANTED], exit[NWANTED], unknown_op, depth_max, bad_user, bad_tid;
	pid_t main_tid;
	frp_context_t ctx;
	frp_buffer_t buf;
	int deliveries, code_objects, unloads, bad_header;
	long delivery_tid;
	uint64_t drops;
	struct {
		uint64_t id;
		char *name;
	} syms[MAXK];
	int nsyms;
	struct {
		uint64_t kernel_id, agent, start, end;
	} kernels[MAXK];
	int nkernels;
	struct {
		uint32_t op;
		uint64_t dst, src, bytes, start, end, size;
	} copies[16];
	int ncopies;
} st;
static _Thread_local int depth;

static uint64_t ts(void)
{
	uint64_t t = 0;
	sdk.timestamp(&t);
	return t;
}

static void on_api(int32_t kind, int32_t op, int32_t phase, frp_user_data_t *user, uint64_t tid,
		   const void *payload)
{
	if (kind != FRP_CB_KIND_HIP_RUNTIME)
		return;
	int w = -1;
	for (int i = 0; i < NWANTED; i++)
		if (st.ids[i] == op)
			w = i;
	if (w < 0) {
		st.unknown_op++;
		return;
	}
	if ((pid_t)tid != (pid_t)syscall(SYS_gettid) || !payload || *(const uint64_t *)payload == 0)
		st.bad_tid++;
	if (phase == FRP_PHASE_ENTER) {
		st.enter[w]++;
		user->value = ts();
		if (++depth > st.depth_max)
			st.depth_max = depth;
	} else if (phase == FRP_PHASE_EXIT) {
		st.exit[w]++;
		if (user->value == 0 || user->value > ts())
			st.bad_user++;
		depth--;
	}
}

static void on_code_object(int32_t op, int32_t phase, const void *payload)
{
	if (op == FRP_CODE_OBJECT_LOAD) {
		if (phase == FRP_PHASE_ENTER)
			st.code_objects++;
		else
			st.unloads++;
	} else if (op == FRP_CODE_OBJECT_KERNEL_SYMBOL && phase == FRP_PHASE_ENTER) {
		const frp_kernel_symbol_t *s = payload;
		if (s->size != FRP_KSYM_SIZE(st.v06) || !s->kernel_name || st.nsyms == MAXK)
			FAIL("kernel symbol payload: size %llu", (unsigned long long)s->size);
		st.syms[st.nsyms].id = s->kernel_id;
		st.syms[st.nsyms++].name = strdup(s->kernel_name); /* valid until unloaded */
	}
}

static void cb0(frp_cb_record0_t r, frp_user_data_t *user, void *arg)
{
	(void)arg;
	if (r.ctx.handle != st.ctx.handle)
		FAIL("callback record of context %llu", (unsigned long long)r.ctx.handle);
	if (r.kind == FRP_CB_KIND_CODE_OBJECT)
		on_code_object(r.op, r.phase, r.payload);
	else
		on_api(r.kind, r.op, r.phase, user, r.tid, r.payload);
}

static void cb1(frp_cb_record1_t r, frp_user_data_t *user, void *arg)
{
	(void)arg;
	if (r.ctx.handle != st.ctx.handle)
		FAIL("callback record of context %llu", (unsigned long long)r.ctx.handle);
	if (r.kind == FRP_CB_KIND_CODE_OBJECT)
		on_code_object(r.op, r.phase, r.payload);
	else
		on_api(r.kind, r.op, r.phase, user, r.tid, r.payload);
}

static void on_buffer(frp_context_t ctx, frp_buffer_t buf, frp_header_t **h, size_t n, void *data, uint64_t drops)
{
	long me = (long)syscall(SYS_gettid);
	if (ctx.handle != st.ctx.handle || buf.handle != st.buf.handle || data != &st)
		FAIL("buffer callback arguments");
	if (me == st.main_tid || (st.delivery_tid && me != st.delivery_tid))
		FAIL("buffer delivered on thread %ld (main %d, first %ld)", me, (int)st.main_tid, st.delivery_tid);
	st.delivery_tid = me;
	st.deliveries++;
	st.drops = drops;
	for (size_t i = 0; i < n; i++) {
		if (h[i]->category != FRP_CATEGORY_TRACING) {
			st.bad_header++;
			continue;
		}
		if (h[i]->kind == FRP_BUF_KIND_KERNEL_DISPATCH) {
			const frp_kernel_rec_t *k = h[i]->payload;
			if (k->size != sizeof *k || k->kind != FRP_BUF_KIND_KERNEL_DISPATCH ||
			    k->op != FRP_DISPATCH_COMPLETE || !(k->start < k->end) || st.nkernels == MAXK)
				FAIL("kernel record: size %llu kind %u op %u", (unsigned long long)k->size, k->kind,
				     k->op);
			st.kernels[st.nkernels].kernel_id = k->info.kernel_id;
			st.kernels[st.nkernels].agent = k->info.agent.handle;
			st.kernels[st.nkernels].start = k->start;
			st.kernels[st.nkernels++].end = k->end;
		} else if (h[i]->kind == FRP_BUF_KIND_MEMORY_COPY) {
			const frp_copy_rec_t *c = h[i]->payload;
			if (st.ncopies == 16)
				FAIL("too many copies");
			st.copies[st.ncopies].op = c->op;
			st.copies[st.ncopies].dst = c->dst.handle;
			st.copies[st.ncopies].src = c->src.handle;
			st.copies[st.ncopies].bytes = c->bytes;
			st.copies[st.ncopies].start = c->start;
			st.copies[st.ncopies].end = c->end;
			st.copies[st.ncopies++].size = c->size;
		} else {
			st.bad_header++;
		}
	}
}

static int on_agents(uint32_t version, const void **agents, size_t n, void *data)
{
	(void)data;
	if (version != FRP_AGENT_INFO_VERSION_0)
		FAIL("agents version %u", version);
	for (size_t i = 0; i < n; i++) {
		const frp_agent_info_t *a = agents[i];
		if (a->size != FRP_AGENT_SIZE(st.v06))
			FAIL("agent size %llu", (unsigned long long)a->size);
		if (a->type == FRP_AGENT_CPU) {
			st.cpu_agent = a->id.handle;
			st.cpu_node = (int)a->node_id;
		} else if (a->type == FRP_AGENT_GPU && st.ngpu < 16) {
			int d = a->logical_node_type_id;
			if (d != st.ngpu || !a->product_name || !a->name)
				FAIL("GPU agent %d: type id %d", st.ngpu, d);
			if (st.v06 && (a->uuid != (0x66616b6568697000ULL | (uint64_t)d) || (a->visibility & 3) != 3))
				FAIL("GPU agent %d: uuid %llx visibility %u", d, (unsigned long long)a->uuid,
				     a->visibility);
			if (a->location_id != (uint32_t)((0xc1 + d) << 8))
				FAIL("GPU agent %d: location %x", d, a->location_id);
			st.gpu_agent[st.ngpu++] = a->id.handle;
		}
	}
	return FRP_OK;
}

static int on_op(int32_t kind, int32_t op, void *data)
{
	(void)data;
	const char *name = NULL;
	if (sdk.op_name(kind, op, &name, NULL) != FRP_OK || !name)
		FAIL("no name for operation %d", op);
	for (int i = 0; i < NWANTED; i++)
		if (strcmp(name, wanted[i]) == 0)
			st.ids[i] = op;
	return 0;
}

#define SYM(f, name)                                         \
	do {                                                 \
		*(void **)&sdk.f = dlsym(RTLD_DEFAULT, name); \
		if (!sdk.f)                                  \
			FAIL("no %s", name);                 \
	} while (0)
#define OK(x)                                            \
	do {                                             \
		int rc_ = (x);                           \
		if (rc_ != FRP_OK)                       \
			FAIL("%s returned %d", #x, rc_); \
	} while (0)

static int tool_init(void (*client_fini)(void), void *tool_data)
{
	if (tool_data != &st || !client_fini || !st.configured || st.initialized++)
		FAIL("initialize: data %p", tool_data);
	SYM(get_version, "rocprofiler_get_version");
	SYM(timestamp, "rocprofiler_get_timestamp");
	SYM(create_context, "rocprofiler_create_context");
	SYM(start_context, "rocprofiler_start_context");
	SYM(context_is_valid, "rocprofiler_context_is_valid");
	SYM(configure_cb, "rocprofiler_configure_callback_tracing_service");
	SYM(iterate_ops, "rocprofiler_iterate_callback_tracing_kind_operations");
	SYM(op_name, "rocprofiler_query_callback_tracing_kind_operation_name");
	SYM(create_buffer, "rocprofiler_create_buffer");
	SYM(configure_buffer, "rocprofiler_configure_buffer_tracing_service");
	SYM(flush, "rocprofiler_flush_buffer");
	SYM(agents, "rocprofiler_query_available_agents");
	SYM(create_thread, "rocprofiler_create_callback_thread");
	SYM(assign_thread, "rocprofiler_assign_callback_thread");
	uint32_t ma, mi, pa;
	OK(sdk.get_version(&ma, &mi, &pa));
	if (ma * 10000 + mi * 100 + pa != st.version)
		FAIL("version %u.%u.%u, configure said %u", ma, mi, pa, st.version);
	st.t0 = ts();
	for (int i = 0; i < NWANTED; i++)
		st.ids[i] = -1;
	OK(sdk.iterate_ops(FRP_CB_KIND_HIP_RUNTIME, on_op, NULL));
	for (int i = 0; i < NWANTED; i++)
		if (st.ids[i] < 0)
			FAIL("no id for %s", wanted[i]);
	OK(sdk.create_context(&st.ctx));
	void (*cb)(void) = st.v1 ? (void (*)(void))(uintptr_t)cb1 : (void (*)(void))(uintptr_t)cb0;
	OK(sdk.configure_cb(st.ctx, FRP_CB_KIND_HIP_RUNTIME, st.ids, NWANTED, cb, NULL));
	OK(sdk.configure_cb(st.ctx, FRP_CB_KIND_CODE_OBJECT, NULL, 0, cb, NULL));
	OK(sdk.create_buffer(st.ctx, 4096, 3072, FRP_POLICY_LOSSLESS, on_buffer, &st, &st.buf));
	OK(sdk.configure_buffer(st.ctx, FRP_BUF_KIND_KERNEL_DISPATCH, NULL, 0, st.buf));
	OK(sdk.configure_buffer(st.ctx, FRP_BUF_KIND_MEMORY_COPY, NULL, 0, st.buf));
	frp_cb_thread_t t = { 0 };
	OK(sdk.create_thread(&t));
	OK(sdk.assign_thread(st.buf, t));
	OK(sdk.agents(FRP_AGENT_INFO_VERSION_0, on_agents, offsetof(frp_agent_info_t, uuid), NULL));
	int valid = 0;
	OK(sdk.context_is_valid(st.ctx, &valid));
	if (!valid)
		FAIL("context not valid");
	OK(sdk.start_context(st.ctx));
	return 0;
}

static const char *name_of(uint64_t kernel_id)
{
	for (int i = 0; i < st.nsyms; i++)
		if (st.syms[i].id == kernel_id)
			return st.syms[i].name;
	return NULL;
}

static int count_kernels(const char *name, uint64_t agent, double ms)
{
	int n = 0;
	for (int i = 0; i < st.nkernels; i++) {
		const char *k = name_of(st.kernels[i].kernel_id);
		if (!k || strcmp(k, name) != 0 || st.kernels[i].agent != agent)
			continue;
		double got = (double)(st.kernels[i].end - st.kernels[i].start) / 1e6;
		if (got < ms - 0.001 || got > ms + 0.001)
			FAIL("%s lasted %.6f ms, not %.3f", name, got, ms);
		n++;
	}
	return n;
}

static void tool_fini(void *tool_data)
{
	if (tool_data != &st || st.finalized++)
		FAIL("finalize");
	OK(sdk.flush(st.buf)); /* allowed while the SDK finalizes */
	uint64_t t1 = ts();
	int two = st.ndev >= 2;
	static const int expect[NWANTED] = { 1 + 1 + TINY, 1, 1, 1, 1, 1, 2, 0, 1, 1, 1, 1 };
	for (int i = 0; i < NWANTED; i++) {
		int e = expect[i] + (two && (i == W_LAUNCH || i == W_DSYNC || i == W_SET || i == W_PEER));
		if (st.enter[i] != e || st.exit[i] != e)
			FAIL("%s: %d enters, %d exits, expected %d", wanted[i], st.enter[i], st.exit[i], e);
	}
	if (st.unknown_op || st.bad_user || st.bad_tid || st.depth_max != 2 || depth != 0)
		FAIL("API callbacks: %d not asked for, %d bad user data, %d bad threads or payloads, depth %d/%d",
		     st.unknown_op, st.bad_user, st.bad_tid, st.depth_max, depth);
	if (st.ngpu != st.ndev || !st.cpu_agent || st.cpu_node != 0)
		FAIL("agents: %d GPUs for %d devices", st.ngpu, st.ndev);
	if (st.code_objects != 5 + 2 * two || st.unloads != st.code_objects)
		FAIL("code objects: %d loaded, %d unloaded", st.code_objects, st.unloads);
	if (st.deliveries < 5 || st.drops || st.bad_header)
		FAIL("deliveries %d, dropped %llu, bad headers %d", st.deliveries, (unsigned long long)st.drops,
		     st.bad_header);
	uint64_t g0 = st.gpu_agent[0];
	if (st.nkernels != 5 + TINY + two || count_kernels("k1.kd", g0, 20) != 1 || count_kernels("k2.kd", g0, 10) != 1 ||
	    count_kernels("k3.kd", g0, 5) != 1 || count_kernels("__amd_rocclr_copyBuffer.kd", g0, 2) != 1 ||
	    count_kernels("__amd_rocclr_fillBufferAligned.kd", g0, 1) != 1 ||
	    count_kernels("tiny.kd", g0, 0.01) != TINY || (two && count_kernels("k1.kd", st.gpu_agent[1], 2) != 1))
		FAIL("kernels: %d records", st.nkernels);
	for (int i = 0; i < st.nkernels; i++)
		if (st.kernels[i].start < st.t0 || st.kernels[i].end > t1)
			FAIL("kernel %d outside [init, finalize]", i);
	if (st.ncopies != 2 + two)
		FAIL("copies: %d records", st.ncopies);
	size_t csize = st.v1 ? sizeof(frp_copy_rec_t) : offsetof(frp_copy_rec_t, dst_address);
	for (int i = 0; i < st.ncopies; i++) {
		uint32_t op = st.copies[i].op;
		uint64_t dst = st.copies[i].dst, src = st.copies[i].src, b = st.copies[i].bytes;
		double ms = (double)(st.copies[i].end - st.copies[i].start) / 1e6;
		int good = st.copies[i].size == csize && b == 1 << 20 &&
			   ((op == FRP_COPY_HOST_TO_DEVICE && dst == g0 && src == st.cpu_agent && ms > 9.99 && ms < 10.01) ||
			    (op == FRP_COPY_DEVICE_TO_HOST && dst == st.cpu_agent && src == g0 && ms > 4.99 && ms < 5.01) ||
			    (two && op == FRP_COPY_DEVICE_TO_DEVICE && dst == st.gpu_agent[1] && src == g0 && ms > 2.99 &&
			     ms < 3.01));
		if (!good)
			FAIL("copy %d: op %u, %llu bytes, %.3f ms, size %llu", i, op, (unsigned long long)b, ms,
			     (unsigned long long)st.copies[i].size);
	}
	printf("ok (rocprofiler-sdk %u, %d kernel and %d copy records in %d deliveries)\n", st.version, st.nkernels,
	       st.ncopies, st.deliveries);
	fflush(stdout);
}

static frp_configure_result_t cfg = { sizeof cfg, tool_init, tool_fini, &st };

EXPORT frp_configure_result_t *rocprofiler_configure(uint32_t version, const char *version_string, uint32_t priority,
						     void *client)
{
	if (st.configured++ || priority != 0 || !version_string || !client)
		FAIL("configure: %d times, priority %u", st.configured, priority);
	st.version = version;
	st.v1 = version >= 10000;
	st.v06 = version >= 600;
	const char *want = getenv("FAKEROCM_VERSION");
	int a = 1, b = 0, c = 0;
	if (want && sscanf(want, "%d.%d.%d", &a, &b, &c) != 3)
		a = 1, b = c = 0;
	if (version != (uint32_t)(a * 10000 + b * 100 + c))
		FAIL("configure: version %u", version);
	if (st.v1) {
		frp_client1_t *id = client;
		if (id->size != sizeof *id || id->handle == 0)
			FAIL("client id: size %zu handle %u", id->size, id->handle);
		id->name = "smoke_rocm";
	} else {
		frp_client0_t *id = client;
		if (id->handle == 0)
			FAIL("client id: handle %u", id->handle);
		id->name = "smoke_rocm";
	}
	st.main_tid = (pid_t)syscall(SYS_gettid);
	st.ndev = devices_from_env();
	return &cfg;
}

#endif
