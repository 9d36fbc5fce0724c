/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_CONF_PRIV_H
#define FFN_CONF_PRIV_H

#include <rte_cfgfile.h>

#include "conf.h"

/* Where a section header (key "") or a key was read. rte_cfgfile keeps no
 * line numbers, so conf_scan() reads the text itself. */
struct conf_line {
	char section[CFG_NAME_LEN];
	char key[CFG_NAME_LEN];
	char value[CFG_VALUE_LEN];	/* as written, for messages */
	unsigned int line;
};

/* Scan the file text: line syntax, lengths rte_cfgfile would truncate or
 * refuse, duplicates; fills c->lines. */
int conf_scan(struct conf *c, const char *path, char *err, size_t errlen);

/* conf.c: every section and key, by the key tables. */
int conf_parse_sections(struct conf *c, struct rte_cfgfile *cfg, char *err,
		size_t errlen);

/* Line of a key (key NULL: of the section header); 0 if unknown. */
unsigned int conf_line_of(const struct conf *c, const char *section,
		const char *key);

/* The value of a key as written ("" if absent). */
const char *conf_value_of(const struct conf *c, const char *section,
		const char *key);

/* conf_check.c: RFC 6750 §2.1 b64token, what a client can put after
 * "Bearer ". */
bool conf_token68(const char *s);

/* conf_check.c: a key spec (api_key-like) can authenticate: "env:..."
 * and "file:..." (read at run time), or a bearer token (RFC 6750). */
bool conf_secret_spec_ok(const char *spec);

/* conf.c's value parsers: NULL, or the reason (a static string). A
 * decimal u64 up to *end; an IPv4 address (host order) up to *rest. */
const char *conf_parse_u64(const char *v, uint64_t *out, const char **end);
const char *conf_parse_ipv4(const char *v, uint32_t *out, const char **rest);

/* conf_front.c: the key as written of a front's ranges[i] (for
 * messages), or NULL. */
const char *conf_front_range_key(const struct conf *c,
		const struct conf_unit *u, unsigned int i);
/* A front's layout key ("A-B", "shard_key IPV4:PORT"): conf_unit_front
 * reads those, not the key tables. */
bool conf_front_layout_key(const char *name);
/* Read and check u's layout lines and shard key overrides (section
 * u->section of cfg): 0, or -EINVAL with err. */
int conf_unit_front(struct conf *c, struct rte_cfgfile *cfg,
		struct conf_unit *u, char *err, size_t errlen);

/* FILE:LINE: [section] key: "value": reason (parts NULL: left out; the
 * line is that of the key, else of the section). Returns -EINVAL. */
int conf_errf(const struct conf *c, char *err, size_t errlen,
		const char *section, const char *key, const char *value,
		const char *fmt, ...) __attribute__((format(printf, 7, 8)));

#endif
