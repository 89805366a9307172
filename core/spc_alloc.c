/* spc_alloc.c -- the one allocation seam of the library.
 * A test hook (spc_alloc_fail_at) makes the k-th allocation from now fail. */
#include "spc_impl.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

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

/* Arrays of 4 MiB or more: the 2 MiB-aligned part advised to transparent
 * huge pages (Linux, where THP is in "madvise" mode as on Debian): a
 * fresh array then faults in 2 MiB at a time instead of 4 KiB (CSR to
 * DIA of a 2.2 M-nonzero stencil: 152 k page faults down to 8 k).  Only a
 * hint: the memory and its contents are the same. */
static void *hint_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t)p + 0x1fffff) & ~(uintptr_t)0x1fffff;
  uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)0x1fffff;
  if (p && n >= ((size_t)4 << 20) && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)n;
#endif
  return p;
}

void *spc_malloc(size_t n) {
  if (should_fail()) return NULL;
  return hint_huge(malloc(n ? n : 1), n);
}

void *spc_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  void *p = calloc(n ? n : 1, size ? size : 1);
  return p && size && n <= SIZE_MAX / size ? hint_huge(p, n * size) : p;
}

void *spc_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return hint_huge(realloc(p, n ? n : 1), n);
}

void spc_free(void *p) { free(p); }

void *spc_malloc_n(int64_t n, size_t size) {
  if (n < 0 || (size && (uint64_t)n > SIZE_MAX / size)) return NULL;
  return spc_malloc((size_t)n * size);
}

/* The machine's memory in bytes (0: unknown), asked once: sysconf's
 * _SC_PHYS_PAGES is a sysinfo system call, and conversions, the workspace
 * and SpGEMM size their limits from it on every call. */
int64_t spc_phys_bytes(void) {
  static _Atomic int64_t cached = -1;
  int64_t v = atomic_load(&cached);
  if (v >= 0) return v;
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  v = pages > 0 && psz > 0 && (int64_t)pages <= INT64_MAX / psz ? (int64_t)pages * psz : 0;
  atomic_store(&cached, v);
  return v;
}
