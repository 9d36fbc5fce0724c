/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A shard unit (model + switches + counters) and the bodies of the small
 * routes: /v1/stats, /v1/health (spec/wire.md §2), /metrics (issue 4).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "shard.h"
#include "shard_prom.h"

/* Copy an ownership (units' arrays included) into the unit. */
static int
own_copy(struct ffn_moe_own *dst, const struct ffn_moe_own *src)
{
	size_t nr;

	*dst = *src;
	dst->off = NULL;
	dst->r = NULL;
	if (src->kind != FFN_MOE_OWN_UNITS)
		return 0;
	nr = src->off[src->n_layers];
	dst->off = malloc(((size_t)src->n_layers + 1) * sizeof(*dst->off));
	dst->r = malloc((nr + 1) * sizeof(*dst->r));
	if (dst->off == NULL || dst->r == NULL) {
		free(dst->off);
		free(dst->r);
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->off, src->off, ((size_t)src->n_layers + 1) *
	       sizeof(*dst->off));
	memcpy(dst->r, src->r, nr * sizeof(*dst->r));
	return 0;
}

/* The experts of the unit (spec/moe.md §5), when the config names
 * some: only the owned ones are read. */
static int
load_experts(struct shard_unit *u, const struct shard_unit_conf *c,
	     char *err, size_t errlen)
{
	struct ffn_moe_load_opts mo = {
		.own = c->experts,
		.numa_node = c->numa_node,
		.placement = c->mmap_weights ? FFN_PLACE_MMAP : FFN_PLACE_COPY,
	};
	int rc = ffn_moe_is_hybrid(c->model_dir, err, errlen);

	if (rc < 0)
		return rc;
	u->moe_hybrid = rc == 1;
	if (c->experts == NULL)
		return 0;
	rc = own_copy(&u->own, c->experts);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory for the ownership");
		return rc;
	}
	rc = ffn_moe_load(c->model_dir, &mo, &u->moe, err, errlen);
	if (rc < 0)
		return rc;
	u->moe_on = true;
	u->moe_hidden = ffn_moe_info(u->moe)->hidden;
	return 0;
}

int
shard_unit_init(struct shard_unit *u, const struct shard_unit_conf *c,
		char *err, size_t errlen)
{
	struct ffn_load_opts lo;
	const struct ffn_info *fi;
	int rc;

	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", c->name ? c->name : "shard");
	if (c->no_dense && c->experts == NULL && c->front == NULL) {
		snprintf(err, errlen, "a unit without dense layers needs "
			 "experts");
		return -EINVAL;
	}
	u->front = c->front;
	if (c->front != NULL) {
		/* issue 19: the shards behind it hold the weights */
		u->q6k_layout = "private";
	} else if (!c->no_dense) {
		ffn_load_opts_default(&lo);
		lo.first_layer = c->first_layer;
		lo.last_layer = c->last_layer;
		lo.numa_node = c->numa_node;
		lo.placement = c->mmap_weights ? FFN_PLACE_MMAP :
						 FFN_PLACE_COPY;
		lo.q6k_ggml = c->q6k_ggml;
		rc = ffn_model_load(c->model_dir, &lo, &u->model, err, errlen);
		if (rc < 0)
			goto fail;
		fi = ffn_model_info(u->model);
		u->facts.loaded = true;
		u->facts.hidden = fi->hidden;
		u->facts.num_layers = fi->num_layers;
		/* No range asked for: the whole model, and errors say "out
		 * of range" rather than "not served" (spec/wire.md §4). */
		u->facts.owns_all = c->first_layer < 0 && c->last_layer < 0;
		u->facts.first = fi->first_layer;
		u->facts.last = fi->last_layer;
		/* spec/vindex.md §2.4: no metadata says which; the config
		 * does. */
		u->q6k_layout = fi->q6k_ggml ? "ggml" : "private";
	} else {
		u->q6k_layout = c->q6k_ggml ? "ggml" : "private";
	}
	/* after the dense layers, whose loader's messages come first */
	rc = c->front != NULL ? 0 : load_experts(u, c, err, errlen);
	if (rc < 0)
		goto fail;
	u->wire = c->wire;
	u->f16_guard = c->f16_guard;
	if (c->api_key != NULL) {
		u->api_key_len = strlen(c->api_key);
		if (u->api_key_len >= sizeof(u->api_key)) {
			snprintf(err, errlen, "api_key longer than %zu bytes",
				 sizeof(u->api_key) - 1);
			rc = -EINVAL;
			goto fail;
		}
		memcpy(u->api_key, c->api_key, u->api_key_len);
	}
	u->max_response = c->max_response ? c->max_response : (1ull << 30);
	u->batch_max_rows = c->batch_max_rows ? c->batch_max_rows : 64;
	u->batch_wait_us = c->batch_wait_us;
	u->split_min_rows = c->split_min_rows;
	u->split_parts = 0;	/* the server sets its worker count */
	u->metrics_enabled = true;
	u->start_ns = shard_now_ns();
	return 0;
fail:
	shard_unit_fini(u);
	return rc;
}

