/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_FFN_H
#define FFN_FFN_H

/**
 * @file
 * FFN weights of a LARQL vindex (spec/vindex.md) and their compute
 * (spec/wire.md §1):  y = W_down · ( act(W_gate · x) ⊙ (W_up · x) ).
 *
 * Plain C, no DPDK. A model holds the layers a shard owns (first..last),
 * placed on one NUMA node. Compute is single-threaded by design: the lcores
 * are the threads, so each lcore calls ffn_compute() with its own scratch
 * and OpenBLAS is set to one thread (openblas_set_num_threads(1)) by
 * ffn_model_load(); the kernels never spawn threads.
 *
 * Weights in memory, whatever the file layout: gate and up [nf, H]
 * row-major, down feature-major [nf, H] (row f = column f of W_down), so
 * y = Σ_f a_f · D[f]. §2.3's down [H, nf] is transposed at load.
 * Element types stay as in the files (f32 or f16; §2.1 mixes them).
 *
 * K-quant (§2.4): interleaved_q4k.bin (the only payload a vindex with
 * "quant": "q4k" may use) loads as FFN_LAYOUT_Q4K layers of FFN_DT_Q4K /
 * FFN_DT_Q6K matrices, down kept in checkpoint orientation
 * [H, pad256(nf)]; every compute entry point below serves them with
 * lib/ffn/kquant's kernels (kquant/ffn_kq.h). FFN_ERR_KQUANT reports a
 * K-quant payload that is missing or invalid, or another layout forced on
 * a "q4k" vindex.
 *
 * Thread safety: a loaded model is read-only; any number of threads may
 * compute on it at once, each with its own struct ffn_scratch.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Load errors. Negative, outside the errno range, so a caller can tell
 * them from -errno. ffn_model_load() also writes a message naming the
 * file, layer and key at fault.
 */
enum ffn_error {
	FFN_ERR_IO = -1001,	/**< a file is missing or unreadable */
	FFN_ERR_SHORT = -1002,	/**< a file is shorter than its data */
	FFN_ERR_JSON = -1003,	/**< a JSON file does not parse */
	FFN_ERR_KEY = -1004,	/**< a key is missing or has a bad value */
	FFN_ERR_SHAPE = -1005,	/**< a shape/length disagrees with index.json */
	FFN_ERR_LAYER = -1006,	/**< an owned layer has no entry, or nf 0 */
	FFN_ERR_RANGE = -1007,	/**< requested layers outside the model */
	FFN_ERR_MODEL = -1008,	/**< model_type not servable (gpt2, ...) */
	FFN_ERR_FP4 = -1009,	/**< fp4 block format: not supported */
	FFN_ERR_KQUANT = -1010,	/**< K-quant payload (§2.4) missing/invalid */
	FFN_ERR_PAYLOAD = -1011, /**< no FFN payload files present */
	FFN_ERR_NOMEM = -1012,	/**< out of memory */
	FFN_ERR_NUMA = -1013,	/**< requested NUMA node unavailable */
};

/** Short text for an ffn_error or -errno. */
const char *ffn_strerror(int err);

/** Which payload of spec/vindex.md §2 a model was loaded from. */
enum ffn_layout {
	FFN_LAYOUT_AUTO = 0,	/**< load option: spec order of preference */
	FFN_LAYOUT_INTERLEAVED,	/**< §2.2 interleaved.bin */
	FFN_LAYOUT_FEATURE_MAJOR, /**< §2.1 gate/up_features/down_features */
	FFN_LAYOUT_Q4K,		/**< §2.4 interleaved_q4k.bin (kquant/) */
	FFN_LAYOUT_DENSE,	/**< §2.3 *_weights.bin + weight_manifest */
};

/** Element type of one weight matrix in memory. */
enum ffn_dtype {
	FFN_DT_F32 = 0,
	FFN_DT_F16,
	FFN_DT_Q4K,		/**< Q4_K blocks (§2.4, kquant/ffn_kq.h) */
	FFN_DT_Q6K,		/**< Q6_K blocks (§2.4, kquant/ffn_kq.h) */
};

enum ffn_act {
	FFN_ACT_SILU = 0,	/**< g · sigmoid(g) */
	FFN_ACT_GELU_TANH,	/**< 0.5 g (1 + tanh(0.7978846 (g + 0.044715 g³))) */
};

