/* term_safe.h — writing text that came from the network or a file (an
 * endpoint's reply, its error messages and headers, a model's output, a
 * message quoting a file) to standard output or standard error: on a
 * terminal it goes through rm_text_safe (engine.h), so no escape sequence,
 * C1 control, DEL or bare CR of someone else's reaches the terminal, where
 * it could move the cursor, retitle the window or make the terminal answer
 * into the shell's input; to a file or a pipe it goes as it is. */
#ifndef REMORA_UI_TERM_SAFE_H
#define REMORA_UI_TERM_SAFE_H
#include <stddef.h>
#include <stdio.h>

/* n bytes of text to f; lines: LF and TAB are kept (else shown as \n,
 * \t: a name that must stay on its line). 0, or -1 with errno set. */
int  ui_safe_write(FILE *f, const char *p, size_t n, int lines);
/* One line to standard error: "PROG: " and the formatted message, made
 * safe as a whole (one line: an LF in it is shown as \n) on a terminal. */
void ui_safe_errorf(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
