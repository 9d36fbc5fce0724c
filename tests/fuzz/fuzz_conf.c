/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the appliance config file (lib/conf: conf_scan, then
 * rte_cfgfile, the key tables and the static cross-checks of conf.h), and
 * for a file that loads, what the app does with it next: the EAL argv,
 * the wire switches from the environment, the runtime checks (with
 * facts derived from the input instead of EAL) and the --check plan.
 *
 * Input: the file's bytes. conf_load() reads a path, so each input is
 * written to one file per process (in /dev/shm when there is one). No EAL
 * is started: parsing needs none (conf.h).
 *
 * Checked: a failure is one error line "PATH: ..." or "PATH:LINE: ..."
 * whose line exists in the file (as tests/conf/test_conf_hostile.c
 * requires); a success satisfies the static rules conf.h lists.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_log.h>

#include "conf.h"
#include "fuzz_util.h"

#define MAX_ARGV 64

static char dir[64];
static char path[96];
static FILE *devnull;
static uint32_t facts_seed;

static void
cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_scratch_dir(dir, sizeof(dir), "conf");
	snprintf(path, sizeof(path), "%s/f.conf", dir);
	atexit(cleanup);
	devnull = fopen("/dev/null", "w");
	FZ_CHECK(devnull != NULL);
	/* rte_cfgfile logs what it refuses; conf_load reports it anyway */
	rte_log_set_global_level(RTE_LOG_EMERG);
	return 0;
}

/* conf_facts callbacks: answers derived from the input, so both the
 * accepting and the refusing branches of conf_check_runtime run. */
static int
fact_lcore(unsigned int lcore, void *arg)
{
	(void)arg;
	if ((facts_seed >> (lcore % 31)) & 1 && (facts_seed & 0x80000000u))
		return -1;
	return (int)((facts_seed >> 8) + lcore) % 3 == 0 ? 1 : 0;
}

static int
fact_port(const char *device, void *arg)
{
	(void)arg;
	return (strlen(device) + facts_seed) % 5 == 0 ? -ENODEV : 0;
}

static int
fact_layers(const char *model, void *arg, char *why, size_t whylen)
{
	(void)arg;
	if ((strlen(model) ^ facts_seed) % 7 == 0) {
		snprintf(why, whylen, "%s: no index.json", model);
		return -ENOENT;
	}
	return (int)(facts_seed % 100);
}