void
shard_unit_fini(struct shard_unit *u)
{
	if (u->model != NULL)
		ffn_model_free(u->model);
	u->model = NULL;
	for (unsigned int l = 0; l < SHARD_MAX_LCORE; l++) {
		ffn_moe_scratch_free(u->moe_scratch[l]);
		u->moe_scratch[l] = NULL;
	}
	ffn_moe_free(u->moe);
	u->moe = NULL;
	ffn_moe_own_free(&u->own);
}

void
shard_stats_sum(const struct shard_unit *u, struct shard_stats *out)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)out;
	size_t words = offsetof(struct shard_stats, lat_sum_ms) / 8;

	memset(out, 0, sizeof(*out));
	for (unsigned int l = 0; l < SHARD_MAX_LCORE; l++) {
		src = (const uint64_t *)&u->stats[l];
		/* Counters are u64 up to lat_sum_ms, then batch_hist. */
		for (size_t i = 0; i < words; i++)
			dst[i] += src[i];
		out->lat_sum_ms += u->stats[l].lat_sum_ms;
		for (int b = 0; b < SHARD_BATCH_BUCKETS; b++)
			out->batch_hist[b] += u->stats[l].batch_hist[b];
	}
}

uint64_t
shard_unit_in_flight(const struct shard_unit *u)
{
	uint64_t begun = 0, ended = 0;

	/* Per lcore, ended is read before begun: both only grow and an
	 * lcore ends what it began, so each difference is >= 0. */
	for (unsigned int l = 0; l < SHARD_MAX_LCORE; l++) {
		ended += __atomic_load_n(&u->stats[l].reqs_ended,
					 __ATOMIC_ACQUIRE);
		begun += __atomic_load_n(&u->stats[l].reqs_begun,
					 __ATOMIC_ACQUIRE);
	}
	return begun - ended;
}

static uint64_t
uptime_s(const struct shard_unit *u)
{
	return (shard_now_ns() - u->start_ns) / 1000000000ull;
}

static char *
json_take(struct json_object *o, size_t *len)
{
	const char *s = json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *r = s ? strdup(s) : NULL;

	if (r != NULL)
		*len = strlen(r);
	json_object_put(o);
	return r;
}

#define J_ADD(o, k, v) json_object_object_add((o), (k), (v))

/* The model facts of the small routes: the dense model's, or for an
 * expert-only unit those its experts' index.json gave. */
static const struct ffn_info *
unit_info(const struct shard_unit *u, struct ffn_info *tmp)
{
	const struct ffn_moe_info *mi;

	if (u->model != NULL)
		return ffn_model_info(u->model);
	memset(tmp, 0, sizeof(*tmp));
	if (u->moe == NULL)
		return tmp;
	mi = ffn_moe_info(u->moe);
	snprintf(tmp->model, sizeof(tmp->model), "%s", mi->model);
	snprintf(tmp->model_type, sizeof(tmp->model_type), "%s",
		 mi->model_type);
	snprintf(tmp->dtype, sizeof(tmp->dtype), "f32");
	tmp->num_layers = mi->num_layers;
	tmp->hidden = mi->hidden;
	tmp->act = FFN_ACT_GELU_TANH;	/* spec/moe.md §1 */
	tmp->placement = mi->placement;
	tmp->pages = mi->pages;
	tmp->numa_node = mi->numa_node;
	return tmp;
}

