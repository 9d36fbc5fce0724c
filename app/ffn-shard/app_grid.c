/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The appliance's side of the grid (issue 20, spec/wire.md §9): see
 * app_grid.h.
 *
 * Per-layer compute times cross from the lcores to the grid's control
 * thread through one rte_ring per (unit, computing lcore), single
 * producer and single consumer: the lcore never waits and takes no lock;
 * a full ring (the control thread stalled for thousands of passes) drops
 * the sample and counts it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "app_grid.h"
#include "grid.h"
#include "shard_server.h"

_Static_assert(CONF_MAX_JOIN == GRID_MAX_ROUTERS,
	       "lib/conf and lib/grid agree on routers per unit");

#define LAT_RING_SIZE 4096	/* samples per lcore between two reads */

/* One sample: 8 bytes, an rte_ring element. */
struct lat_sample {
	uint16_t layer;
	uint16_t requests;
	uint32_t us;
};

struct app_unit {
	struct shard_unit *u;
	struct rte_ring *ring[SHARD_MAX_LCORE];
	uint64_t dropped[SHARD_MAX_LCORE];	/* written by that lcore */
};

static struct grid *grid;
static struct app_unit app_units[CONF_MAX_UNITS];
static unsigned int n_app_units;
static void (*stop_fn)(void);

/* ---- the data path's side ------------------------------------------- */

/* shard_unit.layer_time, on the computing lcore. */
static void
layer_time(void *arg, unsigned int lcore, uint32_t layer, uint64_t ns,
	   unsigned int requests)
{
	struct app_unit *au = arg;
	unsigned int l = lcore % SHARD_MAX_LCORE;
	uint64_t us = ns / 1000;
	struct lat_sample e = {
		.layer = (uint16_t)layer,	/* conf: layers <= 65535 */
		.requests = (uint16_t)(requests > UINT16_MAX ? UINT16_MAX :
				       requests),
		.us = (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us),
	};

	if (au->ring[l] == NULL ||
	    rte_ring_sp_enqueue_elem(au->ring[l], &e, sizeof(e)) != 0)
		au->dropped[l]++;
}

/* grid_unit_conf.samples, on the control thread. */
static void
samples(void *arg, struct grid_lat *t)
{
	struct app_unit *au = arg;
	struct lat_sample e[64];

	for (unsigned int l = 0; l < SHARD_MAX_LCORE; l++) {
		unsigned int n;

		if (au->ring[l] == NULL)
			continue;
		do {
			n = rte_ring_sc_dequeue_burst_elem(au->ring[l], e,
					sizeof(e[0]), RTE_DIM(e), NULL);
			for (unsigned int i = 0; i < n; i++)
				grid_lat_add(t, e[i].layer, e[i].us / 1000.0,
					     e[i].requests);
		} while (n == RTE_DIM(e));
	}
}

