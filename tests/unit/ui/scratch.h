/* scratch.h — a scratch folder for the ui tests that write files: made
 * under /tmp, its entries counted (to see that no temporary file is left),
 * and removed with everything in it. */
#ifndef REMORA_TEST_SCRATCH_H
#define REMORA_TEST_SCRATCH_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

/* Entries of dir, "." and ".." and other dot files aside. */
static inline int scratch_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static inline void scratch_remove(const char *dir)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
}

#endif
