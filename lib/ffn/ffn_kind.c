/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The weight kinds (ffn_kind.h): one row per payload of spec/vindex.md
 * §2, in the order of preference of §2 (§2.2, §2.1, §2.4, §2.3), which
 * is the order FFN_LAYOUT_AUTO tries them in.
 */
#include <stdio.h>
#include <string.h>

#include "ffn_kind.h"
#include "ffn_kq.h"		/* the §2.4 file names */

static const char *const files_interleaved[] = { "interleaved.bin", NULL };
static const char *const files_feature_major[] = { "gate_vectors.bin",
	"up_features.bin", "down_features.bin", NULL };
static const char *const files_q4k[] = { FFN_KQ_BIN_NAME, NULL };
static const char *const files_dense[] = { "gate_vectors.bin",
	"up_weights.bin", "down_weights.bin", NULL };

const struct ffn_kind ffn_kinds[] = {
	{
		.layout = FFN_LAYOUT_INTERLEAVED,	/* §2.2 */
		.name = "interleaved",
		.files = files_interleaved,
		.load = ffn_load_interleaved,
		.eng = &ffn_eng_dense,
	},
	{
		.layout = FFN_LAYOUT_FEATURE_MAJOR,	/* §2.1 */
		.name = "feature-major",
		.files = files_feature_major,
		.load = ffn_load_feature_major,
		.eng = &ffn_eng_dense,
	},
	{
		.layout = FFN_LAYOUT_Q4K,		/* §2.4 */
		.name = "q4k",
		.files = files_q4k,
		.manifest = FFN_KQ_MANIFEST_NAME,
		.quant = "q4k",
		.err = FFN_ERR_KQUANT,
		.load = ffn_kq_eng_load,
		.eng = &ffn_eng_kq,
	},
	{
		.layout = FFN_LAYOUT_DENSE,		/* §2.3 */
		.name = "dense",
		.files = files_dense,
		.manifest = "weight_manifest.json",
		.load = ffn_load_dense,
		.eng = &ffn_eng_dense,
	},
};

const unsigned ffn_n_kinds = sizeof(ffn_kinds) / sizeof(ffn_kinds[0]);

const struct ffn_kind *
ffn_kind_of(enum ffn_layout layout)
{
	unsigned i;

	for (i = 0; i < ffn_n_kinds; i++)
		if (ffn_kinds[i].layout == layout)
			return &ffn_kinds[i];
	return NULL;
}

const struct ffn_kind *
ffn_kind_quant(const char *quant)
{
	unsigned i;

	for (i = 0; i < ffn_n_kinds; i++)
		if (ffn_kinds[i].quant != NULL &&
		    strcmp(ffn_kinds[i].quant, quant) == 0)
			return &ffn_kinds[i];
	return NULL;
}

void
ffn_kind_files(const struct ffn_kind *k, int with_manifest, char *buf,
	       size_t len)
{
	size_t at = 0;
	unsigned i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; k->files[i] != NULL && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i ? " + " : "", k->files[i]);
	if (with_manifest && k->manifest != NULL && at < len)
		snprintf(buf + at, len - at, " + %s", k->manifest);
}

const char *
ffn_layout_name(enum ffn_layout l)
{
	const struct ffn_kind *k = ffn_kind_of(l);

	return k != NULL ? k->name : "auto";
}
