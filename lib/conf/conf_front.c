/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * [front NAME] (issue 19): a front's layout lines "A-B = IPV4:PORT[ | ...]"
 * and "shard_key IPV4:PORT = SPEC", checked to cover the model's layers
 * without gaps or overlaps (conf.h). Its other keys are conf.c's tables.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "conf_priv.h"

/* A front's "A-B" layout key (it starts with a digit). */
static bool
front_range_key(const char *name)
{
	return *name >= '0' && *name <= '9';
}

/* A front's "shard_key IPV4:PORT" key: the address, or NULL. */
static const char *
front_override_addr(const char *name)
{
	if (strncmp(name, "shard_key", 9) != 0 ||
	    (name[9] != ' ' && name[9] != '\t'))
		return NULL;
	return name + 9 + strspn(name + 9, " \t");
}

bool
conf_front_layout_key(const char *name)
{
	return front_range_key(name) || front_override_addr(name) != NULL;
}

/* A front's layout key "A-B" or "N", spaces around '-' allowed. */
static const char *
parse_range_key(const char *k, uint32_t *first, uint32_t *last, char *why,
		size_t whylen)
{
	static const char bad[] = "not a layer range \"A-B\" or \"N\" "
		"(a front's layout line: \"A-B = IPV4:PORT[ | IPV4:PORT "
		"...]\")";
	uint64_t a, b;
	const char *end;

	if (conf_parse_u64(k, &a, &end) != NULL)
		return bad;
	end += strspn(end, " \t");
	b = a;
	if (*end == '-') {
		end++;
		end += strspn(end, " \t");
		if (conf_parse_u64(end, &b, &end) != NULL)
			return bad;
	}
	if (*end != '\0')
		return bad;
	if (a > b)
		return "first layer > last layer";
	if (b > 65535) {
		snprintf(why, whylen, "layer %llu beyond 65535",
			(unsigned long long)b);
		return why;
	}
	*first = a;
	*last = b;
	return NULL;
}

/* "IPV4:PORT" (s NUL-terminated, no spaces): a shard's address. */
static const char *
parse_hostport(const char *s, uint32_t *ip, uint16_t *port)
{
	const char *rest;
	uint64_t x;
	uint32_t a;

	if (conf_parse_ipv4(s, &a, &rest) != NULL || *rest != ':')
		return "not IPV4:PORT";
	if (conf_parse_u64(rest + 1, &x, &rest) != NULL || *rest != '\0')
		return "not IPV4:PORT";
	if (x == 0 || x > 65535)
		return "port not in 1..65535";
	if (a == 0 || a >> 28 >= 0xe || a >> 24 == 127)
		return "not a unicast host address";
	*ip = a;
	*port = x;
	return NULL;
}

/* "IPV4:PORT[ | IPV4:PORT ...]": 1..CONF_FRONT_MAX_REPLICAS, none twice. */
static const char *
parse_replicas(const char *v, struct conf_front_range *r, char *why,
		size_t whylen)
{
	const char *p = v;

	r->n_rep = 0;
	for (;;) {
		char a[32];
		const char *end, *e;
		size_t len;
		uint32_t ip;
		uint16_t port;

		p += strspn(p, " \t");
		end = p + strcspn(p, "|");
		len = (size_t)(end - p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0)
			return "an empty address in the list (IPV4:PORT "
				"separated by '|')";
		if (len >= sizeof(a)) {
			snprintf(why, whylen, "%.24s...: not IPV4:PORT", p);
			return why;
		}
		memcpy(a, p, len);
		a[len] = '\0';
		e = parse_hostport(a, &ip, &port);
		if (e != NULL) {
			snprintf(why, whylen, "%s: %s", a, e);
			return why;
		}
		if (r->n_rep == CONF_FRONT_MAX_REPLICAS) {
			snprintf(why, whylen, "more than %d replicas "
				"(CONF_FRONT_MAX_REPLICAS)",
				CONF_FRONT_MAX_REPLICAS);
			return why;
		}
		for (unsigned int i = 0; i < r->n_rep; i++)
			if (r->ip[i] == ip && r->port[i] == port) {
				snprintf(why, whylen, "replica %s listed "
					"twice", a);
				return why;
			}
		r->ip[r->n_rep] = ip;
		r->port[r->n_rep] = port;
		r->n_rep++;
		if (*end == '\0')
			return NULL;
		p = end + 1;
	}
}

