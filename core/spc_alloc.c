/* spc_alloc.c -- the one allocation seam of the library.
 * A test hook (spc_alloc_fail_at) makes the k-th allocation from now fail.
 * Arrays may also live in a temporary file instead of memory (spc_map_*,
 * below): spc_free and spc_realloc know them. */
#include "spc_impl.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

static bool map_release(void *p);
static size_t map_size(const void *p);
static _Atomic int map_live; /* mappings now: spc_free looks them up only then */

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
 * DIA of a 2.2 M-nonzero stencil: 152 k page faults down to 8 k), and a
 * scatter over it misses the TLB less.  Only a hint: the memory and its
 * contents are the same.  SPCONV_HUGEPAGES=0 in the environment turns it
 * off (asked on each such array, so a program may set it at any time
 * before; the generated routines ask the same variable). */
int spc_hugepages_on(void) {
  const char *s = getenv("SPCONV_HUGEPAGES");
  return !(s && s[0] == '0' && !s[1]);
}

static void *hint_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t)p + 0x1fffff) & ~(uintptr_t)0x1fffff;
  uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)0x1fffff;
  if (p && n >= ((size_t)4 << 20) && e > a && spc_hugepages_on())
    (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)n;
#endif
  return p;
}

/* Whether the machine is a virtual machine whose balloon device reports
 * free pages to the hypervisor (virtio-balloon with
 * VIRTIO_BALLOON_F_REPORTING, feature bit 5): the guest's free 2 MiB
 * blocks are then handed back to the host, and the first touch of one
 * faults on the host too.  Measured on such a machine (Firecracker, Linux
 * 6.18): a fresh huge page is written at 0.5-0.6 GB/s against 2.4 GB/s
 * for fresh 4 KiB pages, and 11.6 GB/s for huge pages the process has
 * just freed.  root: "/sys" (or a test's copy of its layout). */
int spc_free_page_reporting(const char *root) {
  char path[512];
  snprintf(path, sizeof path, "%s/bus/virtio/drivers/virtio_balloon", root ? root : "/sys");
  DIR *d = opendir(path);
  if (!d) return 0;
  int yes = 0;
  struct dirent *de;
  while (!yes && (de = readdir(d))) {
    if (strncmp(de->d_name, "virtio", 6) || strlen(de->d_name) > 64) continue;
    char fp[1024], bits[160] = {0};
    snprintf(fp, sizeof fp, "%s/%s/features", path, de->d_name);
    FILE *f = fopen(fp, "r");
    if (!f) continue;
    /* one character a feature bit, bit 0 first */
    size_t k = fread(bits, 1, sizeof bits - 1, f);
    fclose(f);
    yes = k > 5 && bits[5] == '1';
  }
  closedir(d);
  return yes;
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
  size_t m = p && atomic_load_explicit(&map_live, memory_order_relaxed) ? map_size(p) : 0;
  if (m) { /* a mapped array moves back to memory */
    void *q = malloc(n ? n : 1);
    if (!q) return NULL;
    memcpy(q, p, m < n ? m : n);
    map_release(p);
    return hint_huge(q, n);
  }
  return hint_huge(realloc(p, n ? n : 1), n);
}

void spc_free(void *p) {
  if (p && atomic_load_explicit(&map_live, memory_order_relaxed) && map_release(p)) return;
  free(p);
}

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

/* ---- arrays in a temporary file ------------------------------------------
 * A shared mapping of an unlinked file in $TMPDIR (or /tmp), its blocks
 * reserved up front (posix_fallocate: a full disk is an error here, never
 * a SIGBUS later) and reading as zeros.  What is written goes to the page
 * cache and on to the disk; spc_map_drop takes the pages out of the
 * process (its resident size), keeping their contents, so an array of any
 * size costs the process only the pages touched since the last drop.
 * The table of live mappings is small (a conversion's output arrays) and
 * guarded by one mutex. */
typedef struct map_ent {
  void *p;
  size_t n;
} map_ent;
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static map_ent *map_tab;
static int map_n, map_cap;

static int map_find(const void *p) { /* under map_lock */
  for (int k = 0; k < map_n; k++)
    if (map_tab[k].p == p) return k;
  return -1;
}

static size_t map_size(const void *p) {
  pthread_mutex_lock(&map_lock);
  int k = map_find(p);
  size_t n = k >= 0 ? map_tab[k].n : 0;
  pthread_mutex_unlock(&map_lock);
  return n;
}

static bool map_release(void *p) {
  pthread_mutex_lock(&map_lock);
  int k = map_find(p);
  if (k >= 0) {
    (void)munmap(map_tab[k].p, map_tab[k].n);
    map_tab[k] = map_tab[--map_n];
    atomic_fetch_sub(&map_live, 1);
  }
  pthread_mutex_unlock(&map_lock);
  return k >= 0;
}

