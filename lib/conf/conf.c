/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The appliance config schema (conf.h): values read with rte_cfgfile,
 * parsed by key tables, then the static cross-checks.
 */

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "conf_priv.h"

enum ktype {
	K_STR,		/* non-empty string, CONF_STR_MAX */
	K_BOOL,		/* on|off|yes|no|true|false|1|0 */
	K_UINT,		/* decimal, [min, max], stored in sz bytes */
	K_SIZE,		/* decimal with K/M/G (binary) suffix */
	K_LAYERS,	/* "first-last" or "n" */
	K_LCORES,	/* DPDK lcore list "0-3,5" */
	K_ADDR,		/* a.b.c.d/prefix */
	K_IPV4,		/* a.b.c.d */
	K_LOGLEVEL,
	K_Q6K,
	K_RATE,		/* "N/sec|min|hour": two u32, N then seconds */
	K_EXPERTS,	/* "A-B", spaces allowed: two u32 */
	K_JOIN,		/* "http://H:P[, http://H:P ...]": conf_unit's join */
	K_URL,		/* one "http://H:P" */
};

struct key {
	const char *name;
	enum ktype t;
	size_t off;
	size_t sz;
	uint64_t min, max;
	bool req;
};

#define U(f) offsetof(struct conf_unit, f), sizeof(((struct conf_unit *)0)->f)
#define P(f) offsetof(struct conf_port, f), sizeof(((struct conf_port *)0)->f)
#define C(f) offsetof(struct conf, f), sizeof(((struct conf *)0)->f)

static const struct key eal_keys[] = {
	{ "args", K_STR, C(eal_args), 0, 0, true },
	{ NULL },
};
static const struct key log_keys[] = {
	{ "level", K_LOGLEVEL, C(log_level), 0, 0, false },
	{ NULL },
};
static const struct key tel_keys[] = {
	{ "metrics", K_BOOL, C(metrics), 0, 0, false },
	{ NULL },
};
static const struct key port_keys[] = {
	{ "device", K_STR, P(device), 0, 0, true },
	{ "address", K_ADDR, P(addr), 0, 0, true },
	{ "gateway", K_IPV4, P(gateway), 0, 0, false },
	{ "rx_queues", K_UINT, P(rx_queues), 1, 1024, false },
	{ "tx_queues", K_UINT, P(tx_queues), 1, 1024, false },
	{ "mtu", K_UINT, P(mtu), 68, 9000, false },
	{ "vlan", K_UINT, P(vlan), 0, 4094, false },
	{ NULL },
};
static const struct key unit_keys[] = {
	{ "model", K_STR, U(model), 0, 0, true },
	/* required unless experts / expert_units (conf_parse_sections) */
	{ "layers", K_LAYERS, U(layer_first), 0, 65535, false },
	{ "listen", K_UINT, U(listen), 1, 65535, true },
	{ "port", K_UINT, U(port), 0, CONF_MAX_PORTS - 1, false },
	{ "numa_node", K_UINT, U(numa_node), 0, RTE_MAX_NUMA_NODES - 1,
	  false },
	{ "net_lcores", K_LCORES, U(net_lcores), 0, 0, true },
	{ "worker_lcores", K_LCORES, U(worker_lcores), 0, 0, false },
	{ "f16", K_BOOL, U(f16), 0, 0, false },
	{ "i8", K_BOOL, U(i8), 0, 0, false },
	{ "max_body", K_SIZE, U(max_body), 1, 1ull << 32, false },
	{ "max_header", K_SIZE, U(max_header), 256, 1 << 20, false },
	{ "max_connections", K_UINT, U(max_connections), 1, 1000000, false },
	{ "pipeline_depth", K_UINT, U(pipeline_depth), 1, 1024, false },
	{ "idle_timeout_ms", K_UINT, U(idle_timeout_ms), 1,
	  CONF_IDLE_TIMEOUT_MS_MAX, false },
	{ "header_timeout_ms", K_UINT, U(header_timeout_ms), 1, 3600000,
	  false },
	{ "body_timeout_ms", K_UINT, U(body_timeout_ms), 1, 3600000, false },
	{ "body_min_rate", K_UINT, U(body_min_rate), 0, 1000000000, false },
	{ "send_timeout_ms", K_UINT, U(send_timeout_ms), 1,
	  CONF_IDLE_TIMEOUT_MS_MAX, false },
	{ "api_key", K_STR, U(api_key), 0, 0, false },
	{ "rate_limit", K_RATE, U(rate_limit_n), 1, 1000000000, false },
	{ "trust_forwarded_for", K_BOOL, U(trust_forwarded_for), 0, 0,
	  false },
	{ "batch_max_rows", K_UINT, U(batch_max_rows), 1, 65536, false },
	{ "batch_wait_us", K_UINT, U(batch_wait_us), 0, 1000000, false },
	{ "split_min_rows", K_UINT, U(split_min_rows), 0, 65536, false },
	{ "q6k_layout", K_Q6K, U(q6k_layout), 0, 0, false },
	{ "mmap_weights", K_BOOL, U(mmap_weights), 0, 0, false },
	{ "kq_q8k", K_BOOL, U(kq_q8k), 0, 0, false },
	{ "experts", K_EXPERTS, U(expert_first), 0, UINT32_MAX, false },
	{ "expert_units", K_STR, U(expert_units), 0, 0, false },
	{ "f16_guard", K_BOOL, U(f16_guard), 0, 0, false },
	/* spec/wire.md §9 (issue 20): the grid (unit_grid) */
	{ "join", K_JOIN, U(join), 0, 0, false },
	{ "public_url", K_URL, U(public_url), 0, 0, false },
	{ "grid_key", K_STR, U(grid_key), 0, 0, false },
	{ "grid_heartbeat_ms", K_UINT, U(grid_heartbeat_ms), 100, 600000,
	  false },
	{ NULL },
};

