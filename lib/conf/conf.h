/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_CONF_H
#define FFN_CONF_H

/*
 * lib/conf: the appliance config file (issue 4, "Config file").
 *
 * An INI file, read with DPDK's rte_cfgfile ('#' starts a comment, "\#" is
 * a literal '#'), describes the whole appliance so that the command line
 * is `ffn-shard -c FILE`. Parsing needs no EAL. Sections:
 *
 *   [eal]          args        EAL arguments, whitespace separated (req.)
 *   [log]          level       error|warning|notice|info|debug (info)
 *   [telemetry]    metrics     on|off: serve GET /metrics (on)
 *   [port N]       N: 0..CONF_MAX_PORTS-1, one per NIC port
 *                  device      PCI address or vdev name (req.)
 *                  address     IPv4/prefix of the appliance (req.)
 *                  gateway     IPv4 inside that subnet (none)
 *                  rx_queues   = tx_queues = the number of network lcores
 *                  tx_queues     of the units on this port (default that)
 *                  mtu         68..9000 (1500)
 *                  vlan        0 (none) or 1..4094 (0)
 *   [shard NAME]   NAME: [A-Za-z0-9_-]{1,31}, one per served unit
 *                  model       vindex directory; relative paths are
 *                              resolved from the working directory (req.)
 *                  layers      owned range "first-last" or "n", incl.
 *                              (required unless experts or expert_units
 *                              is set: absent then, an expert-only unit)
 *                  listen      TCP port 1..65535 (req.)
 *                  port        index of a [port N] (0)
 *                  numa_node   node that holds the weights (0)
 *                  net_lcores  lcores polling the port, DPDK list syntax
 *                              "0-3,5" (req.)
 *                  worker_lcores  compute lcores on numa_node; absent or
 *                              equal to net_lcores: single-lcore mode
 *                              (each network lcore computes itself)
 *                  f16, i8     wire switches (spec/wire.md §5.1): f16 on,
 *                              i8 off by default
 *                  max_body    bytes, K/M/G suffixes (64M, as the ref.)
 *                  max_header  bytes, request line + headers (8K)
 *                  max_connections (4096), pipeline_depth (16)
 *                  idle_timeout_ms (60000; at most 86400000, 24 h),
 *                              header_timeout_ms (10000)
 *                  body_timeout_ms  1..3600000: a body not complete this
 *                              long after its head: 408, close (20000)
 *                  body_min_rate  bytes/s, 0..1000000000: each such
 *                              many body bytes received move that
 *                              deadline one second later; 0: never (500)
 *                  send_timeout_ms  1..86400000: an answer not wholly
 *                              acknowledged and no byte of it acked
 *                              for this long (a client that stopped
 *                              reading): reset (60000)
 *                  api_key     Bearer key; absent: no auth; never empty
 *                  rate_limit  "N/sec", "N/min" or "N/hour", N 1..10^9:
 *                              requests per client address, a token
 *                              bucket of N (429 beyond; /v1/health is
 *                              exempt); absent: none
 *                  trust_forwarded_for  on: the client is the last
 *                              address of X-Forwarded-For (a proxy in
 *                              front appends it), when present (off)
 *                  batch_max_rows (64), batch_wait_us (200)
 *                  split_min_rows  0..65536: a binary walk-ffn job of at
 *                              least this many rows has each layer's
 *                              features split across the unit's workers
 *                              (issue 4; needs 2+ workers); 1: every
 *                              job; 0: never (0)
 *                  q6k_layout  private|ggml (private; spec/vindex.md §2)
 *                  mmap_weights  on: serve the weights from the mapped
 *                              files (fast start), off: copy them to the
 *                              node's memory, huge pages if any (off)
 *                  experts     "A-B" (spaces allowed): expert ids A..B
 *                              of every layer with a layer file are
 *                              served (spec/moe.md §2, issue 23)
 *                  expert_units  path of the reference's --units JSON:
 *                              per-layer expert ranges; not with experts
 *                  f16_guard   on: a negotiated f16 answer that would
 *                              overflow a finite value goes in f32
 *                              (spec/moe.md §7; dense routes too) (on)
 *                  kq_q8k      on: K-quant layers and Q4_K experts dot
 *                              inputs quantised to Q8_K with integer
 *                              instructions (faster, ~1.5% further from
 *                              f32), off: f32 (off)
 *                  join        "http://H:P[, http://H:P ...]", at most
 *                              CONF_MAX_JOIN: LARQL routers whose gRPC
 *                              grid the unit joins (spec/wire.md §9;
 *                              needs layers); absent: none
 *                  public_url  "http://H:P": the URL the routers hand
 *                              to clients (http://ADDRESS:listen of
 *                              the unit's port)
 *                  grid_key    the grid's Bearer key: "env:NAME" (from
 *                              the environment), "file:PATH" (the
 *                              file's first line) or the key itself;
 *                              absent: none
 *                  grid_heartbeat_ms  100..600000 (10000, §9.3)
 *                  public_url, grid_key and grid_heartbeat_ms need join
 *   [front NAME]   NAME as a shard's; fronts and shards share one
 *                  namespace. A unit with no model (issue 19): it serves
 *                  a whole model by forwarding each request's layers to
 *                  the shards that own them, and answers as a shard.
 *                  listen, port, net_lcores (req.), f16, i8, max_body,
 *                  max_header, max_connections, pipeline_depth,
 *                  idle_timeout_ms, header_timeout_ms, body_timeout_ms,
 *                  body_min_rate, send_timeout_ms, api_key, rate_limit,
 *                  trust_forwarded_for: as in a shard (single-lcore
 *                              mode: no worker_lcores); every other
 *                              shard key is an error here
 *                  A-B = IPV4:PORT[ | IPV4:PORT ...]
 *                              a layout line (one or more, any order;
 *                              "N = ..." for one layer): layers A..B
 *                              (inclusive, 0..65535) are served by
 *                              these 1..CONF_FRONT_MAX_REPLICAS shard
 *                              replicas, each listed once. At most
 *                              CONF_FRONT_MAX_RANGES ranges; from
 *                              layer 0, no gap, no overlap
 *                  num_layers  1..65536: the model's layer count; the
 *                              last range must end at num_layers - 1
 *                              (absent: not checked)
 *                  shard_key   the Bearer key sent to every shard, as
 *                              grid_key: "env:NAME", "file:PATH" or the
 *                              key itself; absent: none
 *                  shard_key IPV4:PORT  the key for that replica only
 *                              (it must be one of the front's; at most
 *                              CONF_FRONT_MAX_KEYS), over shard_key
 *                  hop_timeout_ms  1..600000: a shard's answer not in
 *                              this long: 504 (5000)
 *                  health_interval_ms  100..600000: each shard's health
 *                              is probed this often (1000)
 *                  shard_connections  1..64: connections per network
 *                              lcore per shard (4)
 *                  shard_pipeline  1..64: requests in flight per shard
 *                              connection (8)
 *
 * Static rules (conf_load): every value's type and range; unknown
 * sections and keys, duplicate sections and keys, lines that are not
 * "[section]" or "key = value" are errors (typos never pass silently),
 * as are a UTF-8 byte order mark, a CR inside a line (LF or CRLF end
 * lines), an unterminated '"' in [eal] args and more than 4096
 * sections and keys;
 * at least one port and one shard or front; a unit's port exists; listen
 * ports
 * unique per port (same IP); two shards with the same model directory
 * (compared as written, trailing '/' ignored) own disjoint layer ranges
 * (one host serving a layer twice is a layout mistake; different models
 * may overlap); an lcore belongs to one shard, as network or worker but
 * not both (except single-lcore mode); devices and addresses unique; a
 * front's ranges cover its layers (see above), no replica is the front
 * itself, and a literal shard_key is a bearer token.
 *
 * Runtime rules need EAL or the model: conf_check_runtime() takes the
 * facts as callbacks so the app calls it after rte_eal_init() and the
 * errors read the same. A front's shard keys are read there.
 *
 * Every error is one line: FILE:LINE: [section] key: "value": reason.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_config.h>

#define CONF_MAX_PORTS 8
#define CONF_MAX_UNITS 16
#define CONF_MAX_LCORE RTE_MAX_LCORE
#define CONF_NAME_MAX 32
#define CONF_STR_MAX 256	/* rte_cfgfile's CFG_VALUE_LEN */
#define CONF_ERR_MAX 512
#define CONF_MAX_JOIN 4		/* routers per unit (lib/grid's limit) */
/* idle_timeout_ms's (and send_timeout_ms's) largest value: a day. An
 * idle connection left longer than that is a leak, not a keep-alive. */