spc_status spc_map_alloc(size_t n, void **out, spc_error *e) {
  *out = NULL;
  if (should_fail()) return SPC_NOMEM(e);
  const char *d = getenv("TMPDIR");
  char path[600];
  snprintf(path, sizeof path, "%s/spconv-out-XXXXXX", d && *d ? d : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return spc_err(e, SPC_ERR_IO, path, 0, 0,
                   "cannot create a temporary file for the output: %s", strerror(errno));
  unlink(path); /* gone with the mapping, whatever happens */
  size_t len = n ? n : 1;
  int r = posix_fallocate(fd, 0, (off_t)len);
  void *p = MAP_FAILED;
  if (!r) p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = r ? r : errno;
  close(fd);
  if (r || p == MAP_FAILED)
    return spc_err(e, !r && err == ENOMEM ? SPC_ERR_NOMEM : SPC_ERR_IO, path, 0, 0, "cannot %s %zu bytes of output in a temporary file: %s",
                   r ? "reserve" : "map", len, strerror(err));
  pthread_mutex_lock(&map_lock);
  if (map_n == map_cap) {
    int cap = map_cap ? 2 * map_cap : 16;
    map_ent *t = realloc(map_tab, (size_t)cap * sizeof *t);
    if (!t) {
      pthread_mutex_unlock(&map_lock);
      munmap(p, len);
      return SPC_NOMEM(e);
    }
    map_tab = t;
    map_cap = cap;
  }
  map_tab[map_n++] = (map_ent){p, len};
  atomic_fetch_add(&map_live, 1);
  pthread_mutex_unlock(&map_lock);
  *out = p;
  return SPC_OK;
}

/* Whether the page at p (page-sized) holds only zero bytes. */
static bool page_zero(const unsigned char *p, size_t n) {
  const uint64_t *w = (const uint64_t *)(const void *)p;
  uint64_t acc = 0;
  size_t k = 0;
  for (; k + 8 <= n / 8; k += 8)
    acc |= w[k] | w[k + 1] | w[k + 2] | w[k + 3] | w[k + 4] | w[k + 5] | w[k + 6] | w[k + 7];
  for (; k < n / 8; k++) acc |= w[k];
  for (size_t b = n / 8 * 8; b < n; b++) acc |= p[b];
  return acc == 0;
}

spc_status spc_map_adopt(void **pp, size_t n, spc_error *e) {
  void *m = NULL;
  spc_status s = spc_map_alloc(n, &m, e);
  if (s) return s;
  /* the file reads as zeros: only pages holding something are copied (an
   * array that init allocated and did not fill costs no writes) */
  const size_t pg = 4096, drop = (size_t)64 << 20;
  const unsigned char *src = *pp;
  unsigned char *dst = m;
  for (size_t o = 0; o < n; o += pg) {
    size_t k = n - o < pg ? n - o : pg;
    if (!page_zero(src + o, k)) memcpy(dst + o, src + o, k);
    if ((o + pg) % drop == 0) spc_map_drop(m);
  }
  spc_map_drop(m);
  spc_free(*pp);
  *pp = m;
  return SPC_OK;
}

void spc_prefault_write(void *p, size_t n, int nt) {
#ifdef MADV_POPULATE_WRITE
  if (!p || n < ((size_t)1 << 20) || spc_map_owns(p)) return;
  const uintptr_t pg = 4096, b = (uintptr_t)p & ~(pg - 1), end = (uintptr_t)p + n;
  if (nt < 1) nt = 1;
  /* slices of whole pages; the first starts at p's page (its bytes before
   * p kept as they are, like every other byte) */
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int t = 0; t < nt; t++) {
    uintptr_t x0 = b + ((end - b) / (uintptr_t)nt * (uintptr_t)t & ~(pg - 1));
    uintptr_t x1 = t == nt - 1 ? end : b + ((end - b) / (uintptr_t)nt * (uintptr_t)(t + 1) & ~(pg - 1));
    if (x1 > x0) (void)madvise((void *)x0, x1 - x0, MADV_POPULATE_WRITE); /* EINVAL: an older kernel */
  }
#else
  (void)p, (void)n, (void)nt;
#endif
}

bool spc_map_owns(const void *p) {
  return p && atomic_load_explicit(&map_live, memory_order_relaxed) && map_size(p) > 0;
}

void spc_map_drop(const void *p) {
  if (!p || !atomic_load_explicit(&map_live, memory_order_relaxed)) return;
  pthread_mutex_lock(&map_lock);
  int k = map_find(p);
  if (k >= 0) (void)madvise(map_tab[k].p, map_tab[k].n, MADV_DONTNEED);
  pthread_mutex_unlock(&map_lock);
}

void spc_map_drop_all(void) {
  if (!atomic_load_explicit(&map_live, memory_order_relaxed)) return;
  pthread_mutex_lock(&map_lock);
  for (int k = 0; k < map_n; k++) (void)madvise(map_tab[k].p, map_tab[k].n, MADV_DONTNEED);
  pthread_mutex_unlock(&map_lock);
}

int spc_map_live(void) { return atomic_load(&map_live); }

/* ---- descriptors and spawned children (spc_impl.h) ----------------------- */
static pthread_rwlock_t spawn_guard = PTHREAD_RWLOCK_INITIALIZER;
/* this thread's shared holds (a .bsp.h5 open while its conversion JIT-
 * compiles: the spawn gives the shared side up meanwhile -- the child has
 * closed this thread's descriptors too when posix_spawn returns) and
 * whether it holds the exclusive side */
static _Thread_local int guard_shared, guard_excl;
void spc_spawn_guard_shared(void) {
  if (!guard_shared++) pthread_rwlock_rdlock(&spawn_guard);
}
void spc_spawn_guard_exclusive(void) {
  if (guard_shared) pthread_rwlock_unlock(&spawn_guard);
  pthread_rwlock_wrlock(&spawn_guard);
  guard_excl = 1;
}
void spc_spawn_guard_release(void) {
  if (guard_excl) {
    guard_excl = 0;
    pthread_rwlock_unlock(&spawn_guard);
    if (guard_shared) pthread_rwlock_rdlock(&spawn_guard);
  } else if (guard_shared && !--guard_shared) {
    pthread_rwlock_unlock(&spawn_guard);
  }
}
