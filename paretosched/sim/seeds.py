"""numpy's `SeedSequence` and the `PCG64` draws a `trace`-mode run needs, in plain Python.

Why hand-written: a `simulate` process of 10,000 jobs spends ~0.1 CPU s importing numpy and
numpy.random (about an eighth of the whole process), only to draw the bandwidths of `trace` mode
and to seed the scheduler's stdlib RNG. These are copies of numpy's algorithms (numpy/random/
bit_generator.pyx: SeedSequence; pcg64.h: PCG64's XSL-RR output, `next_double`, `random_uniform`),
so every number is bit for bit what numpy gives (tests/sim/test_seeds.py compares them on many
seeds). `hdeeprm` mode and the RL agents still use numpy (`numpy_generator`).
"""

from __future__ import annotations

import operator
from typing import Any

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
M128 = (1 << 128) - 1
POOL_SIZE = 4
INIT_A, MULT_A = 0x43B0D7E5, 0x931E8875
INIT_B, MULT_B = 0x8B51F9DD, 0x58F38DED
MIX_MULT_L, MIX_MULT_R = 0xCA01F9DD, 0x4973F715
PCG_MULT = (2549297995355413924 << 64) | 4865540595714422341  # PCG_DEFAULT_MULTIPLIER_128
TO_DOUBLE = 1.0 / 9007199254740992.0  # 2 ** -53


def _words(n: int) -> list[int]:
    """numpy's `_int_to_uint32_array`: little-endian 32-bit words, [0] for 0."""
    if n < 0:
        raise ValueError("expected non-negative integer")
    out = [0] if n == 0 else []
    while n > 0:
        out.append(n & M32)
        n >>= 32
    return out


def _mix(x: int, y: int) -> int:
    r = (MIX_MULT_L * x - MIX_MULT_R * y) & M32
    return r ^ (r >> 16)


class SeedSequence:
    """numpy.random.SeedSequence for an integer entropy (and a spawn key): same pool, same words."""

    def __init__(self, entropy: int, spawn_key: tuple[int, ...] = ()) -> None:
        self.entropy = entropy = operator.index(entropy)  # an int or numpy integer, as numpy takes
        self.spawn_key = tuple(spawn_key)
        self.n_children_spawned = 0
        run = _words(entropy)
        spawn = [w for k in self.spawn_key for w in _words(k)]
        if spawn and len(run) < POOL_SIZE:  # numpy >= 1.19 pads the entropy when a spawn key follows
            run = run + [0] * (POOL_SIZE - len(run))
        self.pool = self._mix_entropy(run + spawn)

    @staticmethod
    def _mix_entropy(entropy: list[int]) -> list[int]:
        h = INIT_A

        def hashmix(value: int) -> int:
            nonlocal h
            value ^= h
            h = (h * MULT_A) & M32
            value = (value * h) & M32
            return value ^ (value >> 16)

        pool = [hashmix(entropy[i] if i < len(entropy) else 0) for i in range(POOL_SIZE)]
        for i_src in range(POOL_SIZE):
            for i_dst in range(POOL_SIZE):
                if i_src != i_dst:
                    pool[i_dst] = _mix(pool[i_dst], hashmix(pool[i_src]))
        for i_src in range(POOL_SIZE, len(entropy)):
            for i_dst in range(POOL_SIZE):
                pool[i_dst] = _mix(pool[i_dst], hashmix(entropy[i_src]))
        return pool

    def generate_state(self, n_words: int, dtype: str = "uint32") -> list[int]:
        """`n_words` words of 32 or 64 bits (`dtype` "uint32" or "uint64"), as Python ints."""
        if dtype not in ("uint32", "uint64"):
            raise ValueError("only support uint32 or uint64")
        n32 = n_words * 2 if dtype == "uint64" else n_words
        h = INIT_B
        out = []
        for i in range(n32):
            v = self.pool[i % POOL_SIZE] ^ h
            h = (h * MULT_B) & M32
            v = (v * h) & M32
            out.append(v ^ (v >> 16))
        if dtype == "uint64":  # numpy views the 32-bit words as little-endian 64-bit ones
            return [out[i] | (out[i + 1] << 32) for i in range(0, n32, 2)]
        return out

    def spawn(self, n_children: int) -> list[SeedSequence]:
        first = self.n_children_spawned
        self.n_children_spawned += n_children
        return [SeedSequence(self.entropy, self.spawn_key + (i,)) for i in range(first, first + n_children)]

    def numpy(self) -> Any:
        """The same sequence as a numpy.random.SeedSequence (imports numpy)."""
        import numpy as np

        return np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key)


class Pcg64:
    """numpy.random.PCG64 seeded from a SeedSequence: the doubles of `Generator.random` and `uniform`."""

    def __init__(self, seed_seq: SeedSequence) -> None:
        s0, s1, i0, i1 = seed_seq.generate_state(4, "uint64")
        self.inc = ((((i0 << 64) | i1) << 1) | 1) & M128  # pcg_setseq_128_srandom_r
        state = (self.inc + ((s0 << 64) | s1)) & M128  # one step from 0 (gives inc), plus the seed
        self.state = (state * PCG_MULT + self.inc) & M128

    def random(self, n: int) -> list[float]:
        """`Generator.random(n)`: n doubles in [0, 1)."""
        mult, inc, s = PCG_MULT, self.inc, self.state
        out = []
        for _ in range(n):
            s = (s * mult + inc) & M128
            x = ((s >> 64) ^ s) & M64
            rot = s >> 122
            out.append(((((x >> rot) | (x << (64 - rot))) & M64) >> 11) * TO_DOUBLE)
        self.state = s
        return out

    def uniform(self, low: float, high: float, n: int) -> list[float]:
        """`Generator.uniform(low, high, n)`: low + (high - low) * a double, as numpy's `random_uniform`."""
        span = high - low
        return [low + span * d for d in self.random(n)]

    def skip(self, n: int) -> None:
        """Advance past `n` 64-bit outputs (the n doubles a draw would take) without making them."""
        # the LCG's jump-ahead in O(log n) (Brown 1994, as pcg_advance_lcg_128)
        acc_mult, acc_plus, mult, plus = 1, 0, PCG_MULT, self.inc
        while n > 0:
            if n & 1:
                acc_mult = (acc_mult * mult) & M128
                acc_plus = (acc_plus * mult + plus) & M128
            plus = ((mult + 1) * plus) & M128
            mult = (mult * mult) & M128
            n >>= 1
        self.state = (acc_mult * self.state + acc_plus) & M128


def numpy_generator(seed_seq: Any) -> Any:
    """numpy's default Generator (PCG64) on the same stream as `Pcg64(seed_seq)` (imports numpy)."""
    import numpy as np

    return np.random.default_rng(seed_seq.numpy() if isinstance(seed_seq, SeedSequence) else seed_seq)
