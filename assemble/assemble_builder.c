/* assemble_builder.c -- the public builder (spconv.h): points pushed in
 * any order, with duplicates, in batches, go into a sparse workspace over
 * their canonical coordinates (memory bounded by opts->mem: sorted runs
 * spill to temporary files); finish streams them into a target the
 * counting path places, else streams them into the conversion, which
 * assembles them level by level never holding them whole (assemble_write.c
 * stream_levels; a second workspace with the same options puts a remapping
 * that changes the order in level order), else (a counter remapping) packs
 * them into a sorted, duplicate-free COO whose arrays are the pack's own
 * (no copy) and hands it over to the conversion, which frees them as it
 * consumes them (asm_convert_to_eat). */
#include "assemble_internal.h"
#include "spw.h"
#include <stdio.h>
#include <string.h>

struct spc_builder {
  char *format;
  int order;
  int64_t dims[SPC_MAX_ORDER]; /* 0: inferred from the points */
  bool infer[SPC_MAX_ORDER];
  int64_t maxc[SPC_MAX_ORDER];
  spc_vtype vt;
  spc_convert_opts o;
  const char *spec_files[SPC_MAX_PARAMS];
  const char *param_names[SPC_MAX_PARAMS];
  spw *w;
  int64_t pushed;
  int spw0; /* the workspace options given (o's are cleared) */
  int64_t acc0, mem0;
};

spc_status spc_builder_create(const char *format, int order, const int64_t *dims,
                              spc_vtype vt, const spc_convert_opts *o,
                              spc_builder **out, spc_error *e) {
  *out = NULL;
  if (!format || order < 1 || order > SPC_MAX_ORDER || vt < SPC_PATTERN || vt > SPC_C128)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "builder: bad format, order (%d) or value type",
                   order);
  spc_builder *b = spc_calloc(1, sizeof *b);
  if (!b) return SPC_NOMEM(e);
  b->order = order;
  b->vt = vt;
  if (o) b->o = *o;
  else spc_convert_opts_init(&b->o);
  for (int d = 0; d < order; d++) {
    b->dims[d] = dims ? dims[d] : 0;
    b->infer[d] = !dims || dims[d] <= 0;
    b->maxc[d] = -1;
  }
  b->format = spc_strdup(format);
  /* the budget shared: three quarters to the workspace, the output in
   * memory up to the rest (assemble_write.c out_take: past it, files) */
  spw_opts wo = {.kind = spw_kind_of(b->o.spw), .acc = b->o.acc,
                 .mem = b->o.mem > 0 ? b->o.mem - b->o.mem / 4 : 0, .dup = b->o.dup};
  spc_status s = b->format ? spw_create(order, vt, &wo, &b->w, e) : SPC_NOMEM(e);
  if (s) {
    spc_builder_free(&b);
    return s;
  }
  b->spw0 = b->o.spw;
  b->acc0 = b->o.acc;
  b->mem0 = b->o.mem;
  b->o.spw = SPC_SPW_NONE; /* the packed COO is sorted: the plain path */
  b->o.mem = 0;
  b->o.acc = 0;
  *out = b;
  return SPC_OK;
}

spc_status spc_builder_push(spc_builder *b, int64_t n, const int64_t *const *coords,
                            const void *vals, spc_error *e) {
  if (!b || n < 0 || (n && !coords)) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "builder: bad push");
  for (int d = 0; d < b->order; d++) {
    const int64_t *c = coords[d];
    int64_t mx = b->maxc[d];
    for (int64_t i = 0; i < n; i++) {
      if (c[i] < 0 || (!b->infer[d] && c[i] >= b->dims[d]))
        return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                       "point %lld: index %lld is outside dimension %d (0 .. %lld)",
                       (long long)(b->pushed + i), (long long)c[i], d + 1,
                       (long long)(b->infer[d] ? INT64_MAX : b->dims[d] - 1));
      if (c[i] > mx) mx = c[i];
    }
    b->maxc[d] = mx;
  }
  spc_status s = spw_push(b->w, n, coords, vals, e);
  if (!s) b->pushed += n;
  return s;
}

