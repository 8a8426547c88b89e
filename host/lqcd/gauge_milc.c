/* gauge_milc.c — MILC version-5 binary gauge files, read only (format:
 * include/clphys_lqcd.h; the layout of the MILC code's io_lat4.c and of
 * its binary_samples). */
#include "lqcd_gauge_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MILC_MAGIC        20103u
#define MILC_HEADER_BYTES 96 /* magic, dims[4], time stamp[64], order, sum29, sum31 */
#define CHUNK_SITES       1024

static uint32_t rotl(uint32_t x, unsigned r) { return r ? x << r | x >> (32 - r) : x; }

clphys_status lqcd_gauge_file_read_milc(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                        clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info)
{
    const char *file = in->name;
    unsigned char h[MILC_HEADER_BYTES];
    CP_TRY(lqcd_gauge_file_read(in, h, sizeof h, "the MILC header"));
    const int little = lqcd_gauge_file_le32(h) == MILC_MAGIC;
    uint32_t (*word)(const unsigned char *) = little ? lqcd_gauge_file_le32 : lqcd_gauge_file_be32;
    int dims[4];
    for (int mu = 0; mu < 4; mu++) {
        uint32_t d = word(h + 4 + 4 * mu);
        if (d < 1 || d > 1u << 30)
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: MILC header: dimension %d is %d", file, mu + 1, (int32_t)d);
        dims[mu] = (int)d;
    }
    uint32_t order = word(h + 84);
    if (order != 0)
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: MILC header: site order %u (a site list follows); clphys reads natural order (0) only",
                        file, order);
    const uint32_t want29 = word(h + 88), want31 = word(h + 92);
    info->precision = CLPHYS_FP32;
    info->rows = 3;
    uint64_t expect;
    CP_TRY(lqcd_gauge_file_check_dims(file, dims, 18, 4, &expect));
    if (in->size != MILC_HEADER_BYTES + expect)
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: file size %llu bytes disagrees with the MILC header: %d header bytes + %llu data bytes "
                        "(%dx%dx%dx%d, fp32)",
                        file, (unsigned long long)in->size, MILC_HEADER_BYTES, (unsigned long long)expect, dims[0],
                        dims[1], dims[2], dims[3]);
    CP_TRY(clphys_lqcd_gauge_create(dims, g));
    const size_t site_bytes = 72 * 4;
    unsigned char *raw = malloc(CHUNK_SITES * site_bytes);
    if (!raw) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: read buffer", file);
    clphys_status st = CLPHYS_SUCCESS;
    uint32_t s29 = 0, s31 = 0;
    for (size_t s0 = 0; !st && s0 < g->volume; s0 += CHUNK_SITES) {
        size_t ns = g->volume - s0 < CHUNK_SITES ? g->volume - s0 : CHUNK_SITES;
        if ((st = lqcd_gauge_file_read(in, raw, ns * site_bytes, "the link data"))) break;
        for (size_t s = 0; s < ns; s++) {
            /* word k of site r is rotated by (72 r + k) mod 29 (mod 31) */
            uint64_t r = (uint64_t)(s0 + s) * 72;
            for (unsigned k = 0; k < 72; k++) {
                uint32_t w = word(raw + s * site_bytes + 4 * k);
                s29 ^= rotl(w, (unsigned)((r + k) % 29));
                s31 ^= rotl(w, (unsigned)((r + k) % 31));
            }
        }
        lqcd_gauge_file_decode(raw, ns * 72, 4, little, g->u + s0 * 72);
    }
    free(raw);
    const int match = s29 == want29 && s31 == want31;
    if (!st && !match) {
        char what[96];
        snprintf(what, sizeof what, "MILC checksums %x %x skipped (the data's are %x %x)", want29, want31, s29, s31);
        if (!want29 && !want31) /* writers that compute none leave 0; sums of 0 verify */
            lqcd_gauge_file_unverified(info, "MILC checksums 0");
        else if (p && p->allow_unverified)
            lqcd_gauge_file_unverified(info, what);
        else
            st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: MILC checksum mismatch: header %x %x, data %x %x", file, want29,
                          want31, s29, s31);
    }
    info->checksum_verified = match;
    if (!st) st = lqcd_gauge_file_verify(file, p, g, NULL, NULL, info);
    return st;
}
