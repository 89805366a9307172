/* test_num.c -- suite_num: io/spc_num.c, the locale-free number parser and
 * shortest round-trip formatter, against the C library (glibc's strtod /
 * strtof / strtoll / strtoull are correctly rounded).  Ported from helper
 * "num"'s tests/test_num_standalone.c with sweeps sized for `make test`
 * (about 200k random cases each; a quarter of that under ASan).
 *
 * Every parse of ours reads an exact-size heap copy of its token without a
 * NUL, so the sanitizer catches any read past `end`. */
#include "spc_num.h"
#include "suites.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__SANITIZE_ADDRESS__)
#define SWEEP 50000L
#else
#define SWEEP 200000L
#endif

/* ---- bookkeeping --------------------------------------------------------- */

static long long n_pass, n_fail;
static char first_fail[2048]; /* the first few failure messages */

/* Count a result; failures are kept for the final assertion of the test
 * (Check records every passing ck_assert, too slow for these sweeps). */
static void check(int ok, const char *fmt, ...) {
  if (ok) {
    n_pass++;
    return;
  }
  if (n_fail++ < 5) {
    size_t k = strlen(first_fail);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(first_fail + k, sizeof first_fail - k, fmt, ap);
    va_end(ap);
    k = strlen(first_fail);
    if (k + 2 < sizeof first_fail) strcpy(first_fail + k, "\n");
  }
}

