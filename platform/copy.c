/* copy.c — host memory copies by several threads: one core copies at
 * about 7 GB/s on the GPU hosts (../shared/DEVICE.md), slower than the
 * page-locked transfers it sits between when ranks of one host stage
 * through shared memory (host/md/node_stage.c, host/lqcd/halo_node.c). */
#include "platform.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void cp_copy_threads(void *dst, const void *src, size_t n, int threads)
{
#ifdef _OPENMP
    const int T = threads;
    if (T > 1 && n >= 1024 * (size_t)T) {
        /* ceil(n / T) up to whole cache lines: T pieces cover all n bytes
         * (floor(n / T) would leave n mod T bytes uncopied wherever it is
         * already a multiple of 64) */
        const size_t piece = ((n + (size_t)T - 1) / (size_t)T + 63) / 64 * 64;
#pragma omp parallel for num_threads(T) schedule(static)
        for (int t = 0; t < T; t++) {
            const size_t a = (size_t)t * piece;
            if (a < n) memcpy((char *)dst + a, (const char *)src + a, n - a < piece ? n - a : piece);
        }
        return;
    }
#endif
    (void)threads;
    memcpy(dst, src, n);
}

size_t cp_page_size(void)
{
    const long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

int cp_copy_threads_for(const clphys_context *ctx, int ranks_here, const char *env)
{
    /* the host's cores shared by its ranks, at most 8 (past 4 only copies
     * of about a megabyte still gain: bench/md-mpi-notes.md, round 11); 1
     * beside a CPU device, whose own threads have the cores */
    int T = 1;
#ifdef _OPENMP
    T = omp_get_num_procs() / (ranks_here > 0 ? ranks_here : 1);
#endif
    if (T > 8) T = 8;
    if (ctx->info.is_cpu) T = 1;
    const char *te = env ? getenv(env) : NULL;
    if (te && *te) T = atoi(te);
    return T < 1 ? 1 : T > 64 ? 64 : T;
}
