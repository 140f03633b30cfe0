/* err.c — error reporting for the engine: every failing call fills an rm_err
 * with one line naming the file or tensor and what is wrong, and returns -1. */
#include <stdarg.h>
#include <stdio.h>
#include "engine.h"

int rm_errf(rm_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}
