/* main.c — start-up and teardown of the chat: the source, the terminal,
 * readline, the worker, in that order, and back (see ui/main.h).
 *
 * Every way out (/quit, Ctrl-D, SIGTERM, SIGHUP, the terminal going away)
 * ends here within about two seconds: the worker is asked to stop and given
 * WORKER_WAIT_S to return (an autosave in progress is waited for to its end
 * first, with the screen up and saying so, ui_loop_finish_save; any other
 * save in ui_worker_close); if the source is still busy then (a prompt the
 * engine cannot interrupt), the terminal is restored and the history merged
 * all the same, and the process exits around the running thread. SIGTERM and
 * SIGHUP exit with 128 + the signal, as a shell reports them. On the way
 * out, the conversation is saved where the autosave keeps it (autosave.c),
 * and the last line says where. */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tui.h"
#include "autosave.h"
#include "loop.h"
#include "slash.h"
#include "turn.h"
#include "input.h"
#include "ui/text.h"
#include "ui/xdg.h"
#include "ui/term_safe.h"

#define WORKER_WAIT_S 1.5

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
    int rc = -1;
    memset(a, 0, sizeof *a);
    a->src = src;
    a->commands = ui_commands;
    a->ncommands = ui_ncommands;
    a->in_fd = in_fd;
    a->wake_fd = -1;
    ui_pane_init(&a->answer, "Answer");
    ui_pane_init(&a->reasoning, "Reasoning");
    ui_keys_init(&a->kp);
    a->stats = calloc(1, sizeof *a->stats);
    a->drain = calloc(1, sizeof *a->drain);
    a->gen.think = 1;
    a->gen.top_p = 1;
    a->panel_hz = UI_PANEL_HZ;
    ui_panels_fit(a->fit);
    a->lopt.panels = a->fit;
    a->lopt.npanels = ui_npanels;
    if (!a->stats || !a->drain) { snprintf(err, errlen, "out of memory"); goto fail; }
    int trc = ui_term_open(&a->term, out, in, mouse, log_path, err, errlen);
    if (trc) { rc = trc; goto fail; }
    ui_term_learn_keys(&a->kp);
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
    return rc;
}

int ui_main_close(ui_tui *a, rm_err *err)
{
    a->worker_stuck = ui_worker_close(a->worker, WORKER_WAIT_S) != 0;
    /* the source is this thread's now, unless the worker is stuck in it */
    int saved = ui_autosave_close(a);
    int rc = ui_input_free(err);
    ui_term_close(&a->term);
    if (saved < 0 && !rc) rc = 1;
    if (a->worker_stuck) return rc;     /* the source is the worker's still: left as it is */
    a->src->vt->free(a->src);
    ui_pane_free(&a->answer);
    ui_pane_free(&a->reasoning);
    ui_keys_free(&a->kp);
    free(a->stats);
    free(a->drain);
    free(a->system_text);
    free(a->pending_system);
    free(a->queued);
    free(a->turn_recs.v);
    free(a->find.text);
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
             : o->endpoint.url ? ui_source_endpoint_open(&o->endpoint, &src, &err)
                           : ui_source_engine_open(o->model_dir, &o->open, &src, &err);
    if (rc) { ui_safe_errorf("remora chat", "%s", err.msg); return rc == -2 ? 2 : 1; }
    if (o->system && src->vt->set_system(src, o->system, &err)) {
        ui_safe_errorf("remora chat", "%s", err.msg);
        src->vt->free(src);
        return 1;
    }

    char history[4096], log[4096], msg[512];
    int have_history = ui_xdg_path(history, sizeof history, "history") == 0;
    int have_log = ui_xdg_path(log, sizeof log, "chat.log") == 0;
    ui_tui *a = calloc(1, sizeof *a);
    if (!a) { src->vt->free(src); return 1; }
    int orc = ui_main_open(a, src, stdout, stdin, STDIN_FILENO, o->mouse, have_history ? history : NULL,
                           have_log ? log : NULL, msg, sizeof msg);
    if (orc) {
        ui_safe_errorf("remora chat", "%s", msg);
        src->vt->free(src);
        free(a);
        return orc == -2 ? 2 : 1;
    }
    a->gen = o->gen;
    a->resume_cmd = o->resume_cmd ? o->resume_cmd : "remora chat --resume";
    if (o->panel_hz > 0) a->panel_hz = o->panel_hz;
    if (o->system) a->system_text = strdup(o->system);
    ui_turn_welcome(a);
    /* a conversation to resume is loaded first; the probe follows it */
    ui_autosave_open(a, o->resume);
    if (!a->busy_cmd) ui_turn_probe(a);
    rc = ui_loop_run(a) ? 1 : 0;
    ui_loop_finish_save(a);
    if (a->exit_status) rc = a->exit_status;
    int crc = ui_main_close(a, &err);
    /* the terminal is back: say it there */
    if (a->quit_note[0]) ui_safe_errorf("remora chat", "%s", a->quit_note);
    if (crc < 0) ui_safe_errorf("remora chat", "the input history was not saved: %s", err.msg);
    if (crc && !rc) rc = 1;
    if (a->worker_stuck) {
        /* the worker is still inside the engine: leave without running
         * exit handlers under it */
        fprintf(stderr, "remora chat: the engine did not stop within %.1f s; exiting anyway\n", WORKER_WAIT_S);
        fflush(NULL);
        _exit(rc);
    }
    free(a);
    return rc;
}
