/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-moe (issue 23): the expert compute of lib/ffn/ffn_moe.h at the
 * Gemma 4 26B-A4B expert shape (hidden 2816, width 704, 128 experts,
 * top 8, Q4_K), one thread, against this host's floors measured in the
 * same run:
 *   1. one layer batch (ffn_moe_norm + ffn_moe_mix, K experts) against
 *      reading those experts' bytes at the streaming read rate;
 *   2. ffn_moe_expert on R = 1..16 rows of one expert (what batching
 *      rows across requests buys) against the read and FMA floors;
 *   3. WAN bytes per token of a top-K sweep (spec/moe.md §3.2, §7).
 *
 * The vindex is written by mkvindex's writer (vw_write_moe, the same
 * files as `mkvindex --family gemma4 --no-dense --experts E ...`) into a
 * temporary directory and loaded through ffn_moe_load(), so the real
 * loader and placement (copied into one arena, FFN_PLACE_COPY, the
 * shard's default) are what is measured. Times are thread CPU time.
 *
 * usage: bench-moe [--iters N] [--experts E] [--hidden H] [--width I]
 *        [--top-k K] [--layers L] [--f32-experts N] [--vindex DIR]
 *        [--quick]
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_moe.h"
#include "bench_peak.h"
#include "ffn_kq.h"
#include "ffn_moe_priv.h"
#include "tool_opt.h"
#include "vindex_write_moe.h"

#define T "bench-moe"

double
bm_cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double
wall_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void *
bm_alloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

	if (p == NULL) {
		perror(T ": aligned_alloc");
		exit(1);
	}
	memset(p, 0, n);
	return p;
}

void
bm_fill(float *p, size_t n, uint64_t seed)
{
	uint64_t v = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		p[i] = (float)(int32_t)v * 0x1p-31f;
	}
}

uint32_t
bm_next(struct bm_model *m)
{
	uint32_t e = m->order[m->next];

	m->next = (m->next + 1) % m->E;
	return e;
}

const void *
bm_region(const struct bm_model *m, uint32_t e, unsigned r)
{
	const struct ffn_moe_x *x = &m->m->layers[0].x[e];

	return r == 0 ? x->gate : r == 1 ? x->up : x->down;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
bm_stats(double *t, size_t n, double *med, double *min, double *p90)
{
	qsort(t, n, sizeof(*t), cmp_double);
	*min = t[0];
	*med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
	*p90 = t[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
}

/* ---- floors ---- */

static volatile double read_sink;

/* One streaming read of n bytes (sum of 64-byte lines), best of reps:
 * bytes/s. A pass in 64-byte loads on AVX-512 hosts, 32-byte otherwise. */
__attribute__((target("avx512f")))
static double
read_pass512(const uint8_t *p, size_t n)
{
	__m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;

	for (size_t i = 0; i + 256 <= n; i += 256) {
		a0 = _mm512_add_pd(a0, _mm512_load_pd(p + i));
		a1 = _mm512_add_pd(a1, _mm512_load_pd(p + i + 64));
		a2 = _mm512_add_pd(a2, _mm512_load_pd(p + i + 128));
		a3 = _mm512_add_pd(a3, _mm512_load_pd(p + i + 192));
	}
	return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1),
						  _mm512_add_pd(a2, a3)));
}

__attribute__((target("avx2")))
static double
read_pass256(const uint8_t *p, size_t n)
{
	__m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
	double o[4];

	for (size_t i = 0; i + 128 <= n; i += 128) {
		a0 = _mm256_add_pd(a0, _mm256_load_pd((const double *)(p + i)));
		a1 = _mm256_add_pd(a1, _mm256_load_pd((const double *)
						     (p + i + 32)));
		a2 = _mm256_add_pd(a2, _mm256_load_pd((const double *)
						     (p + i + 64)));
		a3 = _mm256_add_pd(a3, _mm256_load_pd((const double *)
						     (p + i + 96)));
	}
	_mm256_storeu_pd(o, _mm256_add_pd(_mm256_add_pd(a0, a1),
					  _mm256_add_pd(a2, a3)));
	return o[0] + o[1] + o[2] + o[3];
}

static double
read_pass_plain(const uint8_t *p, size_t n)
{
	uint64_t s = 0, v;

	for (size_t i = 0; i + 8 <= n; i += 64) {
		memcpy(&v, p + i, 8);
		s += v;
	}
	return (double)s;
}

