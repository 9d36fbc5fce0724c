# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""FFN compute of spec/wire.md §1: y = W_down (act(W_gate x) * (W_up x)).

G, U, D are [nf, H] (D holds W_down^T, vindex.md §2.1). x is [S, H].
compute64 works in float64 (the oracle); compute32 in float32 throughout,
as an appliance would (its summation order differs, so compare within a
bound, not bit for bit).
"""

import numpy as np

GELU_C = 0.7978846
GELU_A = 0.044715


def silu(g):
    return g / (g.dtype.type(1) + np.exp(-g))


def gelu_tanh(g):
    t = g.dtype.type
    return t(0.5) * g * (t(1) + np.tanh(t(GELU_C) * (g + t(GELU_A) * g * g
                                                     * g)))


ACTS = {"silu": silu, "gelu_tanh": gelu_tanh}


def _compute(G, U, D, x, act, dt):
    G = np.asarray(G, dtype=dt)
    U = np.asarray(U, dtype=dt)
    D = np.asarray(D, dtype=dt)
    x = np.atleast_2d(np.asarray(x, dtype=dt))
    with np.errstate(over="ignore", invalid="ignore"):
        g = x @ G.T
        u = x @ U.T
        a = ACTS[act](g) * u
        return a @ D


def compute64(G, U, D, x, act):
    return _compute(G, U, D, x, act, np.float64)


def compute32(G, U, D, x, act):
    return _compute(G, U, D, x, act, np.float32)


def features(G, x, top_k):
    """wire.md §6 features mode: the top_k features ranked by |gate_i . x|,
    descending; returns (ids, signed scores rounded to 2 decimals)."""
    s = np.asarray(G, dtype=np.float32) @ np.asarray(x, dtype=np.float32)
    order = np.argsort(-np.abs(s), kind="stable")[:top_k]
    return ([int(i) for i in order],
            [round(float(s[i]), 2) for i in order])
