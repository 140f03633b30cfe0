/* app.h — the chat application's state, shared by the UI's own files
 * (loop.c: event loop and drawing; commands.c: prompts, slash commands and
 * the transcript; chat.c: start-up and teardown; bench.c). Not for app/. */
#ifndef REMORA_UI_APP_H
#define REMORA_UI_APP_H

#include "ui/chat.h"
#include "ui/keys.h"
#include "ui/layout.h"
#include "pane.h"
#include "panel.h"
#include "ui/stats.h"
#include "term.h"
#include "ui/worker.h"

/* Styles of transcript blocks. */
enum { UI_S_USER, UI_S_ANSWER, UI_S_REASONING, UI_S_NOTE, UI_S_ERROR, UI_S_MARK, UI_S_HEADER };

/* Parts of the screen that need drawing in the next frame. */
enum {
    UI_D_LAYOUT = 1, UI_D_STATUS = 2, UI_D_ANSWER = 4, UI_D_REASONING = 8,
    UI_D_PANELS = 16, UI_D_INPUT = 32, UI_D_ALL = 63
};

typedef struct ui_app {
    ui_term        term;
    ui_source     *src;
    ui_worker     *worker;
    int            wake_fd, in_fd;
    ui_keyparser   kp;
    ui_pane        answer, reasoning;
    int            focus;           /* 0 answer, 1 reasoning */
    ui_stats      *stats;
    ui_drain      *drain;
    ui_layout      lay;
    ui_layout_opts lopt;
    ui_router_view router;
    unsigned       dirty;
    int            generating, stopping, turns;
    int            busy_cmd;        /* a non-turn command is running */
    rm_gen_opts    gen;
    char          *system_text;
    char           hint[512];
    int            hint_role;
    double         hint_until;
    int            quit;
    double         last_frame;
    uint64_t       frames;
    int            bench;           /* quit when the first turn ends */
} ui_app;

/* chat.c: sets up everything around a source (which the app then owns);
 * in_fd < 0 means no keyboard (the benchmark). */
int  ui_app_open(ui_app *a, ui_source *src, FILE *out, FILE *in, int in_fd, int mouse,
                 const char *history_path, const char *log_path, char *err, size_t errlen);
void ui_app_close(ui_app *a);

/* loop.c */
int    ui_app_loop(ui_app *a);
double ui_now(void);

/* commands.c */
void ui_app_line(void *ud, char *line);             /* readline's line handler */
void ui_app_submit(ui_app *a, const char *text);    /* sends a message */
void ui_app_done(ui_app *a, const ui_done *d);      /* a worker command ended */
void ui_app_hint(ui_app *a, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ui_app_note(ui_app *a, int style, const char *text);
void ui_app_help(ui_app *a);
int    ui_style_role(int style);

#endif
