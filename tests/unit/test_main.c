/* test_main.c — runner for the unit tests: runs every registered test (or
 * those whose names contain argv[1]), prints PASS/FAIL per test and ends with
 * "N passed, N failed"; a test that took a second or more (wall) or a
 * CPU-second has both on its line (the CPU-seconds of every thread of the
 * process, the engine's pool included, and of the children it waited for:
 * a loaded machine inflates them far less than the wall), so a slow run
 * shows what fills it. Exit status 1
 * if any test failed. `--child NAME`
 * runs a CHILD entry point instead (test.h). The prefix cache
 * of sessions is off (REMORA_PREFIX_CACHE_GB=0) unless a test opens one in
 * a folder of its own. */
#include <limits.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "test.h"

#define MAX_TESTS 1024
static struct { const char *name; test_fn fn; } tests[MAX_TESTS];
static int ntests, cur_failed;
#define MAX_CHILDREN 32
static struct { const char *name; child_fn fn; } children[MAX_CHILDREN];
static int nchildren;

void t_register(const char *name, test_fn fn)
{
    if (ntests < MAX_TESTS) { tests[ntests].name = name; tests[ntests].fn = fn; ntests++; }
}

void t_register_child(const char *name, child_fn fn)
{
    if (nchildren < MAX_CHILDREN) { children[nchildren].name = name; children[nchildren].fn = fn; nchildren++; }
}

int t_run_child(const char *name, const char *const *args)
{
    const char *argv[40] = { "remora-tests", "--child", name };
    int n = 3;
    for (; args && args[n - 3] && n < 39; n++) argv[n] = args[n - 3];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

void t_fail(const char *file, int line, const char *expr)
{
    cur_failed++;
    fprintf(stderr, "  %s:%d: check failed: %s\n", file, line, expr);
}

int t_failed_now(void) { return cur_failed; }

/* The repository's tests/fixtures, found from the test binary's own path
 * (build/<mode>/remora-tests), so the tests read the fixtures of their clone
 * whatever the current directory; $REMORA_FIXTURES overrides. */
static const char *fixtures_root(void)
{
    static char root[PATH_MAX + 100];
    const char *env = getenv("REMORA_FIXTURES");
    if (env && *env) return env;
    if (root[0]) return root;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 3; up++) {        /* remora-tests, <mode>, build */
            char *slash = strrchr(exe, '/');
            if (!slash) break;
            *slash = 0;
        }
        snprintf(root, sizeof root, "%s/tests/fixtures", exe);
    } else {
        snprintf(root, sizeof root, "tests/fixtures");
    }
    return root;
}

const char *fixture_path(const char *rel)
{
    static char bufs[8][8192];
    static int k;
    const char *root = fixtures_root();
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "  FIXTURES MISSING: %s does not exist (set REMORA_FIXTURES)\n", root);
        cur_failed++;
        return NULL;
    }
    char *b = bufs[k++ & 7], abs_root[PATH_MAX + 200];
    if (!realpath(root, abs_root)) snprintf(abs_root, sizeof abs_root, "%s", root);
    snprintf(b, sizeof bufs[0], "%s/%s", abs_root, rel);
    return b;
}

char *t_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) { fclose(f); return NULL; }   /* a folder opens too */
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) { free(p); p = NULL; }
    fclose(f);
    if (p) { p[n] = 0; if (len) *len = (size_t)n; }
    return p;
}

/* User and system seconds of every thread of this process and of the
 * children it waited for (a test's CHILD runs). */
static double cpu_seconds(void)
{
    double sum = 0;
    struct rusage ru;
    if (!getrusage(RUSAGE_SELF, &ru))
        sum += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    if (!getrusage(RUSAGE_CHILDREN, &ru))
        sum += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    return sum;
}

int main(int argc, char **argv)
{
    int pass = 0, fail = 0;
    /* sessions keep no prefix cache (in the user's ~/.cache) unless a test
     * gives one a folder of its own */
    setenv("REMORA_PREFIX_CACHE_GB", "0", 1);
    if (argc >= 3 && !strcmp(argv[1], "--child")) {
        for (int i = 0; i < nchildren; i++)
            if (!strcmp(children[i].name, argv[2])) return children[i].fn(argc - 3, argv + 3);
        fprintf(stderr, "no child entry point %s\n", argv[2]);
        return 2;
    }
    for (int i = 0; i < ntests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        cur_failed = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const double cpu0 = cpu_seconds();
        tests[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        double cpu = cpu_seconds() - cpu0;
        char took[48] = "";
        if (s >= 1.0 || cpu >= 1.0) snprintf(took, sizeof took, " (%.1f s, %.1f CPU-s)", s, cpu);
        if (cur_failed) { fail++; printf("FAIL %s%s\n", tests[i].name, took); }
        else { pass++; printf("PASS %s%s\n", tests[i].name, took); }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
