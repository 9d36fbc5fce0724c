/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * spec/vindex.md §2.1, §2.2, §2.3 read from files this test writes itself,
 * byte by byte from the spec, not through tools/mkvindex (whose writer
 * the other tests share with their reference, so a misreading common to
 * writer and loader would pass them). The files use what the spec allows
 * and mkvindex never writes: gate rows at index.json offsets that are not
 * prefix sums (layers stored out of order, with gaps), `layers` entries
 * listed out of order, widths that differ per layer, dtype f16 beside
 * always-f32 files, manifest entries shuffled, with gaps and unrelated
 * tensors. Also: the §2 order of preference between payloads, loading
 * only the owned layers' bytes, and where the weights were placed.
 */
#include <errno.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "ffn.h"
#include "ffn_test_util.h"
#include "quant.h"

#define H 5
#define NL 3
static const unsigned nfs[NL] = { 3, 6, 2 };

/* Checkpoint orientation: G, U [nf, H], Wd [H, nf] (max nf 6). */
static float G[NL][6 * H], U[NL][6 * H], Wd[NL][H * 6];
static char dir[64];

/* Halves in [-2, 2]: exact in f16, so f16 files hold the same values. */
static void
make_weights(void)
{
	uint32_t s = 12345;

	for (unsigned L = 0; L < NL; L++)
		for (unsigned i = 0; i < nfs[L] * H; i++) {
			s = s * 1103515245u + 12345u;
			G[L][i] = (float)((int)(s >> 16) % 9 - 4) * 0.5f;
			s = s * 1103515245u + 12345u;
			U[L][i] = (float)((int)(s >> 16) % 9 - 4) * 0.5f;
			s = s * 1103515245u + 12345u;
			Wd[L][i] = (float)((int)(s >> 16) % 9 - 4) * 0.5f;
		}
}

/* Append n values (f16 when es == 2) at byte offset off of file f. */
static void
put_at(FILE *f, long off, const float *v, size_t n, unsigned es)
{
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	for (size_t i = 0; i < n; i++) {
		if (es == 2) {
			uint16_t h = quant_f32_to_f16_1(v[i]);

			assert_int_equal(fwrite(&h, 2, 1, f), 1);
		} else {
			assert_int_equal(fwrite(&v[i], 4, 1, f), 1);
		}
	}
}

static FILE *
open_w(const char *name)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	return f;
}

static void
transposed(float *dst, const float *src, unsigned rows, unsigned cols)
{
	for (unsigned r = 0; r < rows; r++)
		for (unsigned c = 0; c < cols; c++)
			dst[c * rows + r] = src[r * cols + c];
}

/*
 * index.json with the gate offsets given and the layers listed 1, 2, 0;
 * dtype as given (es 2: "f16"); unknown keys around, as LARQL writes.
 */
static void
write_index(const char *model_type, unsigned es, const long goff[NL])
{
	static const unsigned order[NL] = { 1, 2, 0 };
	char buf[2048];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "{\"version\": 2, \"num_layers\": %u, \"hidden_size\": %u, "
		     "\"intermediate_size\": 6, \"dtype\": \"%s\", "
		     "\"extract_level\": \"all\", \"model_config\": "
		     "{\"model_type\": \"%s\", \"rope_base\": 10000}, "
		     "\"layers\": [", NL, H, es == 2 ? "f16" : "f32",
		     model_type);
	for (unsigned i = 0; i < NL; i++) {
		unsigned L = order[i];

		n += snprintf(buf + n, sizeof(buf) - n,
			      "%s{\"layer\": %u, \"num_features\": %u, "
			      "\"offset\": %ld, \"length\": %u}",
			      i ? ", " : "", L, nfs[L], goff[L],
			      nfs[L] * H * es);
	}
	snprintf(buf + n, sizeof(buf) - n, "]}");
	assert_int_equal(tu_write_str(dir, "index.json", buf), 0);
}

