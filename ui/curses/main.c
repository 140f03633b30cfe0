/* main.c — start-up and teardown of the chat: the source, the terminal,
 * readline, the worker, in that order, and back (see ui/main.h). */
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tui.h"
#include "input.h"
#include "ui/text.h"
#include "ui/xdg.h"

static void leave_screen(void *ud) { ui_term_leave(&((ui_tui *)ud)->term); }

static void enter_screen(void *ud)
{
    ui_tui *a = ud;
    ui_term_enter(&a->term);
    ui_term_resize(&a->term);
    a->dirty |= UI_D_LAYOUT;
}

int ui_main_open(ui_tui *a, ui_source *src, FILE *out, FILE *in, int in_fd, int mouse,
                const char *history_path, const char *log_path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->src = src;
    a->in_fd = in_fd;
    a->wake_fd = -1;
    ui_pane_init(&a->answer, "Answer");
    ui_pane_init(&a->reasoning, "Reasoning");
    ui_keys_init(&a->kp);
    a->stats = calloc(1, sizeof *a->stats);
    a->drain = calloc(1, sizeof *a->drain);
    a->gen.think = 1;
    a->gen.top_p = 1;
    ui_panels_fit(a->fit);
    a->lopt.panels = a->fit;
    a->lopt.npanels = ui_npanels;
    if (!a->stats || !a->drain) { snprintf(err, errlen, "out of memory"); goto fail; }
    if (ui_term_open(&a->term, out, in, mouse, log_path, err, errlen)) goto fail;
    ui_input_hooks hooks = { ui_slash_line, leave_screen, enter_screen, a };
    if (ui_input_init(history_path, &hooks)) {
        snprintf(err, errlen, "cannot start readline");
        ui_term_close(&a->term);
        goto fail;
    }
    if (ui_worker_start(src, &a->worker, &a->wake_fd)) {
        snprintf(err, errlen, "cannot start the worker thread");
        ui_input_free(NULL);
        ui_term_close(&a->term);
        goto fail;
    }
    return 0;
fail:
    ui_pane_free(&a->answer);
    ui_pane_free(&a->reasoning);
    ui_keys_free(&a->kp);
    free(a->stats);
    free(a->drain);
    return -1;
}

int ui_main_close(ui_tui *a, rm_err *err)
{
    ui_worker_free(a->worker);      /* stops a running turn at its next token */
    int rc = ui_input_free(err);
    ui_term_close(&a->term);
    a->src->vt->free(a->src);
    ui_pane_free(&a->answer);
    ui_pane_free(&a->reasoning);
    ui_keys_free(&a->kp);
    free(a->stats);
    free(a->drain);
    free(a->system_text);
    return rc;
}

int ui_main_run(const ui_main_opts *o)
{
    setlocale(LC_ALL, "");
    ui_text_set_utf8(!strcmp(nl_langinfo(CODESET), "UTF-8"));
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "remora chat: standard input and output must be a terminal\n");
        return 2;
    }
    rm_err err = { "" };
    ui_source *src = NULL;
    int rc = o->synthetic ? ui_source_synth_open(&o->synth, &src, &err)
                          : ui_source_engine_open(o->model_dir, &o->open, &src, &err);
    if (rc) { fprintf(stderr, "remora chat: %s\n", err.msg); return 1; }
    if (o->system && src->vt->set_system(src, o->system, &err)) {
        fprintf(stderr, "remora chat: %s\n", err.msg);
        src->vt->free(src);
        return 1;
    }

    char history[4096], log[4096], msg[512];
    int have_history = ui_xdg_path(history, sizeof history, "history") == 0;
    int have_log = ui_xdg_path(log, sizeof log, "chat.log") == 0;
    ui_tui *a = calloc(1, sizeof *a);
    if (!a) { src->vt->free(src); return 1; }
    if (ui_main_open(a, src, stdout, stdin, STDIN_FILENO, o->mouse, have_history ? history : NULL,
                    have_log ? log : NULL, msg, sizeof msg)) {
        fprintf(stderr, "remora chat: %s\n", msg);
        src->vt->free(src);
        free(a);
        return 1;
    }
    a->gen = o->gen;
    if (o->system) a->system_text = strdup(o->system);
    rc = ui_loop_run(a);
    if (ui_main_close(a, &err)) {       /* the terminal is back: say it there */
        fprintf(stderr, "remora chat: the input history was not saved: %s\n", err.msg);
        rc = -1;
    }
    free(a);
    return rc ? 1 : 0;
}
