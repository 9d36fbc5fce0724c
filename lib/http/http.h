/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_HTTP_H
#define FFN_HTTP_H

/*
 * lib/http: a strict, incremental HTTP/1.1 request parser and a response
 * head writer (RFC 9110, RFC 9112). Plain C: no DPDK, no mbufs. The parser
 * takes byte ranges, so a caller walks an mbuf chain and feeds each
 * segment in turn; any split, down to one byte per call, gives the same
 * result as feeding the request whole.
 *
 * Parser contract (one struct http_parser per connection):
 *
 *   http_parser_init(p, head_buf, head_cap, max_body);
 *   for each received byte range (data, len):
 *     while (len > 0 || event pending) {
 *       rc = http_feed(p, data, len, &used); data += used; len -= used;
 *       rc < 0            : error; reply p->status + p->err, then close
 *                           (framing is lost: the parser stays in error).
 *       HTTP_EV_MORE      : every byte was consumed; wait for more input.
 *       HTTP_EV_HEAD      : the head is complete; p->req holds it. Route,
 *                           check auth, send "100 Continue" if
 *                           p->req.expect_continue and not rejecting, then
 *                           give a body buffer (http_body_buf) or say
 *                           http_body_discard() if p->req.has_body.
 *       HTTP_EV_NEED_BUF  : no body buffer was given after HTTP_EV_HEAD,
 *                           or it is full and the chunked body goes on:
 *                           give one (for a larger one: holding the
 *                           p->req.body_len bytes received, i.e. realloc),
 *                           or reply 413 and close.
 *       HTTP_EV_DONE      : the request is complete (body included).
 *                           Handle it, then http_next(p) before feeding
 *                           the rest: leftover bytes are the next
 *                           pipelined request.
 *     }
 *
 * Every event is returned once; http_feed() with len == 0 is valid and
 * returns the pending event (e.g. HTTP_EV_DONE after HTTP_EV_HEAD of a
 * request without body). The head strings in p->req point into the
 * caller's head buffer and stay valid until http_next().
 *
 * Body bytes are copied once, from the input range straight into the
 * caller's body buffer (no staging copy). A caller that wants to do that
 * copy itself (rte_memcpy, DMA) asks http_body_want() where the next body
 * bytes go and how many the parser takes now, copies them and calls
 * http_body_commit(); chunk framing still goes through http_feed().
 *
 * Choices where RFC 9112 lets the recipient choose (each cited where
 * implemented in http_parse.c and http_body.c):
 *  - line endings must be CRLF: a bare LF or bare CR is 400 (§2.2 allows
 *    either; strict closes the LF-vs-CRLF smuggling gap between hops);
 *  - empty lines before the request line are ignored (§2.2 SHOULD);
 *  - obs-fold is 400 (§5.2); whitespace between field name and colon is
 *    400 (§5.1 MUST); CTLs (NUL included) in field values are 400;
 *  - origin-form targets ("/path?query") and absolute-form ones
 *    ("http://host/path?query", §3.2.2 MUST; the authority is then the
 *    host and the Host field is ignored, an empty path is "/"), and
 *    asterisk-form ("*", path "*") for OPTIONS only (§3.2.4); anything
 *    else (authority-form, "*" with another method, other schemes,
 *    userinfo) is 400 (the routes of spec/wire.md §2 are all
 *    origin-form);
 *  - HTTP/1.0 and HTTP/1.x (x >= 1, served as 1.1); any other major
 *    version (0.9, 2.0, ...) is 505;
 *  - HTTP/1.1 without exactly one Host is 400 (§3.2 MUST); a Host value
 *    that is not uri-host [":" port] is 400 in any version (§3.2 MUST);
 *  - Content-Length: several fields or a list of identical values are
 *    taken as one (RFC 9110 §8.6 MAY); differing values are 400; a
 *    value up to 2^64-1 is a number (over max_body: 413), beyond it 400;
 *  - Content-Length with Transfer-Encoding is 400 (§6.3 item 3 permits
 *    rejecting; it is the classic smuggling vector);
 *  - Transfer-Encoding: chunked must be the final coding and appear
 *    once, else 400 (§6.3 item 4, §7); an unknown coding before a final
 *    chunked is 501 (§6.1); Transfer-Encoding in HTTP/1.0 is 400 (§6.1);
 *  - a request line longer than the head limit is 414 (§3 MUST for a
 *    target longer than the server parses); header fields beyond it
 *    are 431 (RFC 6585 §5);
 *  - chunk extensions are skipped (§7.1.1) within HTTP_CHUNK_LINE_MAX
 *    per size line (else 400); trailers are read and dropped (§7.1.2)
 *    within the head limit (else 431);
 *  - Expect: 100-continue is reported; any other expectation is 417
 *    (RFC 9110 §10.1.1);
 *  - a repeated Accept keeps the first field only (the format choice of
 *    spec/wire.md §5.1 reads the first value only); a repeated
 *    Content-Type or Authorization is 400 (ambiguous).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Default body limit, as the reference server (issue 4). */
