/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Weight placement: one anonymous mapping on a chosen NUMA node, with
 * 2 MiB pages when the system gives them. The FFN streams every weight
 * byte per pass, so TLB misses on 4 KiB pages cost measurable bandwidth;
 * hence MAP_HUGETLB first, then transparent huge pages, then plain pages.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ffn_priv.h"

#define HUGE_2M (2u << 20)

static size_t
round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* THP is usable after madvise only when the mode is "always" or "madvise". */
static int
thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[always]") != NULL ||
	       strstr(buf, "[madvise]") != NULL;
}

int
ffn_mem_current_node(void)
{
	int cpu;

	if (numa_available() < 0)
		return -1;
	cpu = sched_getcpu();
	if (cpu < 0)
		return 0;
	return numa_node_of_cpu(cpu);
}

/*
 * Bind before the first touch: pages are placed when they fault in, which
 * is when the loader copies the weights.
 */
static int
bind_node(void *p, size_t len, int node)
{
	unsigned long mask[16] = { 0 };

	if (node < 0 || numa_available() < 0)
		return 0;
	if ((unsigned)node >= sizeof(mask) * 8)
		return -EINVAL;
	mask[node / (8 * sizeof(long))] |= 1ul << (node % (8 * sizeof(long)));
	if (mbind(p, len, MPOL_BIND, mask, sizeof(mask) * 8, 0) != 0)
		return -errno;
	return 1;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/*
 * 2 MiB pages from the hugetlb pool, bound to node. The pool is counted
 * globally at mmap time but pages come from the node at fault time, so a
 * node short of pages would SIGBUS in the copy: populate now, where that
 * is an error to fall back from (kernels before 5.14: EINVAL, go on).
 */
static void *
hugetlb_alloc(size_t hlen, int node, int *bound)
{
	void *p = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	int rc;

	if (p == MAP_FAILED)
		return NULL;
	rc = bind_node(p, hlen, node);
	if (rc < 0 || (madvise(p, hlen, MADV_POPULATE_WRITE) != 0 &&
		       errno != EINVAL)) {
		munmap(p, hlen);
		return NULL;
	}
	*bound = rc;
	return p;
}

void *
ffn_mem_alloc(size_t len, int node, int no_huge, enum ffn_pages *pages,
	      int *bound)
{
	size_t hlen = round_up(len ? len : 1, HUGE_2M);
	void *p = MAP_FAILED;
	int rc;

	*pages = FFN_PAGES_NORMAL;
	if (!no_huge) {
		void *h = hugetlb_alloc(hlen, node, bound);

		if (h != NULL) {
			*pages = FFN_PAGES_HUGETLB;
			return h;
		}
	}
	if (p == MAP_FAILED) {
		p = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		if (!no_huge && thp_enabled() &&
		    madvise(p, hlen, MADV_HUGEPAGE) == 0)
			*pages = FFN_PAGES_THP;
	}
	rc = bind_node(p, hlen, node);
	if (rc < 0) {
		munmap(p, hlen);
		errno = -rc;
		return NULL;
	}
	*bound = rc;
	return p;
}

void
ffn_mem_free(void *p, size_t len)
{
	if (p != NULL)
		munmap(p, round_up(len ? len : 1, HUGE_2M));
}

/* Work memory (scratch) on node (-1: the caller's); *numa says how it
 * must be freed (ffn_mem_scratch_free). 64-byte aligned. */
void *
ffn_mem_scratch_alloc(size_t len, int node, int *numa)
{
	void *p;

	if (numa_available() >= 0) {
		if (node < 0)
			node = ffn_mem_current_node();
		p = numa_alloc_onnode(len, node < 0 ? 0 : node);
		if (p != NULL) {
			*numa = 1;
			return p;
		}
	}
	*numa = 0;
	if (posix_memalign(&p, 64, len) != 0)
		return NULL;
	return p;
}

void
ffn_mem_scratch_free(void *p, size_t len, int numa)
{
	if (numa)
		numa_free(p, len);
	else
		free(p);
}