/* [front NAME] (issue 19): these keys of unit_keys mean the same in a
 * front; every other one of unit_keys is a shard's alone. */
static const char *const front_shared[] = {
	"listen", "port", "net_lcores", "f16", "i8", "max_body", "max_header",
	"max_connections", "pipeline_depth", "idle_timeout_ms",
	"header_timeout_ms", "body_timeout_ms", "body_min_rate",
	"send_timeout_ms", "api_key", "rate_limit", "trust_forwarded_for",
	NULL,
};
/* ... and a front's own, besides its layout lines "A-B = IPV4:PORT | ..."
 * and "shard_key IPV4:PORT = SPEC" (conf_front.c). */
static const struct key front_keys[] = {
	{ "num_layers", K_UINT, U(num_layers), 1, 65536, false },
	{ "shard_key", K_STR, U(shard_key), 0, 0, false },
	{ "hop_timeout_ms", K_UINT, U(hop_timeout_ms), 1, 600000, false },
	{ "health_interval_ms", K_UINT, U(health_interval_ms), 100, 600000,
	  false },
	{ "shard_connections", K_UINT, U(shard_connections), 1, 64, false },
	{ "shard_pipeline", K_UINT, U(shard_pipeline), 1, 64, false },
	{ NULL },
};

/* --- value parsers: return NULL or the reason ------------------------ */

/* "http://HOST:PORT" (an optional trailing '/'): the grid's plain HTTP/2
 * (spec/wire.md §9). The host is resolved at run time (--check). */