#define HTTP_MAX_BODY_DEFAULT (64ull << 20)
/* Longest chunk-size line (size plus extensions) before 400. */
#define HTTP_CHUNK_LINE_MAX 1024

enum http_event {
	HTTP_EV_ERROR = -1,
	HTTP_EV_MORE = 0,
	HTTP_EV_HEAD = 1,
	HTTP_EV_NEED_BUF = 2,
	HTTP_EV_DONE = 3,
};

enum http_method {
	HTTP_M_OTHER = 0,	/* a valid token we do not know: route → 405 */
	HTTP_M_GET,
	HTTP_M_HEAD,
	HTTP_M_POST,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_OPTIONS,
};

/* The name of a known method ("GET", ...); NULL for HTTP_M_OTHER. */
const char *http_method_name(enum http_method m);

/* A string inside the head buffer (not NUL-terminated). len 0: absent. */
struct http_str {
	const char *p;
	uint32_t len;
};

struct http_request {
	enum http_method method;
	struct http_str method_str;
	struct http_str target;		/* "/path?query", as received */
	struct http_str path;		/* target up to '?' */
	struct http_str query;		/* after '?', may be empty */
	int minor;			/* 0 or 1 (HTTP/1.x, x >= 1 → 1) */
	struct http_str host;
	struct http_str content_type;	/* field values, OWS trimmed */
	struct http_str accept;
	struct http_str authorization;
	struct http_str forwarded_for;	/* X-Forwarded-For, the last line */
	bool keep_alive;		/* after this request (§9.3) */
	bool expect_continue;		/* Expect: 100-continue */
	bool chunked;			/* Transfer-Encoding: chunked */
	bool has_body;			/* chunked, or Content-Length > 0 */
	bool has_content_length;
	uint64_t content_length;
	uint64_t body_len;		/* body bytes received so far */
	uint32_t head_len;		/* bytes of head (incl. final CRLF) */
};

struct http_parser {
	/* configuration */
	char *head;
	uint32_t head_cap;
	uint64_t max_body;
	/* body destination, set by the caller after HTTP_EV_HEAD */
	uint8_t *body;
	uint64_t body_cap;
	bool body_set;
	bool body_discard;
	/* state (private) */
	uint8_t state;
	uint8_t pending;		/* event to return on next feed */
	uint8_t prev_cr;
	uint8_t lead_cr;
	uint32_t line_start;
	uint64_t chunk_left;		/* data bytes left in chunk / CL body */
	uint32_t chunk_line;		/* bytes on the current chunk line */
	uint32_t trailer_len;
	uint8_t chunk_digits;
	uint8_t conn;			/* Connection: 1 close, 2 keep-alive */
	/* results */
	struct http_request req;
	int status;			/* error status (400, 413, ...) */
	const char *err;		/* short error message, static */
};

/* Set up a parser; head_buf is the per-connection bounded head copy
 * (its size is the head limit: beyond it → 414 in the request line,
 * 431 after it). max_body 0 → default. */
void http_parser_init(struct http_parser *p, char *head_buf,
		uint32_t head_cap, uint64_t max_body);

/* Feed up to len bytes; *used tells how many were consumed. Returns an
 * enum http_event (HTTP_EV_ERROR with p->status and p->err set). */
int http_feed(struct http_parser *p, const void *data, size_t len,
		size_t *used);

/* After HTTP_EV_HEAD or HTTP_EV_NEED_BUF: where body bytes go. buf must
 * already hold the p->req.body_len bytes received so far. Returns 0, or
 * -EINVAL if cap < body_len (or < Content-Length: the caller sizes the
 * buffer from p->req.content_length, known at HTTP_EV_HEAD). */
int http_body_buf(struct http_parser *p, void *buf, uint64_t cap);
/* Read and drop the body (e.g. after a 401 on a kept-alive connection). */
void http_body_discard(struct http_parser *p);

/* In the body-data state: the destination of the next body bytes and how
 * many the parser takes now (0: not in body data; call http_feed). After
 * http_body_discard() *dst is NULL: skip the copy, commit the count. */
