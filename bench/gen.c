/* gen.c -- deterministic generator of large benchmark inputs.
 *
 *   gen KIND [options] -o FILE
 *
 * Writes Matrix Market (.mtx) or FROSTT (.tns) text.  The output depends only
 * on the arguments (xoshiro256** seeded by splitmix64 from --seed): the same
 * command writes the same bytes on every machine.  See bench/README.md for
 * the kinds and options.
 *
 * Entries are kept as one packed 64-bit key per component (the coordinates,
 * dimension 0 most significant), so the sum over dimensions of ceil(log2(dim))
 * must be at most 64.  Without --shuffle the lines come out sorted by
 * coordinates (row-major for matrices) with no repeated coordinates, except
 * the duplicates asked for by --dups, which follow their original.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ----------------------------------------------------- */

typedef struct { uint64_t s[4]; } rng_t;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void rng_seed(rng_t *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng_t *r) { /* xoshiro256** */
  uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
  s[2] ^= t; s[3] = rotl(s[3], 45);
  return out;
}

/* Uniform in [0, n) (Lemire's multiply-shift; bias below 2^-40 for our n). */
static inline uint64_t rng_below(rng_t *r, uint64_t n) {
  return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* ---- options ------------------------------------------------------------ */

enum field { F_REAL, F_INTEGER, F_PATTERN };

typedef struct opts {
  const char *kind, *out;
  uint64_t seed;
  enum field field;
  int symmetric, shuffle, permute, tns, digits;
  double dups, a, b, c;
  int64_t scale, ef, n, m, nnz, bw, dims[4];
  int order;
} opts;

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "gen: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(run 'gen --help' for usage)\n");
  exit(2);
}

static const char *usage =
    "usage: gen KIND [options] -o FILE        (FILE '-' is standard output)\n"
    "kinds:\n"
    "  rmat      --scale S --ef E [--abc A,B,C] [--no-permute]\n"
    "            R-MAT / Graph500: 2^S x 2^S, E*2^S edges drawn, duplicates\n"
    "            removed; a,b,c default 0.57,0.19,0.19; labels scrambled\n"
    "  stencil7  --n N     7-point stencil on an N^3 grid (N^3 x N^3)\n"
    "  stencil27 --n N     27-point stencil on an N^3 grid\n"
    "  banded    --n N --bw W   N x N, |i-j| <= W\n"
    "  uniform   --m M --n N --nnz K   K distinct uniform random entries\n"
    "  tensor3   --dims I,J,K --nnz K       order-3 uniform random (.tns)\n"
    "  tensor4   --dims I,J,K,L --nnz K     order-4 uniform random (.tns)\n"
    "options:\n"
    "  -o FILE             output; .tns writes FROSTT, else Matrix Market\n"
    "  --tns | --mtx       force the container\n"
    "  --field F           real (default) | integer | pattern\n"
    "  --digits D          significant digits of real values (1..17, def 17)\n"
    "  --symmetric         keep the lower triangle, header 'symmetric'\n"
    "  --shuffle           write the lines in random order\n"
    "  --dups F            add F*nnz entries repeating existing coordinates\n"
    "  --seed S            random seed (default 1)\n";

static int64_t parse_i64(const char *s, const char *name) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 0) die("bad value for %s", name);
  return v;
}

static double parse_dbl(const char *s, const char *name) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end) die("bad value for %s", name);
  return v;
}

static int parse_list(const char *s, int64_t *v, int max) {
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    if (n == max) die("too many values in '%s'", s);
    v[n++] = parse_i64(t, "--dims");
  }
  return n;
}

