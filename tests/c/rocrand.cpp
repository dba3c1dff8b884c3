// Debian's rocRAND (librocrand1, its shipped gfx1030 machine code), unmodified, through Debian's
// HIP on the drop-in. tests/soft_drop_in.rs builds it with the system C++ compiler and checks
// every line it prints.
// - Philox4x32-10: every one of 2^20 numbers against the published algorithm (Salmon et al.,
//   "Parallel random numbers: as easy as 1, 2, 3", SC'11) computed here, with key (seed low,
//   seed high). Block b of four comes from counter (b / s, 0, b % s, 0) for the stride s at which
//   rocRAND's work-items interleave their subsequences; s is read off the output (the first block
//   equal to counter (1, 0, 0, 0)'s), and every block must then match. (rocRAND 5.3 gives s = 1:
//   one counter sequence.)
// - XORWOW: every number against the published algorithm (Marsaglia, "Xorshift RNGs", J. Stat.
//   Softw. 8(14), 2003: five words of xorshift state and a Weyl counter, the number d + x4),
//   seeded as rocRAND 5.2.3 seeds it (its rocrand_xorwow.h: the constant start, the seed's halves
//   mixed in). Work-item t runs subsequence t, 2^67 numbers after t - 1; the jump is computed
//   here, as the xorshift step's 160x160 matrix over GF(2) squared 67 times, not taken from
//   rocRAND's precomputed tables. The interleaving is read off the output as for Philox.
// - MRG32k3a: every number against L'Ecuyer's published recurrences, seeded and scaled to 32 bits
//   as rocRAND 5.2.3 does, each work-item's subsequence (2^76 ahead) reached by the recurrences'
//   3x3 matrices squared 76 times modulo m1 and m2 here.
// XORWOW's and MRG32k3a's state setup (skip-ahead per work-item) is most of this program's time
// on the interpreter, so each generates once.
#include <hip/hip_runtime_api.h>
#include <rocrand/rocrand.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_status.h"

struct Block {
    uint32_t v[4];
};

static Block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    for (int round = 0; round < 10; ++round) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1,
                 n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return Block{{c0, c1, c2, c3}};
}

struct Xorwow {
    uint32_t x[5];
    uint32_t d;
};

static Xorwow xorwow_seeded(unsigned long long seed) {
    Xorwow state{{123456789u, 362436069u, 521288629u, 88675123u, 5783321u}, 6615241u};
    const uint32_t t0 = 1228688033u * ((uint32_t)seed ^ 0x2c7f967fu);
    const uint32_t t1 = 2073658381u * ((uint32_t)(seed >> 32) ^ 0xa03697cbu);
    state.x[0] += t0, state.x[1] ^= t0, state.x[2] += t1, state.x[3] ^= t1, state.x[4] += t0;
    state.d += t0 + t1;
    return state;
}

// The xorshift part of one step (linear over GF(2)); the Weyl counter is separate.
static void xorshift(uint32_t x[5]) {
    const uint32_t t = x[0] ^ (x[0] >> 2);
    x[0] = x[1], x[1] = x[2], x[2] = x[3], x[3] = x[4];
    x[4] = (x[4] ^ (x[4] << 4)) ^ (t ^ (t << 1));
}

static uint32_t xorwow_next(Xorwow &state) {
    xorshift(state.x);
    state.d += 362437u;
    return state.d + state.x[4];
}

// A 160x160 matrix over GF(2) as its columns: column j is the image of state bit j.
using Bits = std::array<uint32_t, 5>;
using Matrix = std::vector<Bits>;

static Bits image(const Matrix &m, const Bits &v) {
    Bits r{};
    for (int j = 0; j < 160; ++j)
        if (v[j / 32] >> (j % 32) & 1)
            for (int w = 0; w < 5; ++w) r[w] ^= m[j][w];
    return r;
}

// The step matrix raised to 2^67: one subsequence ahead (the Weyl counter gains 2^67 * 362437,
// which is 0 modulo 2^32).
static Matrix subsequence_jump() {
    Matrix m(160);
    for (int j = 0; j < 160; ++j) {
        Bits column{};
        column[j / 32] = 1u << (j % 32);
        xorshift(column.data());
        m[j] = column;
    }
    for (int square = 0; square < 67; ++square) {
        Matrix next(160);
        for (int j = 0; j < 160; ++j) next[j] = image(m, m[j]);
        m = next;
    }
    return m;
}