static void
fmt_span(uint32_t a, uint32_t b, char *buf, size_t n)
{
	if (a == b)
		snprintf(buf, n, "layer %u", a);
	else
		snprintf(buf, n, "layers %u-%u", a, b);
}

static const char cover[] = "ranges must cover the model's layers "
	"without gaps or overlaps";

/* The sorted ranges (l: their lines) start at 0, have no gap and no
 * overlap, and end at num_layers - 1 if it is given. */
static int
front_cover(struct conf *c, struct conf_unit *u,
		const struct conf_line *const *l, char *err, size_t errlen)
{
	const char *sec = u->section;
	const struct conf_front_range *r = u->ranges;
	char span[48];
	unsigned int i;

	if (r[0].first != 0) {
		fmt_span(0, r[0].first - 1, span, sizeof(span));
		return conf_errf(c, err, errlen, sec, l[0]->key, l[0]->value,
			"%s: %s %s in no range (the first range, %s, must "
			"start at 0)", cover, span,
			r[0].first == 1 ? "is" : "are", l[0]->key);
	}
	for (i = 1; i < u->n_ranges; i++) {
		const struct conf_front_range *a = &r[i - 1], *b = &r[i];

		if (b->first <= a->last) {
			/* said at the line read later */
			unsigned int x = l[i]->line > l[i - 1]->line ? i :
				i - 1, o = x == i ? i - 1 : i;

			fmt_span(b->first, a->last < b->last ? a->last :
				b->last, span, sizeof(span));
			return conf_errf(c, err, errlen, sec, l[x]->key,
				l[x]->value, "%s: %s and %s (line %u) both "
				"have %s", cover, l[x]->key, l[o]->key,
				l[o]->line, span);
		}
		if (b->first > a->last + 1) {
			fmt_span(a->last + 1, b->first - 1, span,
				sizeof(span));
			return conf_errf(c, err, errlen, sec, l[i]->key,
				l[i]->value, "%s: %s %s in no range (between "
				"%s at line %u and %s)", cover, span,
				b->first - a->last == 2 ? "is" : "are",
				l[i - 1]->key, l[i - 1]->line, l[i]->key);
		}
	}
	i = u->n_ranges - 1;
	if (u->num_layers != 0 && r[i].last + 1 < u->num_layers) {
		fmt_span(r[i].last + 1, u->num_layers - 1, span,
			sizeof(span));
		return conf_errf(c, err, errlen, sec, "num_layers",
			conf_value_of(c, sec, "num_layers"), "%s: %s %s in no "
			"range (the last range, %s at line %u, must end at "
			"num_layers - 1)", cover, span,
			u->num_layers - r[i].last == 2 ? "is" : "are",
			l[i]->key, l[i]->line);
	}
	if (u->num_layers != 0 && r[i].last + 1 > u->num_layers)
		return conf_errf(c, err, errlen, sec, "num_layers",
			conf_value_of(c, sec, "num_layers"), "%s: the last "
			"range, %s at line %u, goes past the model's last "
			"layer %u (num_layers - 1)", cover, l[i]->key,
			l[i]->line, u->num_layers - 1);
	return 0;
}

/* A front's layout lines and shard key overrides (the other keys are
 * parsed by then), and the rules between them. */
