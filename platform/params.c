/* params.c — reading a caller's parameter struct of any layout the library
 * has had (platform.h, "parameter structs"; docs/design.md, the API). */
#include "platform.h"

#include <string.h>

clphys_status cp_params_in(clphys_context *ctx, const char *type, const void *src, size_t size_1, size_t lib_size,
                           void *dst)
{
    memset(dst, 0, lib_size);
    memcpy(dst, &lib_size, sizeof lib_size);
    if (!src) return CLPHYS_SUCCESS; /* NULL: every field its default */
    size_t size;
    memcpy(&size, src, sizeof size);
    if (!size) size = size_1;
    if (size < sizeof(size_t) || size > CP_PARAMS_MAX)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "%s: struct_size %zu is no size of it (0, or sizeof(%s) of the application's build: "
                        "CLPHYS_PARAMS_INIT(%s); this library's is %zu)",
                        type, size, type, type, lib_size);
    /* a newer application's struct: its fields beyond ours must be unset */
    const unsigned char *tail = (const unsigned char *)src;
    for (size_t i = lib_size; i < size; i++)
        if (tail[i])
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "%s: byte %zu of %zu is set, a field this library (%zu bytes, clphys %s) does not have",
                            type, i, size, lib_size, clphys_version());
    memcpy((unsigned char *)dst + sizeof size, (const unsigned char *)src + sizeof size,
           (size < lib_size ? size : lib_size) - sizeof size);
    return CLPHYS_SUCCESS;
}
