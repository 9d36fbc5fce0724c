/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_SETUP_H
#define LG_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "lg.h"

/** What one prepared request carries (lg_build_req). */
struct lg_req_spec {
	const char *method;
	const char *path;
	int req_fmt;		/**< enum lc_fmt of the body */
	int resp_fmt;		/**< enum lc_fmt asked for in Accept */
	const uint32_t *layers;
	uint32_t nlayers;	/**< 1: single frame; else batch frame */
	uint32_t seq_len;
	uint32_t hidden;
	const float *x;		/**< seq_len * hidden inputs */
};

int lg_parse_ipv4(const char *s, uint32_t *ip_be);
int lg_parse_hostport(const char *s, uint32_t *ip_be, uint16_t *port);
/** Index of target ip:port, added if new; -ENOSPC. */
int lg_add_target(uint32_t ip_be, uint16_t port);
/** net_port_init + net_lcore + TCP on every --ip port; route targets. */
int lg_ports_start(void);
/** Poll every port once and flush. */
void lg_poll_all(uint64_t now);
/** Wait for every port's link (memif connects asynchronously). */
int lg_wait_links(unsigned int ms);
/**
 * The bytes of a request to target in DPDK memory (q->buf, q->len; the
 * rest of q zeroed): head with Host, Content-Type and Accept when not
 * NULL, Content-Length, then body.
 */
int lg_req_bytes(struct lg_req *q, const char *method, const char *path,
		 const char *ctype, const char *accept, const void *body,
		 size_t blen, unsigned int target);
/** Prepare the request of spec for target (bytes + expected frame). */
int lg_build_req(struct lg_req *q, const struct lg_req_spec *sp,
		 unsigned int target);
/**
 * One TCP handshake to every target, then FIN, before the clients open
 * their connections all at once: the stack keeps only a few packets per
 * next hop while it resolves the hop's MAC (lib/net NET_PENDING_PKTS,
 * 16) and drops the rest, so without this every SYN past the 16th to a
 * hop not yet in the ARP table is lost and retried after the initial
 * RTO of 1 s (RFC 6298 2.1): requests of ~1 s at the start of the
 * measured window. Returns the number of targets that did not answer
 * within timeout_ms (said on stderr; the run goes on and counts them).
 */
int lg_prime_targets(unsigned int timeout_ms);
struct json_object;
/**
 * GET path from target over our own stack: *status, and with a 200 the
 * body parsed as JSON in *obj (json_object_put it; NULL otherwise).
 * Returns 0, or a negative errno (no answer, -EBADMSG: not JSON).
 */
int lg_fetch_json(unsigned int target, const char *path, int *status,
		  struct json_object **obj, unsigned int timeout_ms);
/** GET /v1/stats from target: hidden_size and layers. */
int lg_fetch_stats(unsigned int target, uint32_t *hidden, uint32_t *layers,
		   unsigned int timeout_ms);

/** --experts-route and its options (lg_expert_setup.c). */
struct lg_expert_opts {
	int route;		/**< enum lg_expert_route */
	int wire;		/**< enum lc_fmt asked for in Accept */
	uint32_t hidden;
	uint32_t num_experts;	/**< 0: from GET /v1/expert/topology */
	uint32_t top_k;
	uint32_t seed;
	uint32_t layers[LG_MAX_STEPS];	/**< cycled over the pool */
	uint32_t nlayers;
};

/**
 * Prepare the expert requests: GET /v1/expert/topology of every target
 * (num_experts of the first when o->num_experts is 0; each target's
 * owned range, else all), then lg.npool requests per target
 * (lg_expert.h), each with the answer it must get. Fills lg.treq,
 * lg.npool, lg.nsteps; o->num_experts and o->top_k as used. Says why on
 * stderr when it fails.
 */
int lg_expert_prepare(struct lg_expert_opts *o);

#endif /* LG_SETUP_H */
