/* spc_radix.c -- the stable LSD radix sort of 64-bit keys with a payload
 * (an index or a value of 4 or 8 bytes), shared by the conversion's sort
 * of packed level coordinates (assemble/) and the combining of a COO
 * (core/spc_coo_ops.c).  Threads where the keys are many (OpenMP); the
 * result does not depend on their number. */
#include "spc_impl.h"
#include <string.h>

#include "spc_omp.h"

static int rx_bits_of(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* Per-thread digit counts (nt x nb) to scatter offsets: each thread's
 * block after the blocks before it.  True when one digit holds all n. */
bool spc_radix_offsets(int64_t *cnt, int64_t nb, int nt, int64_t n) {
  int64_t sum = 0;
  bool single = false;
  for (int64_t b = 0; b < nb; b++) {
    int64_t tot = 0;
    for (int th = 0; th < nt; th++) {
      int64_t c = cnt[th * nb + b];
      cnt[th * nb + b] = sum + tot;
      tot += c;
    }
    single |= tot == n;
    sum += tot;
  }
  return single;
}

/* The stable scatter of k (and the payload p of pw bytes an element: 0, 4
 * or 8) into k2 (p2) by the digit (k >> sh) & mask, at the offsets
 * digit_offsets made. */
void spc_radix_scatter(const uint64_t *k, const void *p, uint64_t *k2, void *p2, int pw,
                          int64_t n, int sh, uint64_t mask, int64_t *cnt, int64_t nb, int nt) {
#pragma omp parallel num_threads(nt)
  {
    int th = PK_THREAD();
    int64_t b0 = n * th / nt, b1 = n * (th + 1) / nt, *c = cnt + th * nb;
    if (pw == 8) {
      const uint64_t *pi = p;
      uint64_t *po = p2;
      for (int64_t i = b0; i < b1; i++) {
        int64_t d = c[(k[i] >> sh) & mask]++;
        k2[d] = k[i];
        po[d] = pi[i];
      }
    } else if (pw == 4) {
      const uint32_t *pi = p;
      uint32_t *po = p2;
      for (int64_t i = b0; i < b1; i++) {
        int64_t d = c[(k[i] >> sh) & mask]++;
        k2[d] = k[i];
        po[d] = pi[i];
      }
    } else {
      for (int64_t i = b0; i < b1; i++) k2[c[(k[i] >> sh) & mask]++] = k[i];
    }
  }
}

/* One bucket [a, b) of the keys k (payload p) sorted by bits [lo, hi),
 * stable, in cache: LSD passes of at most 8 bits through k2/p2's same
 * range, the result left in k/p; insertion sort below 48 keys. */
static void bucket_lsd(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t a, int64_t b,
                       int lo, int hi) {
  int64_t len = b - a;
  if (len < 2 || hi <= lo) return;
  k += a, k2 += a;
  char *pc = p ? (char *)p + a * pw : NULL, *pc2 = p2 ? (char *)p2 + a * pw : NULL;
  if (len < 48) { /* stable: a key moves past strictly greater ones only */
    for (int64_t i = 1; i < len; i++) {
      uint64_t x = k[i], xs = x >> lo;
      uint64_t pv8 = pw == 8 ? ((uint64_t *)(void *)pc)[i] : 0;
      uint32_t pv4 = pw == 4 ? ((uint32_t *)(void *)pc)[i] : 0;
      int64_t j = i;
      for (; j > 0 && (k[j - 1] >> lo) > xs; j--) {
        k[j] = k[j - 1];
        if (pw == 8) ((uint64_t *)(void *)pc)[j] = ((uint64_t *)(void *)pc)[j - 1];
        else if (pw == 4) ((uint32_t *)(void *)pc)[j] = ((uint32_t *)(void *)pc)[j - 1];
      }
      k[j] = x;
      if (pw == 8) ((uint64_t *)(void *)pc)[j] = pv8;
      else if (pw == 4) ((uint32_t *)(void *)pc)[j] = pv4;
    }
    return;
  }
  int B = hi - lo, npass = (B + 7) / 8, wd = (B + npass - 1) / npass;
  int64_t c[256];
  const uint64_t mask = ((uint64_t)1 << wd) - 1;
  bool in2 = false; /* the keys now in k2 */
  for (int sh = lo; sh < hi; sh += wd) {
    uint64_t *sk = in2 ? k2 : k, *dk = in2 ? k : k2;
    char *sp = in2 ? pc2 : pc, *dp = in2 ? pc : pc2;
    memset(c, 0, sizeof c);
    for (int64_t i = 0; i < len; i++) c[(sk[i] >> sh) & mask]++;
    int64_t sum = 0;
    bool single = false;
    for (int d = 0; d <= (int)mask; d++) {
      int64_t x = c[d];
      single |= x == len;
      c[d] = sum;
      sum += x;
    }
    if (single) continue;
    if (pw == 8) {
      for (int64_t i = 0; i < len; i++) {
        int64_t d = c[(sk[i] >> sh) & mask]++;
        dk[d] = sk[i];
        ((uint64_t *)(void *)dp)[d] = ((uint64_t *)(void *)sp)[i];
      }
    } else if (pw == 4) {
      for (int64_t i = 0; i < len; i++) {
        int64_t d = c[(sk[i] >> sh) & mask]++;
        dk[d] = sk[i];
        ((uint32_t *)(void *)dp)[d] = ((uint32_t *)(void *)sp)[i];
      }
    } else {
      for (int64_t i = 0; i < len; i++) dk[c[(sk[i] >> sh) & mask]++] = sk[i];
    }
    in2 = !in2;
  }
  if (in2) {
    memcpy(k, k2, (size_t)len * sizeof *k);
    if (pw) memcpy(pc, pc2, (size_t)len * (size_t)pw);
  }
}

static int radix_lsd(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t n, int lo,
                     int hi);

/* LSD radix sort of k[0..n) by bits [lo, hi) of the keys (the bits above hi
 * are zero), with the payload p (pw bytes an element), stable; k2 and p2
 * are scratch.  Where the keys are many and wide, one pass by the top
 * digit first (as radix_lsd's passes, over memory), then each of its
 * buckets -- about 2^10 keys, in cache -- by the bits below on the threads
 * (bucket_lsd): the same stable order, one pass over memory instead of
 * two or three more (shuffled 2 M order-3 tensor, 33 bits).  Returns where
 * the result is (0: k/p, 1: k2/p2), -1 when memory ran out. */
int spc_radix_keys(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t n,
                      int lo, int hi) {
  int B = hi - lo, D = rx_bits_of((uint64_t)n >> 10);
  D = D > 12 ? 12 : D;
  if (n < ((int64_t)1 << 18) || B <= 12 || D < 6) return radix_lsd(k, p, k2, p2, pw, n, lo, hi);
  int64_t nb = (int64_t)1 << D;
  uint64_t mask = (uint64_t)nb - 1;
  int nt = PK_NTHREADS(n), sh = hi - D;
  int64_t *cnt = spc_malloc_n((int64_t)nt * nb + nb + 1, sizeof *cnt);
  if (!cnt) return -1;
  int64_t *start = cnt + (int64_t)nt * nb;
#pragma omp parallel num_threads(nt)
  {
    int th = PK_THREAD();
    int64_t b0 = n * th / nt, b1 = n * (th + 1) / nt, *c = cnt + th * nb;
    memset(c, 0, (size_t)nb * sizeof *c);
    for (int64_t i = b0; i < b1; i++) c[(k[i] >> sh) & mask]++;
  }
  if (spc_radix_offsets(cnt, nb, nt, n)) { /* one top digit: the buckets are the whole */
    spc_free(cnt);
    return radix_lsd(k, p, k2, p2, pw, n, lo, sh);
  }
  memcpy(start, cnt, (size_t)nb * sizeof *start); /* thread 0's offsets: each bucket's start */
  start[nb] = n;
  spc_radix_scatter(k, p, k2, p2, pw, n, sh, mask, cnt, nb, nt);
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
  for (int64_t b = 0; b < nb; b++) bucket_lsd(k2, p2, k, p, pw, start[b], start[b + 1], lo, sh);
  spc_free(cnt);
  return 1;
}

/* spc_radix_keys's passes over memory: digits of at most 12 bits, as few
 * passes as that allows; a pass whose digit is the same in every key is
 * skipped.  Each thread counts and scatters its own contiguous block, at
 * offsets after the blocks before it: the result does not depend on the
 * number of threads. */
static int radix_lsd(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t n, int lo,
                     int hi) {
  int B = hi - lo;
  if (B <= 0) return 0;
  int npass = (B + 11) / 12, wd = (B + npass - 1) / npass;
  int64_t nb = (int64_t)1 << wd;
  int nt = PK_NTHREADS(n);
  int64_t *cnt = spc_malloc_n((int64_t)nt * nb, sizeof *cnt);
  if (!cnt) return -1;
  int where = 0;
  uint64_t mask = (uint64_t)nb - 1;
  for (int sh = lo; sh < hi; sh += wd) {
#pragma omp parallel num_threads(nt)
    {
      int th = PK_THREAD();
      int64_t b0 = n * th / nt, b1 = n * (th + 1) / nt, *c = cnt + th * nb;
      memset(c, 0, (size_t)nb * sizeof *c);
      for (int64_t i = b0; i < b1; i++) c[(k[i] >> sh) & mask]++;
    }
    if (spc_radix_offsets(cnt, nb, nt, n)) continue;
    spc_radix_scatter(k, p, k2, p2, pw, n, sh, mask, cnt, nb, nt);
    uint64_t *tk = k;
    k = k2;
    k2 = tk;
    void *tp = p;
    p = p2;
    p2 = tp;
    where ^= 1;
  }
  spc_free(cnt);
  return where;
}

