/* perfread.c: cost of one reading of a perf_event counter group, for
 * `make bench` (scripts/bench-counters.sh): what libpopmon pays at each
 * useful <-> not-useful transition when hardware counters are measured.
 *
 * Opens the group libpopmon opens (user-space cycles leading, instructions)
 * and times 2 M readings with read() (PERF_FORMAT_GROUP with enabled and
 * running times) and, where the kernel allows it, with rdpmc on the mmapped
 * pages (the seqlock protocol, both counters). Without a PMU (virtual
 * machines, containers) it opens software events instead (task clock, CPU
 * clock) and times read() of those, a stand-in for the system call's cost;
 * rdpmc cannot be measured then. Prints:
 *
 *   events hardware|software
 *   read_ns <ns per read() of the group>
 *   rdpmc_ns <ns per reading of both counters> | rdpmc_ns n/a <why>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int open_group(uint32_t type, const uint64_t config[2], int fd[2])
{
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = type;
		a.config = config[i];
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		long r = syscall(SYS_perf_event_open, &a, 0, -1, i ? fd[0] : -1, 0UL);
		if (r < 0) {
			int e = errno;
			if (i)
				close(fd[0]);
			return e;
		}
		fd[i] = (int)r;
	}
	return 0;
}

#if defined(__x86_64__)
static inline uint64_t rdpmc(uint32_t c)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return ((uint64_t)hi << 32) | lo;
}

/* One counter from its page (no multiplexing assumed: enabled == running). */
static uint64_t page_count(const volatile struct perf_event_mmap_page *pc)
{
	uint32_t seq, idx;
	uint64_t count;
	do {
		seq = pc->lock;
		__asm__ __volatile__("" ::: "memory");
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (idx) {
			unsigned sh = 64u - pc->pmc_width;
			count += (uint64_t)((int64_t)(rdpmc(idx - 1) << sh) >> sh);
		}
		__asm__ __volatile__("" ::: "memory");
	} while (pc->lock != seq);
	return count;
}
#endif

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int fd[2];
	const char *events = "hardware";
	static const uint64_t hw[2] = {PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS};
	static const uint64_t sw[2] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK};
	int err = open_group(PERF_TYPE_HARDWARE, hw, fd);
	if (err) {
		events = "software";
		if ((err = open_group(PERF_TYPE_SOFTWARE, sw, fd)) != 0) {
			printf("events none\nread_ns n/a perf_event_open: %s\nrdpmc_ns n/a no events\n", strerror(err));
			return 0;
		}
	}
	printf("events %s\n", events);
	uint64_t buf[5], sink = 0;
	for (long i = 0; i < n / 10; i++) /* warm-up */
		if (read(fd[0], buf, sizeof buf) > 0)
			sink += buf[3];
	double t0 = now();
	for (long i = 0; i < n; i++)
		if (read(fd[0], buf, sizeof buf) > 0)
			sink += buf[3];
	double t1 = now();
	printf("read_ns %.1f\n", (t1 - t0) / (double)n);

	const char *why = "not x86-64";
#if defined(__x86_64__)
	why = "software events have no PMU counter";
	if (events[0] == 'h') {
		long ps = sysconf(_SC_PAGESIZE);
		struct perf_event_mmap_page *pg[2];
		pg[0] = mmap(NULL, (size_t)ps, PROT_READ, MAP_SHARED, fd[0], 0);
		pg[1] = mmap(NULL, (size_t)ps, PROT_READ, MAP_SHARED, fd[1], 0);
		if (pg[0] == MAP_FAILED || pg[1] == MAP_FAILED) {
			why = "mmap of the perf page failed";
		} else {
			sink += page_count(pg[0]); /* the page is updated at the next schedule */
			usleep(1000);
			if (!pg[0]->cap_user_rdpmc || !pg[1]->cap_user_rdpmc) {
				why = "the kernel does not allow rdpmc (cap_user_rdpmc 0)";
			} else {
				double t2 = now();
				for (long i = 0; i < n; i++)
					sink += page_count(pg[0]) + page_count(pg[1]);
				double t3 = now();
				printf("rdpmc_ns %.1f\n", (t3 - t2) / (double)n);
				why = NULL;
			}
		}
	}
#endif
	if (why)
		printf("rdpmc_ns n/a %s\n", why);
	return sink == 42;
}
