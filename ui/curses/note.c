/* note.c — what the chat says about itself: notes (command output,
 * errors, the marks a reply ends with) are blocks in the answer pane; while
 * a turn streams, the answer block must stay last, so notes then go to the
 * hint row instead, which also says why a line went back into the input
 * (ui_note_keep) and clears itself after a few seconds. When a pane's
 * document cannot take text (out of memory), the hint row says so at once,
 * a streaming turn is stopped, and the turn ends with an error note
 * (turn.c): the transcript never loses text without saying so. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "tui.h"
#include "note.h"
#include "draw.h"
#include "input.h"

#define HINT_SECONDS 5.0

int ui_note_role(int style)
{
    switch (style) {
    case UI_S_USER:      return UI_C_USER;
    case UI_S_REASONING: return UI_C_REASON;
    case UI_S_NOTE:      return UI_C_NOTE;
    case UI_S_ERROR:     return UI_C_ERROR;
    case UI_S_MARK:      return UI_C_MARK;
    case UI_S_HEADER:    return UI_C_TITLE;
    case UI_S_SUMMARY:   return UI_C_DIM;
    default:             return UI_C_TEXT;
    }
}

static void vhint(ui_tui *a, int role, const char *fmt, va_list ap)
{
    vsnprintf(a->hint.text, sizeof a->hint.text, fmt, ap);
    a->hint.role = role;
    a->hint.until = rm_now() + HINT_SECONDS;
    a->dirty |= UI_D_INPUT;
}

void ui_note_hint(ui_tui *a, int role, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vhint(a, role, fmt, ap);
    va_end(ap);
}

void ui_note_lost(ui_tui *a)
{
    a->text_lost = 1;
    if (a->generating && !a->stopping) {
        ui_worker_stop(a->worker);
        a->stopping = 1;
    }
    ui_note_hint(a, UI_C_ERROR, "out of memory: the transcript is missing text");
    a->dirty |= UI_D_STATUS;
}

/* rc of a document call: a failure is reported (ui_note_lost). */
void ui_note_check(ui_tui *a, int rc)
{
    if (rc < 0) ui_note_lost(a);
}

void ui_note_add(ui_tui *a, int style, const char *text)
{
    if (a->generating) {
        ui_note_hint(a, ui_note_role(style), "%.*s", (int)strcspn(text, "\n"), text);
        return;
    }
    ui_note_check(a, ui_doc_add(&a->answer.doc, style, text, strlen(text), 1, 0));
    if (a->welcome_pinned) ui_pane_changed(&a->answer);    /* the welcome stays in view */
    else ui_pane_end(&a->answer);
    a->dirty |= UI_D_ANSWER;
}

/* Puts a line the UI could not act on back into the input line, and says
 * why in the hint row. */
void ui_note_keep(ui_tui *a, int role, const char *line, const char *fmt, ...)
{
    if (ui_input_keep(line)) ui_note_lost(a);
    va_list ap;
    va_start(ap, fmt);
    vhint(a, role, fmt, ap);
    va_end(ap);
}
