/* spc_omp.h -- the threads of a pass over n items (PK_NTHREADS: every
 * OpenMP thread, at most 64, from 65,536 items on, one below) and the
 * calling thread's number (PK_THREAD); 1 and 0 in a build without OpenMP.
 * Shared by the radix sort (spc_radix.c) and the conversion's packing of
 * level coordinates (assemble_write.c). */
#ifndef SPC_OMP_H
#define SPC_OMP_H

#ifdef _OPENMP
#include <omp.h>
#define PK_NTHREADS(n) ((n) >= 65536 ? (omp_get_max_threads() < 64 ? omp_get_max_threads() : 64) : 1)
#define PK_THREAD() omp_get_thread_num()
#else
#define PK_NTHREADS(n) 1
#define PK_THREAD() 0
#endif

#endif