static void assert_no_failures(const char *what) {
  ck_assert_msg(n_fail == 0, "%s: %lld of %lld checks failed:\n%s", what, n_fail,
                n_pass + n_fail, first_fail);
  ck_assert_int_gt(n_pass, 0);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
static int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

static uint64_t dbits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}
static double dfrom(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}
static uint32_t fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static float ffrom(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static int same_d(double a, double b) {
  return (isnan(a) && isnan(b)) || dbits(a) == dbits(b);
}
static int same_f(float a, float b) {
  return (isnan(a) && isnan(b)) || fbits(a) == fbits(b);
}

/* Our parsers on an exact-size copy (no NUL): returns consumed length or -1. */
static long our_f64(const char *s, double *out) {
  size_t n = strlen(s);
  char *c = malloc(n ? n : 1);
  memcpy(c, s, n);
  const char *e = spc_parse_f64(c, c + n, out);
  long r = e ? (long)(e - c) : -1;
  free(c);
  return r;
}
static long our_f32(const char *s, float *out) {
  size_t n = strlen(s);
  char *c = malloc(n ? n : 1);
  memcpy(c, s, n);
  const char *e = spc_parse_f32(c, c + n, out);
  long r = e ? (long)(e - c) : -1;
  free(c);
  return r;
}
/* The C library, in the same terms (-1: nothing parsed). */
static long ref_f64(const char *s, double *out) {
  char *e;
  *out = strtod(s, &e);
  return e == s ? -1 : (long)(e - s);
}
static long ref_f32(const char *s, float *out) {
  char *e;
  *out = strtof(s, &e);
  return e == s ? -1 : (long)(e - s);
}

/* Parse s with ours and the reference (double and float); compare the
 * consumed length and the value bits. */
static void cmp_parse(const char *s) {
  double a = 0, b = 0;
  float fa = 0, fb = 0;
  long la = our_f64(s, &a), lb = ref_f64(s, &b);
  check(la == lb && (la < 0 || same_d(a, b)),
        "parse_f64 \"%.80s\": ours len %ld %.17g, strtod len %ld %.17g", s, la,
        a, lb, b);
  la = our_f32(s, &fa);
  lb = ref_f32(s, &fb);
  check(la == lb && (la < 0 || same_f(fa, fb)),
        "parse_f32 \"%.80s\": ours len %ld %.9g, strtof len %ld %.9g", s, la,
        (double)fa, lb, (double)fb);
}

/* ---- formatting ---------------------------------------------------------- */

/* Significant digits of a decimal string (first to last nonzero digit of
 * the mantissa), normalised: digits into d, decimal exponent of the first
 * digit into *x.  Returns the digit count (0 for zero). */
static int sig_digits(const char *s, char *d, int *x) {
  int n = 0, before_dot = 0, seen_dot = 0, lead_frac_zeros = 0;
  for (; *s && *s != 'e' && *s != 'E'; s++) {
    if (*s == '.') {
      seen_dot = 1;
    } else if (*s >= '0' && *s <= '9') {
      if (n == 0 && *s == '0') {
        if (seen_dot) lead_frac_zeros++;
        continue;
      }
      d[n++] = *s;
      if (!seen_dot) before_dot++;
    }
  }
  while (n > 0 && d[n - 1] == '0') n--;
  d[n] = 0;
  int e = *s ? atoi(s + 1) : 0;
  *x = e + (before_dot ? before_dot - 1 : -lead_frac_zeros - 1);
  return n;
}

/* Layout contract of spc_num.h for a finite nonzero formatted value. */
static int layout_ok(const char *s) {
  char d[40];
  int x, n = sig_digits(s, d, &x);
  int sci = strchr(s, 'e') != NULL;
  if (n == 0) return strcmp(s, "0") == 0 || strcmp(s, "-0") == 0;
  if (sci != (x < -5 || x > 16)) return 0;
  if (sci) {
    const char *e = strchr(s, 'e');
    return (e[1] == '+' || e[1] == '-') && strlen(e + 2) >= 2;
  }
  return 1;
}

/* Round-trip v; when shortest_check, also compare with the shortest
 * %.{P}g that round-trips. */
static void check_format_f64(double v, int shortest_check) {
  char buf[SPC_NUM_BUFSIZE + 8];
  memset(buf, 'X', sizeof buf);
  int n = spc_format_f64(v, buf);
  check(n >= 0 && n < SPC_NUM_BUFSIZE && buf[n] == 0 && (int)strlen(buf) == n,
        "format_f64 %a: bad length %d", v, n);
  double r = strtod(buf, NULL), o = 0;
  check(same_d(r, v), "format_f64 %a -> \"%s\" -> strtod %a", v, buf, r);
  check(our_f64(buf, &o) == n && same_d(o, v),
        "format_f64 %a -> \"%s\" -> spc_parse_f64 %a", v, buf, o);
  if (!isfinite(v) || v == 0) return;
  check(layout_ok(buf), "format_f64 %a: layout \"%s\"", v, buf);
  if (!shortest_check) return;
  char ref[64], dm[40], dr[40];
  int p;
  for (p = 1; p <= 17; p++) {
    snprintf(ref, sizeof ref, "%.*g", p, v);
    if (strtod(ref, NULL) == v) break;
  }
  int xm, xr, nm = sig_digits(buf, dm, &xm), nr = sig_digits(ref, dr, &xr);
  check(nm <= nr, "format_f64 %a: \"%s\" longer than \"%s\"", v, buf, ref);
  /* Same digit count: both are the nearest shortest decimal. */
  check(nm < nr || (xm == xr && strcmp(dm, dr) == 0),
        "format_f64 %a: \"%s\" not nearest, %%g gives \"%s\"", v, buf, ref);
}

static void check_format_f32(float v, int shortest_check) {
  char buf[SPC_NUM_BUFSIZE + 8];
  int n = spc_format_f32(v, buf);
  check(n >= 0 && n < SPC_NUM_BUFSIZE && (int)strlen(buf) == n,
        "format_f32 %a: bad length %d", (double)v, n);
  float r = strtof(buf, NULL), o = 0;
  check(same_f(r, v), "format_f32 %a -> \"%s\" -> strtof %a", (double)v, buf,
        (double)r);
  check(our_f32(buf, &o) == n && same_f(o, v),
        "format_f32 %a -> \"%s\" -> spc_parse_f32 %a", (double)v, buf,
        (double)o);
  if (!isfinite(v) || v == 0) return;
  check(layout_ok(buf), "format_f32 %a: layout \"%s\"", (double)v, buf);
  if (!shortest_check) return;
  char ref[64], dm[40], dr[40];
  int p;
  for (p = 1; p <= 9; p++) {
    snprintf(ref, sizeof ref, "%.*g", p, (double)v);
    if (strtof(ref, NULL) == v) break;
  }
  int xm, xr, nm = sig_digits(buf, dm, &xm), nr = sig_digits(ref, dr, &xr);
  check(nm <= nr, "format_f32 %a: \"%s\" longer than \"%s\"", (double)v, buf,
        ref);
  check(nm < nr || (xm == xr && strcmp(dm, dr) == 0),
        "format_f32 %a: \"%s\" not nearest, %%g gives \"%s\"", (double)v, buf,
        ref);
}

static void sweep_format_fixed(void) {
  static const struct {
    double v;
    const char *s;
  } d[] = {{0.0, "0"},
           {1.0, "1"},
           {0.1, "0.1"},
           {-2.5, "-2.5"},
           {123.456, "123.456"},
           {100.0, "100"},
           {1e-5, "0.00001"},
           {1.5e-6, "1.5e-06"},
           {1e16, "10000000000000000"},
           {1e17, "1e+17"},
           {1e300, "1e+300"},
           {1e-300, "1e-300"},
           {5e-324, "5e-324"},
           {DBL_MAX, "1.7976931348623157e+308"},
           {DBL_MIN, "2.2250738585072014e-308"},
           {9007199254740992.0, "9007199254740992"},
           {0.3, "0.3"},
           {2.0 / 3.0, "0.6666666666666666"},
           {1.0 / 3.0, "0.3333333333333333"},
           {5e-5, "0.00005"},
           {123456789012345680.0, "1.2345678901234568e+17"}};
  static const struct {
    float v;
    const char *s;
  } f[] = {{0.1f, "0.1"},           {16777216.0f, "16777216"},
           {FLT_MAX, "3.4028235e+38"}, {FLT_MIN, "1.1754944e-38"},
           {1e-45f, "1e-45"},       {1.0f / 3.0f, "0.33333334"},
           {-7.0f, "-7"},           {3.14159265f, "3.1415927"}};
  char buf[SPC_NUM_BUFSIZE];
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
    spc_format_f64(d[i].v, buf);
    check(strcmp(buf, d[i].s) == 0, "format_f64 %a: \"%s\", want \"%s\"",
          d[i].v, buf, d[i].s);
  }
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    spc_format_f32(f[i].v, buf);
    check(strcmp(buf, f[i].s) == 0, "format_f32 %a: \"%s\", want \"%s\"",
          (double)f[i].v, buf, f[i].s);
  }
  spc_format_f64(-0.0, buf);
  check(strcmp(buf, "-0") == 0, "format -0: \"%s\"", buf);
  spc_format_f64(HUGE_VAL, buf);
  check(strcmp(buf, "inf") == 0, "format inf: \"%s\"", buf);
  spc_format_f64(-HUGE_VAL, buf);
  check(strcmp(buf, "-inf") == 0, "format -inf: \"%s\"", buf);
  spc_format_f64(dfrom(0xFFF8000000000001u), buf);
  check(strcmp(buf, "nan") == 0, "format nan: \"%s\"", buf);
  spc_format_f32(-HUGE_VALF, buf);
  check(strcmp(buf, "-inf") == 0, "format_f32 -inf: \"%s\"", buf);
  spc_format_f32(ffrom(0x7FC00000u), buf);
  check(strcmp(buf, "nan") == 0, "format_f32 nan: \"%s\"", buf);
}

