/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_KQ_H
#define FFN_KQ_H

/**
 * @file
 * K-quant FFN weights (spec/vindex.md §2.4): Q4_K and Q6_K blocks of 256
 * values, fused dequantise-and-dot kernels, a Q8_K integer path, the layer
 * compute and the interleaved_q4k.bin loader.
 *
 * Matrices are row-major with rows of padded_cols = pad256(cols) values,
 * i.e. padded_cols / 256 blocks per row (blocks never straddle rows). Only
 * the first cols values of a row are used: input values beyond cols are
 * never read (the pad weights of a partial block need not dequantise to 0).
 *
 * Two computation paths:
 * - f32 (FFN_KQ_PATH_F32): each weight block is dequantised in registers
 *   (or a 1 KiB L1 buffer shared by all input rows) and dotted with f32
 *   inputs. The scalar reference dequantises exactly as ffn_kq_dequant_row
 *   and accumulates in order, so it equals dequantise-then-dot bit for bit.
 *   SIMD kernels sum in another order (and use FMA; one input row takes a
 *   kernel that factors the scales out, several rows share each decoded
 *   block); for a row of n values their result r satisfies
 *     |r - e| <= (n + 4) * 2^-23 * sum_i (|a_i| + |b_i|) * |x_i|
 *   where a_i = (d*sc)*q_i and b_i = dmin*m are the f32 parts of the
 *   dequantised value a_i - b_i (b_i = 0 for Q6_K) and e is the exact sum
 *   of (a_i - b_i) * x_i; the scalar reference satisfies it too.
 * - Q8_K (FFN_KQ_PATH_Q8K): inputs are quantised to Q8_K blocks (as
 *   llama.cpp: d = max/-127 of the value of largest magnitude, q = round(x/d)
 *   clamped to 127) and dotted with int8 instructions (vpmaddubsw, then
 *   AVX-512 VNNI vpdpwssd / AVX2 vpmaddwd; AVX-512 VNNI vpdpbusd sums of 4
 *   packed to i16 before the scales). Integer sums are exact and the
 *   per-block float combination is done in the same order in every ISA, so
 *   SIMD and scalar results are identical bit for bit. Against the f32
 *   path it adds the 8-bit input rounding: 1.5% relative L2 on a synthetic
 *   2560 x 10240 layer, whose 4-bit weights alone are 11.7% off.
 *
 * Nothing here allocates except the loader. Kernels are chosen at run time
 * from CPU flags (AVX-512 F/BW/VL/VNNI/VBMI, else AVX2/FMA/F16C, else
 * scalar).
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FFN_KQ_QK		256u	/**< values per block */
#define FFN_KQ_Q4K_BYTES	144u	/**< bytes of a Q4_K block */
#define FFN_KQ_Q6K_BYTES	210u	/**< bytes of a Q6_K block */
/** Bytes of one Q8_K block in the wire layout (qs 256 + d 4 + 8 sums 16). */
#define FFN_KQ_Q8K_BYTES	276u
/** Input rows a kernel processes per pass over the weights. */
#define FFN_KQ_RMAX		8u

/** Values rounded up to whole blocks. */
#define FFN_KQ_PAD256(n)	(((size_t)(n) + 255u) & ~(size_t)255u)
/** Blocks of a row of n values. */
#define FFN_KQ_NBLOCKS(n)	(FFN_KQ_PAD256(n) / FFN_KQ_QK)

/** Weight block formats of the manifest's "format". */
enum ffn_kq_fmt {
	FFN_KQ_Q4_K = 0,
	FFN_KQ_Q6_K,
};

/** The two Q6_K bit arrangements (vindex.md §2.4); no metadata tells. */
enum ffn_kq_q6_layout {
	FFN_KQ_Q6_PRIVATE = 0,	/**< LARQL-private (default) */
	FFN_KQ_Q6_GGML,		/**< ggml planar */
};

