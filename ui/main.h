/* main.h — the entry points of the terminal UI, called by app/cmd_chat.c
 * (`remora chat`) and app/cmd_bench_ui.c (`remora bench-ui`). They are
 * implemented by the curses front end: ui_main_run in ui/curses/main.c,
 * ui_bench_run in ui/curses/bench.c. */
#ifndef REMORA_UI_MAIN_H
#define REMORA_UI_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include "source.h"

typedef struct ui_main_opts {
    const char   *model_dir;     /* used unless synthetic or an endpoint */
    int           synthetic;
    ui_endpoint_opts endpoint;   /* an OpenAI-compatible server when endpoint.url is set */
    ui_synth_opts synth;
    rm_open_opts  open;          /* threads, RAM budget, trace file */
    rm_gen_opts   gen;           /* think, sampling, speculation, max_new */
    int           mouse;
    const char   *system;        /* initial system prompt, or NULL */
    double        panel_hz;      /* panel and status redraws per second; 0: UI_PANEL_HZ */
    const char   *resume;        /* a transcript to go on from; "": the last session; NULL: none */
    const char   *resume_cmd;    /* the command line that goes on from the autosave, as the quit note
                                  * says it; NULL: "remora chat --resume" */
} ui_main_opts;

/* Panels and the status line are redrawn at most this often by default:
 * live to the eye, and a third of the terminal output of redrawing them on
 * every 30 Hz frame (the transcript panes keep the frame rate). */
#define UI_PANEL_HZ 10.0

/* Runs the chat on the controlling terminal; returns the exit status
 * (0, 1 on a runtime failure). */
int ui_main_run(const ui_main_opts *o);

typedef struct ui_bench_opts {
    int    tokens;
    double rate;
    int    rows, cols;
    double panel_hz;            /* 0: UI_PANEL_HZ */
} ui_bench_opts;

/* Runs the UI on a pseudo-terminal against the synthetic source for one
 * turn of `tokens` tokens and prints the UI thread's cost and the bytes it
 * wrote to the terminal to `report`.
 * Returns the exit status. */
int ui_bench_run(const ui_bench_opts *o, FILE *report);

#endif
