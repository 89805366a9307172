/* spc_num.h -- locale-independent number parsing and formatting.
 *
 * Correctly rounded text -> binary conversion and shortest round-trip
 * binary -> text conversion, for the readers and writers of spconv (Matrix
 * Market, FROSTT .tns, ...).
 *
 * Every function here is pure: no global state, no locale, no allocation, no
 * output, thread-safe.  The decimal point is always '.'.  Parsers read only
 * bytes in [p, end) (the input need not be NUL-terminated) and never skip
 * leading whitespace: p must point at the first character of the number.
 */
#ifndef SPC_NUM_H
#define SPC_NUM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of a buffer that always holds a spc_format_* result with its NUL. */
#define SPC_NUM_BUFSIZE 32

/* ---- parsing -----------------------------------------------------------
 *
 * Floating-point grammar (ASCII, case-insensitive letters):
 *
 *   number  = [sign] (decimal | "inf" | "infinity" | nan)
 *   decimal = (digits ["." [digits]] | "." digits) [exponent]
 *   exponent= ("e" | "E") [sign] digits
 *   nan     = "nan" ["(" {letter | digit | "_"} ")"]
 *
 * The longest prefix of [p, end) that matches is consumed, as strtod does:
 * "1e+" reads as 1 and stops before 'e', "infinit" reads as inf and stops
 * after "inf", "nan(x" stops after "nan".  Hexadecimal floats are not
 * accepted ("0x1p3" reads as 0 and stops at 'x').
 *
 * The result is the IEEE value nearest to the exact decimal value (ties to
 * even), including subnormals, overflow to +-inf and underflow to +-0, for
 * any number of digits.  The sign of zero and of nan is kept.
 *
 * Returns a pointer just past the number, or NULL (and *out untouched) when
 * no number starts at p.
 */
const char *spc_parse_f64(const char *p, const char *end, double *out);

/* As spc_parse_f64, rounded once, directly to float (not through double). */
const char *spc_parse_f32(const char *p, const char *end, float *out);

/* Decimal integers: [sign] digits, no spaces, no base prefixes.
 * spc_parse_i64 accepts '+' and '-'; spc_parse_u64 accepts '+' only (a '-'
 * gives NULL with *overflow = 0, even for "-0").  The longest digit run is
 * consumed.  Returns a pointer just past the last digit with *overflow = 0;
 * or NULL with *overflow = 1 when the value does not fit the type; or NULL
 * with *overflow = 0 when there are no digits.  *out is set only on success.
 */
const char *spc_parse_i64(const char *p, const char *end, int64_t *out,
                          int *overflow);
const char *spc_parse_u64(const char *p, const char *end, uint64_t *out,
                          int *overflow);

/* ---- Python's underscores ----------------------------------------------
 *
 * Python's int() and float() -- what SciPy 1.10's Matrix Market reader and
 * the FROSTT readers written in Python use -- accept one '_' between two
 * digits anywhere in a number: "1_000", "2_5.0_1e1_0".  The _py parsers are
 * the ones above where the plain parse stops at such an '_' (the only extra
 * work on other input: one comparison); then the token (up to a blank, a
 * newline or end) is read again without its underscores and, when that
 * reads whole, the result is its value and the pointer its end.  Any other
 * '_' ("_1", "1_", "1__0", "1_.5", "1e_5") stops the parse there, as
 * before.  A token over 256 bytes is not retried. */
const char *spc_num_unscored(const char *p, const char *end, const char *q, int kind,
                             void *out, int *overflow);
#define SPC_NUM_US_F64 0
#define SPC_NUM_US_F32 1
#define SPC_NUM_US_I64 2
#define SPC_NUM_US_U64 3
#define SPC_NUM_US_PY(q, end) ((q) && (q) < (end) && *(q) == '_')

/* A blank between the fields of a text line: space, tab, CR, VT or FF --
 * the ASCII whitespace Python's split() cuts a line at (SciPy's mmread, a
 * FROSTT reader in Python), the newline aside. */
static inline bool spc_is_blank(char c) {
  return c == ' ' || ((unsigned char)(c - '\t') <= 4 && c != '\n');
}

static inline const char *spc_parse_f64_py(const char *p, const char *end, double *out) {
  const char *q = spc_parse_f64(p, end, out);
  return SPC_NUM_US_PY(q, end) ? spc_num_unscored(p, end, q, SPC_NUM_US_F64, out, 0) : q;
}
static inline const char *spc_parse_f32_py(const char *p, const char *end, float *out) {
  const char *q = spc_parse_f32(p, end, out);
  return SPC_NUM_US_PY(q, end) ? spc_num_unscored(p, end, q, SPC_NUM_US_F32, out, 0) : q;
}
static inline const char *spc_parse_i64_py(const char *p, const char *end, int64_t *out,
                                           int *overflow) {
  const char *q = spc_parse_i64(p, end, out, overflow);
  return SPC_NUM_US_PY(q, end) ? spc_num_unscored(p, end, q, SPC_NUM_US_I64, out, overflow)
                               : q;
}
static inline const char *spc_parse_u64_py(const char *p, const char *end, uint64_t *out,
                                           int *overflow) {
  const char *q = spc_parse_u64(p, end, out, overflow);
  return SPC_NUM_US_PY(q, end) ? spc_num_unscored(p, end, q, SPC_NUM_US_U64, out, overflow)
                               : q;
}

/* ---- formatting --------------------------------------------------------
 *
 * Each writes a NUL-terminated string of at most SPC_NUM_BUFSIZE bytes
 * (NUL included) into buf and returns its length without the NUL.
 *
 * spc_format_f64 / spc_format_f32 write the shortest decimal that reads back
 * exactly to v (read as double / as float respectively); among the shortest,
 * the one nearest to v.  Layout, with X the decimal exponent of the first
 * significant digit:
 *   -5 <= X <= 16  plain:       "0", "-0", "1", "0.1", "123.45", "0.00001",
 *                               "10000000000000000"
 *   otherwise      scientific:  "1e+17", "1.5e-06", "-2.2250738585072014e-308"
 *                               (exponent with sign and at least two digits)
 *   non-finite:    "inf", "-inf", "nan" (any nan, whatever its sign)
 */
int spc_format_f64(double v, char *buf);
int spc_format_f32(float v, char *buf);
int spc_format_i64(int64_t v, char *buf);
int spc_format_u64(uint64_t v, char *buf);

#ifdef __cplusplus
}
#endif

#endif /* SPC_NUM_H */