static uint32_t
in_flight(void *arg)
{
	const struct app_unit *au = arg;
	uint64_t n = shard_unit_in_flight(au->u);

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* /metrics: the network lcores' counters, then this unit's grid. */
static size_t
metrics_extra(void *arg, char *buf, size_t cap)
{
	const struct app_unit *au = arg;
	size_t len = shard_server_metrics(NULL, buf, cap);

	uint64_t dropped = 0;
	int n;

	if (len + 1 < cap)
		len += grid_metrics(grid, au->u->name, buf + len, cap - len);
	for (unsigned int l = 0; l < SHARD_MAX_LCORE; l++)
		dropped += __atomic_load_n(&au->dropped[l], __ATOMIC_RELAXED);
	n = snprintf(buf + len, cap - len,
		     "# HELP ffn_grid_samples_dropped_total Layer compute "
		     "times the grid's thread did not read in time (its "
		     "per-lcore ring was full): missing from heartbeats.\n"
		     "# TYPE ffn_grid_samples_dropped_total counter\n"
		     "ffn_grid_samples_dropped_total{shard=\"%s\"} %llu\n",
		     au->u->name, (unsigned long long)dropped);
	if (n > 0 && (size_t)n < cap - len)
		len += (size_t)n;
	else if (len < cap)
		buf[len] = '\0';	/* whole lines only */
	return len;
}

/* ---- set-up ---------------------------------------------------------- */

/* index.json's "model" and "num_layers" as written (the hash covers the
 * whole string: ffn_info's copy is cut to fit). 0 or -1 with why. */
static int
model_facts(const char *dir, char *model, size_t cap, uint64_t *layers,
	    char *why, size_t whylen)
{
	char path[CONF_STR_MAX + 16];
	struct json_object *o, *m, *n;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/index.json", dir);
	o = json_object_from_file(path);
	if (o == NULL) {
		snprintf(why, whylen, "cannot read %s", path);
		return -1;
	}
	if (!json_object_object_get_ex(o, "model", &m) ||
	    !json_object_is_type(m, json_type_string) ||
	    json_object_get_string_len(m) == 0)
		snprintf(why, whylen, "%s: no \"model\" string: the grid's "
			 "announce needs a model_id (spec/wire.md §9.1)",
			 path);
	else if ((size_t)json_object_get_string_len(m) >= cap)
		snprintf(why, whylen, "%s: \"model\" longer than %zu bytes",
			 path, cap - 1);
	else if (!json_object_object_get_ex(o, "num_layers", &n) ||
		 !json_object_is_type(n, json_type_int) ||
		 json_object_get_int64(n) <= 0)
		snprintf(why, whylen, "%s: num_layers missing or not a "
			 "positive integer", path);
	else {
		snprintf(model, cap, "%s", json_object_get_string(m));
		*layers = (uint64_t)json_object_get_int64(n);
		rc = 0;
	}
	json_object_put(o);
	return rc;
}

int
app_grid_check(const struct conf_unit *u, void *arg, const char **key,
	       char *why, size_t whylen)
{
	char src[INET_ADDRSTRLEN], k[GRID_KEY_MAX], w[256];
	struct stat st;

	(void)arg;
	for (unsigned int i = 0; i < u->n_join; i++) {
		struct grid_url gu;

		*key = "join";
		if (grid_url_parse(u->join[i], &gu, w, sizeof(w)) < 0) {
			snprintf(why, whylen, "%s: %s", u->join[i], w);
			return -EINVAL;
		}
		/* Not reachable now is not an error: the unit serves and
		 * keeps retrying (§9.5); the operator reads why here. */
		if (grid_url_source(&gu, src, sizeof(src), w, sizeof(w)) < 0)
			printf("ffn-shard: [%s] grid: %s is not reachable "
			       "now (%s); the unit will keep trying\n",
			       u->section, u->join[i], w);
		else
			printf("ffn-shard: [%s] grid: %s is reached from %s "
			       "over the kernel's network (the management "
			       "interface)\n", u->section, u->join[i], src);
	}
	if (u->grid_key[0] != '\0') {
		*key = "grid_key";
		if (conf_secret_read(u->grid_key, k, sizeof(k), w,
				     sizeof(w)) < 0) {
			snprintf(why, whylen, "%s", w);
			return -EINVAL;
		}
		memset(k, 0, sizeof(k));
		/* A secret others can read is no secret: say so, as ssh
		 * does of a private key (not fatal: the operator decides). */
		if (strncmp(u->grid_key, "file:", 5) == 0 &&
		    stat(u->grid_key + 5, &st) == 0 && (st.st_mode & S_IROTH))
			printf("ffn-shard: [%s] grid_key: warning: %s is "
			       "readable by every user (chmod o-r)\n",
			       u->section, u->grid_key + 5);
	}
	if (u->has_layers) {
		char model[GRID_URL_MAX];
		uint64_t nl;

		*key = "model";
		if (model_facts(u->model, model, sizeof(model), &nl, w,
				sizeof(w)) < 0) {
			snprintf(why, whylen, "%s", w);
			return -EINVAL;
		}
	}
	return 0;
}

/* Every lcore that may compute for cu gets a ring (on its NUMA node):
 * its workers, and the network lcores of every unit on its port (RSS
 * may bring cu's connections to any of them, and in single-lcore mode
 * the lcore that reads a request computes it). */
static int
unit_rings(struct app_unit *au, const struct conf *c,
	   const struct conf_unit *cu, unsigned int idx)
{
	const struct conf_lcores *sets[CONF_MAX_UNITS + 1];
	unsigned int n_sets = 0;

	sets[n_sets++] = &cu->worker_lcores;
	for (unsigned int i = 0; i < c->n_units; i++)
		if (c->units[i].port == cu->port)
			sets[n_sets++] = &c->units[i].net_lcores;
	for (unsigned int s = 0; s < n_sets; s++)
		for (unsigned int l = conf_lcores_next(sets[s], 0);
		     l < CONF_MAX_LCORE; l = conf_lcores_next(sets[s], l + 1)) {
			char name[RTE_RING_NAMESIZE];

			if (au->ring[l % SHARD_MAX_LCORE] != NULL)
				continue;
			snprintf(name, sizeof(name), "grid_lat_%u_%u", idx, l);
			au->ring[l % SHARD_MAX_LCORE] =
				rte_ring_create_elem(name,
					sizeof(struct lat_sample),
					LAT_RING_SIZE,
					(int)rte_lcore_to_socket_id(l),
					RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (au->ring[l % SHARD_MAX_LCORE] == NULL) {
				fprintf(stderr, "ffn-shard: [%s] grid: "
					"rte_ring_create_elem(%s): %s\n",
					cu->section, name,
					rte_strerror(rte_errno));
				return -1;
			}
		}
	return 0;
}

static void left(void *arg);

int
app_grid_start(const struct conf *c, struct shard_unit *units,
	       void (*stop)(void))
{
	static char models[CONF_MAX_UNITS][GRID_URL_MAX];
	static char urls[CONF_MAX_UNITS][GRID_URL_MAX];
	static char keys[CONF_MAX_UNITS][GRID_KEY_MAX];
	struct grid_unit_conf gc[CONF_MAX_UNITS];
	unsigned int n = 0;
	char why[512];

	for (unsigned int i = 0; i < c->n_units; i++) {
		const struct conf_unit *cu = &c->units[i];
		const struct conf_port *cp = conf_port_by_index(c, cu->port);
		const struct ffn_info *fi;
		struct app_unit *au;
		uint64_t nl;

		if (cu->n_join == 0)
			continue;
		fi = ffn_model_info(units[i].model);
		au = &app_units[n_app_units++];
		au->u = &units[i];
		memset(&gc[n], 0, sizeof(gc[n]));
		if (model_facts(cu->model, models[n], sizeof(models[n]), &nl,
				why, sizeof(why)) < 0) {
			fprintf(stderr, "ffn-shard: %s: [%s] model: %s\n",
				c->path, cu->section, why);
			return -1;
		}
		if (cu->grid_key[0] != '\0' &&
		    conf_secret_read(cu->grid_key, keys[n], sizeof(keys[n]),
				     why, sizeof(why)) < 0) {
			fprintf(stderr, "ffn-shard: %s: [%s] grid_key: %s\n",
				c->path, cu->section, why);
			return -1;
		}
		if (cu->public_url[0] != '\0') {
			snprintf(urls[n], sizeof(urls[n]), "%s",
				 cu->public_url);
		} else {
			struct in_addr a = { .s_addr = htonl(cp->addr) };
			char ip[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, &a, ip, sizeof(ip));
			snprintf(urls[n], sizeof(urls[n]), "http://%s:%u", ip,
				 cu->listen);
		}
		if (unit_rings(au, c, cu, i) < 0)
			return -1;
		gc[n].section = cu->section;
		gc[n].name = cu->name;
		/* §9.1: the last '/'-separated segment of "model" */
		gc[n].model_id = grid_model_id(models[n]);
		gc[n].num_layers = nl;
		gc[n].layer_start = fi->first_layer;
		gc[n].layer_end = fi->last_layer;
		gc[n].listen_url = urls[n];
		gc[n].key = keys[n];
		gc[n].heartbeat_ms = cu->grid_heartbeat_ms;
		gc[n].n_routers = cu->n_join;
		for (unsigned int k = 0; k < cu->n_join; k++)
			gc[n].routers[k] = cu->join[k];
		gc[n].in_flight = in_flight;
		gc[n].samples = samples;
		gc[n].arg = au;
		units[i].layer_time = layer_time;
		units[i].layer_time_arg = au;
		units[i].metrics_extra = metrics_extra;
		units[i].metrics_extra_arg = au;
		printf("ffn-shard: [%s] grid: joining %u router%s as %s, "
		       "model_id %s, layers %u-%u\n", cu->section,
		       cu->n_join, cu->n_join > 1 ? "s" : "", urls[n],
		       gc[n].model_id, gc[n].layer_start, gc[n].layer_end);
		n++;
	}
	if (n == 0)
		return 0;
	stop_fn = stop;
	if (grid_start(&grid, gc, n, why, sizeof(why)) < 0) {
		fprintf(stderr, "ffn-shard: %s: %s\n", c->path, why);
		return -1;
	}
	grid_set_left_cb(grid, left, NULL);
	fflush(stdout);
	return 0;
}

bool
app_grid_unit_joins(const struct shard_unit *u)
{
	for (unsigned int i = 0; i < n_app_units; i++)
		if (app_units[i].u == u)
			return true;
	return false;
}

static void
left(void *arg)
{
	(void)arg;
	if (stop_fn != NULL)
		stop_fn();
}

bool
app_grid_leave(void)
{
	if (grid == NULL)
		return false;
	grid_leave(grid);
	return true;
}

void
app_grid_stop(void)
{
	grid_stop(grid);
	grid = NULL;
}
