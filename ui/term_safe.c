/* term_safe.c — text from the network or a file made safe before a
 * terminal shows it (term_safe.h). Whether f is a terminal is asked at
 * each call (isatty is one ioctl): text and messages are few per second. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "ui/term_safe.h"

int ui_safe_write(FILE *f, const char *p, size_t n, int lines)
{
    if (!isatty(fileno(f))) return fwrite(p, 1, n, f) == n ? 0 : -1;
    rm_buf b = { 0 };
    if (rm_text_safe(&b, p, n, lines ? RM_SAFE_LINES : 0)) { rm_buf_free(&b); errno = ENOMEM; return -1; }
    int rc = fwrite(b.p ? b.p : "", 1, b.len, f) == b.len ? 0 : -1;
    rm_buf_free(&b);
    return rc;
}

void ui_safe_errorf(const char *prog, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rm_buf b = { 0 };
    const int tty = isatty(STDERR_FILENO);
    if (tty && rm_text_safe(&b, msg, strlen(msg), 0)) {
        rm_buf_free(&b);
        fprintf(stderr, "%s: (a message that could not be shown: out of memory)\n", prog);
        return;
    }
    fprintf(stderr, "%s: %.*s\n", prog, tty ? (int)b.len : (int)strlen(msg), tty ? (b.p ? b.p : "") : msg);
    rm_buf_free(&b);
}