/* Gate rows stored 2, 0, 1 with 8-byte gaps: offsets are not prefix sums. */
static void
write_gate(unsigned es, long goff[NL])
{
	FILE *f = open_w("gate_vectors.bin");
	long at = 8;
	static const unsigned stored[NL] = { 2, 0, 1 };

	for (unsigned i = 0; i < NL; i++) {
		unsigned L = stored[i];

		goff[L] = at;
		put_at(f, at, G[L], nfs[L] * H, es);
		at += (long)(nfs[L] * H * es) + 8;
	}
	fclose(f);
}

/* §2.1: up and down feature-major f32 at P_L = Σ_{l<L} nf_l·H·4. */
static void
write_feature_major(void)
{
	FILE *u = open_w("up_features.bin"), *d = open_w("down_features.bin");
	long p = 0;
	float t[6 * H];

	for (unsigned L = 0; L < NL; L++) {
		put_at(u, p, U[L], nfs[L] * H, 4);
		transposed(t, Wd[L], H, nfs[L]);
		put_at(d, p, t, nfs[L] * H, 4);
		p += (long)(nfs[L] * H * 4);
	}
	fclose(u);
	fclose(d);
}

/* §2.2: gate, up, down (feature-major) f32 per layer at B_L. */
static void
write_interleaved(void)
{
	FILE *f = open_w("interleaved.bin");
	long b = 0;
	float t[6 * H];

	for (unsigned L = 0; L < NL; L++) {
		long m = (long)(nfs[L] * H * 4);

		put_at(f, b, G[L], nfs[L] * H, 4);
		put_at(f, b + m, U[L], nfs[L] * H, 4);
		transposed(t, Wd[L], H, nfs[L]);
		put_at(f, b + 2 * m, t, nfs[L] * H, 4);
		b += 3 * m;
	}
	fclose(f);
}

/*
 * §2.3: up [nf, H] and down [H, nf] in dtype, located only by the
 * manifest: stored layer 2 first with 16-byte gaps, entries listed in a
 * shuffled order among tensors the shard must ignore.
 */
/* skew: bytes added to every offset; 1 puts each f16 or f32 matrix at an
 * address not aligned to its element (vindex.md allows any offset). */
static void
write_dense(unsigned es, long skew)
{
	FILE *u = open_w("up_weights.bin"), *d = open_w("down_weights.bin");
	static const unsigned stored[NL] = { 2, 1, 0 };
	long uoff[NL], doff[NL], at = 16 + skew;
	char buf[4096];
	int n = 0;

	for (unsigned i = 0; i < NL; i++) {
		unsigned L = stored[i];

		uoff[L] = at;
		doff[L] = at + 4;
		put_at(u, uoff[L], U[L], nfs[L] * H, es);
		put_at(d, doff[L], Wd[L], nfs[L] * H, es);
		at += (long)(nfs[L] * H * es) + 16;
	}
	fclose(u);
	fclose(d);
	n += snprintf(buf + n, sizeof(buf) - n,
		      "[{\"key\": \"layers.0.self_attn.q_proj.weight\", "
		      "\"kind\": \"tensor\", \"shape\": [5, 5], \"offset\": 0, "
		      "\"length\": 50, \"file\": \"attn_weights.bin\"}");
	for (unsigned i = 0; i < 2 * NL; i++) {
		unsigned L = (i * 2 + 1) % NL;	/* 1, 0, 2, 1, 0, 2 */
		int down = i >= NL;

		n += snprintf(buf + n, sizeof(buf) - n,
			      ", {\"key\": \"layers.%u.mlp.%s_proj.weight\", "
			      "\"kind\": \"tensor\", \"shape\": [%u, %u], "
			      "\"offset\": %ld, \"length\": %u, "
			      "\"file\": \"%s_weights.bin\"}",
			      L, down ? "down" : "up", down ? H : nfs[L],
			      down ? nfs[L] : H, down ? doff[L] : uoff[L],
			      nfs[L] * H * es, down ? "down" : "up");
	}
	snprintf(buf + n, sizeof(buf) - n, "]");
	assert_int_equal(tu_write_str(dir, "weight_manifest.json", buf), 0);
}

static double
act(int gelu, double g)
{
	if (gelu)
		return 0.5 * g * (1 + tanh(0.7978846 * (g + 0.044715 * g * g * g)));
	return g / (1 + exp(-g));
}

