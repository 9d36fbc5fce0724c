/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* conf_load() and the static cross-checks between sections (conf.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "conf_priv.h"

static void
sec_of_unit(const struct conf_unit *u, char *buf, size_t n)
{
	snprintf(buf, n, "%s", u->section);
}

static void
sec_of_port(const struct conf_port *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s", p->section);
}

/* The value as written in the file, for messages. */
static const char *
val(const struct conf *c, struct rte_cfgfile *cfg, const char *sec,
		const char *key)
{
	const char *v = rte_cfgfile_get_entry(cfg, sec, key);

	return v ? v : "";
}

const struct conf_port *
conf_port_by_index(const struct conf *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < c->n_ports; i++)
		if (c->ports[i].index == n)
			return &c->ports[i];
	return NULL;
}

/* Same model directory, as written, trailing '/' ignored. */
static bool
same_model(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	while (na > 1 && a[na - 1] == '/')
		na--;
	while (nb > 1 && b[nb - 1] == '/')
		nb--;
	return na == nb && memcmp(a, b, na) == 0;
}

static unsigned int
lcores_common(const struct conf_lcores *a, const struct conf_lcores *b)
{
	unsigned int l;

	for (l = 0; l < CONF_MAX_LCORE; l++)
		if (conf_lcores_has(a, l) && conf_lcores_has(b, l))
			return l;
	return CONF_MAX_LCORE;
}

static int
check_ports(struct conf *c, struct rte_cfgfile *cfg, char *err, size_t errlen)
{
	char sec[CFG_NAME_LEN], osec[CFG_NAME_LEN];
	unsigned int i, j, nq;

	for (i = 0; i < c->n_ports; i++) {
		struct conf_port *p = &c->ports[i];
		uint32_t mask = p->prefix ? ~0u << (32 - p->prefix) : 0;

		sec_of_port(p, sec, sizeof(sec));
		for (j = 0; j < i; j++) {
			sec_of_port(&c->ports[j], osec, sizeof(osec));
			if (strcmp(p->device, c->ports[j].device) == 0)
				return conf_errf(c, err, errlen, sec, "device",
					p->device, "already used by [%s]",
					osec);
			if (p->addr == c->ports[j].addr)
				return conf_errf(c, err, errlen, sec,
					"address", val(c, cfg, sec, "address"),
					"already used by [%s]", osec);
		}
		if (p->gateway != 0 && ((p->gateway & mask) !=
				(p->addr & mask) || p->gateway == p->addr))
			return conf_errf(c, err, errlen, sec, "gateway",
				val(c, cfg, sec, "gateway"),
				"not another host of %s",
				val(c, cfg, sec, "address"));
		/* each network lcore polls its own RX queue and sends on
		 * its own TX queue: no locks, no unpolled queue */
		nq = 0;
		for (j = 0; j < c->n_units; j++)
			if (c->units[j].port == p->index)
				nq += c->units[j].net_lcores.count;
		if (nq == 0)
			nq = 1;
		if (conf_line_of(c, sec, "rx_queues") && p->rx_queues != nq)
			return conf_errf(c, err, errlen, sec, "rx_queues",
				val(c, cfg, sec, "rx_queues"),
				"must be %u: one per network lcore on this port",
				nq);
		if (conf_line_of(c, sec, "tx_queues") && p->tx_queues != nq)
			return conf_errf(c, err, errlen, sec, "tx_queues",
				val(c, cfg, sec, "tx_queues"),
				"must be %u: one per network lcore on this port",
				nq);
		p->rx_queues = nq;
		p->tx_queues = nq;
	}
	return 0;
}

/* RFC 6750 §2.1 b64token: what a client can put after "Bearer ". */
bool
conf_token68(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789-._~+/");

	return n > 0 && strspn(s + n, "=") == strlen(s + n);
}

bool
conf_secret_spec_ok(const char *spec)
{
	return strncmp(spec, "env:", 4) == 0 ||
		strncmp(spec, "file:", 5) == 0 || conf_token68(spec);
}

/* A front sends no request to itself: no replica is its own address and
 * listen port (a loop). */
static int
check_front(struct conf *c, const struct conf_unit *u, char *err,
		size_t errlen)
{
	const struct conf_port *p = conf_port_by_index(c, u->port);

	for (unsigned int i = 0; p != NULL && i < u->n_ranges; i++)
		for (unsigned int r = 0; r < u->ranges[i].n_rep; r++) {
			const char *k;

			if (u->ranges[i].ip[r] != p->addr ||
			    u->ranges[i].port[r] != u->listen)
				continue;
			k = conf_front_range_key(c, u, i);
			return conf_errf(c, err, errlen, u->section, k,
				k ? conf_value_of(c, u->section, k) : NULL,
				"a replica is this front itself ([port %u] "
				"address, listen %u): it would forward to "
				"itself",
				u->port, u->listen);
		}
	return 0;
}

