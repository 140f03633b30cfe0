/* version.h — the version of remora, in one place: `remora --version`, the
 * usage line of `remora --help`, and (checked by tests/sh/man.sh) the header
 * of man/remora.1 all show this string. */
#ifndef REMORA_VERSION_H
#define REMORA_VERSION_H
#define REMORA_VERSION "0.3.0"
#endif