#define CONF_IDLE_TIMEOUT_MS_MAX 86400000u
#define CONF_FRONT_MAX_REPLICAS 4	/* shards per layer range */
#define CONF_FRONT_MAX_RANGES 64	/* layer ranges per front */
#define CONF_FRONT_MAX_KEYS 16		/* shard_key IPV4:PORT per front */

/* A set of lcore ids. */
struct conf_lcores {
	uint64_t bits[(CONF_MAX_LCORE + 63) / 64];
	unsigned int count;
};

static inline bool
conf_lcores_has(const struct conf_lcores *s, unsigned int lcore)
{
	return lcore < CONF_MAX_LCORE &&
		(s->bits[lcore / 64] >> (lcore % 64)) & 1;
}

/* Next lcore of the set at or after 'from'; CONF_MAX_LCORE at the end.
 * for (l = conf_lcores_next(s, 0); l < CONF_MAX_LCORE;
 *      l = conf_lcores_next(s, l + 1)) */
unsigned int conf_lcores_next(const struct conf_lcores *s, unsigned int from);

enum conf_q6k_layout {
	CONF_Q6K_PRIVATE = 0,	/* LARQL-private arrangement */
	CONF_Q6K_GGML,		/* llama.cpp arrangement */
};

struct conf_port {
	char section[64];		/* "port N" as written, for messages */
	unsigned int index;		/* N of [port N] */
	char device[CONF_STR_MAX];
	uint32_t addr;			/* host byte order */
	uint8_t prefix;
	uint32_t gateway;		/* 0: none */
	uint16_t rx_queues;
	uint16_t tx_queues;
	uint16_t mtu;
	uint16_t vlan;			/* 0: untagged */
};