/*
 * Every owned layer on rows of x against a double evaluation of the
 * test's own matrices. Tolerance 1e-5 of the sum of |terms| (plus 1e-6):
 * an f32 evaluation of sums of <= 6 products and one expf/tanhf is within
 * a few 2^-24 of that; a weight read from the wrong place (another layer,
 * another orientation, f16 bits read as f32) is off by O(1).
 */
static void
check_compute(struct ffn_model *m, int gelu, unsigned first, unsigned last)
{
	struct ffn_scratch *s = ffn_scratch_new(m, 4, -1);
	float x[4][H], y[4][H];
	const float *xp[4] = { x[0], x[1], x[2], x[3] };
	float *yp[4] = { y[0], y[1], y[2], y[3] };

	assert_non_null(s);
	for (unsigned r = 0; r < 4; r++)
		for (unsigned h = 0; h < H; h++)
			x[r][h] = (float)((int)((r * 7 + h * 3) % 11) - 5) *
				  0.25f;
	for (unsigned L = first; L <= last; L++) {
		assert_int_equal(ffn_compute(m, L, xp, yp, 4, s), 0);
		for (unsigned r = 0; r < 4; r++)
			for (unsigned h = 0; h < H; h++) {
				double want = 0, mag = 0;

				for (unsigned f = 0; f < nfs[L]; f++) {
					double g = 0, u = 0, t;

					for (unsigned k = 0; k < H; k++) {
						g += (double)G[L][f * H + k] *
						     x[r][k];
						u += (double)U[L][f * H + k] *
						     x[r][k];
					}
					t = Wd[L][h * nfs[L] + f] *
					    act(gelu, g) * u;
					want += t;
					mag += fabs(t);
				}
				if (!(fabs(y[r][h] - want) <= 1e-5 * mag + 1e-6))
					fail_msg("layer %u row %u h %u: %.9g, "
						 "want %.9g", L, r, h,
						 (double)y[r][h], want);
			}
	}
	ffn_scratch_free(s);
}

static struct ffn_model *
load(const struct ffn_load_opts *o, enum ffn_layout want)
{
	struct ffn_model *m = NULL;
	char err[512];
	int rc = ffn_model_load(dir, o, &m, err, sizeof(err));

	if (rc != 0)
		fail_msg("load: %d %s", rc, err);
	assert_int_equal(ffn_model_info(m)->layout, want);
	return m;
}

static int
setup(void **state)
{
	(void)state;
	make_weights();
	return tu_tmpdir(dir, sizeof(dir)) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	tu_rmtree(dir);
	return 0;
}

/* §2.1 with f32 and f16 gates; both activations; all and some layers. */
static void
test_feature_major(void **state)
{
	long goff[NL];

	(void)state;
	for (unsigned es = 2; es <= 4; es += 2)
		for (int gelu = 0; gelu < 2; gelu++) {
			struct ffn_load_opts o;
			struct ffn_model *m;

			write_gate(es, goff);
			write_feature_major();
			write_index(gelu ? "gemma3_text" : "mistral", es, goff);
			m = load(NULL, FFN_LAYOUT_FEATURE_MAJOR);
			assert_int_equal(ffn_model_info(m)->act,
					 gelu ? FFN_ACT_GELU_TANH : FFN_ACT_SILU);
			assert_int_equal(ffn_model_layer(m, 1)->gate.dtype,
					 es == 2 ? FFN_DT_F16 : FFN_DT_F32);
			assert_int_equal(ffn_model_layer(m, 1)->up.dtype,
					 FFN_DT_F32);
			check_compute(m, gelu, 0, NL - 1);
			ffn_model_free(m);
			/* layer 2 alone: gate by offset, up/down by P_2 */
			ffn_load_opts_default(&o);
			o.first_layer = 2;
			m = load(&o, FFN_LAYOUT_FEATURE_MAJOR);
			assert_int_equal(ffn_model_info(m)->bytes_loaded,
					 nfs[2] * H * (es + 4 + 4));
			check_compute(m, gelu, 2, 2);
			ffn_model_free(m);
		}
}

