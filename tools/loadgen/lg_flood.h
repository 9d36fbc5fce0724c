/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_LG_FLOOD_H
#define FFN_LG_FLOOD_H

/* ffn-loadgen --syn-flood (lg_flood.c): spoofed-source SYNs at the first
 * target while the clients run. */

#include <stdint.h>

struct lg_worker;

/** "A.B.C.D/len" into a network and mask (network order); 0, or -1. */
int lg_flood_parse_src(const char *arg, uint32_t *net_be, uint32_t *mask_be);

/** Send the SYNs due on w by now (w->flood_period apart; 0: a burst of 32
 *  each call, as fast as the lcore loops). Nothing before the target's
 *  MAC is known. */
void lg_flood_poll(struct lg_worker *w, uint64_t now);

#endif