static void parse_args(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1; o->permute = 1; o->digits = 17;
  o->a = 0.57; o->b = 0.19; o->c = 0.19;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    exit(argc < 2 ? 2 : 0);
  }
  o->kind = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL() (v ? (i++, v) : (die("%s needs a value", k), v))
    if (!strcmp(k, "-o")) o->out = VAL();
    else if (!strcmp(k, "--seed")) o->seed = (uint64_t)parse_i64(VAL(), k);
    else if (!strcmp(k, "--scale")) o->scale = parse_i64(VAL(), k);
    else if (!strcmp(k, "--ef")) o->ef = parse_i64(VAL(), k);
    else if (!strcmp(k, "--n")) o->n = parse_i64(VAL(), k);
    else if (!strcmp(k, "--m")) o->m = parse_i64(VAL(), k);
    else if (!strcmp(k, "--nnz")) o->nnz = parse_i64(VAL(), k);
    else if (!strcmp(k, "--bw")) o->bw = parse_i64(VAL(), k);
    else if (!strcmp(k, "--digits")) o->digits = (int)parse_i64(VAL(), k);
    else if (!strcmp(k, "--dups")) o->dups = parse_dbl(VAL(), k);
    else if (!strcmp(k, "--dims")) o->order = parse_list(VAL(), o->dims, 4);
    else if (!strcmp(k, "--abc")) {
      const char *s = VAL();
      if (sscanf(s, "%lf,%lf,%lf", &o->a, &o->b, &o->c) != 3 ||
          o->a < 0 || o->b < 0 || o->c < 0 || o->a + o->b + o->c > 1)
        die("bad --abc '%s' (three probabilities, sum <= 1)", s);
    } else if (!strcmp(k, "--field")) {
      const char *s = VAL();
      if (!strcmp(s, "real")) o->field = F_REAL;
      else if (!strcmp(s, "integer")) o->field = F_INTEGER;
      else if (!strcmp(s, "pattern")) o->field = F_PATTERN;
      else die("unknown field '%s' (real, integer, pattern)", s);
    } else if (!strcmp(k, "--symmetric")) o->symmetric = 1;
    else if (!strcmp(k, "--shuffle")) o->shuffle = 1;
    else if (!strcmp(k, "--no-permute")) o->permute = 0;
    else if (!strcmp(k, "--tns")) o->tns = 1;
    else if (!strcmp(k, "--mtx")) o->tns = -1;
    else die("unknown option '%s'", k);
#undef VAL
  }
  if (!o->out) die("%s", "no output file (-o FILE)");
  if (o->digits < 1 || o->digits > 17) die("%s", "--digits must be 1..17");
  if (o->dups < 0 || o->dups > 100) die("%s", "--dups must be in [0, 100]");
  if (o->tns == 0) {
    size_t n = strlen(o->out);
    o->tns = n >= 4 && !strcmp(o->out + n - 4, ".tns") ? 1 : -1;
  }
}

/* ---- the entry list: packed keys ---------------------------------------- */

typedef struct keys {
  uint64_t *k;
  size_t n, cap;
  int order, shift[4]; /* coordinate d = (key >> shift[d]) & mask[d] */
  uint64_t mask[4];
  int64_t dims[4];
  int bits;
} keys;

static int bits_for(int64_t n) { /* ceil(log2(n)), at least 1 */
  int b = 1;
  while (b < 63 && ((int64_t)1 << b) < n) b++;
  return b;
}

static void keys_init(keys *K, int order, const int64_t *dims, size_t cap) {
  memset(K, 0, sizeof *K);
  K->order = order;
  int total = 0;
  for (int d = order - 1; d >= 0; d--) {
    if (dims[d] <= 0) die("%s", "every dimension must be positive");
    K->dims[d] = dims[d];
    int b = bits_for(dims[d]);
    K->shift[d] = total;
    K->mask[d] = b == 64 ? ~0ULL : ((1ULL << b) - 1);
    total += b;
  }
  if (total > 64)
    die("%s", "dimensions too large: sum of log2(dim) must be <= 64");
  K->bits = total;
  K->cap = cap ? cap : 1024;
  K->k = malloc(K->cap * sizeof *K->k);
  if (!K->k) die("%s", "out of memory");
}

static void keys_push(keys *K, uint64_t key) {
  if (K->n == K->cap) {
    K->cap *= 2;
    uint64_t *k = realloc(K->k, K->cap * sizeof *k);
    if (!k) die("%s", "out of memory");
    K->k = k;
  }
  K->k[K->n++] = key;
}

static inline uint64_t key2(const keys *K, uint64_t i, uint64_t j) {
  return (i << K->shift[0]) | (j << K->shift[1]);
}

/* LSD radix sort on the used bits, 11 bits a pass. */
static void keys_sort(keys *K) {
  uint64_t *a = K->k, *tmp = malloc((K->n ? K->n : 1) * sizeof *tmp);
  if (!tmp) die("%s", "out of memory");
  for (int sh = 0; sh < K->bits; sh += 11) {
    size_t cnt[2049] = {0};
    for (size_t i = 0; i < K->n; i++) cnt[((a[i] >> sh) & 2047) + 1]++;
    for (int b = 0; b < 2048; b++) cnt[b + 1] += cnt[b];
    for (size_t i = 0; i < K->n; i++) tmp[cnt[(a[i] >> sh) & 2047]++] = a[i];
    uint64_t *t = a; a = tmp; tmp = t;
  }
  K->k = a;
  free(tmp);
}

