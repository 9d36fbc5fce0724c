/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers of the expert-weight tests (test_ffn_moe*.c): vindex
 * directories and LYRW fields (spec/moe.md §5). Include after
 * <cmocka.h>.
 */
#ifndef MOE_TEST_UTIL_H
#define MOE_TEST_UTIL_H

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "ffn_moe.h"
#include "ffn_test_util.h"

static inline void
mkdir_layers(const char *d)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/layers", d);
	assert_int_equal(mkdir(p, 0755), 0);
}

static inline struct ffn_moe *
load_ok(const char *d, const struct ffn_moe_load_opts *o)
{
	struct ffn_moe *m = NULL;
	char err[512] = "";
	int rc = ffn_moe_load(d, o, &m, err, sizeof(err));

	if (rc != 0)
		fail_msg("load %s: %d %s", d, rc, err);
	return m;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif /* MOE_TEST_UTIL_H */