int
conf_unit_front(struct conf *c, struct rte_cfgfile *cfg, struct conf_unit *u,
		char *err, size_t errlen)
{
	const struct conf_line *rl[CONF_FRONT_MAX_RANGES];
	const struct conf_line *kl[CONF_FRONT_MAX_KEYS];
	const char *sec = u->section, *v, *e;
	char why[96];
	unsigned int i, j;

	for (i = 0; i < c->n_lines; i++) {
		const struct conf_line *l = &c->lines[i];
		struct conf_front_range r;

		if (strcmp(l->section, sec) != 0 || !front_range_key(l->key))
			continue;
		v = rte_cfgfile_get_entry(cfg, sec, l->key);
		if (v == NULL)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"not read by rte_cfgfile");
		e = parse_range_key(l->key, &r.first, &r.last, why,
			sizeof(why));
		if (e == NULL && *v == '\0')
			e = "empty value (IPV4:PORT[ | IPV4:PORT ...])";
		if (e == NULL)
			e = parse_replicas(v, &r, why, sizeof(why));
		if (e == NULL && u->n_ranges == CONF_FRONT_MAX_RANGES) {
			snprintf(why, sizeof(why), "more than %d layer "
				"ranges (CONF_FRONT_MAX_RANGES)",
				CONF_FRONT_MAX_RANGES);
			e = why;
		}
		if (e != NULL)
			return conf_errf(c, err, errlen, sec, l->key, v, "%s",
				e);
		/* insertion: by first layer, then last */
		for (j = u->n_ranges; j > 0 &&
		     (u->ranges[j - 1].first > r.first ||
		      (u->ranges[j - 1].first == r.first &&
		       u->ranges[j - 1].last > r.last)); j--) {
			u->ranges[j] = u->ranges[j - 1];
			rl[j] = rl[j - 1];
		}
		u->ranges[j] = r;
		rl[j] = l;
		u->n_ranges++;
	}
	if (u->n_ranges == 0)
		return conf_errf(c, err, errlen, sec, NULL, NULL,
			"no layer ranges (lines \"A-B = IPV4:PORT[ | "
			"IPV4:PORT ...]\" that say which shards serve "
			"which layers)");
	if (front_cover(c, u, rl, err, errlen) < 0)
		return -EINVAL;
	if (u->shard_key[0] != '\0' && !conf_secret_spec_ok(u->shard_key))
		return conf_errf(c, err, errlen, sec, "shard_key", NULL,
			"not a bearer token (A-Z a-z 0-9 - . _ ~ + / and "
			"trailing =), nor env:NAME or file:PATH");
	for (i = 0; i < c->n_lines; i++) {
		const struct conf_line *l = &c->lines[i];
		const char *addr = front_override_addr(l->key);
		bool replica = false;
		struct conf_front_key *k;
		uint32_t ip;
		uint16_t port;

		if (strcmp(l->section, sec) != 0 || addr == NULL)
			continue;
		v = rte_cfgfile_get_entry(cfg, sec, l->key);
		if (v == NULL)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"not read by rte_cfgfile");
		e = parse_hostport(addr, &ip, &port);
		if (e != NULL)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"not \"shard_key IPV4:PORT\": %s: %s", addr, e);
		for (j = 0; j < u->n_ranges && !replica; j++)
			for (unsigned int r = 0; r < u->ranges[j].n_rep; r++)
				if (u->ranges[j].ip[r] == ip &&
				    u->ranges[j].port[r] == port)
					replica = true;
		if (!replica)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"%s is not a replica of this front (no layout "
				"line lists it)", addr);
		for (j = 0; j < u->n_shard_keys; j++)
			if (u->shard_keys[j].ip == ip &&
			    u->shard_keys[j].port == port)
				return conf_errf(c, err, errlen, sec, l->key,
					NULL, "a second key for %s (first at "
					"line %u)", addr, kl[j]->line);
		if (u->n_shard_keys == CONF_FRONT_MAX_KEYS)
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"more than %d shard_key IPV4:PORT overrides "
				"(CONF_FRONT_MAX_KEYS)", CONF_FRONT_MAX_KEYS);
		if (*v == '\0')
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"empty value");
		if (!conf_secret_spec_ok(v))
			return conf_errf(c, err, errlen, sec, l->key, NULL,
				"not a bearer token (A-Z a-z 0-9 - . _ ~ + / "
				"and trailing =), nor env:NAME or file:PATH");
		k = &u->shard_keys[u->n_shard_keys];
		k->ip = ip;
		k->port = port;
		snprintf(k->key, sizeof(k->key), "%s", v);
		kl[u->n_shard_keys++] = l;
	}
	return 0;
}

const char *
conf_front_key(const struct conf_unit *u, uint32_t ip, uint16_t port)
{
	for (unsigned int i = 0; i < u->n_shard_keys; i++)
		if (u->shard_keys[i].ip == ip && u->shard_keys[i].port == port)
			return u->shard_keys[i].key;
	return u->shard_key[0] != '\0' ? u->shard_key : NULL;
}

const char *
conf_front_range_key(const struct conf *c, const struct conf_unit *u,
		unsigned int i)
{
	uint32_t a, b;
	char why[64];

	for (unsigned int j = 0; j < c->n_lines; j++) {
		const struct conf_line *l = &c->lines[j];

		if (strcmp(l->section, u->section) == 0 &&
		    front_range_key(l->key) &&
		    parse_range_key(l->key, &a, &b, why, sizeof(why)) == NULL &&
		    a == u->ranges[i].first && b == u->ranges[i].last)
			return l->key;
	}
	return NULL;
}