static void keys_unique(keys *K) {
  size_t w = 0;
  for (size_t i = 0; i < K->n; i++)
    if (w == 0 || K->k[i] != K->k[w - 1]) K->k[w++] = K->k[i];
  K->n = w;
}

/* Lower triangle: (i, j) with i < j becomes (j, i). */
static void keys_lower(keys *K) {
  for (size_t i = 0; i < K->n; i++) {
    uint64_t r = (K->k[i] >> K->shift[0]) & K->mask[0];
    uint64_t c = (K->k[i] >> K->shift[1]) & K->mask[1];
    if (r < c) K->k[i] = key2(K, c, r);
  }
}

/* ---- the generators ----------------------------------------------------- */

/* A bijection on [0, 2^bits): odd multiplies and xor-shifts, both invertible
 * modulo 2^bits.  Scrambles R-MAT labels like Graph500's permutation. */
static uint64_t scramble(uint64_t x, int bits, uint64_t seed) {
  uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
  uint64_t m1 = (seed * 0x9e3779b97f4a7c15ULL) | 1, m2 = 0xbf58476d1ce4e5b9ULL;
  for (int r = 0; r < 2; r++) {
    x = (x * m1) & mask;
    x ^= x >> (bits / 2 + 1);
    x = (x * m2) & mask;
    x ^= x >> (bits / 3 + 1);
  }
  return x;
}

static void gen_rmat(const opts *o, keys *K, rng_t *r) {
  if (o->scale < 1 || o->scale > 31 || o->ef < 1)
    die("%s", "rmat needs --scale 1..31 and --ef >= 1");
  int64_t n = (int64_t)1 << o->scale, dims[2] = {n, n};
  keys_init(K, 2, dims, (size_t)(o->ef * n));
  /* quadrant thresholds in 1/65536: a | b | c | d */
  uint32_t ta = (uint32_t)(o->a * 65536), tb = (uint32_t)((o->a + o->b) * 65536),
           tc = (uint32_t)((o->a + o->b + o->c) * 65536);
  for (int64_t e = 0; e < o->ef * n; e++) {
    uint64_t i = 0, j = 0, bits = 0;
    int left = 0;
    for (int l = 0; l < o->scale; l++) {
      if (left == 0) { bits = rng_next(r); left = 4; }
      uint32_t q = (uint32_t)(bits & 0xffff);
      bits >>= 16; left--;
      uint64_t ib = q >= tb, jb = (q >= ta && q < tb) || q >= tc;
      i = (i << 1) | ib;
      j = (j << 1) | jb;
    }
    if (o->permute) {
      i = scramble(i, (int)o->scale, o->seed);
      j = scramble(j, (int)o->scale, o->seed);
    }
    keys_push(K, key2(K, i, j));
  }
}

static void gen_stencil(const opts *o, keys *K, int points) {
  int64_t n = o->n, N = n * n * n, dims[2] = {N, N};
  if (n < 1) die("%s", "stencil needs --n >= 1");
  keys_init(K, 2, dims, (size_t)(N * points));
  for (int64_t z = 0; z < n; z++)
    for (int64_t y = 0; y < n; y++)
      for (int64_t x = 0; x < n; x++) {
        int64_t row = (z * n + y) * n + x;
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              int far = (dz != 0) + (dy != 0) + (dx != 0);
              if (points == 7 && far > 1) continue;
              int64_t zz = z + dz, yy = y + dy, xx = x + dx;
              if (zz < 0 || zz >= n || yy < 0 || yy >= n || xx < 0 || xx >= n)
                continue;
              int64_t col = (zz * n + yy) * n + xx;
              if (o->symmetric && col > row) continue;
              keys_push(K, key2(K, (uint64_t)row, (uint64_t)col));
            }
      }
}

static void gen_banded(const opts *o, keys *K) {
  int64_t n = o->n, w = o->bw, dims[2] = {n, n};
  if (n < 1) die("%s", "banded needs --n >= 1");
  keys_init(K, 2, dims, (size_t)(n * (2 * w + 1)));
  for (int64_t i = 0; i < n; i++) {
    int64_t lo = i - w < 0 ? 0 : i - w, hi = i + w >= n ? n - 1 : i + w;
    if (o->symmetric) hi = i;
    for (int64_t j = lo; j <= hi; j++) keys_push(K, key2(K, (uint64_t)i, (uint64_t)j));
  }
}