/* §2.2 is f32 whatever index.json's dtype says (it names gate_vectors). */
static void
test_interleaved(void **state)
{
	long goff[NL] = { 0, 15 * 4, 45 * 4 };

	(void)state;
	for (unsigned es = 2; es <= 4; es += 2)
		for (int gelu = 0; gelu < 2; gelu++) {
			struct ffn_model *m;

			write_interleaved();
			write_index(gelu ? "gemma2" : "qwen2", es, goff);
			m = load(NULL, FFN_LAYOUT_INTERLEAVED);
			assert_int_equal(ffn_model_layer(m, 0)->gate.dtype,
					 FFN_DT_F32);
			assert_int_equal(ffn_model_info(m)->bytes_loaded,
					 (3 + 6 + 2) * H * 12);
			check_compute(m, gelu, 0, NL - 1);
			ffn_model_free(m);
		}
}

/* §2.3: dtype for all three, located by the manifest alone. */
static void
test_dense_manifest(void **state)
{
	long goff[NL];

	(void)state;
	for (unsigned es = 2; es <= 4; es += 2)
		for (int gelu = 0; gelu < 2; gelu++) {
			struct ffn_load_opts o;
			struct ffn_model *m;

			write_gate(es, goff);
			write_dense(es, 0);
			write_index(gelu ? "gemma" : "llama", es, goff);
			m = load(NULL, FFN_LAYOUT_DENSE);
			check_compute(m, gelu, 0, NL - 1);
			ffn_model_free(m);
			ffn_load_opts_default(&o);
			o.first_layer = 1;
			o.last_layer = 1;
			o.placement = FFN_PLACE_MMAP;
			m = load(&o, FFN_LAYOUT_DENSE);
			check_compute(m, gelu, 1, 1);
			ffn_model_free(m);
		}
}

/* §2.1 with every up and down matrix at an odd byte offset: mapped
 * placement copies what it cannot read in place (and the §2.3 transpose of
 * down reads the file unaligned): the same answers as aligned files. Under
 * UBSan the old typed reads failed (fuzz-vindex, corpus/vindex/
 * regress-misaligned-f16-down). */
static void
test_dense_manifest_odd_offsets(void **state)
{
	long goff[NL];

	(void)state;
	for (unsigned es = 2; es <= 4; es += 2)
		for (int p = 0; p < 2; p++) {
			struct ffn_load_opts o;
			struct ffn_model *m;

			write_gate(es, goff);
			write_dense(es, 1);
			write_index("llama", es, goff);
			ffn_load_opts_default(&o);
			o.placement = p ? FFN_PLACE_MMAP : FFN_PLACE_COPY;
			m = load(&o, FFN_LAYOUT_DENSE);
			check_compute(m, 0, 0, NL - 1);
			ffn_model_free(m);
		}
}

/* §2: the first present of §2.2, §2.1, (§2.4,) §2.3. */
static void
test_preference_order(void **state)
{
	long goff[NL];
	struct ffn_model *m;
	struct ffn_load_opts o;

	(void)state;
	write_gate(2, goff);
	write_feature_major();
	write_dense(2, 0);
	write_interleaved();
	write_index("llama", 2, goff);
	m = load(NULL, FFN_LAYOUT_INTERLEAVED);
	check_compute(m, 0, 0, NL - 1);
	ffn_model_free(m);
	/* a forced layout is honoured when its files are there */
	ffn_load_opts_default(&o);
	o.layout = FFN_LAYOUT_DENSE;
	m = load(&o, FFN_LAYOUT_DENSE);
	check_compute(m, 0, 0, NL - 1);
	ffn_model_free(m);
	assert_int_equal(tu_unlink(dir, "interleaved.bin"), 0);
	m = load(NULL, FFN_LAYOUT_FEATURE_MAJOR);
	check_compute(m, 0, 0, NL - 1);
	ffn_model_free(m);
	assert_int_equal(tu_unlink(dir, "down_features.bin"), 0);
	m = load(NULL, FFN_LAYOUT_DENSE);
	check_compute(m, 0, 0, NL - 1);
	ffn_model_free(m);
}