double
bm_read(const void *p, size_t n)
{
	const uint8_t *b = p, *a = (const uint8_t *)
		(((uintptr_t)b + 63) & ~(uintptr_t)63);
	double s = 0;

	if ((size_t)(a - b) >= n)
		return read_pass_plain(b, n);
	s += read_pass_plain(b, (size_t)(a - b));
	n -= (size_t)(a - b);
	if (__builtin_cpu_supports("avx512f"))
		s += read_pass512(a, n);
	else if (__builtin_cpu_supports("avx2"))
		s += read_pass256(a, n);
	else
		s += read_pass_plain(a, n);
	return s;
}

static double
stream_bw(size_t n, int reps)
{
	uint8_t *buf = mmap(NULL, n, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double best = 0;

	if (buf == MAP_FAILED) {
		perror(T ": mmap");
		exit(1);
	}
	(void)madvise(buf, n, MADV_HUGEPAGE);
	memset(buf, 1, n);
	for (int k = 0; k < reps; k++) {
		double t = bm_cpu_now();

		read_sink += bm_read(buf, n);
		t = bm_cpu_now() - t;
		if (n / t > best)
			best = n / t;
	}
	munmap(buf, n);
	return best;
}

static void
floors(const struct bm_opts *o, struct bm_floors *f)
{
	enum bench_peak_isa pi = ffn_kq_isa() == FFN_KQ_ISA_AVX512 ?
		BENCH_PEAK_AVX512 : BENCH_PEAK_AVX2;
	int it = o->quick ? 1 : 3;

	f->read_bw = stream_bw(o->stream_bytes, 3);
	f->fma = f->idot = 0;
	if (ffn_kq_isa() != FFN_KQ_ISA_SCALAR) {
		f->fma = bench_peak_fma(pi, it);
		f->idot = bench_peak_idot(pi, it);
	}
	printf("isa: lib/ffn kernels %s (f32 experts), kquant kernels %s "
	       "(Q4_K experts)\n", ffn_isa_name(ffn_active_isa()),
	       ffn_kq_isa_name());
	printf("floors (one core, this run): streaming read %.2f GB/s "
	       "(%zu MiB, best of 3, CPU time); FMA peak %.2f G/s, int-dot "
	       "peak %.2f G/s (multiply-adds, %s registers)\n",
	       f->read_bw / 1e9, o->stream_bytes >> 20, f->fma / 1e9,
	       f->idot / 1e9, ffn_kq_isa_name());
}

/* ---- the vindex ---- */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Write a one-layer expert-only vindex (mkvindex --no-dense) to a new
 * directory under /tmp; its path in dir. 0 or 1 (printed). */
static int
write_vindex(const struct bm_opts *o, unsigned tag, uint32_t E, char *dir,
	     size_t len)
{
	struct vw_opts vo;
	struct vw_q4k_opts q = { FFN_KQ_Q6_PRIVATE, 0 };
	struct vw_moe_opts mo = {
		.experts = E, .width = o->I, .top_k = o->K, .tag = tag,
		.first = 0, .last = 0, .no_dense = 1,
	};
	char err[512];
	double t = wall_now();

	snprintf(dir, len, "/tmp/bench-moe.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror(T ": mkdtemp");
		return 1;
	}
	vw_defaults(&vo);
	vo.hidden = o->H;
	vo.layers = 1;
	vo.intermediate = 3 * o->H / 4;	/* index.json only: no dense */
	vo.family = vo.model_type = "gemma4";
	if (vw_write_moe(dir, &vo, &q, &mo, err, sizeof(err)) != 0) {
		fprintf(stderr, T ": %s\n", err);
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		return 1;
	}
	printf("wrote %s: %u %s experts of hidden %u, width %u (%.1f s, "
	       "vw_write_moe = mkvindex --no-dense)\n", dir, E,
	       tag == VW_LYRW_F32 ? "F32" : "Q4_K", o->H, o->I,
	       wall_now() - t);
	return 0;
}

/* Each expert's gate, up and down as the kind placed them (the read-only
 * rows read exactly these bytes). */
static void
regions(struct bm_model *b)
{
	const char *k = b->info->kind;
	size_t IH = (size_t)b->I * b->H;

	b->n_reg = 0;
	if (!strcmp(k, "q4k")) {
		size_t row = ffn_kq_row_bytes(FFN_KQ_Q4_K, b->H);

		b->reg_bytes[0] = b->reg_bytes[1] = (size_t)b->I * row;
		b->reg_bytes[2] = (size_t)b->H *
			ffn_kq_row_bytes(FFN_KQ_Q4_K, b->I);
	} else if (!strcmp(k, "f32") || !strcmp(k, "q4k-f32")) {
		b->reg_bytes[0] = b->reg_bytes[1] = b->reg_bytes[2] = 4 * IH;
	} else {
		return;
	}
	/* only when they add up to what the loader says it holds */
	if (b->reg_bytes[0] + b->reg_bytes[1] + b->reg_bytes[2] == b->xbytes)
		b->n_reg = 3;
}

/* Load dir through ffn_moe_load (every expert, copied); 0 or 1. */
static int
load_model(struct bm_model *b, const char *label, const char *dir,
	   unsigned max_rows)
{
	struct ffn_moe_load_opts lo = {
		.own = NULL, .numa_node = -1,
		.placement = FFN_PLACE_COPY, .no_hugepages = 0,
	};
	char err[512];
	uint64_t v = 0x2545f4914f6cdd1dull;
	int rc;

	memset(b, 0, sizeof(*b));
	b->label = label;
	rc = ffn_moe_load(dir, &lo, &b->m, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, T ": ffn_moe_load %s: %s\n", dir, err);
		return 1;
	}
	b->info = ffn_moe_info(b->m);
	b->E = b->info->num_experts;
	b->H = b->info->hidden;
	b->I = b->info->width;
	if (b->info->experts_loaded != b->E || !ffn_moe_held(b->m, 0, 0)) {
		fprintf(stderr, T ": %s: layer 0 holds %llu of %u experts\n",
			dir, (unsigned long long)b->info->experts_loaded,
			b->E);
		return 1;
	}
	b->xbytes = b->info->bytes_loaded / b->info->experts_loaded;
	b->s = ffn_moe_scratch_new(b->m, max_rows, -1);
	b->order = malloc(b->E * sizeof(*b->order));
	if (b->s == NULL || b->order == NULL) {
		fprintf(stderr, T ": out of memory\n");
		return 1;
	}
	/* a fixed random order of all experts, walked in turn: an expert
	 * comes back after all the others */
	for (uint32_t e = 0; e < b->E; e++)
		b->order[e] = e;
	for (uint32_t e = b->E; e > 1; e--) {
		uint32_t j, t;

		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		j = (uint32_t)(v % e);
		t = b->order[e - 1];
		b->order[e - 1] = b->order[j];
		b->order[j] = t;
	}
	regions(b);
	printf("loaded %s: kind %s, %u experts x %.2f MB = %.1f MB, %s "
	       "pages, %.0f ms (ffn_moe_load)\n", label, b->info->kind, b->E,
	       b->xbytes / 1e6, b->info->bytes_loaded / 1e6,
	       ffn_pages_name(b->info->pages), b->info->load_ms);
	return 0;
}

