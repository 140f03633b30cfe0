/* diskio.h — small file-system helpers: directories, files written
 * atomically (rm_write_atomic in engine.h), free space, and whole small files read back. */
#ifndef REMORA_DISKIO_H
#define REMORA_DISKIO_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

/* mkdir -p. */
int disk_mkdirs(const char *path, rm_err *err);
/* Atomic replacement of a file is rm_write_atomic (engine.h). */
/* Bytes an unprivileged writer may still use on path's file system; 0 if unknown. */
uint64_t disk_free(const char *path);
/* A whole file of at most max bytes (malloc'd, NUL-terminated), or NULL with
 * errno set (ENOENT when missing, EFBIG when larger). */
char *disk_read_file(const char *path, size_t max, size_t *len);
/* A temporary name next to path, unique to this process and thread; the
 * leftovers of dead processes are found by disk_tmp_stale(). */
void disk_tmp_name(char *buf, size_t cap, const char *path);
/* Whether a file name made by disk_tmp_name belongs to a process that is gone. */
int disk_tmp_stale(const char *name);

#endif
