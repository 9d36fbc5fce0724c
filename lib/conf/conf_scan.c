/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The config text, line by line, before rte_cfgfile reads it: rte_cfgfile
 * keeps no line numbers, skips lines without '=' silently and truncates
 * long names, so a typo could pass unseen. Here every line must be empty,
 * a comment, "[section]" or "key = value", and the line of every section
 * and key is kept for error messages.
 */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conf_priv.h"

/* Sections and keys of one file: a full config has a few hundred
 * (CONF_MAX_UNITS shards of ~25 keys, CONF_MAX_PORTS ports). */
#define CONF_MAX_ENTRIES 4096

/* rte_cfgfile reads lines with fgets into NAME + VALUE + 4 bytes. */
#define LINE_MAX_CHARS (CFG_NAME_LEN + CFG_VALUE_LEN + 1)

int
conf_errf(const struct conf *c, char *err, size_t errlen, const char *section,
		const char *key, const char *value, const char *fmt, ...)
{
	unsigned int line = 0;
	size_t n;
	va_list ap;

	if (section != NULL)
		line = conf_line_of(c, section, key);
	if (line == 0 && section != NULL)
		line = conf_line_of(c, section, NULL);
	if (section == NULL)	/* about the whole file */
		n = snprintf(err, errlen, "%s: ", c->path);
	else
		n = snprintf(err, errlen, "%s:%u: ", c->path, line);
	if (section != NULL && n < errlen)
		n += snprintf(err + n, errlen - n, "[%s]%s", section,
			key ? " " : ": ");
	if (key != NULL && n < errlen)
		n += snprintf(err + n, errlen - n, "%s: ", key);
	if (value != NULL && n < errlen)
		n += snprintf(err + n, errlen - n, "\"%s\": ", value);
	if (n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

unsigned int
conf_line_of(const struct conf *c, const char *section, const char *key)
{
	unsigned int i;

	for (i = 0; i < c->n_lines; i++)
		if (strcmp(c->lines[i].section, section) == 0 &&
		    strcmp(c->lines[i].key, key ? key : "") == 0)
			return c->lines[i].line;
	return 0;
}

static char *
strip(char *s, char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

const char *
conf_value_of(const struct conf *c, const char *section, const char *key)
{
	unsigned int i;

	for (i = 0; i < c->n_lines; i++)
		if (strcmp(c->lines[i].section, section) == 0 &&
		    strcmp(c->lines[i].key, key) == 0)
			return c->lines[i].value;
	return "";
}

static int
add_line(struct conf *c, const char *section, const char *key,
		const char *value, unsigned int line)
{
	struct conf_line *l = c->lines;
	unsigned int n = c->n_lines;

	/* capacity doubles at each power of two (implicit: n only grows
	 * by one), so loading is not quadratic in copies */
	if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
		l = realloc(c->lines, (n ? 2 * n : 16) * sizeof(*l));
		if (l == NULL)
			return -ENOMEM;
		c->lines = l;
	}
	l += c->n_lines++;
	snprintf(l->section, sizeof(l->section), "%s", section);
	snprintf(l->key, sizeof(l->key), "%s", key);
	snprintf(l->value, sizeof(l->value), "%s", value);
	l->line = line;
	return 0;
}

/* One line (NUL-terminated, no newline); *section is the current one. */
static int
scan_line(struct conf *c, char *s, unsigned int lineno, char *section,
		char *err, size_t errlen)
{
	char *hash, *end, *eq, *name, *val;
	unsigned int prev;

#define ERR(fmt, ...) (snprintf(err, errlen, "%s:%u: " fmt, c->path, \
	lineno, ##__VA_ARGS__), -EINVAL)
	if (strlen(s) > LINE_MAX_CHARS)
		return ERR("line too long (max %d characters)",
			LINE_MAX_CHARS);
	/* rte_cfgfile: the first '#' starts a comment unless escaped */
	hash = strchr(s, '#');
	if (hash != NULL && (hash == s || hash[-1] != '\\'))
		*hash = '\0';
	end = s + strlen(s);
	s = strip(s, end);
	if (*s == '\0')
		return 0;
	/* every entry is checked against the earlier ones (duplicates):
	 * bound the count, so a huge file is refused, not scanned for hours */
	if (c->n_lines >= CONF_MAX_ENTRIES)
		return ERR("more than %d sections and keys", CONF_MAX_ENTRIES);
	if (*s == '[') {
		end = strchr(s, ']');
		if (end == NULL)
			return ERR("%s: no closing ']'", s);
		if (*strip(end + 1, end + 1 + strlen(end + 1)) != '\0')
			return ERR("[%s: text after ']'", strip(s + 1, end));
		name = strip(s + 1, end);
		if (*name == '\0')
			return ERR("[]: empty section name");
		if (strlen(name) >= CFG_NAME_LEN)
			return ERR("[%s]: section name too long", name);
		prev = conf_line_of(c, name, NULL);
		if (prev)
			return ERR("[%s]: duplicate section (first at line %u)",
				name, prev);
		strcpy(section, name);
		return add_line(c, name, "", "", lineno);
	}
	eq = strchr(s, '=');
	if (eq == NULL)
		return ERR("\"%s\": expected \"key = value\" or \"[section]\"",
			s);
	name = strip(s, eq);
	val = strip(eq + 1, eq + 1 + strlen(eq + 1));
	if (*name == '\0')
		return ERR("no key before '='");
	if (*section == '\0')
		return ERR("%s: key outside any section", name);
	if (strlen(name) >= CFG_NAME_LEN)
		return ERR("[%s] %s: key too long", section, name);
	if (strlen(val) >= CFG_VALUE_LEN)
		return ERR("[%s] %s: value too long (max %d characters)",
			section, name, CFG_VALUE_LEN - 1);
	prev = conf_line_of(c, section, name);
	if (prev)
		return ERR("[%s] %s: duplicate key (first at line %u)",
			section, name, prev);
	return add_line(c, section, name, val, lineno);
#undef ERR
}

int
conf_scan(struct conf *c, const char *path, char *err, size_t errlen)
{
	char section[CFG_NAME_LEN] = "";
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned int lineno = 0;
	int rc = 0;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (memchr(line, '\0', n) != NULL) {
			rc = -EINVAL;
			snprintf(err, errlen, "%s:%u: NUL byte in line", path,
				lineno);
			break;
		}
		/* rte_cfgfile would read the BOM as part of the first name */
		if (lineno == 1 && n >= 3 &&
		    memcmp(line, "\xef\xbb\xbf", 3) == 0) {
			rc = -EINVAL;
			snprintf(err, errlen, "%s:1: the file starts with a "
				"UTF-8 byte order mark (save it without one)",
				path);
			break;
		}
		/* only LF ends a line for rte_cfgfile (fgets): a CR before
		 * the end would join lines silently (CRLF is fine) */
		if (n > 1 && memchr(line, '\r', n - 1) != NULL) {
			rc = -EINVAL;
			snprintf(err, errlen, "%s:%u: bare CR inside the line "
				"(line endings must be LF or CRLF)", path,
				lineno);
			break;
		}
		rc = scan_line(c, line, lineno, section, err, errlen);
		if (rc < 0)
			break;
		errno = 0;
	}
	/* a read error (EISDIR, EIO) is not the end of the file */
	if (rc == 0 && ferror(f)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	}
	free(line);
	fclose(f);
	return rc;
}
