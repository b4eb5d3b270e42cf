/* prop_rng.h - the draws of the dispatch property programs (tests/cli/074 and 123): a 64-bit
 * linear congruential generator seeded with the including program's PROP_SEED, rnd(n) uniform in
 * [0, n), and logu(lo, hi) roughly log-uniform in [lo, hi]. */
#ifndef PROP_RNG_H
#define PROP_RNG_H
static unsigned long long st = PROP_SEED;
static unsigned rnd(unsigned n) { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(st >> 33) % n; }
static int logu(int lo, int hi) { int v = lo << rnd(20); return v > hi ? lo + (int)rnd((unsigned)(hi - lo + 1)) : v + (int)rnd((unsigned)v); }
#endif
