/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Content-Type classification and Accept negotiation (spec/wire.md §3,
 * §5.1, §7).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wire.h"

#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"
#define CT_I8 "application/x-larql-ffn-i8"
/* §5.1: what clients send for each preference */
#define ACCEPT_DEFAULT CT_I8 ", " CT_F16 ", " CT_F32
#define ACCEPT_F16 CT_F16 ", " CT_F32

static bool
classify(const char *ct, enum wire_fmt *fmt)
{
	return wire_request_format(ct, ct ? strlen(ct) : 0, fmt);
}

static void
test_content_type_binary_formats(void **state)
{
	enum wire_fmt f = (enum wire_fmt)99;

	(void)state;
	assert_true(classify(CT_F32, &f));
	assert_int_equal(f, WIRE_FMT_F32);
	assert_true(classify(CT_F16, &f));
	assert_int_equal(f, WIRE_FMT_F16);
	assert_true(classify(CT_I8, &f));
	assert_int_equal(f, WIRE_FMT_I8);
	/* parameters after the type are allowed (substring test) */
	assert_true(classify(CT_I8 "; v=2", &f));
	assert_int_equal(f, WIRE_FMT_I8);
	assert_true(classify(CT_F32 "; charset=binary", &f));
	assert_int_equal(f, WIRE_FMT_F32);
	/* order: -i8 is tested before -f16 */
	assert_true(classify(CT_F16 ", " CT_I8, &f));
	assert_int_equal(f, WIRE_FMT_I8);
}

static void
test_content_type_json_path(void **state)
{
	enum wire_fmt f = (enum wire_fmt)99;

	(void)state;
	assert_false(classify(NULL, &f));		/* missing */
	assert_false(classify("", &f));
	assert_false(classify("application/json", &f));
	assert_false(classify("application/json; charset=utf-8", &f));
	/* case-sensitive (§3) */
	assert_false(classify("Application/X-Larql-Ffn", &f));
	assert_false(classify("application/x-larql-ff", &f));
	assert_int_equal(f, 99);	/* untouched on the JSON path */
	/* a non-visible-ASCII byte makes the header unreadable (to_str) */
	assert_false(classify(CT_F32 "\x80", &f));
	/* the length bounds the search: no NUL needed, none read past */
	assert_false(wire_request_format(CT_F32, 10, &f));
}

static enum wire_fmt
neg(const char *accept, bool f16, bool i8)
{
	struct wire_opts o = { .f16 = f16, .i8 = i8 };

	return wire_response_format(accept, accept ? strlen(accept) : 0, &o);
}

static void
test_accept_table(void **state)
{
	(void)state;
	/* no Accept at all -> f32, whatever the switches (§5.1, §7) */
	assert_int_equal(neg(NULL, true, true), WIRE_FMT_F32);
	assert_int_equal(neg(NULL, false, false), WIRE_FMT_F32);
	/* base type -> f32 */
	assert_int_equal(neg(CT_F32, true, true), WIRE_FMT_F32);
	/* f16 preference */
	assert_int_equal(neg(ACCEPT_F16, true, false), WIRE_FMT_F16);
	assert_int_equal(neg(ACCEPT_F16, true, true), WIRE_FMT_F16);
	assert_int_equal(neg(ACCEPT_F16, false, true), WIRE_FMT_F32);
	/* default client Accept: the whole first field is tested, so i8
	 * when enabled, else f16 when not disabled, else f32 */
	assert_int_equal(neg(ACCEPT_DEFAULT, true, true), WIRE_FMT_I8);
	assert_int_equal(neg(ACCEPT_DEFAULT, true, false), WIRE_FMT_F16);
	assert_int_equal(neg(ACCEPT_DEFAULT, false, false), WIRE_FMT_F32);
	assert_int_equal(neg(ACCEPT_DEFAULT, false, true), WIRE_FMT_I8);
	/* i8 alone, not enabled: silent fallback, never an error */
	assert_int_equal(neg(CT_I8, true, false), WIRE_FMT_F32);
	assert_int_equal(neg(CT_I8, true, true), WIRE_FMT_I8);
	/* no q-values or wildcards: substring tests only */
	assert_int_equal(neg("*/*", true, true), WIRE_FMT_F32);
	assert_int_equal(neg(CT_F32 ";q=1, " CT_F16 ";q=0.1", true, false),
			 WIRE_FMT_F16);
	assert_int_equal(neg("application/json", true, true), WIRE_FMT_F32);
	/* unreadable header counts as absent */
	assert_int_equal(neg(CT_F16 "\x01", true, false), WIRE_FMT_F32);
}