static int
check_units(struct conf *c, struct rte_cfgfile *cfg, char *err, size_t errlen)
{
	char sec[CFG_NAME_LEN], osec[CFG_NAME_LEN];
	unsigned int i, j, l;

	for (i = 0; i < c->n_units; i++) {
		struct conf_unit *u = &c->units[i];

		sec_of_unit(u, sec, sizeof(sec));
		if (conf_port_by_index(c, u->port) == NULL)
			return conf_errf(c, err, errlen, sec, "port",
				val(c, cfg, sec, "port"),
				"no [port %u] section", u->port);
		if (u->has_api_key || conf_line_of(c, sec, "api_key")) {
			u->has_api_key = true;
			if (!conf_token68(u->api_key))
				return conf_errf(c, err, errlen, sec,
					"api_key", NULL, "not a bearer token "
					"(A-Z a-z 0-9 - . _ ~ + / and "
					"trailing =)");
		}
		if (u->front && check_front(c, u, err, errlen) < 0)
			return -EINVAL;
		if (u->trust_forwarded_for && u->rate_limit_n == 0)
			return conf_errf(c, err, errlen, sec,
				"trust_forwarded_for",
				val(c, cfg, sec, "trust_forwarded_for"),
				"only the rate limit reads X-Forwarded-For: "
				"set rate_limit too, or drop this key");
		if (!conf_line_of(c, sec, "worker_lcores") ||
		    memcmp(&u->worker_lcores, &u->net_lcores,
			   sizeof(u->net_lcores)) == 0) {
			u->worker_lcores = u->net_lcores;
			u->single_lcore = true;
		} else {
			l = lcores_common(&u->net_lcores, &u->worker_lcores);
			if (l < CONF_MAX_LCORE)
				return conf_errf(c, err, errlen, sec,
					"worker_lcores",
					val(c, cfg, sec, "worker_lcores"),
					"lcore %u is also a network lcore "
					"(the same list for both means "
					"single-lcore mode)", l);
		}
		for (j = 0; j < i; j++) {
			const struct conf_unit *o = &c->units[j];

			sec_of_unit(o, osec, sizeof(osec));
			if (o->port == u->port && o->listen == u->listen)
				return conf_errf(c, err, errlen, sec, "listen",
					val(c, cfg, sec, "listen"),
					"already used by [%s] on [port %u]",
					osec, u->port);
			if (same_model(o->model, u->model) &&
			    u->has_layers && o->has_layers &&
			    u->layer_first <= o->layer_last &&
			    o->layer_first <= u->layer_last)
				return conf_errf(c, err, errlen, sec, "layers",
					val(c, cfg, sec, "layers"),
					"overlaps [%s] layers %u-%u of the "
					"same model", osec, o->layer_first,
					o->layer_last);
			l = lcores_common(&u->net_lcores, &o->net_lcores);
			if (l == CONF_MAX_LCORE)
				l = lcores_common(&u->net_lcores,
					&o->worker_lcores);
			if (l < CONF_MAX_LCORE)
				return conf_errf(c, err, errlen, sec,
					"net_lcores",
					val(c, cfg, sec, "net_lcores"),
					"lcore %u already used by [%s]", l,
					osec);
			l = lcores_common(&u->worker_lcores, &o->net_lcores);
			if (l == CONF_MAX_LCORE)
				l = lcores_common(&u->worker_lcores,
					&o->worker_lcores);
			if (l < CONF_MAX_LCORE)
				return conf_errf(c, err, errlen, sec,
					"worker_lcores",
					val(c, cfg, sec, "worker_lcores"),
					"lcore %u already used by [%s]", l,
					osec);
		}
	}
	return 0;
}

int
conf_load(const char *path, struct conf *c, char *err, size_t errlen)
{
	struct rte_cfgfile_parameters params = { .comment_character = '#' };
	struct rte_cfgfile *cfg;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->log_level, sizeof(c->log_level), "info");
	c->metrics = true;
	err[0] = '\0';
	rc = conf_scan(c, path, err, errlen);
	if (rc < 0)
		goto fail;
	/* empty values are let through to say which key is empty */
	cfg = rte_cfgfile_load_with_params(path, CFG_FLAG_EMPTY_VALUES,
		&params);
	if (cfg == NULL) {
		snprintf(err, errlen, "%s: rte_cfgfile could not read it",
			path);
		rc = -EINVAL;
		goto fail;
	}
	rc = conf_parse_sections(c, cfg, err, errlen);
	if (rc == 0)
		rc = check_units(c, cfg, err, errlen);
	if (rc == 0)
		rc = check_ports(c, cfg, err, errlen);
	rte_cfgfile_close(cfg);
	if (rc == 0)
		return 0;
fail:
	conf_free(c);
	return rc;
}

void
conf_free(struct conf *c)
{
	free(c->lines);
	c->lines = NULL;
	c->n_lines = 0;
}
