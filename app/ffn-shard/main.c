/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-shard: the appliance. One config file describes EAL, ports and shard
 * units (lib/conf); everything is validated and loaded before any lcore
 * starts (as DPDK's l3fwd does), then network and worker lcores run the
 * data path of lib/shard until SIGINT/SIGTERM.
 *
 *   ffn-shard -c FILE                   run
 *   ffn-shard [EAL args] -- -c FILE     run, EAL args replace [eal] args
 *   ffn-shard --check -c FILE           validate (EAL too) and print plan
 *   ffn-shard --check-static -c FILE    validate the file alone (no EAL),
 *                                       e.g. for another host's config
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "app_front.h"
#include "app_grid.h"
#include "conf.h"
#include "quant.h"
#include "net.h"
#include "shard_server.h"

#define EAL_ARGV_MAX 64
#define DRAIN_MS 5000

static struct conf conf;
static struct shard_unit units[CONF_MAX_UNITS];
static struct shard_srv_unit *srv_units[CONF_MAX_UNITS];
static struct net_port *ports[CONF_MAX_PORTS];
static volatile sig_atomic_t got_signal;

/* What each lcore runs. */
static struct {
	int (*fn)(void *);
	void *arg;
} role[RTE_MAX_LCORE];

/* The drain, once the grid's Droppings are out (on the grid's thread). */
static void
drain_after_grid(void)
{
	shard_server_stop(DRAIN_MS);
}

/* The first SIGINT/SIGTERM drains for at most DRAIN_MS; a second one
 * (Ctrl-C again) closes what is left at once, unless it is the first
 * delivered twice (shard_server_signal: timeout(1) does so). With a
 * grid, the first one sends Dropping "shutdown" to every router before
 * the drain closes the listener (issue 20: routers stop sending work
 * first; app_grid.h), and the later ones are judged by the same rule. */
static void
on_signal(int sig)
{
	static uint64_t grid_first_ns;	/* main thread only (eal_start) */
	uint64_t now = net_now_ns();

	got_signal = sig;
	if (grid_first_ns == 0 && app_grid_leave()) {
		grid_first_ns = now != 0 ? now : 1;
		return;
	}
	if (grid_first_ns != 0) {
		if (shard_signal_drain(grid_first_ns, now, DRAIN_MS) == 0)
			shard_server_stop(0);
		return;
	}
	shard_server_signal(DRAIN_MS);
}

static void
usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [EAL args --] -c FILE [--check | --check-static]\n"
		"  -c FILE          appliance config (configs/*.conf)\n"
		"  --check          validate everything (starts EAL, reads the\n"
		"                   models' index.json) and print the plan\n"
		"  --check-static   validate the file only, print the plan\n",
		argv0);
}

/* conf_facts: the model's layer count from its index.json. */
static int
model_layers(const char *dir, void *arg, char *why, size_t whylen)
{
	char path[CONF_STR_MAX + 16];
	struct json_object *o, *n;
	int layers;

	(void)arg;
	snprintf(path, sizeof(path), "%s/index.json", dir);
	o = json_object_from_file(path);
	if (o == NULL) {
		snprintf(why, whylen, "cannot read %s: %s", path,
			 json_util_get_last_err() ?
			 json_util_get_last_err() : "unknown error");
		return -ENOENT;
	}
	if (!json_object_object_get_ex(o, "num_layers", &n) ||
	    !json_object_is_type(n, json_type_int) ||
	    (layers = json_object_get_int(n)) <= 0) {
		snprintf(why, whylen, "%s: num_layers missing or not a "
			 "positive integer", path);
		json_object_put(o);
		return -EINVAL;
	}
	json_object_put(o);
	return layers;
}

static uint32_t
prefix_mask_be(uint8_t prefix)
{
	return htonl(prefix == 0 ? 0 : 0xffffffffu << (32 - prefix));
}

/* Connections one network lcore of port index may hold: the sum of its
 * shards' max_connections (each is per network lcore). */
static uint64_t
port_lcore_conns(unsigned int index)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < conf.n_units; i++)
		if (conf.units[i].port == index)
			n += conf.units[i].max_connections;
	return n;
}