static const char *
parse_url(const char *v, size_t len)
{
	const char *h = v + 7, *end = v + len, *colon;
	uint64_t port = 0;

	if (len >= CONF_STR_MAX)
		return "longer than 255 bytes";
	if (len >= 8 && strncmp(v, "https://", 8) == 0)
		return "https is not supported: the grid port is plain "
			"HTTP/2 (spec/wire.md §9)";
	if (len < 7 || strncmp(v, "http://", 7) != 0)
		return "not http://HOST:PORT";
	if (end > h && end[-1] == '/')
		end--;
	if (memchr(h, '/', (size_t)(end - h)) != NULL)
		return "not http://HOST:PORT (a path: the grid's service "
			"has a fixed one, spec/wire.md §9)";
	colon = memchr(h, ':', (size_t)(end - h));
	if (colon == NULL || colon == h)
		return "not http://HOST:PORT";
	for (const char *p = h; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
			return "not http://HOST:PORT (HOST: an IPv4 address "
				"or a name)";
	if (colon + 1 == end)
		return "port not in 1..65535";
	for (const char *p = colon + 1; p < end; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			return "port not in 1..65535";
		port = port * 10 + (uint64_t)(*p - '0');
	}
	if (port == 0 || port > 65535)
		return "port not in 1..65535";
	return NULL;
}

/* "URL[, URL ...]": at most CONF_MAX_JOIN routers, none twice. */
static const char *
parse_join(const char *v, struct conf_unit *u)
{
	const char *p = v;

	u->n_join = 0;
	for (;;) {
		const char *end;
		size_t len;
		const char *e;

		p += strspn(p, " \t");
		end = p + strcspn(p, ",");
		len = (size_t)(end - p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0)
			return "an empty URL in the list";
		e = parse_url(p, len);
		if (e != NULL)
			return e;
		if (u->n_join == CONF_MAX_JOIN)
			return "more than 4 routers (CONF_MAX_JOIN)";
		memcpy(u->join[u->n_join], p, len);
		u->join[u->n_join][len] = '\0';
		for (unsigned int i = 0; i < u->n_join; i++)
			if (strcmp(u->join[i], u->join[u->n_join]) == 0)
				return "a router listed twice (one stream per "
					"router, spec/wire.md §9.5)";
		u->n_join++;
		if (*end == '\0')
			return NULL;
		p = end + 1;
	}
}

const char *
conf_parse_u64(const char *v, uint64_t *out, const char **end)
{
	uint64_t x = 0;
	const char *s = v;

	if (*s < '0' || *s > '9')
		return "not a number";
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return "number too large";
		x = x * 10 + (*s - '0');
	}
	*out = x;
	*end = s;
	return NULL;
}

static const char *
parse_uint(const char *v, uint64_t min, uint64_t max, uint64_t *out,
		char *why, size_t whylen)
{
	const char *end, *e;

	e = conf_parse_u64(v, out, &end);
	if (e != NULL)
		return e;
	if (*end != '\0')
		return "not a number";
	if (*out < min || *out > max) {
		snprintf(why, whylen, "out of range %llu..%llu",
			(unsigned long long)min, (unsigned long long)max);
		return why;
	}
	return NULL;
}

static const char *
parse_size(const char *v, uint64_t min, uint64_t max, uint64_t *out,
		char *why, size_t whylen)
{
	const char *end, *e;
	unsigned int shift = 0;

	e = conf_parse_u64(v, out, &end);
	if (e != NULL)
		return e;
	switch (*end) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case '\0': break;
	default: return "not a size (bytes, or with K, M, G)";
	}
	if (shift) {
		end++;
		if (strcmp(end, "iB") == 0)
			end += 2;
		if (*end != '\0')
			return "not a size (bytes, or with K, M, G)";
		if (*out > (UINT64_MAX >> shift))
			return "number too large";
		*out <<= shift;
	}
	if (*out < min || *out > max) {
		snprintf(why, whylen, "out of range %llu..%llu bytes",
			(unsigned long long)min, (unsigned long long)max);
		return why;
	}
	return NULL;
}

static const char *
parse_bool(const char *v, bool *out)
{
	static const char *const on[] = { "on", "yes", "true", "1" };
	static const char *const off[] = { "off", "no", "false", "0" };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(v, on[i]) == 0) {
			*out = true;
			return NULL;
		}
		if (strcasecmp(v, off[i]) == 0) {
			*out = false;
			return NULL;
		}
	}
	return "not on or off";
}