/** How the weights are held in memory. */
enum ffn_placement {
	FFN_PLACE_COPY = 0,	/**< copied into memory on the NUMA node */
	FFN_PLACE_MMAP,		/**< files mapped read-only (fast start) */
};

/** Page size obtained for copied weights (reported in /v1/stats). */
enum ffn_pages {
	FFN_PAGES_NORMAL = 0,	/**< 4 KiB pages */
	FFN_PAGES_THP,		/**< madvise(MADV_HUGEPAGE) accepted, THP on */
	FFN_PAGES_HUGETLB,	/**< 2 MiB MAP_HUGETLB pages */
	FFN_PAGES_FILE,		/**< FFN_PLACE_MMAP: page cache */
};

/**
 * One weight matrix as the kernels read it. Dense (f32/f16): rows x cols
 * elements, row r at data + r * row_bytes. K-quant (FFN_LAYOUT_Q4K, see
 * kquant/ffn_kq.h): dtype FFN_DT_Q4K/Q6K, row r at data + r * row_bytes,
 * row_bytes = pad256(cols) / 256 blocks; down keeps the checkpoint
 * orientation, rows = H, cols = nf (spec/vindex.md §2.4).
 */
struct ffn_mat {
	const void *data;
	size_t row_bytes;
	uint32_t rows;
	uint32_t cols;
	enum ffn_dtype dtype;
};

/** One owned layer: gate, up [nf, H]; down feature-major [nf, H]. */
struct ffn_layer {
	uint32_t nf;
	enum ffn_layout layout;
	struct ffn_mat gate;
	struct ffn_mat up;
	struct ffn_mat down;
};

/** What /v1/stats reports about the loaded weights. */
struct ffn_info {
	char model[128];	/**< index.json "model" ("" when absent) */
	char family[64];	/**< index.json "family" ("" when absent) */
	char model_type[64];	/**< model_config.model_type */
	uint32_t num_layers;	/**< the model's layer count */
	uint32_t hidden;	/**< H */
	uint32_t intermediate;	/**< intermediate_size (informational) */
	uint32_t first_layer;	/**< first owned layer */
	uint32_t last_layer;	/**< last owned layer (inclusive) */
	uint32_t max_features;	/**< largest nf among owned layers */
	char dtype[8];		/**< index.json dtype: "f32" or "f16" */
	enum ffn_layout layout;
	enum ffn_act act;
	enum ffn_placement placement;
	enum ffn_pages pages;
	int numa_node;		/**< node of the weights (-1: no NUMA) */
	uint64_t bytes_loaded;	/**< weight bytes held for owned layers */
	int q6k_ggml;		/**< Q4K layout: Q6_K arrangement is ggml
				 *   planar (0: LARQL-private), §2.4 */
	int kq_q8k;		/**< Q4K layout: inputs quantised to Q8_K
				 *   (integer dots); 0: f32 inputs */
};

struct ffn_load_opts {
	int first_layer;	/**< -1: 0 */
	int last_layer;		/**< -1: num_layers - 1 */
	int numa_node;		/**< -1: the calling thread's node */
	enum ffn_placement placement;
	int no_hugepages;	/**< 1: do not ask for huge pages */
	enum ffn_layout layout;	/**< FFN_LAYOUT_AUTO, or force one */
	int q6k_ggml;		/**< Q6_K blocks in ggml planar arrangement
				 *   (default 0: LARQL-private, §2.4) */
};

struct ffn_model;
struct ffn_scratch;

/** Defaults: all layers, local node, copy, huge pages, AUTO layout. */
void ffn_load_opts_default(struct ffn_load_opts *o);

/**
 * Load the owned layers of the vindex in dir.
 * @param opts  NULL for defaults.
 * @param err   optional buffer for a message naming what is wrong.
 * @return 0 and *out set, or a negative ffn_error (-EINVAL: opts->layout
 * is not one of enum ffn_layout).
 */
int ffn_model_load(const char *dir, const struct ffn_load_opts *opts,
		   struct ffn_model **out, char *err, size_t errlen);

void ffn_model_free(struct ffn_model *m);

