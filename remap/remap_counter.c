/* remap_counter.c -- IR for maintaining a remapping's counters.
 *
 * The default is SPC_COUNTER_DENSE: a zeroed count array over the counted
 * indices' extents; each component reads its count and bumps it.  It is
 * correct whatever order the components arrive in (unsorted COO included)
 * at O(1) work per component, and its memory (one i64 per value of the
 * counted indices, e.g. one per row for `#i`) is what the planner already
 * spends on a compressed level's row counts.  SPC_COUNTER_GROUPED needs
 * no memory but only works when the components arrive grouped by the
 * counted indices (sorted sources); the planner picks it when the source
 * level properties promise that order. */
#include "remap_internal.h"
#include <stdio.h>
#include <string.h>

static void counter_name(const spc_remap *r, const spc_remap_counter *c,
                         char *b, size_t n) {
  size_t k = (size_t)snprintf(b, n, "ctr");
  for (int t = 0; t < c->n && k < n; t++)
    k += (size_t)snprintf(b + k, n - k, "_%s", r->in_names[c->idx[t]]);
}

static spc_status counter_begin(const spc_remap *r, int c, spc_counter_mode mode,
                                const int64_t *dims, int64_t max_entries,
                                ir_func *f, ir_stmt *init, spc_counter_ir *s,
                                ir_expr *len, ir_var held, spc_error *err) {
  char name[128], arr[160];
  memset(s, 0, sizeof *s);
  if (c < 0 || c >= r->ncounters)
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0, "no counter %d", c);
  s->mode = mode;
  s->ctr = &r->counters[c];
  s->cnt = s->started = -1;
  counter_name(r, s->ctr, name, sizeof name);
  s->value = lang_fresh_local(f, name, IR_I64, false);
  if (mode == SPC_COUNTER_GROUPED) {
    for (int t = 0; t < s->ctr->n; t++) {
      snprintf(arr, sizeof arr, "%s_prev%d", name, t);
      s->prev[t] = lang_fresh_local(f, arr, IR_I64, false);
    }
    snprintf(arr, sizeof arr, "%s_seen", name);
    s->started = lang_fresh_local(f, arr, IR_BOOL, false);
    return SPC_OK;
  }
  int64_t total = 1;
  for (int t = s->ctr->n - 1; t >= 0; t--) {
    int64_t ext = dims[s->ctr->idx[t]] > 0 ? dims[s->ctr->idx[t]] : 1;
    s->stride[t] = total;
    if (__builtin_mul_overflow(total, ext, &total) ||
        (max_entries > 0 && total > max_entries))
      return spc_err(err, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                     "counter %s needs a count array of more than %lld "
                     "entries: too large",
                     name + 4, (long long)max_entries);
  }
  if (held >= 0) { /* the caller's array: zeroed once, kept across calls */
    s->cnt = held;
    s->held = true;
    return SPC_OK;
  }
  snprintf(arr, sizeof arr, "%s_cnt", name);
  s->cnt = lang_fresh_local(f, arr, IR_I64, true);
  /* one counted index: its extent may come as data (len) */
  ir_expr *n = len && s->ctr->n == 1 ? len : ir_int(f, total);
  ir_add(f, init, ir_alloc(f, s->cnt, n, true));
  return SPC_OK;
}

spc_status spc_counter_begin(const spc_remap *r, int c, spc_counter_mode mode,
                             const int64_t *dims, int64_t max_entries,
                             ir_func *f, ir_stmt *init, spc_counter_ir *s,
                             ir_expr *len, spc_error *err) {
  return counter_begin(r, c, mode, dims, max_entries, f, init, s, len, -1, err);
}

spc_status spc_counter_begin_held(const spc_remap *r, int c, const int64_t *dims,
                                  int64_t max_entries, ir_func *f,
                                  spc_counter_ir *s, ir_var cnt, spc_error *err) {
  if (cnt < 0)
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0, "counter %d: no count array", c);
  return counter_begin(r, c, SPC_COUNTER_DENSE, dims, max_entries, f, NULL, s,
                       NULL, cnt, err);
}

void spc_counter_step(const spc_counter_ir *s, ir_func *f, ir_stmt *body,
                      ir_expr *const *src) {
  const spc_remap_counter *c = s->ctr;
  if (s->mode == SPC_COUNTER_GROUPED) {
    ir_expr *same = ir_ref(f, s->started);
    for (int t = 0; t < c->n; t++)
      same = ir_bin(f, IR_LAND, same,
                    ir_bin(f, IR_EQ, ir_cast(f, IR_I64, src[c->idx[t]]),
                           ir_ref(f, s->prev[t])));
    ir_expr *next = ir_bin(f, IR_ADD, ir_ref(f, s->value), ir_int(f, 1));
    ir_add(f, body,
           ir_assign(f, s->value, ir_select(f, same, next, ir_int(f, 0))));
    for (int t = 0; t < c->n; t++)
      ir_add(f, body, ir_assign(f, s->prev[t], src[c->idx[t]]));
    ir_add(f, body, ir_assign(f, s->started, ir_bool(f, true)));
    return;
  }
  ir_expr *key = NULL;
  for (int t = 0; t < c->n; t++) {
    ir_expr *x = ir_cast(f, IR_I64, src[c->idx[t]]);
    if (s->stride[t] != 1) x = ir_bin(f, IR_MUL, x, ir_int(f, s->stride[t]));
    key = key ? ir_bin(f, IR_ADD, key, x) : x;
  }
  ir_add(f, body, ir_assign(f, s->value, ir_load(f, s->cnt, key)));
  ir_add(f, body,
         ir_store(f, s->cnt, key,
                  ir_bin(f, IR_ADD, ir_ref(f, s->value), ir_int(f, 1))));
}

void spc_counter_end(const spc_counter_ir *s, ir_func *f, ir_stmt *fini) {
  if (s->mode == SPC_COUNTER_DENSE && s->cnt >= 0 && !s->held)
    ir_add(f, fini, ir_free(f, s->cnt));
}