enum ffn_kq_path {
	FFN_KQ_PATH_F32 = 0,
	FFN_KQ_PATH_Q8K,
};

/**
 * The activation times up, in place: g[i] = act(g[i]) * u[i], i < n
 * (spec/wire.md §1). kquant leaves the activation to its caller, so every
 * weight kind of lib/ffn applies the one lib/ffn computes
 * (ffn_act_mul()).
 */
typedef void (*ffn_kq_act_fn)(float *g, const float *u, size_t n);

enum ffn_kq_isa {
	FFN_KQ_ISA_SCALAR = 0,
	FFN_KQ_ISA_AVX2,	/**< AVX2 + FMA + F16C */
	FFN_KQ_ISA_AVX512,	/**< AVX-512 F/BW/VL/VNNI/VBMI + F16C */
	FFN_KQ_ISA_COUNT
};

/** Bytes of one block of fmt. */
static inline size_t
ffn_kq_block_bytes(enum ffn_kq_fmt fmt)
{
	return fmt == FFN_KQ_Q4_K ? FFN_KQ_Q4K_BYTES : FFN_KQ_Q6K_BYTES;
}

/** Bytes of a row of cols values (padded to whole blocks). */
static inline size_t
ffn_kq_row_bytes(enum ffn_kq_fmt fmt, size_t cols)
{
	return FFN_KQ_NBLOCKS(cols) * ffn_kq_block_bytes(fmt);
}

/** A quantised matrix: rows x cols, each row pad256(cols) values. */
struct ffn_kq_mat {
	const void *data;
	enum ffn_kq_fmt fmt;
	enum ffn_kq_q6_layout q6;	/**< arrangement when fmt is Q6_K */
	uint32_t rows;
	uint32_t cols;
};

/*
 * --- ISA selection --------------------------------------------------------
 */

/** Name of the kernels in use ("scalar", "avx2", "avx512"). */
const char *ffn_kq_isa_name(void);
/** Force an ISA (tests, benchmarks). -ENOTSUP if the CPU lacks it. */
int ffn_kq_select(enum ffn_kq_isa isa);
/** Currently selected ISA. */
enum ffn_kq_isa ffn_kq_isa(void);

/*
 * --- Blocks -------------------------------------------------------------
 */

/** IEEE binary16 <-> binary32 (round to nearest even), scalar. */
float ffn_kq_f16_to_f32(uint16_t h);
uint16_t ffn_kq_f32_to_f16(float f);

/**
 * Dequantise one row of nb blocks into y[nb * 256] (the reference decode of
 * vindex.md §2.4, pad values included).
 */
void ffn_kq_dequant_row(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
			const void *blocks, size_t nb, float *y);

/**
 * Quantise n values of x (padded with zeros to whole blocks) into
 * ffn_kq_row_bytes(fmt, n) bytes at dst. A simple min/max quantiser (not
 * llama.cpp's search) for synthetic vindexes, tests and benchmarks.
 */
void ffn_kq_quantize_row(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
			 const float *x, size_t n, void *dst);

/**
 * Quantise n input values (zero padded to whole blocks) into one Q8_K row
 * of the wire layout: i8 qs[nb*256], f32 d[nb], i16 sums[nb*8] where
 * sums[8b + j] = sum of qs[256b + 32j .. 256b + 32j + 31].
 * The row is FFN_KQ_NBLOCKS(n) * FFN_KQ_Q8K_BYTES bytes.
 */
void ffn_kq_quantize_q8k(const float *x, size_t n, void *dst);

/**
 * Dequantise one Q8_K wire row (as above) of n values: x[i] = d * qs[i].
 * For serving a Q8_K input row with dense weights.
 */
void ffn_kq_dequant_q8k(const void *row, size_t n, float *x);

/**
 * Convert nb llama.cpp block_q8_K (f32 d, i8 qs[256], i16 bsums[16]; 292
 * bytes each) into one Q8_K row of the wire layout above.
 */