/* /v1/stats "experts" (issue 23): what the unit holds. */
static struct json_object *
experts_json(const struct shard_unit *u, const struct shard_stats *s)
{
	const struct ffn_moe_info *mi = ffn_moe_info(u->moe);
	struct json_object *e = json_object_new_object();

	J_ADD(e, "kind", json_object_new_string(mi->kind));
	J_ADD(e, "num_experts", json_object_new_int64(mi->num_experts));
	J_ADD(e, "width", json_object_new_int64(mi->width));
	J_ADD(e, "ownership", json_object_new_string(
		      u->own.kind == FFN_MOE_OWN_UNITS ? "units" :
		      u->own.kind == FFN_MOE_OWN_RANGE ? "range" : "all"));
	if (u->own.kind == FFN_MOE_OWN_RANGE) {
		J_ADD(e, "owned_start", json_object_new_int64(u->own.first));
		J_ADD(e, "owned_end", json_object_new_int64(u->own.last));
	}
	J_ADD(e, "layer_files", json_object_new_int64(mi->layer_files));
	J_ADD(e, "experts_held", json_object_new_int64(
		      (int64_t)mi->experts_loaded));
	J_ADD(e, "weights_bytes", json_object_new_int64(
		      (int64_t)mi->bytes_loaded));
	J_ADD(e, "f16_guard", json_object_new_boolean(u->f16_guard));
	/* kq_q8k applies to Q4_K experts only (ffn_moe_set_kq_q8k) */
	J_ADD(e, "kq_q8k", json_object_new_boolean(mi->kq_q8k));
	J_ADD(e, "expert_rows", json_object_new_int64(
		      (int64_t)s->expert_rows));
	J_ADD(e, "expert_runs", json_object_new_int64(
		      (int64_t)s->expert_runs));
	return e;
}

/* spec/wire.md §2: model, family, mode, layers (the model's count),
 * hidden_size, features_per_layer, dtype; then the shard's own facts. */
