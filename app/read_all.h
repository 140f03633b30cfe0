/* read_all.h — all of a stream into an rm_buf, for the commands that read
 * their input from stdin (`remora run --prompt -`, `remora tokenize`). */
#ifndef REMORA_APP_READ_ALL_H
#define REMORA_APP_READ_ALL_H

#include <stdio.h>
#include "engine.h"

/* Appends the rest of f to b. Returns 0, -1 when out of memory (b holds
 * what fitted), or -2 on a read error. */
int read_all(FILE *f, rm_buf *b);

#endif
