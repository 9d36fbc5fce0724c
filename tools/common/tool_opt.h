/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef TOOL_OPT_H
#define TOOL_OPT_H

/**
 * @file
 * Strict command-line numbers for the tools (mkvindex, ffn-client,
 * ffn-bench). strtoul() alone turns "abc" into 0 and "12x" into 12 and
 * the tool runs with a value nobody asked for; these accept only a whole
 * decimal (or 0x hex) number in range, and otherwise print one line
 * naming the tool, the option, the text and the accepted range on
 * stderr, e.g.
 *
 *     ffn-client: --seq-len: "abc" is not a whole number in [1, 4096]
 *
 * Each returns 0, or -EINVAL with *out unchanged.
 */

#include <stdint.h>

int tool_opt_u32(const char *tool, const char *opt, const char *arg,
		 uint32_t min, uint32_t max, uint32_t *out);
/** tool_opt_u32's value, or exit(2) after its message (option loops). */
uint32_t tool_opt_u32_or_exit(const char *tool, const char *opt,
			      const char *arg, uint32_t min, uint32_t max);
int tool_opt_u64(const char *tool, const char *opt, const char *arg,
		 uint64_t *out);
/** A finite number (strtod syntax) in [min, max]. */
int tool_opt_double(const char *tool, const char *opt, const char *arg,
		    double min, double max, double *out);

/**
 * A comma-separated list of u32 in [min, max] ("0,3,5"): at most cap
 * items into out. Returns the count (>= 1), or -EINVAL after a message
 * naming the bad item (empty, not a number, out of range, too many).
 */
int tool_opt_u32_list(const char *tool, const char *opt, const char *arg,
		      uint32_t min, uint32_t max, uint32_t *out,
		      unsigned int cap);

#endif /* TOOL_OPT_H */