/* A front's layout line: layers first..last go to one of n_rep shards. */
struct conf_front_range {
	uint32_t first;
	uint32_t last;			/* inclusive */
	unsigned int n_rep;		/* 1..CONF_FRONT_MAX_REPLICAS */
	uint32_t ip[CONF_FRONT_MAX_REPLICAS];	/* host order, as addr */
	uint16_t port[CONF_FRONT_MAX_REPLICAS];	/* in the line's order */
};

/* A front's "shard_key IPV4:PORT = SPEC". */
struct conf_front_key {
	uint32_t ip;			/* host order */
	uint16_t port;
	char key[CONF_STR_MAX];		/* the spec, as shard_key */
};

struct conf_unit {
	char section[64];		/* "shard NAME", "front NAME" */
	char name[CONF_NAME_MAX];
	char model[CONF_STR_MAX];
	uint32_t layer_first;
	uint32_t layer_last;		/* inclusive */
	uint16_t listen;
	unsigned int port;		/* [port N] index N */
	int numa_node;
	struct conf_lcores net_lcores;
	struct conf_lcores worker_lcores; /* == net_lcores if single */
	bool single_lcore;
	bool f16;
	bool i8;
	bool mmap_weights;
	bool kq_q8k;
	uint64_t max_body;
	uint32_t max_header;
	uint32_t max_connections;
	uint32_t pipeline_depth;
	uint32_t idle_timeout_ms;
	uint32_t header_timeout_ms;
	uint32_t body_timeout_ms;
	uint32_t body_min_rate;		/* bytes/s; 0: no extension */
	uint32_t send_timeout_ms;	/* answer unread this long: reset */
	bool has_api_key;
	char api_key[CONF_STR_MAX];
	uint32_t rate_limit_n;		/* requests per client per period; */
	uint32_t rate_limit_period_s;	/* 0 n: no limit (parse_rate) */
	bool trust_forwarded_for;	/* client = X-Forwarded-For's last */
	uint32_t batch_max_rows;
	uint32_t batch_wait_us;
	uint32_t split_min_rows;	/* 0: never split a job's layers */
	enum conf_q6k_layout q6k_layout;
	bool has_layers;		/* false: an expert-only unit */
	bool has_experts;		/* experts = A-B */
	uint32_t expert_first;
	uint32_t expert_last;		/* inclusive */
	char expert_units[CONF_STR_MAX]; /* "": none */
	bool f16_guard;
	/* spec/wire.md §9: the grid */
	unsigned int n_join;		/* 0: joins no router */
	char join[CONF_MAX_JOIN][CONF_STR_MAX];
	char public_url[CONF_STR_MAX];	/* "": http://ADDRESS:listen */
	char grid_key[CONF_STR_MAX];	/* as written; "": none */
	uint32_t grid_heartbeat_ms;
	/* issue 19: a front (no model; the shard keys above are unset,
	 * has_layers false, single_lcore true) */
	bool front;
	uint32_t num_layers;		/* 0: not given */
	unsigned int n_ranges;		/* 1..CONF_FRONT_MAX_RANGES */
	struct conf_front_range ranges[CONF_FRONT_MAX_RANGES];
					/* by first layer: 0.. without gaps */
	char shard_key[CONF_STR_MAX];	/* spec as written; "": none */
	unsigned int n_shard_keys;
	struct conf_front_key shard_keys[CONF_FRONT_MAX_KEYS];
	uint32_t hop_timeout_ms;
	uint32_t health_interval_ms;
	uint32_t shard_connections;	/* per network lcore per shard */
	uint32_t shard_pipeline;	/* in flight per shard connection */
};

struct conf_line;	/* private: where each section and key was read */