void ffn_kq_q8k_from_ggml(const void *blocks, size_t nb, void *dst);

/*
 * --- Matrix x rows ----------------------------------------------------------
 */

/**
 * Scratch bytes ffn_kq_matvec_f32 needs for R input rows of cols values
 * (0 when cols is a multiple of 256 and rows need no copy).
 */
size_t ffn_kq_matvec_f32_scratch(size_t cols, size_t R);

/**
 * y[r * ldy + (i - row0)] = dot(W row i, x row r) for i in [row0, row1),
 * r in [0, R). x row r is x + r * ldx, cols values (never read beyond).
 * Returns 0 or -EINVAL (bad arguments), -ENOSPC (scratch too small).
 */
int ffn_kq_matvec_f32(const struct ffn_kq_mat *w, uint32_t row0,
		      uint32_t row1, const float *x, size_t ldx, size_t R,
		      float *y, size_t ldy, void *scratch, size_t scratch_len);

/**
 * Same with R input rows already quantised to Q8_K rows of W's cols
 * (each FFN_KQ_NBLOCKS(cols) * FFN_KQ_Q8K_BYTES bytes, consecutive).
 */
int ffn_kq_matvec_q8k(const struct ffn_kq_mat *w, uint32_t row0,
		      uint32_t row1, const void *q8, size_t R,
		      float *y, size_t ldy);

/*
 * --- Layer --------------------------------------------------------------
 */

/** One layer's K-quant weights (vindex.md §2.4). */
struct ffn_kq_layer {
	const void *gate;	/**< [nf, pad256(H)] */
	const void *up;		/**< [nf, pad256(H)] */
	const void *down;	/**< [H, pad256(nf)], checkpoint orientation */
	enum ffn_kq_fmt gate_fmt, up_fmt, down_fmt;
	enum ffn_kq_q6_layout q6;
	uint32_t nf;
	uint32_t hidden;
};

/** Scratch bytes ffn_kq_layer_forward needs for R rows. */
size_t ffn_kq_layer_scratch(const struct ffn_kq_layer *l, size_t R,
			    enum ffn_kq_path path);

/**
 * y row r = W_down (act(W_gate x_r) * (W_up x_r)) for r in [0, R);
 * x row r at x + r * ldx (hidden values), y row r at y + r * ldy.
 * y may not overlap x. Returns 0, -EINVAL or -ENOSPC.
 */
int ffn_kq_layer_forward(const struct ffn_kq_layer *l, enum ffn_kq_path path,
			 ffn_kq_act_fn act, const float *x, size_t ldx,
			 size_t R, float *y, size_t ldy,
			 void *scratch, size_t scratch_len);

/**
 * The share of features [f0, f1) in ffn_kq_layer_forward: y row r =
 * sum over f in [f0, f1) of a_f(x_r) * W_down[:, f] (overwrites y). A
 * slice starts on a block (f0 % 256 == 0) and ends on one or at nf, so
 * that on the Q8_K path its activations quantise to the very blocks of
 * the whole layer; the sum of the slices of a partition of [0, nf) equals
 * the whole layer up to the order of summation. Same scratch as the whole
 * layer. Returns 0 or -EINVAL (bad slice or arguments), -ENOSPC.
 */
int ffn_kq_layer_forward_part(const struct ffn_kq_layer *l,
			      enum ffn_kq_path path, ffn_kq_act_fn act,
			      uint32_t f0, uint32_t f1, const float *x,
			      size_t ldx, size_t R, float *y, size_t ldy,
			      void *scratch, size_t scratch_len);

/**
 * ffn_kq_layer_forward for R input rows already in Q8_K (the wire's
 * /v1/walk-ffn-q8k layout: each row FFN_KQ_NBLOCKS(hidden) *
 * FFN_KQ_Q8K_BYTES bytes, rows consecutive), on the Q8_K path: no f32
 * input is ever formed. Scratch: ffn_kq_layer_scratch(l, R,
 * FFN_KQ_PATH_Q8K).
 */