/**
 * A model over caller-owned dense weights (benchmarks, tests): layers
 * 0..n-1 as given (gate, up [nf, H]; down feature-major [nf, H]; f32 or
 * f16). The buffers must outlive the model. 0 or a negative ffn_error.
 */
int ffn_model_wrap(unsigned hidden, enum ffn_act act,
		   const struct ffn_layer *layers, unsigned n,
		   struct ffn_model **out);

const struct ffn_info *ffn_model_info(const struct ffn_model *m);

/** The layer descriptor, or NULL when the layer is not owned. */
const struct ffn_layer *ffn_model_layer(const struct ffn_model *m,
					unsigned layer);

/**
 * The activation times up, in place: g[i] = act(g[i]) · u[i] for i < n
 * (spec/wire.md §1), with the active kernel set; every set gives the
 * same bits (ffn_act_tmpl.h), within a relative 4·2⁻²⁴ of the exact
 * activation for SiLU and (4 + 4|z|)·2⁻²⁴ for GELU-tanh, z = 2c(g + k g³)
 * (tests/ffn/test_ffn_act.c).
 */
void ffn_act_mul(enum ffn_act act, float *g, const float *u, size_t n);

/** Names for /v1/stats. */
const char *ffn_layout_name(enum ffn_layout l);
const char *ffn_act_name(enum ffn_act a);
const char *ffn_pages_name(enum ffn_pages p);

/**
 * Per-caller (per-lcore) work memory, allocated once on numa_node (-1:
 * local) for up to max_rows rows per internal pass (more rows are
 * computed in passes of max_rows).
 */
struct ffn_scratch *ffn_scratch_new(const struct ffn_model *m,
				    unsigned max_rows, int numa_node);
void ffn_scratch_free(struct ffn_scratch *s);

/**
 * Compute rows of one layer: y[r] = FFN(x[r]) for r < rows, each row H
 * floats. Rows may come from different requests (any pointers); the
 * weights are streamed once per pass of up to max_rows rows.
 * Every x row is read before any y row is written, so y[r] may overlap
 * any x row (in place). No allocation.
 * @return 0, -ERANGE when the layer is not owned, -EINVAL on bad args,
 * -ENOTSUP when ffn_model_wrap() was given matrices not f32 or f16.
 */
int ffn_compute(const struct ffn_model *m, unsigned layer,
		const float *const *x, float *const *y, unsigned rows,
		struct ffn_scratch *s);

/**
 * Feature slices (issue 4: one layer's rows split across a node's
 * workers). A layer is  y = Σ_{f < nf} a_f(x) · D[f],  so it splits over
 * disjoint feature ranges [f0, f1) into partial outputs that add up to y.
 * Each slice reads only its own rows of gate, up and down: n workers on n
 * slices stream the layer's weights once between them.
 *
 * Alignment: dense (f32/f16) slices are any rows (align 1). K-quant
 * layers (FFN_LAYOUT_Q4K) keep down as [H, pad256(nf)] in blocks of 256
 * features, so slices start on a multiple of 256 and end on one or at nf
 * (align 256); both K-quant paths are supported (f32 inputs, and inputs
 * quantised to Q8_K per ffn_model_set_kq_q8k()). Rows that arrive in
 * Q8_K (ffn_compute_q8k) have no slice API: the appliance computes those
 * requests whole.
 */

/** The slice alignment of a layer (1 or 256), 0 when not owned. */
unsigned ffn_part_align(const struct ffn_model *m, unsigned layer);

/**
 * Slice i of n near-equal aligned slices covering [0, nf): *f0, *f1.
 * When the layer has fewer aligned units than n, trailing slices are
 * empty (*f0 == *f1): skip them (their share is 0).
 * @return 0, -ERANGE when the layer is not owned, -EINVAL (n 0, i >= n).
 */
int ffn_part_range(const struct ffn_model *m, unsigned layer, unsigned i,
		   unsigned n, unsigned *f0, unsigned *f1);