static int
start_ports(void)
{
	for (unsigned int i = 0; i < conf.n_ports; i++) {
		const struct conf_port *cp = &conf.ports[i];
		struct net_port_conf pc;
		uint64_t mbufs;
		uint16_t port_id;
		int rc;

		if (conf_eal_port_id(cp->device, &port_id) < 0) {
			fprintf(stderr, "%s: [%s] device: \"%s\": no such "
				"DPDK port\n", conf.path, cp->section,
				cp->device);
			return -ENODEV;
		}
		memset(&pc, 0, sizeof(pc));
		pc.port_id = port_id;
		pc.nb_queues = cp->rx_queues;
		/* Per queue, each pool (RX, and TX: net.h) holds the rings'
		 * worth and about two mbufs per connection: a request being
		 * read, an answer's headers and payload reference. The
		 * default (8192) alone ran out past ~3 000 connections. */
		mbufs = (8192 + 2 * port_lcore_conns(cp->index)) *
			cp->rx_queues;
		pc.nb_mbufs = pc.nb_tx_mbufs = (uint32_t)RTE_MIN(mbufs,
				(uint64_t)UINT32_MAX);
		pc.mtu = cp->mtu;
		pc.ip_be = htonl(cp->addr);
		pc.netmask_be = prefix_mask_be(cp->prefix);
		pc.gateway_be = htonl(cp->gateway);
		pc.vlan = cp->vlan != 0;
		pc.vlan_id = cp->vlan;
		rc = net_port_init(&pc, &ports[cp->index]);
		if (rc < 0) {
			fprintf(stderr, "%s: [%s]: net_port_init(%s): %s\n",
				conf.path, cp->section, cp->device,
				strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static uint32_t
lcores_count(const struct conf_lcores *set)
{
	uint32_t n = 0;

	for (unsigned int l = conf_lcores_next(set, 0); l < CONF_MAX_LCORE;
	     l = conf_lcores_next(set, l + 1))
		n++;
	return n;
}

/* A unit's expert ownership from its config (spec/moe.md §2); 0 or
 * -EINVAL with why. */
static int
unit_own(const struct conf_unit *cu, struct ffn_moe_own *o, char *why,
	 size_t whylen)
{
	memset(o, 0, sizeof(*o));
	if (cu->has_experts) {
		o->kind = FFN_MOE_OWN_RANGE;
		o->first = cu->expert_first;
		o->last = cu->expert_last;
		return 0;
	}
	return ffn_moe_own_units(o, cu->expert_units, why, whylen);
}

static int
load_units(void)
{
	for (unsigned int i = 0; i < conf.n_units; i++) {
		const struct conf_unit *cu = &conf.units[i];
		bool moe = cu->has_experts || cu->expert_units[0] != '\0';
		struct ffn_moe_own own;
		struct front *front = NULL;
		struct shard_unit_conf uc = {
			.name = cu->name,
			.model_dir = cu->model,
			.first_layer = (int)cu->layer_first,
			.last_layer = (int)cu->layer_last,
			.numa_node = cu->numa_node,
			.wire = { .f16 = cu->f16, .i8 = cu->i8 },
			.api_key = cu->has_api_key ? cu->api_key : NULL,
			.batch_max_rows = cu->batch_max_rows,
			.batch_wait_us = cu->batch_wait_us,
			.q6k_ggml = cu->q6k_layout == CONF_Q6K_GGML,
			.mmap_weights = cu->mmap_weights,
			.split_min_rows = cu->split_min_rows,
			.experts = moe ? &own : NULL,
			.no_dense = !cu->has_layers,
			.f16_guard = cu->f16_guard,
		};
		struct shard_limits lim = {
			.max_body = cu->max_body,
			.max_header = cu->max_header,
			.max_connections = cu->max_connections,
			.pipeline_depth = cu->pipeline_depth,
			.net_lcores = lcores_count(&cu->net_lcores),
			.idle_timeout_ms = cu->idle_timeout_ms,
			.header_timeout_ms = cu->header_timeout_ms,
			.body_timeout_ms = cu->body_timeout_ms,
			.body_min_rate = cu->body_min_rate,
			.send_timeout_ms = cu->send_timeout_ms,
			.rate_limit_n = cu->rate_limit_n,
			.rate_limit_period_s = cu->rate_limit_period_s,
			.trust_forwarded_for = cu->trust_forwarded_for,
		};
		char err[512];
		int rc;

		if (cu->front) {
			front = app_front_create(&conf, cu);
			if (front == NULL)
				return -EINVAL;
			uc.front = front;
			uc.model_dir = NULL;
		}
		if (moe && unit_own(cu, &own, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: [%s] expert_units: \"%s\": %s\n",
				conf.path, cu->section, cu->expert_units, err);
			return -EINVAL;
		}
		rc = shard_unit_init(&units[i], &uc, err, sizeof(err));
		if (moe)
			ffn_moe_own_free(&own);
		if (rc < 0) {
			fprintf(stderr, "%s: [%s] model: \"%s\": %s\n",
				conf.path, cu->section, cu->model, err);
			return rc;
		}
		if (units[i].model != NULL)
			ffn_model_set_kq_q8k(units[i].model, cu->kq_q8k);
		if (units[i].moe != NULL)
			ffn_moe_set_kq_q8k(units[i].moe, cu->kq_q8k);
		units[i].metrics_enabled = conf.metrics;
		units[i].log_errors = true;
		units[i].metrics_extra = shard_server_metrics;
		if (front != NULL) {
			units[i].metrics_extra = app_front_metrics;
			units[i].metrics_extra_arg = &units[i];
		}
		srv_units[i] = shard_srv_unit_create(&units[i], cu->listen,
						     &lim, cu->numa_node);
		if (srv_units[i] == NULL) {
			fprintf(stderr, "%s: [%s]: cannot allocate its "
				"memory on node %d: %s\n", conf.path,
				cu->section, cu->numa_node,
				rte_strerror(rte_errno));
			return -ENOMEM;
		}
		if (front != NULL)
			app_front_attach(front, srv_units[i]);
	}
	return 0;
}

static int
setup_lcores(void)
{
	/* Workers first: a unit with workers routes jobs through its ring,
	 * which must exist before the network lcores look at it. */
	for (unsigned int i = 0; i < conf.n_units; i++) {
		const struct conf_unit *cu = &conf.units[i];

		if (cu->single_lcore)
			continue;
		for (unsigned int l = conf_lcores_next(&cu->worker_lcores, 0);
		     l < CONF_MAX_LCORE;
		     l = conf_lcores_next(&cu->worker_lcores, l + 1)) {
			struct shard_worker *w =
				shard_worker_create(l, srv_units[i]);

			if (w == NULL) {
				fprintf(stderr, "%s: [%s] worker_lcores: "
					"lcore %u: setup failed: %s\n",
					conf.path, cu->section, l,
					rte_strerror(rte_errno));
				return -ENOMEM;
			}
			role[l].fn = shard_worker_run;
			role[l].arg = w;
		}
	}
	for (unsigned int pi = 0; pi < conf.n_ports; pi++) {
		const struct conf_port *cp = &conf.ports[pi];
		struct shard_srv_unit *on_port[CONF_MAX_UNITS];
		unsigned int n = 0;
		uint16_t queue = 0;

		for (unsigned int i = 0; i < conf.n_units; i++)
			if (conf.units[i].port == cp->index)
				on_port[n++] = srv_units[i];
		for (unsigned int i = 0; i < conf.n_units; i++) {
			const struct conf_unit *cu = &conf.units[i];

			if (cu->port != cp->index)
				continue;
			for (unsigned int l =
			     conf_lcores_next(&cu->net_lcores, 0);
			     l < CONF_MAX_LCORE;
			     l = conf_lcores_next(&cu->net_lcores, l + 1)) {
				struct shard_netlc *lc = shard_netlc_create(l,
					ports[cp->index], queue++, on_port, n);

				if (lc == NULL) {
					fprintf(stderr, "%s: [%s] net_lcores: "
						"lcore %u: setup failed\n",
						conf.path, cu->section, l);
					return -ENOMEM;
				}
				role[l].fn = shard_netlc_run;
				role[l].arg = lc;
			}
		}
	}
	return 0;
}

/* issue 23: an expert unit says how many experts it holds, how many
 * bytes and how long they took to load. */
static void
print_experts(const struct conf_unit *cu, const struct shard_unit *u)
{
	const struct ffn_moe_info *mi = ffn_moe_info(u->moe);

	printf("ffn-shard: [%s] experts: %" PRIu64 " held (%u experts of "
	       "width %u a layer, %u of %u layers with a layer file), %s%s, "
	       "%.1f MiB, loaded in %.0f ms\n", cu->section,
	       mi->experts_loaded, mi->num_experts, mi->width,
	       mi->layer_files, mi->num_layers, mi->kind,
	       mi->kq_q8k ? " (kq_q8k: Q8_K inputs)" : "",
	       (double)mi->bytes_loaded / (1 << 20), mi->load_ms);
}

static void
print_serving(void)
{
	for (unsigned int i = 0; i < conf.n_units; i++) {
		const struct conf_unit *cu = &conf.units[i];
		const struct conf_port *cp = conf_port_by_index(&conf,
								cu->port);
		struct in_addr a = { .s_addr = htonl(cp->addr) };

		if (cu->front) {
			printf("ffn-shard: [%s] front of layers 0-%u in %u "
			       "ranges on %s:%u\n", cu->section,
			       cu->ranges[cu->n_ranges - 1].last, cu->n_ranges,
			       inet_ntoa(a), cu->listen);
		} else if (units[i].model != NULL) {
			const struct ffn_info *fi =
				ffn_model_info(units[i].model);

			printf("ffn-shard: [%s] serving layers %u-%u of %u "
			       "(%s, %s, hidden %u) on %s:%u, %s mode, "
			       "kernels %s\n", cu->section, fi->first_layer,
			       fi->last_layer, fi->num_layers,
			       fi->model_type, fi->dtype, fi->hidden,
			       inet_ntoa(a), cu->listen,
			       cu->single_lcore ? "single-lcore" : "worker",
			       ffn_isa_name(ffn_active_isa()));
		} else {
			printf("ffn-shard: [%s] serving experts only on "
			       "%s:%u, %s mode, kernels %s\n", cu->section,
			       inet_ntoa(a), cu->listen,
			       cu->single_lcore ? "single-lcore" : "worker",
			       ffn_isa_name(ffn_active_isa()));
		}
		if (units[i].moe != NULL)
			print_experts(cu, &units[i]);
	}
	fflush(stdout);
}

/* The command line: EAL's part (before "--", if any) and ours. */
struct app_args {
	const char *path;
	int check, check_static;
	int eal_argc;		/* > 0: EAL args on the command line */
	int app_first;		/* argv index of our first option */
};

/* What rte_eal_init gets: its argv points into eal_buf (conf_eal_argv). */
static char eal_buf[CONF_STR_MAX];
static char *eal_argv[EAL_ARGV_MAX];

/* The command line into a; 0, or the exit code after usage(). */
static int
parse_args(int argc, char **argv, struct app_args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "check-static", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct app_args){ .app_first = 1 };
	/* "ffn-shard [EAL args] -- -c FILE": EAL args from the command line. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			a->app_first = i + 1;
			a->eal_argc = i;
			break;
		}
	optind = a->app_first;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->path = optarg; break;
		case 'k': a->check = 1; break;
		case 's': a->check_static = 1; break;
		case 'h': usage(argv[0]); exit(0);
		default: usage(argv[0]); return 2;
		}
	}
	if (a->path == NULL || optind < argc) {
		usage(argv[0]);
		return 2;
	}
	return 0;
}

/* eal_argv from the command line or from [eal] args: its count, or -1. */
static int
eal_args(char **argv, const struct app_args *a)
{
	int n;

	if (a->eal_argc > 0) {
		size_t len = 0;

		if (a->eal_argc >= EAL_ARGV_MAX) {
			fprintf(stderr, "ffn-shard: EAL arguments before "
				"'--': %d, at most %d\n", a->eal_argc - 1,
				EAL_ARGV_MAX - 2);
			return -1;
		}
		/* They replace [eal] args: the plan shows what EAL got. */
		len += snprintf(conf.eal_args, sizeof(conf.eal_args),
				"(command line, replaces [eal] args)");
		for (int i = 0; i < a->eal_argc; i++) {
			eal_argv[i] = argv[i];
			if (i > 0 && len < sizeof(conf.eal_args))
				len += snprintf(conf.eal_args + len,
						sizeof(conf.eal_args) - len,
						" %s", argv[i]);
		}
		return a->eal_argc;
	}
	n = conf_eal_argv(&conf, argv[0], eal_buf, eal_argv, EAL_ARGV_MAX);
	if (n < 0) {
		fprintf(stderr, "ffn-shard: %s: [eal] args: more than "
			"%d arguments\n", conf.path, EAL_ARGV_MAX);
		return -1;
	}
	return n;
}

/* conf_facts.port_check: lib/net's checks of the probed port; its
 * facts (AF_XDP: the interface, the XDP mode) go to the start-up log. */
static int
port_check(const struct conf_port *p, void *arg, const char **key,
	   char *why, size_t whylen)
{
	uint16_t pid;

	(void)arg;
	if (conf_eal_port_id(p->device, &pid) < 0)
		return 0;	/* port_exists says so */
	return net_port_precheck(pid, p->rx_queues, p->mtu, stdout, key, why,
				 whylen);
}

/* conf_facts: the unit's experts can be served: a hybrid-MoE model and,
 * with expert_units, a file that reads. */
static int
experts_check(const struct conf_unit *cu, void *arg, const char **key,
	      char *why, size_t whylen)
{
	struct ffn_moe_own o;
	int rc;

	(void)arg;
	rc = ffn_moe_is_hybrid(cu->model, why, whylen);
	if (rc <= 0) {
		*key = "model";
		if (rc == 0)
			snprintf(why, whylen, "not a hybrid-MoE vindex "
				 "(index.json model_config.model_type gemma4* "
				 "with moe.hybrid true): no experts to serve");
		return -EINVAL;
	}
	rc = unit_own(cu, &o, why, whylen);
	ffn_moe_own_free(&o);
	return rc < 0 ? -EINVAL : 0;
}

/* EAL, then the checks that need it (lcores, ports, models); 0 or -1. */
static int
eal_start(const struct app_args *a, int eal_argc)
{
	struct conf_facts f = {
		.lcore_socket = conf_eal_lcore_socket,
		.port_exists = conf_eal_port_exists,
		.port_check = port_check,
		.model_layers = model_layers,
		.experts_check = experts_check,
		.grid_check = app_grid_check,
	};
	char err[CONF_ERR_MAX + 256];
	sigset_t stop_sigs;
	int rc;

	/* The stop signals are blocked in every thread EAL starts (they
	 * inherit this mask) and handled on this one alone: handlers on
	 * two threads at once could both take theirs for the first. */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	rc = rte_eal_init(eal_argc, eal_argv);
	pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
	if (rc < 0) {
		fprintf(stderr, "ffn-shard: %s%s: rte_eal_init failed: %s "
			"(EAL's messages above say why)\n",
			a->app_first > 1 ? "EAL args on the command line" :
			conf.path, a->app_first > 1 ? "" : ": [eal] args",
			rte_strerror(rte_errno));
		return -1;
	}
	rc = conf_check_runtime(&conf, &f, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ffn-shard: %s\n", err);
		rte_eal_cleanup();
		return -1;
	}
	return 0;
}

/* Every lcore's role until the signal; then the data path is down. */
static void
run_lcores(void)
{
	unsigned int main_lcore = rte_get_main_lcore(), l;

	RTE_LCORE_FOREACH_WORKER(l) {
		if (role[l].fn != NULL)
			rte_eal_remote_launch(role[l].fn, role[l].arg, l);
	}
	if (role[main_lcore].fn != NULL)
		role[main_lcore].fn(role[main_lcore].arg);
	else
		while (!got_signal)
			usleep(100000);
	rte_eal_mp_wait_lcore();
	if (got_signal)
		printf("ffn-shard: signal %d: drained and stopped\n",
		       (int)got_signal);
}

int
main(int argc, char **argv)
{
	char err[CONF_ERR_MAX + 256];
	struct app_args a;
	int eal_argc, rc;

	rc = parse_args(argc, argv, &a);
	if (rc != 0)
		return rc;
	rc = conf_load(a.path, &conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ffn-shard: %s\n", err);
		return 1;
	}
	conf_apply_wire_env(&conf, NULL);
	if (a.check_static) {
		conf_print_plan(&conf, stdout);
		return 0;
	}
	eal_argc = eal_args(argv, &a);
	if (eal_argc < 0 || eal_start(&a, eal_argc) < 0)
		return 1;
	if (a.check) {
		conf_print_plan(&conf, stdout);
		printf("ffn-shard: %s: OK\n", conf.path);
		rte_eal_cleanup();
		return 0;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Pick the kernels now, before lcores share the dispatch tables. */
	(void)quant_kernels_active();
	if (load_units() < 0 || start_ports() < 0 || setup_lcores() < 0 ||
	    net_telemetry_register() < 0 ||
	    shard_telemetry_register(units, conf.n_units) < 0) {
		rte_eal_cleanup();
		return 1;
	}
	print_serving();
	if (app_grid_start(&conf, units, drain_after_grid) < 0) {
		rte_eal_cleanup();
		return 1;
	}
	run_lcores();
	app_grid_stop();
	for (unsigned int i = 0; i < conf.n_ports; i++)
		if (ports[conf.ports[i].index] != NULL)
			net_port_close(ports[conf.ports[i].index]);
	for (unsigned int i = 0; i < conf.n_units; i++)
		shard_unit_fini(&units[i]);
	conf_free(&conf);
	rte_eal_cleanup();
	return 0;
}
