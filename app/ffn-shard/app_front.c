/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A [front NAME] section made a lib/front front (app_front.h).
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "app_front.h"
#include "front.h"

struct front *
app_front_create(const struct conf *c, const struct conf_unit *cu)
{
	static char keys[CONF_FRONT_MAX_RANGES][FRONT_MAX_REPLICAS][256];
	struct front_conf fc;
	struct front *f;
	char err[256];
	int rc;

	memset(&fc, 0, sizeof(fc));
	fc.name = cu->name;
	fc.layout.n = cu->n_ranges;
	for (unsigned int r = 0; r < cu->n_ranges; r++) {
		const struct conf_front_range *cr = &cu->ranges[r];

		fc.layout.first[r] = cr->first;
		fc.layout.last[r] = cr->last;
		fc.n_rep[r] = cr->n_rep;
		for (unsigned int i = 0; i < cr->n_rep; i++) {
			struct front_replica *rep = &fc.rep[r][i];
			const char *spec = conf_front_key(cu, cr->ip[i],
							  cr->port[i]);

			rep->ip_be = htonl(cr->ip[i]);
			rep->port = cr->port[i];
			if (spec == NULL)
				continue;
			if (conf_secret_read(spec, keys[r][i],
					     sizeof(keys[r][i]), err,
					     sizeof(err)) < 0) {
				fprintf(stderr, "%s: [%s] shard_key: %s\n",
					c->path, cu->section, err);
				return NULL;
			}
			rep->key = keys[r][i];
		}
	}
	fc.num_layers = cu->num_layers;
	fc.wire.f16 = cu->f16;
	fc.wire.i8 = cu->i8;
	fc.hop_timeout_ms = cu->hop_timeout_ms;
	fc.health_interval_ms = cu->health_interval_ms;
	fc.conns = cu->shard_connections;
	fc.pipeline = cu->shard_pipeline;
	fc.mem = front_alloc_heap;	/* app_front_attach gives DPDK's */
	rc = front_create(&f, &fc, err, sizeof(err));
	/* the keys were copied: none stays in this process's statics */
	memset(keys, 0, sizeof(keys));
	if (rc < 0) {
		fprintf(stderr, "%s: [%s]: %s\n", c->path, cu->section,
			rc == -ENOMEM ? "out of memory" : err);
		return NULL;
	}
	return f;
}

void
app_front_attach(struct front *f, struct shard_srv_unit *su)
{
	const struct shard_mem *m = shard_srv_unit_mem(su);
	struct front_alloc a = { m->alloc, m->free, m->arg };

	front_set_alloc(f, &a);
}

size_t
app_front_metrics(void *arg, char *buf, size_t cap)
{
	const struct shard_unit *u = arg;
	size_t n = shard_server_metrics(NULL, buf, cap);

	if (u->front != NULL && n < cap)
		n += front_metrics(u->front, buf + n, cap - n);
	return n;
}