struct conf {
	char path[CONF_STR_MAX];
	char eal_args[CONF_STR_MAX];
	char log_level[16];
	bool metrics;
	unsigned int n_ports;
	struct conf_port ports[CONF_MAX_PORTS];	/* in file order */
	unsigned int n_units;
	struct conf_unit units[CONF_MAX_UNITS];	/* in file order */
	/* private */
	struct conf_line *lines;
	unsigned int n_lines;
};

/* Read, parse and statically validate FILE. On error, returns -EINVAL
 * (or -ENOENT, -ENOMEM) and writes one line into err. conf_free() after
 * success (it is a no-op after a failure). */
int conf_load(const char *path, struct conf *c, char *err, size_t errlen);
void conf_free(struct conf *c);

/* The reference server's wire switches, by presence (spec/wire.md §5.1):
 * LARQL_I8_WIRE turns i8 on, LARQL_F16_WIRE_DISABLE turns f16 off, for
 * every unit, over the config. getenv_fn NULL: getenv. Returns how many
 * switches applied (0..2). */
int conf_apply_wire_env(struct conf *c,
		const char *(*getenv_fn)(const char *name));

/* The key spec a front sends to the shard ip:port (host order): its
 * "shard_key IPV4:PORT" override, else shard_key, else NULL (none).
 * Resolve it with conf_secret_read(). */
const char *conf_front_key(const struct conf_unit *u, uint32_t ip,
		uint16_t port);

/* A secret from its config value (grid_key, shard_key): "env:NAME" (the
 * variable NAME), "file:PATH" (the file's first line, without its line
 * end) or the key itself, into key (cap bytes). Empty results are errors
 * (a key set always authenticates), and so is any byte an HTTP header
 * value cannot carry (printable ASCII only). 0 or -ENOENT (variable not
 * set or empty, file not opened) / -EINVAL with why. */
int conf_secret_read(const char *spec, char *key, size_t cap, char *why,
		size_t whylen);

/* The [port N] with index N, or NULL. */
const struct conf_port *conf_port_by_index(const struct conf *c,
		unsigned int n);

/* Split [eal] args into argv (whitespace separated; "double quotes"
 * group). argv[0] is argv0. Writes into buf (CONF_STR_MAX bytes).
 * Returns argc, or -E2BIG if more than max entries. */
int conf_eal_argv(const struct conf *c, const char *argv0, char *buf,
		char **argv, int max);

/* Facts only EAL and the model know. A NULL callback skips its check. */
struct conf_facts {
	/* NUMA node of an lcore, or -1 if EAL does not run it. */
	int (*lcore_socket)(unsigned int lcore, void *arg);
	/* 0 if EAL has a port with this device name, else -ENODEV. */
	int (*port_exists)(const char *device, void *arg);
	/* Total layer count of the model in dir (>0), or -errno with a
	 * reason written into why. */
	int (*model_layers)(const char *dir, void *arg, char *why,
			size_t whylen);
	void *arg;
	/* 0 if the port can be set up as its section says (queues, mtu;
	 * for AF_XDP the interface behind it), else -EINVAL with why and
	 * *key, the key at fault. */
	int (*port_check)(const struct conf_port *p, void *arg,
			const char **key, char *why, size_t whylen);
	/* 0 if the unit's experts can be served (the model is a hybrid
	 * MoE, its expert_units file reads), else -EINVAL with why and
	 * *key. Called only for units with experts or expert_units. */
	int (*experts_check)(const struct conf_unit *u, void *arg,
			const char **key, char *why, size_t whylen);
	/* 0 if the unit's grid keys work here (the routers resolve and
	 * are reachable, the key reads), else -EINVAL with why and *key.
	 * Called only for units with join. */
	int (*grid_check)(const struct conf_unit *u, void *arg,
			const char **key, char *why, size_t whylen);
};

/* Runtime checks: ports exist and pass port_check, lcores exist and
 * workers sit on the unit's numa_node, layer ranges within the model,
 * experts servable (experts_check), a front's shard keys read
 * (conf_secret_read) as bearer tokens.
 * 0 or -EINVAL with err. */
int conf_check_runtime(const struct conf *c, const struct conf_facts *f,
		char *err, size_t errlen);

/* conf_facts callbacks from EAL (call after rte_eal_init()):
 *   struct conf_facts f = { conf_eal_lcore_socket, conf_eal_port_exists,
 *                           app_model_layers, app_arg };
 * conf_eal_port_id() maps a [port N] device to its DPDK port id. */
int conf_eal_lcore_socket(unsigned int lcore, void *arg);
int conf_eal_port_exists(const char *device, void *arg);
int conf_eal_port_id(const char *device, uint16_t *port_id);

/* The human-readable plan of `ffn-shard --check`. */
void conf_print_plan(const struct conf *c, FILE *out);

#endif /* FFN_CONF_H */