/* The workspace's statistics into the caller's info (--verbose), after
 * the conversion (which clears the info). */
static void record_stats(const spc_builder *b, const spw_stats *st0) {
  if (!b->o.info) return;
  const spw_stats st = *st0;
  b->o.info->spw.flushes = st.flushes;
  b->o.info->spw.merges = st.merges;
  b->o.info->spw.spilled_runs = st.spilled_runs;
  b->o.info->spw.spilled_bytes = st.spilled_bytes;
  b->o.info->spw.peak_bytes = st.peak_bytes;
}

static spc_status count_chunk(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                               spc_error *e) {
  (void)vals;
  return asm_counter_count_raw(ctx, n, (const void *const *)cols, e);
}

static spc_status place_chunk(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                              spc_error *e) {
  return asm_counter_place_raw(ctx, n, (const void *const *)cols, vals, e);
}

/* The packed stream (sorted by the canonical coordinates, combined) into
 * a target the counting path places: streamed twice out of the workspace
 * (count, then place), never held whole.  *out NULL: not such a target. */
static spc_status finish_counting(spc_builder *b, spc_tensor **out, spc_error *e) {
  spc_tensor *proto = NULL;
  asm_counter *c = NULL;
  spc_status s = spc_coo_alloc(b->order, b->dims, 0, b->vt, &proto, e);
  for (int d = 0; !s && d < b->order; d++) spc_level_array(&proto->lv[d], "crd")->type = SPC_IDX64;
  spc_convert_opts co = b->o;
  co.mem = b->mem0; /* the output past a quarter of it in temporary files */
  if (!s) s = asm_counter_create(b->format, &co, proto, b->pushed, &c, e);
  spc_tensor_free(&proto);
  if (s || !c) return s;
  const int64_t chunk = 1 << 16;
  s = spw_stream(b->w, chunk, count_chunk, c, e);
  if (!s && asm_counter_ok(c) != 1) { /* cannot happen: sorted and combined */
    asm_counter_free(&c);
    return SPC_OK;
  }
  if (!s) s = asm_counter_begin_place(c, e);
  if (!s) s = spw_stream(b->w, chunk, place_chunk, c, e);
  if (!s) s = asm_counter_finish(c, out, e);
  if (!s && b->o.info)
    snprintf(b->o.info->plan, sizeof b->o.info->plan,
             "sparse workspace, packed by counting (runs merged twice)");
  asm_counter_free(&c);
  return s;
}

/* A COO over the packed stream's own arrays (int64 coordinates, values):
 * adopted, not copied; cols and vals are the COO's (or freed) after. */
static spc_status adopt_coo(const spc_builder *b, int64_t n, int64_t **cols, void **vals,
                            spc_tensor **out, spc_error *e) {
  spc_tensor *t = NULL;
  spc_status s = spc_coo_alloc(b->order, b->dims, 0, b->vt, &t, e);
  spc_array *pos = s ? NULL : spc_level_array(&t->lv[0], "pos");
  if (!s && !pos) s = spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "builder: a COO without pos");
  if (!s && pos->type != SPC_IDX64) { /* {0, n}: n may pass int32 */
    int64_t *p2 = spc_malloc_n(2, sizeof *p2);
    if (!p2) {
      s = SPC_NOMEM(e);
    } else {
      if (pos->owned) spc_free(pos->data);
      *pos = (spc_array){.name = pos->name, .type = SPC_IDX64, .len = 2, .data = p2,
                         .owned = true};
    }
  }
  if (!s) {
    spc_arr_set(pos, 0, 0);
    spc_arr_set(pos, 1, n);
  }
  for (int d = 0; d < b->order && !s; d++) {
    spc_array *a = spc_level_array(&t->lv[d], "crd");
    if (a->owned) spc_free(a->data);
    *a = (spc_array){.name = a->name, .type = SPC_IDX64, .len = n, .data = cols[d],
                     .owned = true};
    cols[d] = NULL;
  }
  if (!s && spc_vtype_size(b->vt)) {
    if (t->val_owned) spc_free(t->val);
    t->val = *vals;
    t->nval = n;
    t->val_owned = true;
    *vals = NULL;
  }
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}