const char *
conf_parse_ipv4(const char *v, uint32_t *out, const char **rest)
{
	uint32_t a = 0;
	uint64_t x;
	const char *end;
	int i;

	for (i = 0; i < 4; i++) {
		if (conf_parse_u64(v, &x, &end) != NULL || x > 255 ||
		    (end - v > 1 && *v == '0'))
			return "not an IPv4 address";
		a = a << 8 | x;
		v = end;
		if (i < 3) {
			if (*v != '.')
				return "not an IPv4 address";
			v++;
		}
	}
	*out = a;
	*rest = v;
	return NULL;
}

static const char *
parse_layers(const char *v, uint32_t *first, uint32_t *last, uint64_t max,
		char *why, size_t whylen)
{
	uint64_t a, b;
	const char *end, *e;

	e = conf_parse_u64(v, &a, &end);
	if (e != NULL)
		return "not a layer range \"first-last\"";
	b = a;
	if (*end == '-') {
		e = conf_parse_u64(end + 1, &b, &end);
		if (e != NULL)
			return "not a layer range \"first-last\"";
	}
	if (*end != '\0')
		return "not a layer range \"first-last\"";
	if (a > b)
		return "first > last";
	if (b > max) {
		snprintf(why, whylen, "layer %llu beyond %llu",
			(unsigned long long)b, (unsigned long long)max);
		return why;
	}
	*first = a;
	*last = b;
	return NULL;
}

/* spec/moe.md §2: --experts "A-B" (or "A"), spaces around the numbers
 * allowed, A <= B. */
static const char *
parse_experts(const char *v, uint32_t *first, uint32_t *last, uint64_t max)
{
	static const char bad[] = "not an expert range \"first-last\"";
	uint64_t a, b;
	const char *end;

	v += strspn(v, " \t");
	if (conf_parse_u64(v, &a, &end) != NULL)
		return bad;
	end += strspn(end, " \t");
	b = a;
	if (*end == '-') {
		end++;
		end += strspn(end, " \t");
		if (conf_parse_u64(end, &b, &end) != NULL)
			return bad;
		end += strspn(end, " \t");
	}
	if (*end != '\0')
		return bad;
	if (a > b)
		return "first > last";
	if (b > max)
		return "expert id beyond 4294967295";
	*first = a;
	*last = b;
	return NULL;
}

/* larql-server's --rate-limit: "N/sec", "N/min" or "N/hour". */
static const char *
parse_rate(const char *v, uint64_t min, uint64_t max, uint32_t *n,
	   uint32_t *period_s, char *why, size_t whylen)
{
	static const struct {
		const char *unit;
		uint32_t s;
	} units[] = { { "sec", 1 }, { "min", 60 }, { "hour", 3600 } };
	uint64_t x;
	const char *end;

	if (conf_parse_u64(v, &x, &end) != NULL || *end != '/')
		return "not a rate \"N/sec\", \"N/min\" or \"N/hour\"";
	for (unsigned int i = 0; i < 3; i++) {
		if (strcmp(end + 1, units[i].unit) != 0)
			continue;
		if (x < min || x > max) {
			snprintf(why, whylen, "N out of range %llu..%llu",
				 (unsigned long long)min,
				 (unsigned long long)max);
			return why;
		}
		*n = (uint32_t)x;
		*period_s = units[i].s;
		return NULL;
	}
	return "not a rate \"N/sec\", \"N/min\" or \"N/hour\"";
}

