/* replay.c — without libFuzzer (the ordinary build, gcc): run a target's
 * LLVMFuzzerTestOneInput once on every file of the folders (or files) named
 * on the command line: the committed seed corpus and the regression inputs
 * that fuzzing found.  Exit 0 when every input returned (a crash fails the
 * test; under the sanitizer build, so does any memory error or leak). */
#define _DEFAULT_SOURCE /* DT_DIR */
#include "fuzz_file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    size_t got = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!b || got != (size_t)n) {
        free(b);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(b, (size_t)n);
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    int inputs = 0, bad = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) continue; /* an empty regression folder is not committed */
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[a]);
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[a], e->d_name);
            bad |= run_file(p);
            inputs++;
        }
        if (d) closedir(d);
    }
    printf("replayed %d inputs\n", inputs);
    return bad || inputs == 0;
}