/* A COO shell for the workspace's stream: no components, int64
 * coordinates (the stream's), the builder's dims and value type. */
static spc_status stream_shell(const spc_builder *b, spc_tensor **out, spc_error *e) {
  spc_status s = spc_coo_alloc(b->order, b->dims, 0, b->vt, out, e);
  for (int d = 0; !s && d < b->order; d++)
    spc_level_array(&(*out)->lv[d], "crd")->type = SPC_IDX64;
  return s;
}

spc_status spc_builder_finish(spc_builder *b, spc_tensor **out, spc_error *e) {
  *out = NULL;
  if (!b || !b->w) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "builder: finished already");
  int64_t n = 0, *cols[SPC_MAX_ORDER] = {0};
  void *vals = NULL;
  spc_tensor *coo = NULL;
  for (int d = 0; d < b->order; d++)
    if (b->infer[d]) b->dims[d] = b->maxc[d] + 1;
  spc_status s = SPC_OK;
  if (b->o.plan != SPC_PLAN_SORT) {
    s = finish_counting(b, out, e);
    if (!s && *out) {
      spw_stats st;
      spw_get_stats(b->w, &st);
      record_stats(b, &st);
    }
    if (s || *out) {
      spw_free(&b->w);
      return s;
    }
  }
  /* any other target: the stream remapped chunk by chunk into the
   * conversion (never held whole), else packed and handed over */
  spw_stats st = {0};
  bool streamed = false;
  s = stream_shell(b, &coo, e);
  if (!s) {
    asm_stream S = {.w = b->w, .nmax = b->pushed, .stats = &st, .spw = b->spw0, .acc = b->acc0,
                    .mem = b->mem0};
    s = asm_convert_stream_to(coo, &S, b->format, &b->o, out, e);
    b->w = S.w; /* NULL once streamed */
    streamed = s != SPC_NOT_HANDLED;
    if (!streamed) s = SPC_OK;
  }
  spc_tensor_free(&coo);
  if (!s && !streamed) {
    spc_error_clear(e);
    s = spw_pack(b->w, &n, cols, &vals, e);
    if (!s) spw_get_stats(b->w, &st);
    spw_free(&b->w);
    if (!s) s = adopt_coo(b, n, cols, &vals, &coo, e);
    for (int d = 0; d < b->order; d++) spc_free(cols[d]);
    spc_free(vals);
    /* the conversion frees the COO's coordinates once remapped and takes
     * its values: the stream is held once, never copied */
    if (!s) s = asm_convert_to_eat(&coo, b->format, &b->o, out, e);
    spc_tensor_free(&coo);
  }
  spw_free(&b->w);
  if (!s) record_stats(b, &st);
  if (!s && b->o.info) {
    char p[sizeof b->o.info->plan];
    snprintf(p, sizeof p, "%s", b->o.info->plan);
    bool levels = !strncmp(p, "level by level", 14);
    snprintf(b->o.info->plan, sizeof b->o.info->plan,
             streamed ? "sparse workspace, merged runs remapped chunk by chunk, then %s"
                      : "sparse workspace, packed and handed over (no copy), then %s",
             levels ? p : strncmp(p, "sort", 4) ? "placed" : "sorted");
  }
  return s;
}

void spc_builder_free(spc_builder **bp) {
  if (!bp || !*bp) return;
  spw_free(&(*bp)->w);
  spc_free((*bp)->format);
  spc_free(*bp);
  *bp = NULL;
}
