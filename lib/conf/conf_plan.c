/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Runtime checks with facts from EAL and the model, the --check plan, and
 * the EAL argv. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "conf_priv.h"

int
conf_eal_argv(const struct conf *c, const char *argv0, char *buf, char **argv,
		int max)
{
	const char *s = c->eal_args;
	char *o = buf;
	int argc = 0;

	if (max < 1)
		return -E2BIG;
	argv[argc++] = (char *)argv0;
	for (;;) {
		bool quoted = false;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		if (argc == max)
			return -E2BIG;
		argv[argc++] = o;
		for (; *s != '\0'; s++) {
			if (*s == '"') {
				quoted = !quoted;
				continue;
			}
			if (!quoted && (*s == ' ' || *s == '\t'))
				break;
			*o++ = *s;
		}
		*o++ = '\0';
	}
	return argc;
}

static const char *
std_getenv(const char *name)
{
	return getenv(name);
}

int
conf_apply_wire_env(struct conf *c, const char *(*getenv_fn)(const char *))
{
	bool i8, f16off;
	unsigned int i;

	if (getenv_fn == NULL)
		getenv_fn = std_getenv;
	i8 = getenv_fn("LARQL_I8_WIRE") != NULL;
	f16off = getenv_fn("LARQL_F16_WIRE_DISABLE") != NULL;
	for (i = 0; i < c->n_units; i++) {
		if (i8)
			c->units[i].i8 = true;
		if (f16off)
			c->units[i].f16 = false;
	}
	return i8 + f16off;
}

static void
fmt_lcores(const struct conf_lcores *s, char *buf, size_t n)
{
	unsigned int a, b;
	size_t o = 0;

	buf[0] = '\0';
	for (a = conf_lcores_next(s, 0); a < CONF_MAX_LCORE;
	     a = conf_lcores_next(s, b + 1)) {
		for (b = a; b + 1 < CONF_MAX_LCORE &&
		     conf_lcores_has(s, b + 1); b++)
			;
		if (o < n)
			o += snprintf(buf + o, n - o, "%s%u", o ? "," : "", a);
		if (b > a && o < n)
			o += snprintf(buf + o, n - o, "-%u", b);
	}
}

static int
check_lcores(const struct conf *c, const struct conf_facts *f,
		const struct conf_unit *u, const char *sec, const char *key,
		const struct conf_lcores *s, bool on_node, char *err,
		size_t errlen)
{
	unsigned int l;
	int node;

	for (l = conf_lcores_next(s, 0); l < CONF_MAX_LCORE;
	     l = conf_lcores_next(s, l + 1)) {
		node = f->lcore_socket(l, f->arg);
		if (node < 0)
			return conf_errf(c, err, errlen, sec, key,
				conf_value_of(c, sec, key),
				"lcore %u is not enabled in EAL "
				"(see [eal] args -l)", l);
		if (on_node && node != u->numa_node)
			return conf_errf(c, err, errlen, sec, key,
				conf_value_of(c, sec, key),
				"lcore %u is on NUMA node %d, not numa_node "
				"%d", l, node, u->numa_node);
	}
	return 0;
}

/* args has "--vdev NAME" or "--vdev=NAME", NAME followed by ',' or the
 * end of the argument: EAL was asked for that device. */