static void
test_router_forwarded_request(void **state)
{
	/* §7: the router sends exactly the base type and no Accept */
	enum wire_fmt f;
	struct wire_opts o;

	(void)state;
	wire_opts_default(&o);
	assert_true(classify(CT_F32, &f));
	assert_int_equal(f, WIRE_FMT_F32);
	assert_int_equal(wire_response_format(NULL, 0, &o), WIRE_FMT_F32);
}

static void
test_opts_defaults_and_env(void **state)
{
	struct wire_opts o;

	(void)state;
	unsetenv("LARQL_I8_WIRE");
	unsetenv("LARQL_F16_WIRE_DISABLE");
	wire_opts_default(&o);
	assert_true(o.f16);
	assert_false(o.i8);
	wire_opts_apply_env(&o);
	assert_true(o.f16);
	assert_false(o.i8);
	/* by presence: even "0" or empty enables / disables */
	setenv("LARQL_I8_WIRE", "0", 1);
	setenv("LARQL_F16_WIRE_DISABLE", "", 1);
	wire_opts_apply_env(&o);
	assert_true(o.i8);
	assert_false(o.f16);
	/* the seed ADR's LARQL_F16_WIRE=0 is not what the code reads */
	unsetenv("LARQL_I8_WIRE");
	unsetenv("LARQL_F16_WIRE_DISABLE");
	setenv("LARQL_F16_WIRE", "0", 1);
	wire_opts_default(&o);
	wire_opts_apply_env(&o);
	assert_true(o.f16);
	unsetenv("LARQL_F16_WIRE");
}

static void
test_content_type_strings(void **state)
{
	(void)state;
	assert_string_equal(wire_fmt_content_type(WIRE_FMT_F32), CT_F32);
	assert_string_equal(wire_fmt_content_type(WIRE_FMT_F16), CT_F16);
	assert_string_equal(wire_fmt_content_type(WIRE_FMT_I8), CT_I8);
	assert_string_equal(wire_fmt_name(WIRE_FMT_I8), "i8");
	/* JSON is a format of the same enum (spec/wire.md §6) */
	assert_string_equal(wire_fmt_content_type(WIRE_FMT_JSON),
			    "application/json");
	assert_string_equal(wire_fmt_name(WIRE_FMT_F32), "f32");
	assert_string_equal(wire_fmt_name(WIRE_FMT_F16), "f16");
	assert_string_equal(wire_fmt_name(WIRE_FMT_JSON), "json");
	assert_null(wire_fmt_content_type(WIRE_FMT_NONE));
	assert_null(wire_fmt_content_type(WIRE_FMT_COUNT));
	assert_string_equal(wire_fmt_name(WIRE_FMT_NONE), "none");
}

/* §5.1 switches: f16 and i8 follow wire_opts, f32 and JSON are always
 * answered; nothing out of range is. */
static void
test_fmt_enabled(void **state)
{
	for (int f16 = 0; f16 < 2; f16++)
		for (int i8 = 0; i8 < 2; i8++) {
			struct wire_opts o = { .f16 = f16, .i8 = i8 };

			assert_true(wire_fmt_enabled(&o, WIRE_FMT_F32));
			assert_true(wire_fmt_enabled(&o, WIRE_FMT_JSON));
			assert_int_equal(wire_fmt_enabled(&o, WIRE_FMT_F16),
					 f16);
			assert_int_equal(wire_fmt_enabled(&o, WIRE_FMT_I8),
					 i8);
			assert_false(wire_fmt_enabled(&o, WIRE_FMT_NONE));
			assert_false(wire_fmt_enabled(&o, WIRE_FMT_COUNT));
		}
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_type_binary_formats),
		cmocka_unit_test(test_content_type_json_path),
		cmocka_unit_test(test_accept_table),
		cmocka_unit_test(test_router_forwarded_request),
		cmocka_unit_test(test_opts_defaults_and_env),
		cmocka_unit_test(test_content_type_strings),
		cmocka_unit_test(test_fmt_enabled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
