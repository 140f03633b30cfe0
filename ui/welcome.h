/* welcome.h — the text the answer pane opens with: what model this is, how
 * it sits in RAM and on storage, what it can do, and where help is. It is an
 * ordinary note of the transcript, so it scrolls away like any text. */
#ifndef REMORA_UI_WELCOME_H
#define REMORA_UI_WELCOME_H

#include "source.h"

/* The embedded model's name (its model card's title): the welcome adds
 * what it can do and prompts to try. */
#define UI_EMBEDDED_MODEL "remora-k3-demo"

/* Writes the welcome for source s into out (appended). Returns 0, or -1
 * when out of memory. */
int ui_welcome(const ui_source *s, rm_buf *out);

/* "56.5 M", "2.80 T": a count of parameters. */
void ui_fmt_count(char *buf, size_t n, double count);

#endif
