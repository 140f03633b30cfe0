/* fmt.c — the one byte formatter of the program (rm_fmt_bytes, engine.h):
 * the CLI's progress and the chat's panels and notes say sizes the same
 * way, in SI units (1 kB = 10^3 bytes, as the panels' legend says). */
#include <stdio.h>
#include "engine.h"

const char *rm_fmt_bytes(char *buf, size_t cap, double b)
{
    if (b < 0) b = 0;
    if (b >= 1e12) snprintf(buf, cap, "%.2f TB", b / 1e12);
    else if (b >= 1e9) snprintf(buf, cap, "%.2f GB", b / 1e9);
    else if (b >= 1e6) snprintf(buf, cap, "%.1f MB", b / 1e6);
    else if (b >= 1e3) snprintf(buf, cap, "%.0f kB", b / 1e3);
    else snprintf(buf, cap, "%.0f B", b);
    return buf;
}