char *
shard_stats_json(const struct shard_unit *u, size_t *len)
{
	struct ffn_info tmp;
	const struct ffn_info *fi = unit_info(u, &tmp);
	struct json_object *o = json_object_new_object();
	struct json_object *owned = json_object_new_object();
	struct json_object *wire = json_object_new_array();
	struct json_object *w = json_object_new_object();
	struct shard_stats s;

	shard_stats_sum(u, &s);
	J_ADD(o, "model", json_object_new_string(fi->model));
	J_ADD(o, "family", json_object_new_string(fi->family));
	J_ADD(o, "mode", json_object_new_string("ffn-service"));
	J_ADD(o, "layers", json_object_new_int64(fi->num_layers));
	J_ADD(o, "hidden_size", json_object_new_int64(fi->hidden));
	J_ADD(o, "features_per_layer", json_object_new_int64(
		      fi->intermediate));
	J_ADD(o, "dtype", json_object_new_string(fi->dtype));
	J_ADD(o, "shard", json_object_new_string(u->name));
	J_ADD(owned, "first", json_object_new_int64(fi->first_layer));
	J_ADD(owned, "last", json_object_new_int64(fi->last_layer));
	if (u->model == NULL) {	/* an expert-only unit: no dense layer */
		json_object_put(owned);
		owned = NULL;
	}
	J_ADD(o, "owned_layers", owned);
	for (int f = 0; f < WIRE_FMT_JSON; f++)	/* the binary ones */
		if (wire_fmt_enabled(&u->wire, f))
			json_object_array_add(wire, json_object_new_string(
						      wire_fmt_name(f)));
	J_ADD(o, "wire_formats", wire);
	J_ADD(o, "model_type", json_object_new_string(fi->model_type));
	J_ADD(o, "activation", json_object_new_string(ffn_act_name(fi->act)));
	J_ADD(o, "layout", json_object_new_string(ffn_layout_name(fi->layout)));
	J_ADD(o, "q6k_layout", json_object_new_string(u->q6k_layout));
	J_ADD(o, "weights_bytes", json_object_new_int64(
		      (int64_t)fi->bytes_loaded));
	J_ADD(o, "numa_node", json_object_new_int(fi->numa_node));
	J_ADD(o, "pages", json_object_new_string(ffn_pages_name(fi->pages)));
	J_ADD(o, "placement", json_object_new_string(
		      fi->placement == FFN_PLACE_MMAP ? "mmap" : "copy"));
	if (fi->layout == FFN_LAYOUT_Q4K)
		J_ADD(o, "kq_input", json_object_new_string(
			      fi->kq_q8k ? "q8k" : "f32"));
	/* issue 4: layer split across the workers (0: off) */
	J_ADD(o, "split_min_rows", json_object_new_int64(u->split_min_rows));
	J_ADD(o, "split_parts", json_object_new_int64(
		      u->split_min_rows && u->split_parts >= 2 ?
		      u->split_parts : 0));
	J_ADD(o, "kernels", json_object_new_string(
		      ffn_isa_name(ffn_active_isa())));
	J_ADD(o, "uptime_seconds", json_object_new_int64(
		      (int64_t)uptime_s(u)));
	J_ADD(w, "requests_served", json_object_new_int64(
		      (int64_t)s.walk_served));
	J_ADD(w, "layers_computed", json_object_new_int64(
		      (int64_t)s.layers_computed));
	J_ADD(w, "rows_computed", json_object_new_int64(
		      (int64_t)s.rows_computed));
	J_ADD(w, "split_jobs", json_object_new_int64((int64_t)s.split_jobs));
	J_ADD(w, "bytes_in", json_object_new_int64((int64_t)s.bytes_in));
	J_ADD(w, "bytes_out", json_object_new_int64((int64_t)s.bytes_out));
	J_ADD(o, "counters", w);
	if (u->moe != NULL)
		J_ADD(o, "experts", experts_json(u, &s));
	return json_take(o, len);
}

char *
shard_health_json(const struct shard_unit *u, size_t *len)
{
	struct json_object *o = json_object_new_object();
	struct shard_stats s;

	shard_stats_sum(u, &s);
	J_ADD(o, "status", json_object_new_string("ok"));
	J_ADD(o, "uptime_seconds", json_object_new_int64(
		      (int64_t)uptime_s(u)));
	J_ADD(o, "requests_served", json_object_new_int64(
		      (int64_t)s.walk_served));
	return json_take(o, len);
}

/* /v1/models: the reference's OpenAI-style list (larql-server
 * routes/models.rs): the one model this unit serves, "created" at the
 * unit's start (it loads its model then), plus the larql extras. */
char *
shard_models_json(const struct shard_unit *u, size_t *len)
{
	struct ffn_info tmp;
	const struct ffn_info *fi = unit_info(u, &tmp);
	struct json_object *o = json_object_new_object();
	struct json_object *data = json_object_new_array();
	struct json_object *m = json_object_new_object();
	struct timespec now;
	int64_t created;

	clock_gettime(CLOCK_REALTIME, &now);
	created = (int64_t)now.tv_sec - (int64_t)uptime_s(u);
	J_ADD(m, "id", json_object_new_string(fi->model));
	J_ADD(m, "object", json_object_new_string("model"));
	J_ADD(m, "created", json_object_new_int64(created));
	J_ADD(m, "owned_by", json_object_new_string("larql"));
	J_ADD(m, "path", json_object_new_string("/v1"));
	J_ADD(m, "features", json_object_new_int64(
		      (int64_t)fi->num_layers * fi->intermediate));
	J_ADD(m, "loaded", json_object_new_boolean(1));
	json_object_array_add(data, m);
	J_ADD(o, "object", json_object_new_string("list"));
	J_ADD(o, "data", data);
	return json_take(o, len);
}