/* DPDK lcore list syntax (as EAL -l): n or n-m, comma separated. */
static const char *
parse_lcores(const char *v, struct conf_lcores *s, char *why, size_t whylen)
{
	uint64_t a, b, l;
	const char *end;

	memset(s, 0, sizeof(*s));
	for (;;) {
		if (conf_parse_u64(v, &a, &end) != NULL)
			return "not an lcore list (e.g. 0-3,5)";
		b = a;
		if (*end == '-' && conf_parse_u64(end + 1, &b, &end) != NULL)
			return "not an lcore list (e.g. 0-3,5)";
		if (a > b)
			return "lcore range first > last";
		if (b >= CONF_MAX_LCORE) {
			snprintf(why, whylen, "lcore %llu beyond %d",
				(unsigned long long)b, CONF_MAX_LCORE - 1);
			return why;
		}
		for (l = a; l <= b; l++) {
			if (conf_lcores_has(s, l)) {
				snprintf(why, whylen, "lcore %llu listed twice",
					(unsigned long long)l);
				return why;
			}
			s->bits[l / 64] |= 1ull << (l % 64);
			s->count++;
		}
		if (*end == '\0')
			return NULL;
		if (*end != ',')
			return "not an lcore list (e.g. 0-3,5)";
		v = end + 1;
	}
}

unsigned int
conf_lcores_next(const struct conf_lcores *s, unsigned int from)
{
	for (; from < CONF_MAX_LCORE; from++)
		if (conf_lcores_has(s, from))
			return from;
	return CONF_MAX_LCORE;
}

static void
store_uint(void *dst, size_t sz, uint64_t x)
{
	switch (sz) {
	case 1: *(uint8_t *)dst = x; break;
	case 2: *(uint16_t *)dst = x; break;
	case 4: *(uint32_t *)dst = x; break;
	default: *(uint64_t *)dst = x; break;
	}
}

static int
parse_key(const struct conf *c, const struct key *k, const char *sec,
		const char *v, void *base, char *err, size_t errlen)
{
	char why[96];
	const char *e = NULL, *rest;
	uint8_t *dst = (uint8_t *)base + k->off;
	uint64_t x;
	uint32_t a;

	if (*v == '\0')
		return conf_errf(c, err, errlen, sec, k->name, NULL,
			"empty value");
	switch (k->t) {
	case K_STR:
		snprintf((char *)dst, k->sz, "%s", v);
		break;
	case K_BOOL:
		e = parse_bool(v, (bool *)dst);
		break;
	case K_UINT:
		e = parse_uint(v, k->min, k->max, &x, why, sizeof(why));
		if (e == NULL)
			store_uint(dst, k->sz, x);
		break;
	case K_SIZE:
		e = parse_size(v, k->min, k->max, &x, why, sizeof(why));
		if (e == NULL)
			store_uint(dst, k->sz, x);
		break;
	case K_LAYERS:
		e = parse_layers(v, (uint32_t *)dst, (uint32_t *)dst + 1,
			k->max, why, sizeof(why));
		break;
	case K_LCORES:
		e = parse_lcores(v, (struct conf_lcores *)dst, why,
			sizeof(why));
		break;
	case K_ADDR: {
		struct conf_port *p = base;

		e = conf_parse_ipv4(v, &a, &rest);
		if (e == NULL && *rest != '/')
			e = "not address/prefix (e.g. 198.18.10.2/24)";
		if (e == NULL && (parse_uint(rest + 1, 1, 32, &x, why,
				sizeof(why)) != NULL))
			e = "prefix length not 1..32";
		if (e == NULL && (a == 0 || a >> 28 >= 0xe || a >> 24 == 127))
			e = "not a unicast host address";
		if (e == NULL && x < 31 && ((a & ~(~0u << (32 - x))) == 0 ||
				(a | (~0u << (32 - x))) == ~0u))
			e = "network or broadcast address of its subnet";
		if (e == NULL) {
			p->addr = a;
			p->prefix = x;
		}
		break;
	}
	case K_IPV4:
		e = conf_parse_ipv4(v, &a, &rest);
		if (e == NULL && *rest != '\0')
			e = "not an IPv4 address";
		if (e == NULL)
			*(uint32_t *)dst = a;
		break;
	case K_LOGLEVEL:
		if (strcmp(v, "error") && strcmp(v, "warning") &&
		    strcmp(v, "notice") && strcmp(v, "info") &&
		    strcmp(v, "debug"))
			e = "not error, warning, notice, info or debug";
		else
			snprintf((char *)dst, k->sz, "%s", v);
		break;
	case K_EXPERTS:
		e = parse_experts(v, (uint32_t *)dst, (uint32_t *)dst + 1,
			k->max);
		break;
	case K_RATE:
		e = parse_rate(v, k->min, k->max, (uint32_t *)dst,
			       (uint32_t *)dst + 1, why, sizeof(why));
		break;
	case K_JOIN:
		e = parse_join(v, base);
		break;
	case K_URL:
		e = parse_url(v, strlen(v));
		if (e == NULL)
			snprintf((char *)dst, k->sz, "%s", v);
		break;
	case K_Q6K:
		if (strcmp(v, "private") == 0)
			*(enum conf_q6k_layout *)dst = CONF_Q6K_PRIVATE;
		else if (strcmp(v, "ggml") == 0)
			*(enum conf_q6k_layout *)dst = CONF_Q6K_GGML;
		else
			e = "not private or ggml";
		break;
	}
	if (e != NULL)
		return conf_errf(c, err, errlen, sec, k->name, v, "%s", e);
	return 0;
}