struct XorwowGenerator {
    Xorwow state;
    const Matrix *jump;
    uint32_t next() { return xorwow_next(state); }
    void skip_subsequence() {
        Bits x = image(*jump, Bits{state.x[0], state.x[1], state.x[2], state.x[3], state.x[4]});
        for (int i = 0; i < 5; ++i) state.x[i] = x[i];
    }
};

// MRG32k3a (L'Ecuyer, "Good parameters and implementations for combined multiple recursive
// random number generators", Operations Research 47(1), 1999): two third-order recurrences modulo
// m1 and m2, the number their difference modulo m1 in [1, m1]. Seeded as rocRAND 5.2.3 seeds it
// (its rocrand_mrg32k3a.h: the seed's halves, each xored with a constant, times the seed), and
// its unsigned-int output scales the number to 32 bits: (z - 1) * (2^32 - 1) / (m1 - 1).
const uint64_t M1 = 4294967087u, M2 = 4294944443u;
using Mat3 = std::array<uint64_t, 9>;

static Mat3 mat3_product(const Mat3 &a, const Mat3 &b, uint64_t m) {
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            unsigned __int128 sum = 0;
            for (int k = 0; k < 3; ++k) sum += (unsigned __int128)a[3 * i + k] * b[3 * k + j];
            r[3 * i + j] = (uint64_t)(sum % m);
        }
    return r;
}

// The recurrence's matrix on (x[n-3], x[n-2], x[n-1]) raised to 2^76: one subsequence ahead.
// rocRAND's comments say a subsequence is 2^67 numbers, but the first of its skip tables
// (`h_A1P67`) is A1^(2^76), L'Ecuyer's substream length (checked by computing both powers).
static Mat3 mat3_subsequence_jump(Mat3 step, uint64_t m) {
    for (int square = 0; square < 76; ++square) step = mat3_product(step, step, m);
    return step;
}

struct Mrg32k3aGenerator {
    uint64_t g1[3], g2[3];
    Mat3 jump1, jump2;
    Mrg32k3aGenerator(unsigned long long seed)
        : jump1(mat3_subsequence_jump({0, 1, 0, 0, 0, 1, M1 - 810728, 1403580, 0}, M1)),
          jump2(mat3_subsequence_jump({0, 1, 0, 0, 0, 1, M2 - 1370589, 0, 527612}, M2)) {
        const uint64_t x = (uint32_t)seed ^ 0x55555555u, y = (uint32_t)(seed >> 32) ^ 0xAAAAAAAAu;
        auto times = [&](uint64_t v, uint64_t m) { return (uint64_t)((unsigned __int128)v * seed % m); };
        g1[0] = times(x, M1), g1[1] = times(y, M1), g1[2] = times(x, M1);
        g2[0] = times(y, M2), g2[1] = times(x, M2), g2[2] = times(y, M2);
    }
    uint32_t next() {
        const uint64_t p1 = (1403580 * g1[1] + 810728 * (M1 - g1[0])) % M1;
        const uint64_t p2 = (527612 * g2[2] + 1370589 * (M2 - g2[0])) % M2;
        g1[0] = g1[1], g1[1] = g1[2], g1[2] = p1;
        g2[0] = g2[1], g2[1] = g2[2], g2[2] = p2;
        const uint64_t z = p1 > p2 ? p1 - p2 : p1 + M1 - p2;
        return (uint32_t)((double)(z - 1) * 1.000000048661607);
    }
    static void advance(uint64_t g[3], const Mat3 &jump, uint64_t m) {
        uint64_t r[3];
        for (int i = 0; i < 3; ++i) {
            unsigned __int128 sum = 0;
            for (int k = 0; k < 3; ++k) sum += (unsigned __int128)jump[3 * i + k] * g[k];
            r[i] = (uint64_t)(sum % m);
        }
        for (int i = 0; i < 3; ++i) g[i] = r[i];
    }
    void skip_subsequence() { advance(g1, jump1, M1), advance(g2, jump2, M2); }
};