/* The counters of one sample each, as families. */
static const struct {
	const char *name;
	const char *help;
	size_t off;			/* in struct shard_stats */
} unit_counters[] = {
	{ "ffn_layers_computed_total",
	  "Layers computed (one per layer of each request).",
	  offsetof(struct shard_stats, layers_computed) },
	{ "ffn_rows_computed_total",
	  "Rows computed (seq_len of each layer of each request).",
	  offsetof(struct shard_stats, rows_computed) },
	{ "ffn_split_jobs_total",
	  "walk-ffn jobs whose layers were split across workers "
	  "(split_min_rows).",
	  offsetof(struct shard_stats, split_jobs) },
	{ "ffn_split_parts_total", "Parts the split jobs were cut into.",
	  offsetof(struct shard_stats, split_parts) },
	{ "ffn_expert_rows_total",
	  "Expert products computed: one per (row, expert) of the expert "
	  "routes (spec/moe.md).",
	  offsetof(struct shard_stats, expert_rows) },
	{ "ffn_expert_runs_total",
	  "Expert passes, each reading the expert's weights once; "
	  "rows / runs is how well expert batching works.",
	  offsetof(struct shard_stats, expert_runs) },
	{ "ffn_f16_guard_total",
	  "Answers sent in f32 though f16 was negotiated: a finite value "
	  "would have overflowed f16 (spec/moe.md §7).",
	  offsetof(struct shard_stats, f16_guard) },
	{ "ffn_send_timeouts_total",
	  "Connections reset because the client read none of its answers "
	  "for send_timeout_ms.",
	  offsetof(struct shard_stats, send_timeouts) },
};

/* ffn_requests_total by route (shard_routes[]'s names) and status. */
static void
prom_requests(struct shard_prom *b, const struct shard_unit *u,
	      const struct shard_stats *s)
{
	static const int codes[] = {
#define SHARD_CODE(c) c,
		SHARD_STATUSES(SHARD_CODE)
#undef SHARD_CODE
	};

	shard_prom_family(b, "ffn_requests_total", "counter",
			  "Requests by route and status.");
	for (int r = 0; r < SHARD_R_COUNT; r++)
		for (int c = 0; c < SHARD_N_STATUS; c++) {
			char code[8];

			if (s->requests[r][c] == 0)
				continue;
			if (c < (int)(sizeof(codes) / sizeof(codes[0])))
				snprintf(code, sizeof(code), "%d", codes[c]);
			else
				snprintf(code, sizeof(code), "other");
			shard_prom_line(b, "ffn_requests_total{shard=\"%s\","
					"route=\"%s\",status=\"%s\"} %llu\n",
					u->name, shard_routes[r].name, code,
					(unsigned long long)s->requests[r][c]);
		}
}

/* walk-ffn requests and body bytes, by direction (and wire format). */
static void
prom_traffic(struct shard_prom *b, const struct shard_unit *u,
	     const struct shard_stats *s)
{
	shard_prom_family(b, "ffn_walk_requests_total", "counter",
			  "walk-ffn requests by direction and wire format.");
	for (int f = 0; f < WIRE_FMT_COUNT; f++)
		shard_prom_line(b, "ffn_walk_requests_total{shard=\"%s\","
				"direction=\"in\",format=\"%s\"} %llu\n"
				"ffn_walk_requests_total{shard=\"%s\","
				"direction=\"out\",format=\"%s\"} %llu\n",
				u->name, wire_fmt_name(f),
				(unsigned long long)s->walk_in[f], u->name,
				wire_fmt_name(f),
				(unsigned long long)s->walk_out[f]);
	shard_prom_family(b, "ffn_body_bytes_total", "counter",
			  "HTTP body bytes by direction.");
	shard_prom_line(b, "ffn_body_bytes_total{shard=\"%s\",direction="
			"\"in\"} %llu\nffn_body_bytes_total{shard=\"%s\","
			"direction=\"out\"} %llu\n", u->name,
			(unsigned long long)s->bytes_in, u->name,
			(unsigned long long)s->bytes_out);
}

