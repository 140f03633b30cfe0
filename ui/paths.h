/* paths.h — the file names a user types in /save and /load.
 *
 * A leading "~" or "~user" is expanded as a shell expands it (weechat and
 * irssi do the same), and a name that is an existing folder is refused with
 * "NAME: is a directory" before anything is read or written, so a /load of
 * a folder changes nothing and a /save to one says why it failed. The
 * refusals name the file as the user wrote it.
 */
#ifndef REMORA_UI_PATHS_H
#define REMORA_UI_PATHS_H

#include <stddef.h>
#include "engine.h"

/* Writes the expanded name of `typed` into out (cap bytes). Returns 0, or
 * -1 with a message (unknown user, no home, too long). */
int ui_path_expand(const char *typed, char *out, size_t cap, rm_err *err);
/* Returns 0 when `path` may be a transcript to read or write, or -1 when
 * it is a folder ("TYPED: is a directory"). */
int ui_path_not_dir(const char *path, const char *typed, rm_err *err);

#endif