static void sweep_format_random(long n, long n_short) {
  /* Powers of two, their neighbours, every exponent. */
  for (int e = 0; e < 2047; e++)
    for (int j = -2; j <= 2; j++) {
      uint64_t b = ((uint64_t)e << 52) + (uint64_t)(j < 0 ? 0 : j);
      if (j < 0 && e > 0) b = ((uint64_t)e << 52) - (uint64_t)(-j);
      check_format_f64(dfrom(b), 1);
    }
  for (int e = 0; e < 255; e++)
    for (int j = -2; j <= 2; j++) {
      uint32_t b = ((uint32_t)e << 23) + (uint32_t)(j < 0 ? 0 : j);
      if (j < 0 && e > 0) b = ((uint32_t)e << 23) - (uint32_t)(-j);
      check_format_f32(ffrom(b), 1);
    }
  for (long i = 0; i < n; i++) {
    uint64_t b = rnd();
    if (i % 8 == 1) b &= 0x800FFFFFFFFFFFFFu; /* subnormal */
    if (i % 8 == 2) b = (b & 0x800FFFFFFFFFFFFFu) | (uint64_t)rndn(2047) << 52;
    check_format_f64(dfrom(b), i < n_short);
    uint32_t fb = (uint32_t)(b >> 32);
    if (i % 8 == 1) fb &= 0x807FFFFFu;
    check_format_f32(ffrom(fb), i < n_short);
    /* integers (exact, common in data) */
    if (i % 4 == 0) check_format_f64((double)(int64_t)(rnd() >> rndn(64)), 0);
  }
}

/* ---- parsing ------------------------------------------------------------- */

