/* read_all.c — all of a stream into an rm_buf (see read_all.h). */
#include "read_all.h"

int read_all(FILE *f, rm_buf *b)
{
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (rm_buf_add(b, chunk, n)) return -1;
    return ferror(f) ? -2 : 0;
}
