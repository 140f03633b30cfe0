/* file.h — file-system helpers: directories, whole files, loops that read
 * or write until a span is complete, temporary names, free space. Files a
 * user cares about are replaced with rm_write_atomic or the two-step
 * rm_atomic_tmp_name / rm_atomic_commit (engine.h), implemented here. */
#ifndef REMORA_FILE_H
#define REMORA_FILE_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"

/* $XDG_CACHE_HOME/remora/SUB (else ~/.cache/remora/SUB) into out; "" when
 * neither names an absolute folder or the path does not fit. */
void file_cache_home(char *out, size_t cap, const char *sub);
/* mkdir -p. */
int file_mkdirs(const char *path, rm_err *err);
/* Opens path (open(2) flags) only when it is a regular file: the open is
 * non-blocking, so a FIFO or a device in place of a model file is refused
 * ("not a regular file") instead of blocking for ever, and the descriptor
 * is made blocking again before it is returned. -1 with err naming path. */
int file_open_regular(const char *path, int flags, rm_err *err);
/* The message for a failed open of path: the reason, and what to do when
 * the process is out of file handles (EMFILE, ENFILE). */
int file_open_error(const char *path, int e, rm_err *err);
/* A whole regular file of at most max bytes (malloc'd, NUL-terminated, its
 * length in *len), or NULL with err naming the path and the reason. */
char *file_read(const char *path, size_t max, size_t *len, rm_err *err);
/* Write or pwrite all n bytes, retrying short writes and EINTR: 0, or -1
 * with errno set (ENOSPC when the device accepts no more). */
int file_write_all(int fd, const void *p, size_t n);
int file_pwrite_all(int fd, const void *p, size_t n, uint64_t off);
/* pread n bytes at off: 0; 1 when the file ends first (errno 0); -1 on an
 * error (errno set). */
int file_pread_all(int fd, void *dst, size_t n, uint64_t off);
/* Bytes an unprivileged writer may still use on path's file system; 0 if unknown. */
uint64_t file_free_space(const char *path);
/* The file system's size in bytes (0 if unknown) and whether it is mounted
 * read-only. */
uint64_t file_fs_size(const char *path, int *read_only);
/* A temporary name next to path, unique to this process and thread; the
 * leftovers of dead processes are found by file_tmp_stale(). */
void file_tmp_name(char *buf, size_t cap, const char *path);
/* Whether a file name made by file_tmp_name belongs to a process that is gone. */
int file_tmp_stale(const char *name);
/* Removes the temporary files of path (file_tmp_name's) that dead
 * processes left, for example a save killed by SIGKILL; returns how many. */
int file_sweep_stale_tmps(const char *path);
/* The end of every atomic replacement, for writers that write the
 * temporary file (named by file_tmp_name) through an fd of their own: fd is
 * fsync'ed, checked to hold `size` bytes (UINT64_MAX: any), closed, renamed
 * over path, and path's folder is fsync'ed. On failure tmp is removed, path
 * is untouched and the message names path. fd is closed in every case.
 * rm_write_atomic and rm_atomic_commit end here too. */
int file_commit(int fd, const char *tmp, const char *path, uint64_t size, rm_err *err);

#ifdef REMORA_TEST
/* Test hook: how many file_commit calls have succeeded in this process. */
unsigned long file_test_commits(void);
#endif

#endif