static bool
vdev_named(const char *args, const char *name)
{
	size_t n = strlen(name);
	const char *p = args;

	while ((p = strstr(p, "--vdev")) != NULL) {
		p += 6;
		while (*p == ' ' || *p == '=' || *p == '"')
			p++;
		if (strncmp(p, name, n) == 0 &&
		    (p[n] == ',' || p[n] == ' ' || p[n] == '"' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* One key spec of a front reads, as a bearer token. */
static int
check_secret(const struct conf *c, const char *sec, const char *key,
		const char *spec, char *err, size_t errlen)
{
	char k[CONF_STR_MAX], why[256];
	bool ok;

	if (conf_secret_read(spec, k, sizeof(k), why, sizeof(why)) < 0)
		return conf_errf(c, err, errlen, sec, key,
			conf_value_of(c, sec, key), "%s", why);
	ok = conf_token68(k);
	memset(k, 0, sizeof(k));
	if (!ok)
		return conf_errf(c, err, errlen, sec, key,
			conf_value_of(c, sec, key), "the key read is not a "
			"bearer token (A-Z a-z 0-9 - . _ ~ + / and trailing "
			"=): no shard's api_key can match it");
	return 0;
}

/* A front's shard_key and every "shard_key IPV4:PORT" read. */
static int
check_front_keys(const struct conf *c, const struct conf_unit *u, char *err,
		size_t errlen)
{
	const char *sec = u->section;

	if (u->shard_key[0] != '\0' &&
	    check_secret(c, sec, "shard_key", u->shard_key, err, errlen) < 0)
		return -EINVAL;
	/* the overrides, in file order: their lines name them */
	for (unsigned int i = 0, j = 0; i < c->n_lines &&
	     j < u->n_shard_keys; i++) {
		const struct conf_line *l = &c->lines[i];

		if (strcmp(l->section, sec) != 0 ||
		    strncmp(l->key, "shard_key", 9) != 0 ||
		    l->key[9] == '\0')
			continue;
		if (check_secret(c, sec, l->key, u->shard_keys[j++].key, err,
				 errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

int
conf_check_runtime(const struct conf *c, const struct conf_facts *f,
		char *err, size_t errlen)
{
	char sec[CFG_NAME_LEN], why[256];
	unsigned int i;
	int rc, n;

	for (i = 0; f->port_exists && i < c->n_ports; i++) {
		snprintf(sec, sizeof(sec), "%s", c->ports[i].section);
		if (f->port_exists(c->ports[i].device, f->arg) < 0)
			return conf_errf(c, err, errlen, sec, "device",
				c->ports[i].device, "%s",
				vdev_named(c->eal_args, c->ports[i].device) ?
				"its --vdev in [eal] args did not probe: the "
				"PMD's message above says why" :
				"no such port in EAL (bound to a DPDK driver? "
				"vdev in [eal] args?)");
		if (f->port_check) {
			const char *key = "device";

			if (f->port_check(&c->ports[i], f->arg, &key, why,
					  sizeof(why)) < 0)
				return conf_errf(c, err, errlen, sec, key,
					conf_value_of(c, sec, key), "%s",
					why);
		}
	}
	for (i = 0; i < c->n_units; i++) {
		const struct conf_unit *u = &c->units[i];

		snprintf(sec, sizeof(sec), "%s", u->section);
		if (u->front) {
			/* no weights: its lcores may be on any node */
			rc = f->lcore_socket ? check_lcores(c, f, u, sec,
				"net_lcores", &u->net_lcores, false, err,
				errlen) : 0;
			if (rc == 0)
				rc = check_front_keys(c, u, err, errlen);
			if (rc < 0)
				return rc;
			continue;
		}
		if (f->lcore_socket) {
			/* compute runs where the weights are: workers (or the
			 * single lcore) on numa_node */
			rc = check_lcores(c, f, u, sec, "net_lcores",
				&u->net_lcores, u->single_lcore, err, errlen);
			if (rc == 0 && !u->single_lcore)
				rc = check_lcores(c, f, u, sec,
					"worker_lcores", &u->worker_lcores,
					true, err, errlen);
			if (rc < 0)
				return rc;
		}
		if (f->model_layers) {
			why[0] = '\0';
			n = f->model_layers(u->model, f->arg, why,
				sizeof(why));
			if (n <= 0)
				return conf_errf(c, err, errlen, sec, "model",
					u->model, "%s", why[0] ? why :
					"cannot read the model");
			if (u->has_layers && u->layer_last >= (unsigned int)n)
				return conf_errf(c, err, errlen, sec, "layers",
					conf_value_of(c, sec, "layers"),
					"the model has %d layers (0-%d)", n,
					n - 1);
		}
		if (f->experts_check &&
		    (u->has_experts || u->expert_units[0] != '\0')) {
			const char *key = u->has_experts ? "experts" :
					  "expert_units";

			why[0] = '\0';
			if (f->experts_check(u, f->arg, &key, why,
					     sizeof(why)) < 0)
				return conf_errf(c, err, errlen, sec, key,
					conf_value_of(c, sec, key), "%s",
					why[0] ? why : "cannot serve experts");
		}
		if (f->grid_check && u->n_join > 0) {
			const char *key = "join";

			why[0] = '\0';
			if (f->grid_check(u, f->arg, &key, why,
					  sizeof(why)) < 0)
				return conf_errf(c, err, errlen, sec, key,
					conf_value_of(c, sec, key), "%s",
					why[0] ? why : "cannot join the grid");
		}
	}
	return 0;
}

static void
fmt_ip(uint32_t a, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
		(a >> 8) & 255, a & 255);
}

static void
fmt_size(uint64_t x, char *buf, size_t n)
{
	if (x >= (1u << 30) && x % (1u << 30) == 0)
		snprintf(buf, n, "%" PRIu64 " GiB", x >> 30);
	else if (x >= (1u << 20) && x % (1u << 20) == 0)
		snprintf(buf, n, "%" PRIu64 " MiB", x >> 20);
	else if (x >= (1u << 10) && x % (1u << 10) == 0)
		snprintf(buf, n, "%" PRIu64 " KiB", x >> 10);
	else
		snprintf(buf, n, "%" PRIu64 " B", x);
}

/* Where a key spec's secret comes from (never the secret). */
static const char *
key_source(const char *spec)
{
	if (spec == NULL || spec[0] == '\0')
		return "none";
	if (strncmp(spec, "env:", 4) == 0)
		return "from the environment";
	if (strncmp(spec, "file:", 5) == 0)
		return "from a file";
	return "in the config";
}

/* The client side's limits, a shard's or a front's. */
static void
print_limits(const struct conf_unit *u, FILE *out)
{
	char s1[32], s2[32];

	fmt_size(u->max_body, s1, sizeof(s1));
	fmt_size(u->max_header, s2, sizeof(s2));
	fprintf(out, "    limits: body %s, header %s, %u connections, "
		"pipeline %u, idle %u ms, header %u ms, body %u ms",
		s1, s2, u->max_connections, u->pipeline_depth,
		u->idle_timeout_ms, u->header_timeout_ms,
		u->body_timeout_ms);
	if (u->body_min_rate != 0)
		fprintf(out, " (+1 s per %u bytes)", u->body_min_rate);
	fprintf(out, ", send %u ms", u->send_timeout_ms);
	fprintf(out, "; auth %s",
		u->has_api_key ? "Bearer key" : "none");
	if (u->rate_limit_n != 0)
		fprintf(out, "; rate limit %u/%s per %s",
			u->rate_limit_n, u->rate_limit_period_s == 1 ? "sec" :
			u->rate_limit_period_s == 60 ? "min" : "hour",
			u->trust_forwarded_for ?
			"X-Forwarded-For client" : "peer address");
	fprintf(out, "\n");
}

/* A front (issue 19): where each layer range goes. */
static void
print_front(const struct conf_unit *u, const char *addr, FILE *out)
{
	const struct conf_front_range *last = &u->ranges[u->n_ranges - 1];
	char l1[256], ip[32];

	fmt_lcores(&u->net_lcores, l1, sizeof(l1));
	fprintf(out, "  front %s: %s:%u (port %u)\n", u->name, addr,
		u->listen, u->port);
	fprintf(out, "    lcores %s: network and forwarding (no model)\n",
		l1);
	fprintf(out, "    layers 0-%u in %u range%s; ", last->last,
		u->n_ranges, u->n_ranges == 1 ? "" : "s");
	if (u->num_layers != 0)
		fprintf(out, "num_layers %u\n", u->num_layers);
	else
		fprintf(out, "num_layers not set (the model's count "
			"unchecked)\n");
	for (unsigned int i = 0; i < u->n_ranges; i++) {
		const struct conf_front_range *r = &u->ranges[i];

		if (r->first == r->last)
			fprintf(out, "    layer %u:", r->first);
		else
			fprintf(out, "    layers %u-%u:", r->first, r->last);
		for (unsigned int j = 0; j < r->n_rep; j++) {
			const char *k = conf_front_key(u, r->ip[j],
				r->port[j]);

			fmt_ip(r->ip[j], ip, sizeof(ip));
			fprintf(out, "%s %s:%u (%s%s)", j ? " |" : "", ip,
				r->port[j], k ? "key " : "no key",
				k ? key_source(k) : "");
		}
		fprintf(out, "\n");
	}
	fprintf(out, "    shards: hop timeout %u ms, health every %u ms, %u "
		"connections per lcore per shard, %u requests in flight "
		"each\n", u->hop_timeout_ms, u->health_interval_ms,
		u->shard_connections, u->shard_pipeline);
	fprintf(out, "    wire: f32, f16 %s, i8 %s\n", u->f16 ? "on" : "off",
		u->i8 ? "on" : "off");
	print_limits(u, out);
}

void
conf_print_plan(const struct conf *c, FILE *out)
{
	char a[32], g[32], l1[256], l2[256];
	unsigned int i;

	fprintf(out, "plan of %s\n", c->path);
	fprintf(out, "  eal: %s\n", c->eal_args);
	fprintf(out, "  log level %s; /metrics %s\n", c->log_level,
		c->metrics ? "on" : "off");
	for (i = 0; i < c->n_ports; i++) {
		const struct conf_port *p = &c->ports[i];

		fmt_ip(p->addr, a, sizeof(a));
		fmt_ip(p->gateway, g, sizeof(g));
		fprintf(out, "  port %u: %s  %s/%u  gateway %s  "
			"rxq %u txq %u  mtu %u  vlan %s%.0u\n", p->index,
			p->device, a, p->prefix, p->gateway ? g : "none",
			p->rx_queues, p->tx_queues, p->mtu,
			p->vlan ? "" : "none", p->vlan);
	}
	for (i = 0; i < c->n_units; i++) {
		const struct conf_unit *u = &c->units[i];
		const struct conf_port *p = conf_port_by_index(c, u->port);

		fmt_ip(p ? p->addr : 0, a, sizeof(a));
		if (u->front) {
			print_front(u, a, out);
			continue;
		}
		fmt_lcores(&u->net_lcores, l1, sizeof(l1));
		fmt_lcores(&u->worker_lcores, l2, sizeof(l2));
		fprintf(out, "  shard %s: %s:%u (port %u)\n", u->name, a,
			u->listen, u->port);
		if (u->has_layers)
			fprintf(out, "    model %s, layers %u-%u (%u), q6k "
				"layout %s\n", u->model, u->layer_first,
				u->layer_last,
				u->layer_last - u->layer_first + 1,
				u->q6k_layout == CONF_Q6K_GGML ? "ggml" :
				"private");
		else
			fprintf(out, "    model %s, no dense layers "
				"(expert-only)\n", u->model);
		if (u->has_experts)
			fprintf(out, "    experts %u-%u of every layer with a "
				"layer file; f16 guard %s\n", u->expert_first,
				u->expert_last, u->f16_guard ? "on" : "off");
		else if (u->expert_units[0] != '\0')
			fprintf(out, "    experts per layer from %s; f16 "
				"guard %s\n", u->expert_units,
				u->f16_guard ? "on" : "off");
		if (u->single_lcore)
			fprintf(out, "    NUMA node %d; lcores %s: network and "
				"compute (single-lcore mode)\n",
				u->numa_node, l1);
		else
			fprintf(out, "    NUMA node %d; network lcores %s; "
				"worker lcores %s\n", u->numa_node, l1, l2);
		fprintf(out, "    wire: f32, f16 %s, i8 %s; batches of up to "
			"%u rows, wait %u us\n", u->f16 ? "on" : "off",
			u->i8 ? "on" : "off", u->batch_max_rows,
			u->batch_wait_us);
		if (u->split_min_rows == 0)
			fprintf(out, "    layer split: off\n");
		else if (u->single_lcore || u->worker_lcores.count < 2)
			fprintf(out, "    layer split: from %u rows, but "
				"inactive (needs 2+ worker lcores)\n",
				u->split_min_rows);
		else
			fprintf(out, "    layer split: jobs of %u+ rows, each "
				"layer's features across %u workers\n",
				u->split_min_rows, u->worker_lcores.count);
		print_limits(u, out);
		if (u->n_join > 0) {
			fprintf(out, "    grid: joins");
			for (unsigned int k = 0; k < u->n_join; k++)
				fprintf(out, "%s %s", k ? "," : "",
					u->join[k]);
			if (u->public_url[0] != '\0')
				fprintf(out, " as %s", u->public_url);
			else
				fprintf(out, " as http://%s:%u", a, u->listen);
			fprintf(out, "; key %s; heartbeat %u ms\n",
				key_source(u->grid_key),
				u->grid_heartbeat_ms);
		}
	}
}