/* nnz distinct uniform points: draw, sort, dedupe, draw the deficit again. */
static void gen_uniform(const opts *o, keys *K, rng_t *r, int order,
                        const int64_t *dims) {
  double space = 1;
  for (int d = 0; d < order; d++) space *= (double)dims[d];
  if (o->symmetric) space = (space + dims[0]) / 2;
  if ((double)o->nnz > space) die("%s", "--nnz is larger than the index space");
  keys_init(K, order, dims, (size_t)o->nnz);
  while (K->n < (size_t)o->nnz) {
    for (size_t want = (size_t)o->nnz - K->n; want; want--) {
      uint64_t key = 0;
      for (int d = 0; d < order; d++)
        key |= rng_below(r, (uint64_t)dims[d]) << K->shift[d];
      keys_push(K, key);
    }
    if (o->symmetric) keys_lower(K);
    keys_sort(K);
    keys_unique(K);
  }
}

/* Append round(f*n) copies of random existing keys. */
static void add_dups(keys *K, double f, rng_t *r) {
  size_t n = K->n, d = (size_t)(f * (double)n + 0.5);
  for (size_t i = 0; i < d && n; i++) keys_push(K, K->k[rng_below(r, n)]);
}

static void shuffle(keys *K, rng_t *r) {
  for (size_t i = K->n; i > 1; i--) {
    size_t j = (size_t)rng_below(r, i);
    uint64_t t = K->k[i - 1]; K->k[i - 1] = K->k[j]; K->k[j] = t;
  }
}

/* ---- writing ------------------------------------------------------------ */

typedef struct out { FILE *f; char *buf; size_t n, cap; } out;

static void out_flush(out *w) {
  if (w->n && fwrite(w->buf, 1, w->n, w->f) != w->n) die("%s", "write failed");
  w->n = 0;
}

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

/* Decimal digits of v at p; returns the length (no terminator). */
static int put_u64(char *p, uint64_t v) {
  char t[24];
  int n = 24;
  while (v >= 100) {
    unsigned d = (unsigned)(v % 100) * 2;
    v /= 100;
    t[--n] = digit_pairs[d + 1]; t[--n] = digit_pairs[d];
  }
  if (v >= 10) { t[--n] = digit_pairs[v * 2 + 1]; t[--n] = digit_pairs[v * 2]; }
  else t[--n] = (char)('0' + v);
  memcpy(p, t + n, (size_t)(24 - n));
  return 24 - n;
}

static const uint64_t pow10[18] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL,
    100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
    10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL};

/* A random real with D significant digits and decimal exponent in [-7, 4],
 * written the way printf("%.Dg") writes a double: fixed notation for
 * exponents -4..D-1, else d.ddde-XX; trailing zeros dropped. */
static int put_real(char *p, rng_t *r, int D) {
  uint64_t x = rng_next(r);
  int neg = (int)(x & 1), e = (int)((x >> 1) % 12) - 7, n = 0;
  uint64_t m = pow10[D - 1] + rng_below(r, pow10[D] - pow10[D - 1]);
  char s[24];
  int L = put_u64(s, m);
  while (L > 1 && s[L - 1] == '0') L--;
  if (neg) p[n++] = '-';
  if (e < -4 || e >= D) {
    p[n++] = s[0];
    if (L > 1) { p[n++] = '.'; memcpy(p + n, s + 1, (size_t)L - 1); n += L - 1; }
    p[n++] = 'e'; p[n++] = e < 0 ? '-' : '+';
    p[n++] = '0'; p[n++] = (char)('0' + (e < 0 ? -e : e));
  } else if (e < 0) {
    p[n++] = '0'; p[n++] = '.';
    for (int z = 0; z < -e - 1; z++) p[n++] = '0';
    memcpy(p + n, s, (size_t)L); n += L;
  } else {
    int ip = e + 1; /* digits before the point */
    for (int k = 0; k < ip; k++) p[n++] = k < L ? s[k] : '0';
    if (L > ip) { p[n++] = '.'; memcpy(p + n, s + ip, (size_t)(L - ip)); n += L - ip; }
  }
  return n;
}

/* A random integer with 1..9 digits, either sign. */
static int put_int(char *p, rng_t *r) {
  uint64_t x = rng_next(r);
  int nd = 1 + (int)((x >> 1) % 9), n = 0;
  if (x & 1) p[n++] = '-';
  uint64_t lo = nd == 1 ? 1 : pow10[nd - 1];
  return n + put_u64(p + n, lo + rng_below(r, pow10[nd] - lo));
}

