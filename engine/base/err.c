/* err.c — error reporting for the engine: every failing call fills an rm_err
 * with one line naming the file or tensor and what is wrong, and returns -1;
 * where the failure is known to be bad input, rm_errf_input also marks it
 * so, and the command exits 2 rather than 1. */
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

static void verrf(rm_err *err, int kind, const char *fmt, va_list ap)
{
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    err->kind = kind;
}

int rm_errf_input(rm_err *err, const char *fmt, ...)
{
    if (err) { va_list ap; va_start(ap, fmt); verrf(err, RM_ERR_INPUT, fmt, ap); va_end(ap); }
    return -1;
}

int rm_errf_runtime(rm_err *err, const char *fmt, ...)
{
    if (err) { va_list ap; va_start(ap, fmt); verrf(err, RM_ERR_RUNTIME, fmt, ap); va_end(ap); }
    return -1;
}

int rm_err_status(const rm_err *err, int dflt)
{
    return err->kind == RM_ERR_INPUT ? 2 : err->kind == RM_ERR_RUNTIME ? 1 : dflt;
}