/* --- sections ------------------------------------------------------- */

static void
unit_defaults(struct conf_unit *u)
{
	memset(u, 0, sizeof(*u));
	u->f16 = true;
	u->i8 = false;
	u->max_body = 64ull << 20;	/* as the reference server */
	u->max_header = 8 << 10;
	u->max_connections = 4096;
	u->pipeline_depth = 16;
	u->idle_timeout_ms = 60000;
	u->header_timeout_ms = 10000;
	/* Apache mod_reqtimeout's body=20,MinRate=500 */
	u->body_timeout_ms = 20000;
	u->body_min_rate = 500;
	/* nginx's send_timeout: an answer unread by the client for a
	 * minute is abandoned */
	u->send_timeout_ms = 60000;
	u->batch_max_rows = 64;
	u->batch_wait_us = 200;
	u->split_min_rows = 0;	/* split only when asked: a split job's
				 * slices cost a sum and a hand-off */
	u->q6k_layout = CONF_Q6K_PRIVATE;
	u->f16_guard = true;	/* spec/moe.md §7 */
	u->grid_heartbeat_ms = 10000;	/* spec/wire.md §9.3 */
	u->hop_timeout_ms = 5000;
	u->health_interval_ms = 1000;
	u->shard_connections = 4;
	u->shard_pipeline = 8;
}

static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= CONF_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789_-") == n;
}