static void sweep_parse_fixed(void) {
  static const char *cases[] = {
      "0", "-0", "+0", "0.0", "-0.0e10", "1", "-1", "+1", "1.", ".5", "-.5",
      "5.e3", "1e", "1e+", "1e-", "1E5", "1e+5", "1e-5", "1.5e", ".", "-.",
      "+.", "-", "+", "", "e5", ".e5", "abc", "1x", "00000001.5000",
      "inf", "-inf", "+INF", "Infinity", "-infinity", "infinit", "infx", "in",
      "nan", "NaN", "-nan", "nan(123abc_)", "nan(", "nan()", "nan(a b)",
      "nanx", "na", "1e400", "-1e400", "1e-400", "1e999999999999999999999",
      "1e-999999999999999999999", "0e999999999", "0.000e-99999999",
      "2.2250738585072011e-308", "2.2250738585072012e-308",
      "2.2250738585072014e-308", "4.9406564584124654e-324",
      "2.4703282292062327e-324", "2.4703282292062328e-324",
      "1.7976931348623157e308", "1.7976931348623158e308",
      "1.7976931348623159e308", "1.797693134862315807e308",
      "1.7976931348623158079e308", "9007199254740993", "9007199254740993.1",
      "9007199254740995", "9007199254740992.99999999999999999999",
      "1.00000000000000011102230246251565404236316680908203125",
      "1.00000000000000011102230246251565404236316680908203126",
      "1.00000000000000011102230246251565404236316680908203124",
      "123456789012345678901234567890", "0.1", "0.2", "0.3", "3.4028235e38",
      "3.4028236e38", "3.40282357e38", "1.4e-45", "7e-46", "7.1e-46",
      "1.17549435e-38", "16777217", "16777217.000000001", "33554434.9",
      "1e22", "1e23", "123e30", "9007199254740992e22", "4.35679e-10",
      "7.038531e-26", "1e-47", "1e39", "3.4028234663852886e38",
      "18446744073709551615", "18446744073709551616",
      "9999999999999999999", "10000000000000000000", "99999999999999999999",
      "0.9999999999999999999999999999", "1.2345678901234567890123e-300",
      "-5.4e-79", "12.5e-1x", "1_000", "1..2", "1.2.3", "--1", "+-1",
      "0000000000000000000000000000000000000012", "1e0000000000000000000001"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cmp_parse(cases[i]);
  /* Hexadecimal is outside the grammar: "0x10" reads as 0, stopping at x. */
  double hv = 1;
  float hf = 1;
  check(our_f64("0x10", &hv) == 1 && dbits(hv) == 0, "parse_f64 \"0x10\"");
  check(our_f32("-0x1p3", &hf) == 2 && fbits(hf) == 0x80000000u,
        "parse_f32 \"-0x1p3\"");

  /* "0.000...0001" with 400 zeros; long digit strings; 800+ digits. */
  char big[4096];
  strcpy(big, "0.");
  memset(big + 2, '0', 400);
  strcpy(big + 402, "1");
  cmp_parse(big);
  strcpy(big + 402, "1e400");
  cmp_parse(big);
  for (int len = 20; len <= 3000; len += len < 900 ? 97 : 731) {
    for (int t = 0; t < 6; t++) {
      int k = 0;
      if (t & 1) big[k++] = '-';
      big[k++] = (char)('1' + rndn(9));
      for (int j = 1; j < len; j++)
        big[k++] = t >= 4 && j > 17 ? '0' : (char)('0' + rndn(10));
      if (t >= 2) big[k - len / 2] = '.';
      k += sprintf(big + k, "e%d", rndn(700) - 350 - (t >= 2 ? 0 : len));
      big[k] = 0;
      cmp_parse(big);
    }
  }
  /* 1e-1 with 5000 trailing zeros and a final 1 */
  strcpy(big, "1.");
  memset(big + 2, '0', 3000);
  strcpy(big + 3002, "1e-1");
  cmp_parse(big);
}

/* A random decimal string: sign, 1-25 digits, maybe a point, maybe an
 * exponent in [-350, 350] in various spellings. */
static void gen_decimal(char *s) {
  int k = 0, n = 1 + rndn(25), dot = rndn(3) ? -1 : rndn(n + 1);
  int sg = rndn(4);
  if (sg == 1) s[k++] = '-';
  if (sg == 2) s[k++] = '+';
  for (int i = 0; i < n; i++) {
    if (i == dot) s[k++] = '.';
    s[k++] = (char)('0' + (i == 0 && rndn(8) ? 1 + rndn(9) : rndn(10)));
  }
  if (dot == n) s[k++] = '.';
  if (rndn(4)) {
    int e = rndn(701) - 350;
    s[k++] = rndn(2) ? 'e' : 'E';
    if (e < 0) s[k++] = '-';
    else if (rndn(2)) s[k++] = '+';
    if (rndn(8) == 0) s[k++] = '0';
    k += sprintf(s + k, "%d", e < 0 ? -e : e);
  }
  s[k] = 0;
}

static void sweep_parse_random(long n) {
  char s[96];
  for (long i = 0; i < n; i++) {
    gen_decimal(s);
    cmp_parse(s);
  }
  /* Near-shortest strings of random doubles: 15-19 digits, in range. */
  for (long i = 0; i < n / 4; i++) {
    double v = dfrom(rnd() & 0x7FFFFFFFFFFFFFFFu);
    if (!isfinite(v)) continue;
    snprintf(s, sizeof s, "%.*e", 14 + rndn(6), v);
    cmp_parse(s);
    snprintf(s, sizeof s, "%.*e", 6 + rndn(4), (double)ffrom((uint32_t)rnd()));
    cmp_parse(s);
  }
  /* Integers, and odd * 2^k (exact ties for float near 2^24, 2^53, 2^64),
   * with and without exponents: the parsers' integer fast path. */
  for (long i = 0; i < n / 2; i++) {
    uint64_t u = rnd() >> rndn(64);
    if (i % 4 == 1) u = ((rnd() >> 40) | 1) << rndn(41);
    int k = sprintf(s, "%s%" PRIu64, rndn(2) ? "-" : "", u);
    if (i % 3 == 0) sprintf(s + k, "e%d", rndn(50) - 25);
    cmp_parse(s);
  }
  /* Grammar fuzz: short strings over a small alphabet. */
  static const char alpha[] = "0123456789..eE+-iInNfFaAtTyY()_z";
  for (long i = 0; i < n / 2; i++) {
    int len = rndn(11);
    for (int j = 0; j < len; j++) s[j] = alpha[rndn((int)sizeof alpha - 1)];
    s[len] = 0;
    cmp_parse(s);
  }
}

/* Exact decimal of m * 2^e2 in base-1e9 limbs (little-endian). */
typedef struct {
  uint32_t l[120];
  int n;
} bigdec;

static void big_mul(bigdec *b, uint32_t f) {
  uint64_t carry = 0;
  for (int i = 0; i < b->n; i++) {
    uint64_t t = (uint64_t)b->l[i] * f + carry;
    b->l[i] = (uint32_t)(t % 1000000000u);
    carry = t / 1000000000u;
  }
  while (carry) {
    b->l[b->n++] = (uint32_t)(carry % 1000000000u);
    carry /= 1000000000u;
  }
}

/* Write m * 2^e2 exactly as "DDDDe<x>" into s (m > 0). */
static void exact_string(uint64_t m, int e2, char *s) {
  bigdec b = {{0}, 0};
  for (; m; m /= 1000000000u) b.l[b.n++] = (uint32_t)(m % 1000000000u);
  int x = 0;
  if (e2 >= 0) {
    for (; e2 >= 29; e2 -= 29) big_mul(&b, 1u << 29);
    big_mul(&b, 1u << e2);
  } else {
    x = e2; /* m * 2^e2 = m * 5^-e2 * 10^e2 */
    for (e2 = -e2; e2 >= 13; e2 -= 13) big_mul(&b, 1220703125u);
    uint32_t p = 1;
    while (e2--) p *= 5;
    big_mul(&b, p);
  }
  int k = sprintf(s, "%" PRIu32, b.l[b.n - 1]);
  for (int i = b.n - 2; i >= 0; i--) k += sprintf(s + k, "%09" PRIu32, b.l[i]);
  sprintf(s + k, "e%d", x);
}

/* Exact midpoints between adjacent doubles / floats, and a hair either
 * side of them: ties must go to even. */
static void sweep_parse_halfway(long n) {
  char s[2048], t[2100];
  for (long i = 0; i < n; i++) {
    int is_f = i & 1;
    uint64_t c;
    int q;
    if (!is_f) {
      uint64_t b = rnd() & 0x7FFFFFFFFFFFFFFFu;
      if (i % 10 == 2) b &= 0xFFFFFFFFFFFFFu;            /* subnormal */
      if (i % 10 == 4) b = (b & 0x7FF0000000000000u) | 1; /* tiny c */
      int be = (int)(b >> 52);
      if (be == 0x7FF) continue;
      c = (b & 0xFFFFFFFFFFFFFu) | (be ? (uint64_t)1 << 52 : 0);
      q = (be ? be : 1) - 1075;
    } else {
      uint32_t b = (uint32_t)rnd() & 0x7FFFFFFFu;
      if (i % 10 == 3) b &= 0x7FFFFFu;
      int be = (int)(b >> 23);
      if (be == 0xFF) continue;
      c = (b & 0x7FFFFFu) | (be ? (uint64_t)1 << 23 : 0);
      q = (be ? be : 1) - 150;
    }
    exact_string(2 * c + 1, q - 1, s); /* (c + 1/2) * 2^q */
    cmp_parse(s);
    /* a hair above: append nonzero digits */
    char *e = strchr(s, 'e');
    int x = atoi(e + 1);
    *e = 0;
    sprintf(t, "%s000000000000000000001e%d", s, x - 21);
    cmp_parse(t);
    /* a hair below: ...d-1 followed by 9s */
    size_t len = strlen(s);
    size_t j = len - 1;
    while (s[j] == '0') s[j--] = '9';
    s[j]--;
    sprintf(t, "%s99999999e%d", s, x - 8);
    cmp_parse(t);
    /* truncated to 19-20 significant digits with a point */
    if (len > 20) {
      sprintf(t, "%c.%.19se%d", s[0], s + 1, x + (int)len - 1);
      cmp_parse(t);
    }
  }
}

/* ---- integers ------------------------------------------------------------ */

static void cmp_int(const char *s) {
  size_t n = strlen(s);
  char *c = malloc(n ? n : 1);
  memcpy(c, s, n);
  int64_t a = 0;
  uint64_t ua = 0;
  int ovf = -1, uovf = -1;
  const char *e = spc_parse_i64(c, c + n, &a, &ovf);
  const char *ue = spc_parse_u64(c, c + n, &ua, &uovf);
  long la = e ? (long)(e - c) : -1, ula = ue ? (long)(ue - c) : -1;
  free(c);

  /* references: digits must follow the sign directly (strtoll would also
   * skip spaces, which our inputs do not contain) */
  char *re;
  errno = 0;
  long long b = strtoll(s, &re, 10);
  int rovf = errno == ERANGE;
  long lb = re == s ? -1 : (long)(re - s);
  if (rovf) {
    check(!e && ovf == 1, "parse_i64 \"%s\": want overflow, got len %ld ovf %d",
          s, la, ovf);
  } else {
    check(la == lb && ovf == 0 && (la < 0 || a == b),
          "parse_i64 \"%s\": ours len %ld %" PRId64 " ovf %d, strtoll len %ld %lld",
          s, la, a, ovf, lb, b);
  }
  if (s[0] == '-') {
    check(!ue && uovf == 0, "parse_u64 \"%s\": want NULL, no overflow", s);
    return;
  }
  errno = 0;
  unsigned long long ub = strtoull(s, &re, 10);
  rovf = errno == ERANGE;
  lb = re == s ? -1 : (long)(re - s);
  if (rovf)
    check(!ue && uovf == 1, "parse_u64 \"%s\": want overflow", s);
  else
    check(ula == lb && uovf == 0 && (ula < 0 || ua == ub),
          "parse_u64 \"%s\": ours len %ld %" PRIu64 ", strtoull len %ld %llu", s,
          ula, ua, lb, ub);
}

static void sweep_int(long n) {
  static const char *cases[] = {
      "0", "-0", "+0", "1", "-1", "+", "-", "", "x", "12x", "1.5", "1e5",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "18446744073709551615", "18446744073709551616",
      "99999999999999999999999", "-99999999999999999999999",
      "000000000000000000000000000000000000018446744073709551615",
      "-0000000000000000000000000009223372036854775808", "+-1", "--1"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) cmp_int(cases[i]);
  char s[64], buf[SPC_NUM_BUFSIZE], ref[64];
  for (long i = 0; i < n; i++) {
    int k = 0, len = 1 + rndn(25);
    int sg = rndn(3);
    if (sg == 1) s[k++] = '-';
    if (sg == 2) s[k++] = '+';
    for (int j = 0; j < len; j++) s[k++] = (char)('0' + rndn(10));
    if (rndn(4) == 0) s[k++] = "x. e-"[rndn(5)];
    s[k] = 0;
    cmp_int(s);
    int64_t v = (int64_t)(rnd() >> rndn(64));
    if (rndn(2)) v = -v;
    if (i < 64) v = i < 32 ? INT64_MIN + i : INT64_MAX - (i - 32);
    int m = spc_format_i64(v, buf);
    snprintf(ref, sizeof ref, "%" PRId64, v);
    check(strcmp(buf, ref) == 0 && m == (int)strlen(ref),
          "format_i64: \"%s\" want \"%s\"", buf, ref);
    uint64_t u = rnd() >> rndn(64);
    if (i < 16) u = UINT64_MAX - (uint64_t)i;
    m = spc_format_u64(u, buf);
    snprintf(ref, sizeof ref, "%" PRIu64, u);
    check(strcmp(buf, ref) == 0 && m == (int)strlen(ref),
          "format_u64: \"%s\" want \"%s\"", buf, ref);
  }
}

/* ---- data files ---------------------------------------------------------- */

static long data_tokens;

static void sweep_token(const char *tok) {
  if (strpbrk(tok, "xX")) return; /* hex: outside our grammar */
  char *e;
  double b = strtod(tok, &e);
  if (*e == 0 && e != tok) {
    double a = 0;
    float fa = 0;
    data_tokens++;
    check(our_f64(tok, &a) == (long)strlen(tok) && same_d(a, b),
          "data f64 \"%s\": %.17g vs %.17g", tok, a, b);
    float fb = strtof(tok, NULL);
    check(our_f32(tok, &fa) == (long)strlen(tok) && same_f(fa, fb),
          "data f32 \"%s\": %.9g vs %.9g", tok, (double)fa, (double)fb);
  }
  (void)strtoll(tok, &e, 10);
  if (*e == 0 && e != tok) cmp_int(tok);
}

static void walk_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '%' || *s == '#') continue;
    for (char *tok = strtok(s, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"))
      sweep_token(tok);
  }
  free(line);
  fclose(f);
}