static bool
nul_in(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* "PATH: " or "PATH:LINE: " with 1 <= LINE <= lines in the file. */
static void
check_error(const char *err, const uint8_t *data, size_t size)
{
	size_t pl = strlen(path), lines = 1;
	const char *s;
	char *end;
	unsigned long line;

	FZ_CHECK(nul_in(err, CONF_ERR_MAX));
	FZ_CHECK(strncmp(err, path, pl) == 0);
	s = err + pl;
	FZ_CHECK(s[0] == ':');
	if (s[1] == ' ')
		return;
	line = strtoul(s + 1, &end, 10);
	FZ_CHECK(end > s + 1 && end[0] == ':' && end[1] == ' ');
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	FZ_CHECK(line >= 1 && line <= lines);
}

static void
check_loaded(struct conf *c)
{
	char buf[CONF_STR_MAX], err[CONF_ERR_MAX];
	char *argv[MAX_ARGV];
	struct conf_facts facts = {
		.lcore_socket = fact_lcore,
		.port_exists = fact_port,
		.model_layers = fact_layers,
	};
	int argc, rc;

	/* the static rules of conf.h */
	FZ_CHECK(nul_in(c->eal_args, sizeof(c->eal_args)));
	FZ_CHECK(nul_in(c->log_level, sizeof(c->log_level)));
	FZ_CHECK(c->n_ports >= 1 && c->n_ports <= CONF_MAX_PORTS);
	FZ_CHECK(c->n_units >= 1 && c->n_units <= CONF_MAX_UNITS);
	for (unsigned int i = 0; i < c->n_ports; i++) {
		const struct conf_port *p = &c->ports[i];

		FZ_CHECK(nul_in(p->device, sizeof(p->device)) && p->device[0]);
		FZ_CHECK(p->index < CONF_MAX_PORTS);
		FZ_CHECK(conf_port_by_index(c, p->index) == p);
		FZ_CHECK(p->prefix >= 1 && p->prefix <= 32);
		FZ_CHECK(p->rx_queues >= 1 && p->rx_queues == p->tx_queues);
		FZ_CHECK(p->mtu >= 68 && p->mtu <= 9000);
		FZ_CHECK(p->vlan <= 4094);
		for (unsigned int j = 0; j < i; j++) {
			FZ_CHECK(strcmp(p->device, c->ports[j].device) != 0);
			FZ_CHECK(p->addr != c->ports[j].addr);
			FZ_CHECK(p->index != c->ports[j].index);
		}
	}
	for (unsigned int i = 0; i < c->n_units; i++) {
		const struct conf_unit *u = &c->units[i];

		FZ_CHECK(nul_in(u->name, sizeof(u->name)) && u->name[0]);
		FZ_CHECK(nul_in(u->model, sizeof(u->model)) && u->model[0]);
		FZ_CHECK(conf_port_by_index(c, u->port) != NULL);
		FZ_CHECK(u->layer_first <= u->layer_last);
		FZ_CHECK(u->listen >= 1);
		FZ_CHECK(u->net_lcores.count >= 1);
		FZ_CHECK(u->worker_lcores.count >= 1);
		FZ_CHECK(!u->single_lcore ||
			 memcmp(&u->worker_lcores, &u->net_lcores,
				sizeof(u->net_lcores)) == 0);
		FZ_CHECK(u->max_body >= 1 && u->max_header >= 256);
		FZ_CHECK(u->pipeline_depth >= 1 && u->max_connections >= 1);
		FZ_CHECK(u->idle_timeout_ms >= 1 &&
			 u->idle_timeout_ms <= CONF_IDLE_TIMEOUT_MS_MAX);
		FZ_CHECK(!u->has_api_key || u->api_key[0] != '\0');
		/* rate_limit: N 1..10^9 per sec, min or hour, or none */
		FZ_CHECK(u->rate_limit_n <= 1000000000u);
		FZ_CHECK(u->rate_limit_n == 0 ?
			 u->rate_limit_period_s == 0 :
			 (u->rate_limit_period_s == 1 ||
			  u->rate_limit_period_s == 60 ||
			  u->rate_limit_period_s == 3600));
		FZ_CHECK(!u->trust_forwarded_for || u->rate_limit_n > 0);
		for (unsigned int j = 0; j < i; j++) {
			const struct conf_unit *o = &c->units[j];

			FZ_CHECK(strcmp(u->name, o->name) != 0);
			FZ_CHECK(o->port != u->port || o->listen != u->listen);
			for (unsigned int l = 0; l < CONF_MAX_LCORE; l++) {
				if (!conf_lcores_has(&u->net_lcores, l))
					continue;
				FZ_CHECK(!conf_lcores_has(&o->net_lcores, l));
				FZ_CHECK(!conf_lcores_has(&o->worker_lcores,
							  l));
			}
		}
	}

	argc = conf_eal_argv(c, "ffn-shard", buf, argv, MAX_ARGV);
	FZ_CHECK(argc >= 1 || argc == -E2BIG);
	for (int i = 1; i < argc; i++) {
		FZ_CHECK(argv[i] >= buf && argv[i] < buf + sizeof(buf));
		FZ_CHECK(nul_in(argv[i], buf + sizeof(buf) - argv[i]));
	}

	rc = conf_check_runtime(c, &facts, err, sizeof(err));
	FZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc != 0)
		FZ_CHECK(nul_in(err, sizeof(err)) &&
			 strncmp(err, path, strlen(path)) == 0);
	conf_print_plan(c, devnull);
}

static const char *
env_none(const char *name)
{
	(void)name;
	return NULL;
}

static const char *
env_all(const char *name)
{
	return name;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONF_ERR_MAX];
	struct conf *c = malloc(sizeof(*c));
	int fd, rc;

	FZ_CHECK(c != NULL);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FZ_CHECK(fd >= 0);
	FZ_CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);
	facts_seed = 0;
	for (size_t i = 0; i < size; i++)
		facts_seed = facts_seed * 31 + data[i];

	memset(err, 'x', sizeof(err));
	rc = conf_load(path, c, err, sizeof(err));
	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
		check_error(err, data, size);
		/* conf_free after a failure is a no-op (conf.h) */
		FZ_CHECK(c->lines == NULL);
		conf_free(c);
	} else {
		check_loaded(c);
		FZ_CHECK(conf_apply_wire_env(c, env_none) == 0);
		FZ_CHECK(conf_apply_wire_env(c, env_all) == 2);
		for (unsigned int i = 0; i < c->n_units; i++)
			FZ_CHECK(c->units[i].i8 && !c->units[i].f16);
		conf_free(c);
		FZ_CHECK(c->lines == NULL && c->n_lines == 0);
	}
	free(c);
	return 0;
}