static void
free_model(struct bm_model *b)
{
	ffn_moe_scratch_free(b->s);
	ffn_moe_free(b->m);
	free(b->order);
}

/* ---- options ---- */

static void
usage(FILE *f)
{
	fprintf(f, "usage: " T " [options]\n"
		"  --iters N        timed calls per figure (default 200)\n"
		"  --experts E      experts in the layer (default 128)\n"
		"  --hidden H       hidden size (default 2816)\n"
		"  --width I        expert width (default 704)\n"
		"  --top-k K        pairs per layer batch (default 8)\n"
		"  --layers L       layers of the WAN sweep (default 30)\n"
		"  --f32-experts N  also time an F32 vindex of N experts "
		"(default 16; 0: no)\n"
		"  --vindex DIR     time this Q4_K expert vindex (layer 0) "
		"instead of writing one\n"
		"  --quick          a small shape in a few seconds (CI "
		"smoke)\n");
}

/* The numeric options, in the order of parse()'s option table. */
struct bm_num {
	uint32_t min, max;
};

static const struct bm_num bm_nums[] = {
	{ 1, 1u << 24 },	/* --iters */
	{ 1, 1u << 16 },	/* --experts */
	{ 1, 1u << 20 },	/* --hidden */
	{ 1, 1u << 20 },	/* --width */
	{ 1, 1024 },		/* --top-k */
	{ 1, 1024 },		/* --layers */
	{ 0, 4096 },		/* --f32-experts */
};
#define BM_NUMS (sizeof(bm_nums) / sizeof(bm_nums[0]))

