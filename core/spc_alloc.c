/* spc_alloc.c -- the one allocation seam of the library.
 * A test hook (spc_alloc_fail_at) makes the k-th allocation from now fail. */
#include "spc_impl.h"
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic int64_t alloc_count;   /* allocations so far */
static _Atomic int64_t alloc_fail_at; /* count at which to fail; 0 = off */

static bool should_fail(void) {
  int64_t k = atomic_fetch_add(&alloc_count, 1) + 1;
  int64_t f = atomic_load(&alloc_fail_at);
  return f != 0 && k == f;
}

void spc_alloc_fail_at(int64_t k) {
  atomic_store(&alloc_fail_at, k > 0 ? atomic_load(&alloc_count) + k : 0);
}

int64_t spc_alloc_count(void) { return atomic_load(&alloc_count); }

void *spc_malloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *spc_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *spc_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void spc_free(void *p) { free(p); }

void *spc_malloc_n(int64_t n, size_t size) {
  if (n < 0 || (size && (uint64_t)n > SIZE_MAX / size)) return NULL;
  return spc_malloc((size_t)n * size);
}