uint64_t http_body_want(struct http_parser *p, uint8_t **dst);
/* The caller copied n (<= want) bytes to *dst itself. */
void http_body_commit(struct http_parser *p, uint64_t n);

/* After HTTP_EV_DONE: start the next request on the same connection. */
void http_next(struct http_parser *p);

/* Between requests, no byte of the next one received: the idle timeout
 * applies (issue 4, "idle and slow-header timeouts"). */
bool http_parser_idle(const struct http_parser *p);
/* Part of a head received, not all: the header timeout applies. */
bool http_parser_in_head(const struct http_parser *p);

/* Case-insensitive compare of a head string with a C string. */
bool http_str_eq(struct http_str s, const char *lit);
/* Case-sensitive substring test, as spec/wire.md §3 and §5.1 choose
 * formats from Content-Type and Accept. False if s is absent. */
bool http_str_contains(struct http_str s, const char *lit);

/* --- response side ---------------------------------------------------- */

/* Reason phrase of a status code ("Unknown" if not one we use). */
const char *http_reason(int status);

/* RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT":
 * writes 29 chars plus NUL into out[30]. */
void http_date_fmt(char out[30], time_t t);

/* The Date value cached per second; the caller supplies its clock. */
struct http_date_cache {
	time_t sec;
	char str[30];
};
const char *http_date_get(struct http_date_cache *c, time_t now);

struct http_response {
	int status;
	const char *content_type;	/* NULL: no Content-Type */
	uint64_t content_length;	/* length of the body sent by ref. */
	bool keep_alive;
	const char *date;		/* IMF-fixdate; NULL: no Date */
	const char *extra;		/* extra header lines, each ending
					 * "\r\n"; NULL: none */
};

/* Write the response head (status line, headers, empty line) into buf.
 * Returns its length, or -ENOSPC (nothing useful written). */
ssize_t http_write_head(char *buf, size_t cap, const struct http_response *r);

/* "HTTP/1.1 100 Continue\r\n\r\n" (RFC 9110 §15.2.1); length or -ENOSPC. */
ssize_t http_write_continue(char *buf, size_t cap);

/* {"error":"MSG"} with MSG escaped for JSON (RFC 8259 §7): '"', '\\'
 * and control characters escaped, UTF-8 bytes passed through (the
 * messages of spec/wire.md §4 contain U+2265 and U+2013). Returns the
 * length (without NUL, which is written if room) or -ENOSPC. */
ssize_t http_json_error(char *buf, size_t cap, const char *msg);

/* --- response parser (the client's side) ------------------------------ */