static int
parse(int argc, char **argv, struct bm_opts *o)
{
	static const struct option lo[] = {
		{ "iters", required_argument, NULL, 0 },
		{ "experts", required_argument, NULL, 0 },
		{ "hidden", required_argument, NULL, 0 },
		{ "width", required_argument, NULL, 0 },
		{ "top-k", required_argument, NULL, 0 },
		{ "layers", required_argument, NULL, 0 },
		{ "f32-experts", required_argument, NULL, 0 },
		{ "vindex", required_argument, NULL, 'v' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* the value of each numeric option given, or -1 */
	int64_t val[BM_NUMS];
	uint32_t *field[BM_NUMS];
	char name[32];
	int c, li = 0;
	size_t i;

	for (i = 0; i < BM_NUMS; i++)
		val[i] = -1;
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		if (c == 'v') {
			o->vindex = optarg;
		} else if (c == 'q') {
			o->quick = 1;
		} else if (c == 'h') {
			usage(stdout);
			exit(0);
		} else if (c == 0 && (size_t)li < BM_NUMS) {
			snprintf(name, sizeof(name), "--%s", lo[li].name);
			val[li] = tool_opt_u32_or_exit(T, name, optarg,
						       bm_nums[li].min,
						       bm_nums[li].max);
		} else {
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	/* the defaults: Gemma 4 26B-A4B; --quick a small shape; an option
	 * given wins over both */
	*o = o->quick ?
		(struct bm_opts){ 256, 64, 16, 8, 8, 30, 8, o->vindex, 1,
				  (size_t)64 << 20 } :
		(struct bm_opts){ 2816, 704, 128, 8, 200, 30, 16, o->vindex,
				  0, (size_t)512 << 20 };
	field[0] = &o->iters;
	field[1] = &o->E;
	field[2] = &o->H;
	field[3] = &o->I;
	field[4] = &o->K;
	field[5] = &o->layers;
	field[6] = &o->f32_experts;
	for (i = 0; i < BM_NUMS; i++)
		if (val[i] >= 0)
			*field[i] = (uint32_t)val[i];
	if (o->K > o->E) {
		fprintf(stderr, T ": --top-k %u exceeds --experts %u\n", o->K,
			o->E);
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct bm_opts o = { 0 };
	struct bm_floors f;
	struct bm_model q4k, f32;
	char dq[64] = "", df[64] = "";
	int rc = 1, have_f32 = 0;

	if (parse(argc, argv, &o) < 0)
		return 2;
	printf("bench-moe: expert compute (lib/ffn/ffn_moe.h) on one "
	       "thread, thread CPU time; %u timed calls per figure%s\n",
	       o.iters, o.quick ? " (--quick: a smoke, not a measurement)" :
	       "");
	floors(&o, &f);
	if (o.vindex == NULL && write_vindex(&o, VW_LYRW_Q4K, o.E, dq,
					     sizeof(dq)) != 0)
		goto out;
	if (load_model(&q4k, "q4k", o.vindex ? o.vindex : dq, 16) != 0)
		goto out;
	/* the loaded shape is the one timed (--vindex) */
	o.H = q4k.H;
	o.I = q4k.I;
	o.E = q4k.E;
	if (o.K > o.E)
		o.K = o.E;
	if (o.f32_experts > 0 && o.f32_experts < o.K) {
		printf("f32 experts: %u < top-k %u, raised\n", o.f32_experts,
		       o.K);
		o.f32_experts = o.K;
	}
	if (o.f32_experts > 0) {
		if (write_vindex(&o, VW_LYRW_F32, o.f32_experts, df,
				 sizeof(df)) != 0 ||
		    load_model(&f32, "f32", df, 16) != 0)
			goto out_q;
		have_f32 = 1;
		/* the arena holds them: the files are not needed */
		nftw(df, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		df[0] = '\0';
	}
	rc = bm_layer_batch(&o, &f, &q4k, have_f32 ? &f32 : NULL);
	if (rc == 0)
		rc = bm_rows(&o, &f, &q4k);
	if (rc == 0)
		bm_wire(&o);
	if (have_f32)
		free_model(&f32);
out_q:
	free_model(&q4k);
out:
	if (dq[0])
		nftw(dq, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (df[0])
		nftw(df, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
