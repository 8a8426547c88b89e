/* fuzz_file.h — the readers take file names: each input is written to an
 * in-memory file (memfd) whose /proc/self/fd path the reader opens. */
#ifndef CLPHYS_FUZZ_FILE_H
#define CLPHYS_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>

/* The path of a regular file holding exactly data[0 .. size); NULL when it
 * cannot be made (the input is then skipped). */
const char *fuzz_file(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