/*
 * An incremental HTTP/1.1 response parser (RFC 9112) for the side that
 * sends the requests: ffn-loadgen, and the fan-out front's upstream
 * connections (issue 19). Status line, Content-Length, Content-Type and
 * Connection are read; other fields are checked and skipped. Bytes arrive
 * in arbitrary pieces (TCP segments, mbuf chain segments): the head is
 * copied into r->head until its empty line and then parsed whole, so any
 * split, down to one byte per call, gives the same result as feeding the
 * response whole. The body is never copied: each call says where the
 * body bytes of its piece are.
 *
 * Contract (one struct http_rsp per connection, one response at a time):
 *
 *   http_rsp_reset(r);
 *   r->no_body = true;	if the request was HEAD (after reset, before
 *			feeding: the answer ends after its head)
 *   for each received byte range (p, n):
 *     while (n > 0) {
 *       rc = http_rsp_feed(r, p, n, &body, &body_len);
 *       rc < 0  : error; framing is lost, close the connection (the
 *                 parser keeps returning rc until reset).
 *       body_len bytes at body (inside [p, p + rc)) are body bytes.
 *       p += rc; n -= rc;
 *       r->state == HTTP_RSP_DONE: the response is complete. Read its
 *                 fields, then http_rsp_reset() before feeding the rest:
 *                 leftover bytes are the next pipelined response.
 *     }
 *
 * http_rsp_feed() returns how many bytes it consumed: all n unless the
 * response completed inside the piece (or n > INT_MAX: INT_MAX). In
 * HTTP_RSP_DONE it consumes nothing and returns 0. Errors:
 *   -EBADMSG  malformed status line or header field, bad Content-Length;
 *   -E2BIG    head longer than HTTP_RSP_HEAD_MAX (an interim 1xx head and
 *             the final head are bounded each on their own);
 *   -ENOTSUP  a body framing not done here: Transfer-Encoding (chunked or
 *             any other coding, RFC 9112 §6.3 item 4), or neither
 *             Content-Length nor a response without body (read until
 *             close, §6.3 item 8).
 *
 * Choices (each cited where implemented in http_rsp.c); the request
 * parser's strictness where RFC 9112 lets the recipient choose, except
 * line endings:
 *  - a bare LF ends a line like CRLF (§2.2 MAY): no hop after this parser
 *    sees the raw head (the front answers from the parsed fields), so
 *    there is no LF-vs-CRLF gap to close; a bare CR is an error (§2.2);
 *  - obs-fold is an error (§5.2 lets a gateway discard the response: the
 *    front answers 502; for the load generator it is a protocol error
 *    to report, not to unfold); whitespace between field name and colon,
 *    a field name that is not a token, CTLs but HTAB in a field value or
 *    in the reason phrase are errors (RFC 9110 §5.1, §5.5);
 *  - status-line = "HTTP/1." DIGIT SP 3DIGIT [SP reason-phrase] (§4; the
 *    SP before an empty reason may be missing); status 100..599 (RFC
 *    9110 §15); another major version is an error;
 *  - 1xx interim responses (RFC 9110 §15.2) are read and skipped: the
 *    parser resets itself (keeping no_body) and goes on to the final
 *    response on the same connection, whose fields it then reports; a
 *    101 is skipped as well (we never send Upgrade: what follows a 101
 *    will not parse as a response);
 *  - a response to HEAD (r->no_body), and any 1xx, 204 or 304, ends
 *    after its head whatever Content-Length or Transfer-Encoding say
 *    (§6.3 item 1); content_length is then 0 (has_length still tells
 *    whether the field was present, its value checked all the same);
 *  - Content-Length: several fields or a list of identical values are one
 *    (RFC 9110 §8.6 MAY); differing values, a sign, an empty element or
 *    a value beyond 2^64-1 are errors (§6.3 item 5); with
 *    Transfer-Encoding it is an error in any response (§6.2 MUST NOT send
 *    both, §6.3 item 3);
 *  - persistence (§9.3): "close" in Connection ends the connection after
 *    this response, whatever else the field says; otherwise HTTP/1.1 (1.x,
 *    x >= 1) persists and HTTP/1.0 persists only with "keep-alive";
 *  - Content-Type: a repeat is an error (a singleton, RFC 9110 §8.3);
 *    the value, OWS trimmed, as received (case kept), is kept up to
 *    HTTP_RSP_CTYPE_MAX bytes: a longer one is cut there and
 *    ctype_truncated set. A caller comparing types MUST NOT take a
 *    truncated value for a match (it is not the type that was sent).
 */

#define HTTP_RSP_HEAD_MAX 4096
#define HTTP_RSP_CTYPE_MAX 128

enum http_rsp_state {
	HTTP_RSP_HEAD = 0,	/* reading the status line and fields */
	HTTP_RSP_BODY,		/* head parsed, reading the body */
	HTTP_RSP_DONE,		/* complete: read the fields, then reset */
};

struct http_rsp {
	/* set by the caller after http_rsp_reset() */
	bool no_body;			/* the request was HEAD */
	/* results */
	enum http_rsp_state state;
	int status;			/* 100..599; the final one */
	int minor;			/* HTTP/1.<minor> */
	bool keep_alive;		/* connection may carry another one */
	bool has_length;		/* a Content-Length field came */
	bool ctype_truncated;		/* Content-Type longer than ctype */
	uint64_t content_length;	/* body length (0: no body) */
	uint64_t body_got;		/* body bytes seen so far */
	size_t ctype_len;		/* bytes in ctype, 0 when absent */
	char ctype[HTTP_RSP_CTYPE_MAX + 1];	/* Content-Type, NUL ends */
	/* state (private) */
	int err;			/* the error returned, sticky */
	size_t head_len;		/* bytes of the head, with its end */
	size_t head_fill;
	char head[HTTP_RSP_HEAD_MAX];
};

/* Ready for a new response (no_body false). */
void http_rsp_reset(struct http_rsp *r);

/* Feed n bytes at p (see the contract above). Returns the bytes consumed
 * or -EBADMSG, -E2BIG, -ENOTSUP. *body and *body_len (each may be NULL)
 * receive the body bytes inside the consumed part: a pointer into p,
 * NULL and 0 when none. */
int http_rsp_feed(struct http_rsp *r, const uint8_t *p, size_t n,
		const uint8_t **body, size_t *body_len);

#endif /* FFN_HTTP_H */