int ffn_kq_layer_forward_q8k(const struct ffn_kq_layer *l, ffn_kq_act_fn act,
			     const void *xq, size_t R, float *y, size_t ldy,
			     void *scratch, size_t scratch_len);

/**
 * ffn_kq_layer_forward_q8k() with the inner activation kept in f32: gate
 * and up dot the Q8_K input rows (same layout) with the integer kernels,
 * then down takes a = act(g) * u in f32 with the f32 path's kernels,
 * where ffn_kq_layer_forward_q8k() re-quantises a to Q8_K first. Used by
 * the expert shard's Q8_K route (spec/moe.md §1, ffn_moe.h), which keeps
 * that second rounding out (about 0.5% relative). Rows are the Q8_K rows
 * of FFN_KQ_NBLOCKS(hidden) blocks. Scratch: ffn_kq_layer_scratch(l, R,
 * FFN_KQ_PATH_F32). Returns 0, -EINVAL or -ENOSPC.
 */
int ffn_kq_layer_forward_q8k_in(const struct ffn_kq_layer *l,
				ffn_kq_act_fn act, const void *xq, size_t R,
				float *y, size_t ldy, void *scratch,
				size_t scratch_len);

/*
 * --- Loader (interleaved_q4k.bin + interleaved_q4k_manifest.json) --------
 */

#define FFN_KQ_BIN_NAME		"interleaved_q4k.bin"
#define FFN_KQ_MANIFEST_NAME	"interleaved_q4k_manifest.json"

/** One layer to load and its FFN width (index.json layers[].num_features). */
struct ffn_kq_layer_spec {
	uint32_t layer;
	uint32_t nf;
};

enum ffn_kq_mem {
	FFN_KQ_MEM_MMAP = 0,	/**< map the file read-only (fast start) */
	FFN_KQ_MEM_COPY,	/**< copy the owned layers into memory */
};

struct ffn_kq_load_opts {
	enum ffn_kq_mem mem;
	int numa_node;		/**< COPY: node to allocate on, -1 = any */
	int hugepages;		/**< COPY: try huge pages (MAP_HUGETLB, THP) */
	enum ffn_kq_q6_layout q6;
};

/** Loaded weights: layers[i] corresponds to spec[i]. */
struct ffn_kq_model {
	struct ffn_kq_layer *layers;
	size_t n_layers;
	uint32_t hidden;
	void *mem;		/**< mapping or copy */
	size_t mem_len;
	int mem_kind;		/**< internal: how mem must be released */
	int pages;		/**< enum ffn_kq_pages */
	uint64_t bytes;		/**< weight bytes of the loaded layers */
};

/** Pages the weights ended up on. */
enum ffn_kq_pages {
	FFN_KQ_PAGES_4K = 0,
	FFN_KQ_PAGES_THP,	/**< madvise(MADV_HUGEPAGE) accepted */
	FFN_KQ_PAGES_HUGETLB,	/**< MAP_HUGETLB 2 MiB pages */
	FFN_KQ_PAGES_FILE,	/**< FFN_KQ_MEM_MMAP */
};

/**
 * Validate the manifest (every entry: keys, format, shape, length, bounds;
 * 3 entries per layer, gate/up/down; gate and up Q4_K, down Q6_K or Q4_K;
 * with the shapes of vindex.md §2.4 for the layers in spec) and load the
 * layers of spec. On error, returns a
 * negative errno and writes a message naming the entry into err.
 */
int ffn_kq_load(struct ffn_kq_model *m, const char *dir,
		const struct ffn_kq_layer_spec *spec, size_t n_spec,
		uint32_t hidden, const struct ffn_kq_load_opts *opts,
		char *err, size_t errlen);

void ffn_kq_unload(struct ffn_kq_model *m);

#ifdef __cplusplus
}
#endif

#endif /* FFN_KQ_H */
