/* fuzz_notation.c -- libFuzzer target for the two notations: the first
 * byte picks a coordinate remapping (over an order-2 tensor, parameters M
 * and N) or an attribute query (over the identity remapping); the rest is
 * the text.  Parsing either succeeds or fails with SPC_ERR_SPEC/NOMEM and a
 * position; a remapping that parses is bounded and lowered to IR, which
 * must verify. */
#include "fuzz_common.h"
#include "spc_query.h"
#include "spc_remap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fail(spc_status s, const spc_error *e) {
  if ((s != SPC_ERR_SPEC && s != SPC_ERR_NOMEM && s != SPC_ERR_UNSUPPORTED &&
       s != SPC_ERR_OVERFLOW) || e->code != s || !e->msg[0])
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  char *text = malloc(size);
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  spc_error e;
  spc_error_clear(&e);
  lang_src src = {.text = text, .file = "fuzz", .line = 1, .col = 1};
  if (data[0] & 1) {
    spc_remap_param ps[2] = {{"M", 3}, {"N", 2}};
    spc_remap *r = NULL;
    spc_status s = spc_remap_parse(&src, 2, ps, 2, &r, &e);
    if (s == SPC_OK) {
      int64_t dims[2] = {1000, 700}, cmax[SPC_MAX_ORDER] = {0};
      lang_ival iv[SPC_MAX_ORDER];
      s = spc_remap_bounds(r, dims, cmax, iv, &e);
      if (s) check_fail(s, &e);
      ir_func *f = ir_func_new("fz");
      ir_var i = ir_param(f, "i", IR_I64, false, IR_IN), j = ir_param(f, "j", IR_I64, false, IR_IN);
      ir_var cv[SPC_MAX_ORDER];
      for (int k = 0; k < r->ncounters; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "cnt%d", k); /* one name per counter */
        cv[k] = ir_local(f, nm, IR_I64, false);
      }
      ir_expr *src_e[2] = {ir_ref(f, i), ir_ref(f, j)}, *out[SPC_MAX_ORDER];
      s = spc_remap_lower(r, f, ir_func_body(f), src_e, cv, out, &e);
      if (s == SPC_OK) {
        for (int k = 0; k < r->order_out; k++) {
          char nm[16];
          snprintf(nm, sizeof nm, "o%d", k);
          ir_var o = ir_local(f, nm, out[k]->ty, false);
          ir_add(f, ir_func_body(f), ir_assign(f, o, out[k]));
        }
        if (ir_func_ok(f) && ir_verify(f, &e) != SPC_OK) abort();
      } else {
        check_fail(s, &e);
      }
      ir_func_free(&f);
      spc_remap_free(&r);
    } else {
      check_fail(s, &e);
    }
  } else {
    spc_query *q = NULL;
    spc_status s = spc_query_parse(&src, &q, &e);
    if (s == SPC_OK) {
      spc_remap *r = NULL;
      if (spc_remap_identity(2, &r, &e) != SPC_OK) abort();
      s = spc_query_bind(q, r, &e);
      if (s) check_fail(s, &e);
      spc_remap_free(&r);
      spc_query_free(&q);
    } else {
      check_fail(s, &e);
    }
  }
  free(text);
  return 0;
}