/*
 * Only the owned layers are read: a file cut short after layer 1 serves
 * layers 0-1, and layer 2 alone is a clear FFN_ERR_SHORT.
 */
static void
test_only_owned_layers_read(void **state)
{
	long goff[NL] = { 0, 15 * 4, 45 * 4 };
	struct ffn_load_opts o;
	struct ffn_model *m = NULL;
	char err[512];

	(void)state;
	write_interleaved();
	write_index("llama", 4, goff);
	assert_int_equal(tu_truncate(dir, "interleaved.bin",
				     (3 + 6) * H * 12), 0);
	ffn_load_opts_default(&o);
	o.first_layer = 0;
	o.last_layer = 1;
	m = load(&o, FFN_LAYOUT_INTERLEAVED);
	assert_int_equal(ffn_model_info(m)->bytes_loaded, (3 + 6) * H * 12);
	check_compute(m, 0, 0, 1);
	ffn_model_free(m);
	o.first_layer = 2;
	o.last_layer = 2;
	assert_int_equal(ffn_model_load(dir, &o, &m, err, sizeof(err)),
			 FFN_ERR_SHORT);
	assert_null(m);
	assert_non_null(strstr(err, "interleaved.bin"));
	assert_non_null(strstr(err, "layer 2"));
}

/* The node of each page of the weights, as the kernel says. */
static int
page_node(const void *p)
{
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1));
	int status = -1;

	if (move_pages(0, 1, &page, NULL, &status, 0) != 0)
		return -errno;
	return status;
}

/*
 * Placement (issue 2): copied weights on the node asked for, really
 * there page by page; no huge pages when told not to; mapped files
 * report the page cache and no node.
 */
static void
test_placement_reported(void **state)
{
	long goff[NL];
	struct ffn_load_opts o;
	struct ffn_model *m;
	int node;

	(void)state;
	write_gate(4, goff);
	write_feature_major();
	write_index("llama", 4, goff);
	if (numa_available() < 0) {
		/* no NUMA: a node cannot be asked for, none is reported */
		ffn_load_opts_default(&o);
		m = load(&o, FFN_LAYOUT_FEATURE_MAJOR);
		assert_int_equal(ffn_model_info(m)->numa_node, -1);
		ffn_model_free(m);
		return;
	}
	for (node = 0; node <= numa_max_node(); node++) {
		if (!numa_bitmask_isbitset(numa_all_nodes_ptr, node))
			continue;
		ffn_load_opts_default(&o);
		o.numa_node = node;
		o.no_hugepages = 1;
		m = load(&o, FFN_LAYOUT_FEATURE_MAJOR);
		assert_int_equal(ffn_model_info(m)->numa_node, node);
		assert_int_equal(ffn_model_info(m)->placement, FFN_PLACE_COPY);
		assert_int_equal(ffn_model_info(m)->pages, FFN_PAGES_NORMAL);
		for (unsigned L = 0; L < NL; L++) {
			const struct ffn_layer *ly = ffn_model_layer(m, L);

			assert_int_equal(page_node(ly->gate.data), node);
			assert_int_equal(page_node(ly->up.data), node);
			assert_int_equal(page_node(ly->down.data), node);
		}
		check_compute(m, 0, 0, NL - 1);
		ffn_model_free(m);
	}
	ffn_load_opts_default(&o);
	o.placement = FFN_PLACE_MMAP;
	m = load(&o, FFN_LAYOUT_FEATURE_MAJOR);
	assert_int_equal(ffn_model_info(m)->numa_node, -1);
	assert_int_equal(ffn_model_info(m)->pages, FFN_PAGES_FILE);
	ffn_model_free(m);
	assert_string_equal(ffn_pages_name(FFN_PAGES_NORMAL), "4K");
	assert_string_equal(ffn_pages_name(FFN_PAGES_HUGETLB), "hugetlb-2M");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_feature_major, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_interleaved, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dense_manifest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dense_manifest_odd_offsets,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_preference_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_only_owned_layers_read,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_reported,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
