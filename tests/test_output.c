/* test_output.c — atomic outputs (clphys_output_open/close,
 * clphys_outputs_remove_pending; issue 32 D1-D3, U4, U6): the file appears
 * whole or not at all, a full disk is named (ENOSPC from /dev/full put
 * under the open file), a 250-character name works, a FIFO is never
 * replaced, the signal handler's call removes what is open, and the
 * leftovers of dead processes (only those) are removed by the next write.
 * No device; well under a second. */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[512];

static int exists(const char *p) { return access(p, F_OK) == 0; }

/* The names in dir that contain s. */
static int count_names(const char *s)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c -F -- '%s'", dir, s);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static void test_whole_or_absent(void **state)
{
    (void)state;
    char file[600], tmp[4200];
    snprintf(file, sizeof file, "%s/out.txt", dir);
    FILE *f;
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_SUCCESS);
    assert_true(exists(tmp) && !exists(file));
    fputs("hello\n", f);
    assert_int_equal(clphys_output_close(f, tmp, file, 1), CLPHYS_SUCCESS);
    assert_true(exists(file) && !exists(tmp));
    /* a failed write: the old file stays, the temporary goes */
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_SUCCESS);
    errno = EIO;
    assert_int_equal(clphys_output_close(f, tmp, file, 0), CLPHYS_ERR_IO);
    assert_true(exists(file) && !exists(tmp));
    assert_int_equal(count_names(".tmp."), 0);
}

static void test_full_disk_named(void **state)
{
    (void)state;
    char file[600], tmp[4200];
    snprintf(file, sizeof file, "%s/full.txt", dir);
    FILE *f;
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_SUCCESS);
    int full = open("/dev/full", O_WRONLY);
    if (full < 0) skip();
    assert_true(dup2(full, fileno(f)) >= 0); /* every write now fails with ENOSPC */
    close(full);
    for (int k = 0; k < 20000; k++) fputs("0123456789abcdef\n", f);
    clphys_status st = clphys_output_close(f, tmp, file, 1);
    print_message("# %s\n", clphys_last_error(NULL));
    assert_int_equal(st, CLPHYS_ERR_IO);
    assert_non_null(strstr(clphys_last_error(NULL), strerror(ENOSPC)));
    unlink(tmp);
    assert_false(exists(file));
}

static void test_long_name(void **state)
{
    (void)state;
    char name[251], file[800], tmp[4200];
    memset(name, 'a', 250);
    name[250] = 0;
    snprintf(file, sizeof file, "%s/%s", dir, name);
    FILE *f;
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_SUCCESS);
    print_message("# temporary %s\n", strrchr(tmp, '/') + 1);
    assert_non_null(strstr(tmp, "/.clphys-"));
    assert_int_equal(clphys_output_close(f, tmp, file, 1), CLPHYS_SUCCESS);
    assert_true(exists(file));
    unlink(file);
}

static void test_fifo_refused(void **state)
{
    (void)state;
    char file[600], tmp[4200];
    snprintf(file, sizeof file, "%s/fifo", dir);
    assert_int_equal(mkfifo(file, 0600), 0);
    FILE *f;
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_ERR_IO);
    assert_non_null(strstr(clphys_last_error(NULL), "not a regular file"));
    struct stat sb;
    assert_int_equal(stat(file, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(count_names(".tmp."), 0);
    unlink(file);
}

static void test_pending_removed(void **state)
{
    (void)state;
    char a[600], b[600], ta[4200], tb[4200];
    snprintf(a, sizeof a, "%s/a.dat", dir);
    snprintf(b, sizeof b, "%s/b.dat", dir);
    FILE *fa, *fb;
    assert_int_equal(clphys_output_open(a, &fa, ta, sizeof ta), CLPHYS_SUCCESS);
    assert_int_equal(clphys_output_open(b, &fb, tb, sizeof tb), CLPHYS_SUCCESS);
    assert_int_equal(clphys_output_close(fb, tb, b, 1), CLPHYS_SUCCESS);
    assert_true(exists(ta));
    clphys_outputs_remove_pending(); /* what the CLI's signal handler calls */
    assert_false(exists(ta));
    assert_true(exists(b)); /* a finished output is not touched */
    assert_int_equal(clphys_output_close(fa, ta, a, 1), CLPHYS_ERR_IO);
    unlink(b);
}

static void test_dead_leftovers(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (!child) _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child); /* its pid is now dead */
    char file[600], dead[700], alive[700], other[700], tmp[4200];
    snprintf(file, sizeof file, "%s/snap.txt", dir);
    snprintf(dead, sizeof dead, "%s.tmp.%ld", file, (long)child);
    snprintf(alive, sizeof alive, "%s.tmp.1", file); /* pid 1 lives */
    snprintf(other, sizeof other, "%s.tmp", file);   /* not the pattern */
    const char *mk[] = {dead, alive, other};
    for (int k = 0; k < 3; k++) fclose(fopen(mk[k], "w"));
    FILE *f;
    assert_int_equal(clphys_output_open(file, &f, tmp, sizeof tmp), CLPHYS_SUCCESS);
    assert_int_equal(clphys_output_close(f, tmp, file, 1), CLPHYS_SUCCESS);
    assert_false(exists(dead));
    assert_true(exists(alive) && exists(other) && exists(file));
    unlink(alive), unlink(other), unlink(file);
}

int main(void)
{
    tu_tempdir("output", dir, sizeof dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_or_absent), cmocka_unit_test(test_full_disk_named),
        cmocka_unit_test(test_long_name),       cmocka_unit_test(test_fifo_refused),
        cmocka_unit_test(test_pending_removed), cmocka_unit_test(test_dead_leftovers),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    tu_remove_tempdir(dir);
    return r;
}