// Every number of `out` against `start`'s generator: w consecutive numbers per work-item and
// turn, s work-items interleaved (both read off the output), work-item t on subsequence t.
template <typename Generator>
static bool interleaved_matches(const std::vector<uint32_t> &out, Generator start) {
    Generator first = start;
    std::vector<uint32_t> zero(9);
    for (auto &value : zero) value = first.next();
    size_t w = 0;
    while (w < 8 && w < out.size() && out[w] == zero[w]) ++w;
    if (w == 0) return false;
    size_t stride = 0;
    for (size_t i = w; i < out.size() && stride == 0; ++i)
        if (out[i] == zero[w] && i % w == 0) stride = i / w;
    if (stride == 0) return false;
    for (size_t t = 0; t < stride; ++t) {
        Generator state = start;
        for (size_t turn = 0; w * (t + turn * stride) < out.size(); ++turn)
            for (size_t i = 0; i < w && w * (t + turn * stride) + i < out.size(); ++i)
                if (out[w * (t + turn * stride) + i] != state.next()) return false;
        start.skip_subsequence();
    }
    return true;
}

static bool same(const uint32_t *got, const Block &want) {
    return got[0] == want.v[0] && got[1] == want.v[1] && got[2] == want.v[2] && got[3] == want.v[3];
}

static int generate(rocrand_rng_type type, unsigned long long seed, std::vector<uint32_t> &out, void *device) {
    rocrand_generator generator;
    CHECK(rocrand_create_generator(&generator, type));
    CHECK(rocrand_set_seed(generator, seed));
    CHECK(rocrand_generate(generator, (unsigned int *)device, out.size()));
    CHECK(hipMemcpy(out.data(), device, out.size() * 4, hipMemcpyDeviceToHost));
    CHECK(rocrand_destroy_generator(generator));
    return 0;
}

int main(int argc, char **argv) {
    // Philox numbers to generate and check (2^20 unless given; docs/BENCHMARKS.md times 16 M).
    const size_t n = argc > 1 ? (size_t)std::strtoull(argv[1], nullptr, 10) & ~(size_t)3 : 1 << 20;
    if (n < 16) return 2;
    const unsigned long long seed = 0x0000002A000004D2ull;  // both key words in play
    void *device = nullptr;
    CHECK(hipMalloc(&device, n * 4));
    std::vector<uint32_t> out(n);

    auto started = std::chrono::steady_clock::now();
    if (generate(ROCRAND_RNG_PSEUDO_PHILOX4_32_10, seed, out, device)) return 1;
    double philox_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    const uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    const Block second = philox4x32_10(1, 0, 0, 0, k0, k1);
    size_t stride = 0;
    for (size_t block = 1; block < n / 4 && stride == 0; ++block)
        if (same(&out[4 * block], second)) stride = block;
    bool philox_ok = stride > 0;
    for (size_t block = 0; block < n / 4 && philox_ok; ++block)
        philox_ok = same(&out[4 * block], philox4x32_10((uint32_t)(block / stride), 0, (uint32_t)(block % stride), 0, k0, k1));
    std::printf("philox4x32-10 %s\n", philox_ok ? "ok" : "MISMATCH");
    started = std::chrono::steady_clock::now();
    std::vector<uint32_t> host(n);
    for (size_t block = 0; block < n / 4; ++block) {
        Block b = philox4x32_10((uint32_t)(block / stride), 0, (uint32_t)(block % stride), 0, k0, k1);
        for (int i = 0; i < 4; ++i) host[4 * block + i] = b.v[i];
    }
    double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "philox4x32-10: %zu numbers, %.1f ms on the drop-in (first call, setup included), %.1f ms a plain CPU loop; stride %zu blocks\n",
                 n, philox_ms, host_ms, stride);

    const size_t small = n / 4;
    out.resize(small);
    const Matrix xorwow_jump = subsequence_jump();
    for (auto [type, name] : {std::pair{ROCRAND_RNG_PSEUDO_XORWOW, "xorwow"}, std::pair{ROCRAND_RNG_PSEUDO_MRG32K3A, "mrg32k3a"}}) {
        started = std::chrono::steady_clock::now();
        if (generate(type, seed, out, device)) return 1;
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        const bool ok = type == ROCRAND_RNG_PSEUDO_XORWOW
                             ? interleaved_matches(out, XorwowGenerator{xorwow_seeded(seed), &xorwow_jump})
                             : interleaved_matches(out, Mrg32k3aGenerator(seed));
        std::printf("%s %s\n", name, ok ? "ok" : "MISMATCH");
        std::fprintf(stderr, "%s: %zu numbers, %.0f ms on the drop-in (setup included)\n", name, small, ms);
    }
    CHECK(hipFree(device));
    std::printf("done\n");
    return 0;
}