/* A rows histogram (buckets 1, 2, 4, ..., +Inf), cumulative. */
static void
prom_rows_hist(struct shard_prom *b, const struct shard_unit *u,
	       const char *name, const char *help, const uint64_t *hist)
{
	uint64_t cum = 0;

	shard_prom_family(b, name, "histogram", help);
	for (int i = 0; i < SHARD_BATCH_BUCKETS; i++) {
		char le[16];

		cum += hist[i];
		if (i == SHARD_BATCH_BUCKETS - 1)
			snprintf(le, sizeof(le), "+Inf");
		else
			snprintf(le, sizeof(le), "%u", 1u << i);
		shard_prom_line(b, "%s_bucket{shard=\"%s\",le=\"%s\"} "
				"%llu\n", name, u->name, le,
				(unsigned long long)cum);
	}
	shard_prom_line(b, "%s_count{shard=\"%s\"} %llu\n", name, u->name,
			(unsigned long long)cum);
}

/* The compute-time and rows-per-pass histograms (cumulative buckets). */
static void
prom_histograms(struct shard_prom *b, const struct shard_unit *u,
		const struct shard_stats *s)
{
	static const char *const lat_le[SHARD_LAT_BUCKETS] = {
		"0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "25",
		"50", "100", "+Inf",
	};
	uint64_t cum = 0;

	shard_prom_family(b, "ffn_compute_ms", "histogram",
			  "Compute time per request (spec/wire.md §5.2 "
			  "latency_ms).");
	for (int i = 0; i < SHARD_LAT_BUCKETS; i++) {
		cum += s->lat_hist[i];
		shard_prom_line(b, "ffn_compute_ms_bucket{shard=\"%s\","
				"le=\"%s\"} %llu\n", u->name, lat_le[i],
				(unsigned long long)cum);
	}
	shard_prom_line(b, "ffn_compute_ms_sum{shard=\"%s\"} %.6f\n"
			"ffn_compute_ms_count{shard=\"%s\"} %llu\n", u->name,
			s->lat_sum_ms, u->name, (unsigned long long)cum);
	prom_rows_hist(b, u, "ffn_batch_rows", "Rows per compute pass.",
		       s->batch_hist);
	prom_rows_hist(b, u, "ffn_expert_rows_per_run",
		       "Rows per expert run (spec/moe.md: one read of the "
		       "expert's weights for that many rows).",
		       s->expert_hist);
}

/* Prometheus text exposition format 0.0.4. */
char *
shard_metrics_text(const struct shard_unit *u, size_t *len)
{
	struct shard_prom b;
	struct shard_stats s;

	if (shard_prom_heap(&b, 8192) < 0)
		return NULL;
	shard_stats_sum(u, &s);
	prom_requests(&b, u, &s);
	prom_traffic(&b, u, &s);
	for (size_t i = 0; i < sizeof(unit_counters) /
			       sizeof(unit_counters[0]); i++)
		shard_prom_counter(&b, unit_counters[i].name,
				   unit_counters[i].help, u->name,
				   *(const uint64_t *)((const char *)&s +
						       unit_counters[i].off));
	/* Requests read and not yet answered and acknowledged: what the
	 * grid's heartbeat reports and an unassign waits for (§9.3-4). */
	shard_prom_family(&b, "ffn_requests_in_flight", "gauge",
			  "Requests whose head was read and whose answer is "
			  "not yet acknowledged (a /metrics request counts "
			  "itself).");
	shard_prom_line(&b, "ffn_requests_in_flight{shard=\"%s\"} %llu\n",
			u->name, (unsigned long long)(s.reqs_begun -
						      s.reqs_ended));
	prom_histograms(&b, u, &s);
	/* The server's TCP and net counters: room for them, then theirs. */
	if (u->metrics_extra != NULL && shard_prom_reserve(&b, 1 << 16))
		b.len += u->metrics_extra(u->metrics_extra_arg, b.p + b.len,
					  b.cap - b.len);
	return shard_prom_take(&b, len);
}