/**
 * The partial output of features [f0, f1): y[r] = Σ_{f0 <= f < f1}
 * a_f(x[r]) · D[f] for r < rows (overwrites y). The partials of slices
 * partitioning [0, nf) sum to ffn_compute()'s y, up to the order of
 * summation (f32 rounding: each is within about (nf + H) · 2^-24 of the
 * exact sum of the magnitudes involved). Same engine, scratch and in-place
 * contract as ffn_compute(). No allocation.
 * @return 0, -ERANGE when the layer is not owned, -EINVAL on bad args:
 * f0 >= f1, f1 > nf, or a K-quant slice not on 256-feature blocks.
 */
int ffn_compute_part(const struct ffn_model *m, unsigned layer, unsigned f0,
		     unsigned f1, const float *const *x, float *const *y,
		     unsigned rows, struct ffn_scratch *s);

/**
 * ffn_compute() for rows that arrive quantised to Q8_K (the optional
 * /v1/walk-ffn-q8k route, spec/wire.md §2): xq holds rows consecutive
 * rows of H values, each FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES bytes in
 * the wire layout of kquant/ffn_kq.h (i8 qs[nb*256], f32 d[nb],
 * i16 sums[nb*8]). K-quant layers dot them with integer instructions;
 * dense layers take them dequantised. y rows must not overlap xq.
 * @return 0, -ERANGE when the layer is not owned, -EINVAL on bad args.
 */
int ffn_compute_q8k(const struct ffn_model *m, unsigned layer,
		    const void *xq, float *const *y, unsigned rows,
		    struct ffn_scratch *s);

/**
 * ffn_compute() for rows at a fixed stride (in floats). x == y with equal
 * strides (in place) is allowed.
 */
int ffn_compute_strided(const struct ffn_model *m, unsigned layer,
			const float *x, size_t x_stride, float *y,
			size_t y_stride, unsigned rows, struct ffn_scratch *s);

/**
 * Features mode (spec/wire.md §6): the top_k features of the layer by
 * |gate_f · x| descending; ties (equal |dot|) by lower id first; NaN dots
 * rank last. ids[i], scores[i] (signed dot, unrounded) for i < returned
 * count = min(top_k, nf). ids and scores hold top_k entries.
 * @return the count, or -ERANGE / -EINVAL.
 */
int ffn_features(const struct ffn_model *m, unsigned layer, const float *x,
		 unsigned top_k, uint32_t *ids, float *scores,
		 struct ffn_scratch *s);

/** Kernels, best last. */
enum ffn_isa {
	FFN_ISA_SCALAR = 0,
	FFN_ISA_AVX2,		/**< AVX2 + FMA + F16C */
	FFN_ISA_AVX512,		/**< AVX-512 F/BW/VL/DQ */
	FFN_ISA_COUNT
};

/** Force a kernel set (tests, benchmarks). 0 or -ENOTSUP. Process-wide. */
int ffn_select_isa(enum ffn_isa isa);
/** Kernel set in use (the best the CPU has unless forced). */
enum ffn_isa ffn_active_isa(void);
const char *ffn_isa_name(enum ffn_isa isa);
/** 1 when this CPU (and build) can run isa. */
int ffn_isa_supported(enum ffn_isa isa);

/**
 * Engine for f32 layers: our kernels, or OpenBLAS (sgemv for one row,
 * sgemm for more; single-threaded). AUTO uses OpenBLAS for passes of at
 * least blas_min_rows rows when that is > 0; by default (0) never, as
 * tools/bench/ffn measured our kernels faster at 1..64 rows.
 * f16 layers always use our kernels (OpenBLAS has no f16).
 */
enum ffn_engine {
	FFN_ENGINE_AUTO = 0,
	FFN_ENGINE_KERNEL,
	FFN_ENGINE_BLAS,
};

/**
 * Set the engine of a model (before sharing it between threads).
 * blas_min_rows: for AUTO, 0 keeps the built-in default (never).
 */
void ffn_model_set_engine(struct ffn_model *m, enum ffn_engine e,
			  unsigned blas_min_rows);

/**
 * K-quant layers: quantise input rows to Q8_K and use integer dots
 * (on = 1, faster, about 1% relative error more), or dot f32 inputs
 * (on = 0, the default). Before sharing the model between threads.
 */
void ffn_model_set_kq_q8k(struct ffn_model *m, int on);

#ifdef __cplusplus
}
#endif

#endif /* FFN_FFN_H */
