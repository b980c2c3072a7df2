"""Dense networks and Adam in plain numpy (no torch): what the thesis's agents are made of.

An `MLP` is a stack of dense layers with leaky-ReLU between them (thesis eq. 3.1) and a linear
output; the agents put a softmax (policy) or nothing (value) on top. `forward` keeps what
`backward` needs, so one batched pass over an episode's observations gives every gradient.
"""

from __future__ import annotations

import numpy as np

NEGATIVE_SLOPE = 0.01  # PyTorch's default for leaky ReLU, as HDeepRM used


class MLP:
    """Dense layers `sizes[0] -> ... -> sizes[-1]`; weights (in, out) so a batch is rows."""

    def __init__(self, sizes: list[int], rng: np.random.Generator, out_scale: float = 0.01) -> None:
        self.sizes = list(sizes)
        self.params: list[np.ndarray] = []
        for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
            last = i == len(sizes) - 2
            # He init for leaky-ReLU layers; a small output layer so the first policy is near uniform
            scale = out_scale / np.sqrt(n_in) if last else np.sqrt(2.0 / n_in)
            self.params.append(rng.standard_normal((n_in, n_out)) * scale)
            self.params.append(np.zeros(n_out))

    @property
    def n_layers(self) -> int:
        return len(self.params) // 2

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Output for a batch `x` (rows) and the per-layer inputs/pre-activations for backward."""
        cache = []
        h = x
        p = self.params
        last = self.n_layers - 1
        for i in range(self.n_layers):
            cache.append(h)
            z = h @ p[2 * i] + p[2 * i + 1]
            if i < last:
                cache.append(z)
                h = np.where(z >= 0, z, NEGATIVE_SLOPE * z)
            else:
                h = z
        return h, cache

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Forward one observation without keeping a cache (the per-decision hot path)."""
        h = x
        p = self.params
        last = self.n_layers - 1
        for i in range(self.n_layers):
            z = h @ p[2 * i] + p[2 * i + 1]
            h = np.maximum(z, NEGATIVE_SLOPE * z) if i < last else z
        return h

    def backward(self, cache: list[np.ndarray], dout: np.ndarray) -> list[np.ndarray]:
        """Gradients of a loss w.r.t. every parameter, given dL/d(output) for the batch."""
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        d = dout
        p = self.params
        k = len(cache) - 1
        for i in range(self.n_layers - 1, -1, -1):
            h_in = cache[k - 1] if i < self.n_layers - 1 else cache[k]
            if i < self.n_layers - 1:
                z = cache[k]
                d = d * np.where(z >= 0, 1.0, NEGATIVE_SLOPE)
                k -= 2
            else:
                k -= 1
            grads[2 * i] = h_in.T @ d
            grads[2 * i + 1] = d.sum(axis=0)
            if i > 0:
                d = d @ p[2 * i].T
        return grads


class Adam:
    """Adam (Kingma & Ba) over a list of arrays, updated in place."""

    def __init__(self, params: list[np.ndarray], lr: float, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8) -> None:
        self.params = params
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        c1 = 1.0 - self.b1 ** self.t
        c2 = 1.0 - self.b2 ** self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= self.b1
            m += (1.0 - self.b1) * g
            v *= self.b2
            v += (1.0 - self.b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