static const struct key *
find_key(const struct key *keys, const char *name)
{
	for (; keys->name != NULL; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

/* unit_keys' entry of a key a front shares with a shard, or NULL. */
static const struct key *
front_shared_key(const char *name)
{
	for (unsigned int i = 0; front_shared[i] != NULL; i++)
		if (strcmp(front_shared[i], name) == 0)
			return find_key(unit_keys, name);
	return NULL;
}

/* Parse every key of section 'sec' against table 'keys' into base (a
 * front's: front_keys, front_shared of unit_keys; its layout lines are
 * left to conf_unit_front). */
static int
parse_section(struct conf *c, struct rte_cfgfile *cfg, const char *sec,
		const struct key *keys, void *base, char *err, size_t errlen)
{
	const struct key *k;
	const char *v;
	unsigned int i;
	int rc;

	for (i = 0; i < c->n_lines; i++) {
		const struct conf_line *l = &c->lines[i];

		if (strcmp(l->section, sec) != 0 || l->key[0] == '\0')
			continue;
		k = find_key(keys, l->key);
		if (k == NULL && keys == front_keys) {
			if (conf_front_layout_key(l->key))
				continue;	/* conf_unit_front */
			k = front_shared_key(l->key);
			if (k == NULL && find_key(unit_keys, l->key) != NULL)
				return conf_errf(c, err, errlen, sec, l->key,
					NULL, "not a [front] key (a front "
					"serves no model: it belongs in a "
					"[shard NAME])");
		}
		if (k == NULL)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"unknown key");
		v = rte_cfgfile_get_entry(cfg, sec, l->key);
		if (v == NULL)	/* the scanner and rte_cfgfile disagree */
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"not read by rte_cfgfile");
		rc = parse_key(c, k, sec, v, base, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (keys == front_keys)
		for (i = 0; front_shared[i] != NULL; i++) {
			k = find_key(unit_keys, front_shared[i]);
			if (k->req && conf_line_of(c, sec, k->name) == 0)
				return conf_errf(c, err, errlen, sec, NULL,
					NULL, "missing required key \"%s\"",
					k->name);
		}
	for (k = keys; k->name != NULL; k++)
		if (k->req && conf_line_of(c, sec, k->name) == 0)
			return conf_errf(c, err, errlen, sec, NULL, NULL,
				"missing required key \"%s\"", k->name);
	return 0;
}

/* spec/moe.md §2: experts and expert_units exclude each other, and
 * either makes layers optional (an expert-only unit). */
static int
unit_experts(struct conf *c, struct conf_unit *u, char *err, size_t errlen)
{
	const char *sec = u->section;

	u->has_layers = conf_line_of(c, sec, "layers") != 0;
	u->has_experts = conf_line_of(c, sec, "experts") != 0;
	if (u->has_experts && u->expert_units[0] != '\0')
		return conf_errf(c, err, errlen, sec, "expert_units",
			u->expert_units, "experts and expert_units are "
			"mutually exclusive \u2014 use experts for "
			"layer-uniform ranges, expert_units for fine-grained "
			"ownership");
	if (!u->has_layers && !u->has_experts && u->expert_units[0] == '\0')
		return conf_errf(c, err, errlen, sec, NULL, NULL,
			"missing required key \"layers\" (or experts / "
			"expert_units for an expert-only unit)");
	return 0;
}

/* The grid keys (spec/wire.md §9): the others mean nothing without join,
 * and a unit announces a layer range, so an expert-only unit cannot
 * join (§9's AnnounceMsg has no experts). */
static int
unit_grid(struct conf *c, struct conf_unit *u, char *err, size_t errlen)
{
	static const char *const needs_join[] = {
		"public_url", "grid_key", "grid_heartbeat_ms",
	};
	const char *sec = u->section;

	if (u->n_join == 0) {
		for (unsigned int i = 0; i < sizeof(needs_join) /
		     sizeof(needs_join[0]); i++)
			if (conf_line_of(c, sec, needs_join[i]) != 0)
				return conf_errf(c, err, errlen, sec,
					needs_join[i],
					conf_value_of(c, sec, needs_join[i]),
					"set without join (the grid keys "
					"belong to a unit that joins a "
					"router)");
		return 0;
	}
	if (!u->has_layers)
		return conf_errf(c, err, errlen, sec, "join",
			conf_value_of(c, sec, "join"), "an expert-only unit "
			"cannot join: a grid announce names a layer range "
			"(spec/wire.md §9.1); set layers");
	return 0;
}

int
conf_parse_sections(struct conf *c, struct rte_cfgfile *cfg, char *err,
		size_t errlen)
{
	bool eal = false;
	unsigned int i, j;
	int rc;

	for (i = 0; i < c->n_lines; i++) {
		const char *sec = c->lines[i].section;
		const struct key *keys;
		void *base;

		if (c->lines[i].key[0] != '\0')
			continue;
		if (strcmp(sec, "eal") == 0) {
			keys = eal_keys;
			base = c;
			eal = true;
		} else if (strcmp(sec, "log") == 0) {
			keys = log_keys;
			base = c;
		} else if (strcmp(sec, "telemetry") == 0) {
			keys = tel_keys;
			base = c;
		} else if (strncmp(sec, "port ", 5) == 0) {
			struct conf_port *p;
			const char *num = sec + 5 + strspn(sec + 5, " \t");
			uint64_t n;
			char why[64];

			if (parse_uint(num, 0, CONF_MAX_PORTS - 1, &n, why,
					sizeof(why)) != NULL)
				return conf_errf(c, err, errlen, sec, NULL,
					NULL, "port index not 0..%d",
					CONF_MAX_PORTS - 1);
			for (j = 0; j < c->n_ports; j++)
				if (c->ports[j].index == n)
					return conf_errf(c, err, errlen, sec,
						NULL, NULL,
						"port %u defined twice",
						(unsigned int)n);
			p = &c->ports[c->n_ports++];
			memset(p, 0, sizeof(*p));
			p->index = n;
			snprintf(p->section, sizeof(p->section), "%s", sec);
			p->mtu = 1500;
			keys = port_keys;
			base = p;
		} else if (strncmp(sec, "shard ", 6) == 0 ||
			   strncmp(sec, "front ", 6) == 0) {
			bool front = sec[0] == 'f';
			const char *kind = front ? "front" : "shard";
			const char *name = sec + 6 + strspn(sec + 6, " \t");
			struct conf_unit *u;

			if (!valid_name(name))
				return conf_errf(c, err, errlen, sec, NULL,
					NULL, "%s name not [A-Za-z0-9_-]"
					"{1,%d}", kind, CONF_NAME_MAX - 1);
			if (c->n_units == CONF_MAX_UNITS)
				return conf_errf(c, err, errlen, sec, NULL,
					NULL, "more than %d shards and fronts",
					CONF_MAX_UNITS);
			for (j = 0; j < c->n_units; j++) {
				if (strcmp(c->units[j].name, name) != 0)
					continue;
				if (c->units[j].front == front)
					return conf_errf(c, err, errlen, sec,
						NULL, NULL, "%s %s defined "
						"twice", kind, name);
				return conf_errf(c, err, errlen, sec, NULL,
					NULL, "name %s already used by [%s] "
					"(shards and fronts share names)",
					name, c->units[j].section);
			}
			u = &c->units[c->n_units++];
			unit_defaults(u);
			u->front = front;
			snprintf(u->name, sizeof(u->name), "%s", name);
			snprintf(u->section, sizeof(u->section), "%s", sec);
			keys = front ? front_keys : unit_keys;
			base = u;
		} else {
			return conf_errf(c, err, errlen, sec, NULL, NULL,
				"unknown section (eal, log, telemetry, "
				"port N, shard NAME, front NAME)");
		}
		rc = parse_section(c, cfg, sec, keys, base, err, errlen);
		if (rc < 0)
			return rc;
		if (keys == unit_keys) {
			rc = unit_experts(c, base, err, errlen);
			if (rc == 0)
				rc = unit_grid(c, base, err, errlen);
			if (rc < 0)
				return rc;
		} else if (keys == front_keys) {
			rc = conf_unit_front(c, cfg, base, err, errlen);
			if (rc < 0)
				return rc;
		}
	}
	if (!eal)
		return conf_errf(c, err, errlen, NULL, NULL, NULL,
			"missing section [eal]");
	/* conf_eal_argv groups "double quotes": an odd count would take
	 * the rest of the line as one argument, silently */
	if (strchr(c->eal_args, '"') != NULL) {
		unsigned int q = 0;

		for (const char *s = c->eal_args; *s; s++)
			q += *s == '"';
		if (q % 2)
			return conf_errf(c, err, errlen, "eal", "args",
				conf_value_of(c, "eal", "args"),
				"unterminated '\"'");
	}
	if (c->n_ports == 0)
		return conf_errf(c, err, errlen, NULL, NULL, NULL,
			"no [port N] section");
	if (c->n_units == 0)
		return conf_errf(c, err, errlen, NULL, NULL, NULL,
			"no [shard NAME] or [front NAME] section");
	return 0;
}