static void write_all(const opts *o, const keys *K, rng_t *r, int argc,
                      char **argv) {
  out w = {.cap = 1 << 24};
  w.f = strcmp(o->out, "-") ? fopen(o->out, "wb") : stdout;
  if (!w.f) die("cannot open '%s' for writing", o->out);
  w.buf = malloc(w.cap);
  if (!w.buf) die("%s", "out of memory");
  static const char *fields[] = {"real", "integer", "pattern"};
  if (o->tns > 0) {
    w.n += (size_t)sprintf(w.buf + w.n, "# spconv bench/gen:");
  } else {
    w.n += (size_t)sprintf(w.buf, "%%%%MatrixMarket matrix coordinate %s %s\n%% spconv bench/gen:",
                           fields[o->field], o->symmetric ? "symmetric" : "general");
  }
  for (int i = 1; i < argc && w.n < 3000; i++) { /* the arguments, less -o */
    if (!strcmp(argv[i], "-o")) { i++; continue; }
    w.n += (size_t)snprintf(w.buf + w.n, 200, " %.180s", argv[i]);
  }
  w.buf[w.n++] = '\n';
  if (o->tns < 0)
    w.n += (size_t)sprintf(w.buf + w.n, "%" PRId64 " %" PRId64 " %zu\n",
                           K->dims[0], K->dims[1], K->n);
  for (size_t i = 0; i < K->n; i++) {
    if (w.n + 256 > w.cap) out_flush(&w);
    char *p = w.buf + w.n;
    int n = 0;
    for (int d = 0; d < K->order; d++) {
      n += put_u64(p + n, ((K->k[i] >> K->shift[d]) & K->mask[d]) + 1);
      p[n++] = ' ';
    }
    if (o->field == F_REAL) n += put_real(p + n, r, o->digits);
    else if (o->field == F_INTEGER) n += put_int(p + n, r);
    else n--; /* pattern: drop the trailing space */
    p[n++] = '\n';
    w.n += (size_t)n;
  }
  out_flush(&w);
  if (w.f != stdout ? fclose(w.f) != 0 : fflush(w.f) != 0)
    die("write to '%s' failed", o->out);
  free(w.buf);
}

int main(int argc, char **argv) {
  opts o;
  keys K;
  rng_t rs, rv; /* structure stream, value stream */
  parse_args(argc, argv, &o);
  rng_seed(&rs, o.seed, 1);
  rng_seed(&rv, o.seed, 2);
  const char *k = o.kind;
  int matrix = 1;
  if (!strcmp(k, "rmat")) gen_rmat(&o, &K, &rs);
  else if (!strcmp(k, "stencil7")) gen_stencil(&o, &K, 7);
  else if (!strcmp(k, "stencil27")) gen_stencil(&o, &K, 27);
  else if (!strcmp(k, "banded")) gen_banded(&o, &K);
  else if (!strcmp(k, "uniform")) {
    int64_t dims[2] = {o.m ? o.m : o.n, o.n};
    if (dims[0] < 1 || dims[1] < 1) die("%s", "uniform needs --m and --n");
    if (o.symmetric && dims[0] != dims[1]) die("%s", "--symmetric needs m == n");
    gen_uniform(&o, &K, &rs, 2, dims);
  } else if (!strcmp(k, "tensor3") || !strcmp(k, "tensor4")) {
    int want = k[6] - '0';
    if (o.order != want) die("%s needs --dims with that many values", k);
    if (o.symmetric) die("%s", "--symmetric is for matrices");
    gen_uniform(&o, &K, &rs, want, o.dims);
    matrix = 0;
  } else die("unknown kind '%s'", k);
  if (!matrix && o.tns < 0) die("%s", "Matrix Market holds matrices: write a .tns (or --tns)");
  if (o.tns > 0 && o.field == F_PATTERN) die("%s", "FROSTT needs values: no --field pattern with .tns");
  if (matrix && o.symmetric && K.dims[0] != K.dims[1]) die("%s", "--symmetric needs a square matrix");
  if (!strcmp(k, "rmat")) {
    if (o.symmetric) keys_lower(&K);
    keys_sort(&K);
    keys_unique(&K);
  }
  if (o.dups > 0) {
    add_dups(&K, o.dups, &rs);
    if (!o.shuffle) keys_sort(&K);
  }
  if (o.shuffle) shuffle(&K, &rs);
  write_all(&o, &K, &rv, argc, argv);
  free(K.k);
  return 0;
}