static void walk_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (stat(path, &st) != 0) continue;
    size_t l = strlen(path);
    if (S_ISDIR(st.st_mode))
      walk_dir(path);
    else if (l > 4 && (!strcmp(path + l - 4, ".mtx") ||
                       !strcmp(path + l - 4, ".tns")))
      walk_file(path);
  }
  closedir(d);
}

/* ---- the Check tests ------------------------------------------------------ */

START_TEST(test_format_fixed) {
  sweep_format_fixed();
  assert_no_failures("format, fixed cases");
}
END_TEST

START_TEST(test_format_random) {
  sweep_format_random(SWEEP, SWEEP / 10);
  assert_no_failures("format, random values");
}
END_TEST

START_TEST(test_parse_fixed) {
  sweep_parse_fixed();
  assert_no_failures("parse, fixed cases");
}
END_TEST

START_TEST(test_parse_random) {
  sweep_parse_random(SWEEP);
  assert_no_failures("parse, random decimals");
}
END_TEST

START_TEST(test_parse_halfway) {
  sweep_parse_halfway(SWEEP / 20);
  assert_no_failures("parse, halfway cases");
}
END_TEST

START_TEST(test_integers) {
  sweep_int(SWEEP / 2);
  assert_no_failures("integers");
}
END_TEST

/* Every token of every shared .mtx / .tns file, as double, float and
 * integer. */
START_TEST(test_data_tokens) {
  walk_dir(tu_data_dir());
  ck_assert_int_gt(data_tokens, 100000);
  assert_no_failures("shared data tokens");
}
END_TEST

Suite *suite_num(void) {
  Suite *s = suite_create("num");
  TCase *tc = tcase_create("num");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_format_fixed);
  tcase_add_test(tc, test_format_random);
  tcase_add_test(tc, test_parse_fixed);
  tcase_add_test(tc, test_parse_random);
  tcase_add_test(tc, test_parse_halfway);
  tcase_add_test(tc, test_integers);
  if (tu_data_dir()) tcase_add_test(tc, test_data_tokens);
  suite_add_tcase(s, tc);
  return s;
}
