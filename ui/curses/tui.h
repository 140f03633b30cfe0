/* tui.h — the state of the running terminal UI (struct ui_tui), shared by
 * the front end's own files, and main.c's start-up and teardown. Each other
 * file's functions are declared in its own header: loop.h (event loop and
 * drawing), slash.h (the slash commands), turn.h (messages and what the
 * worker's commands end with), note.h (notes and the hint row), autosave.h
 * (the conversation kept on disk), overlay.h (full-screen pages). Not for
 * app/, which calls ui/main.h. */
#ifndef REMORA_UI_CURSES_TUI_H
#define REMORA_UI_CURSES_TUI_H

#include "ui/keys.h"
#include "ui/layout.h"
#include "ui/main.h"
#include "ui/stats.h"
#include "ui/worker.h"
#include "pane.h"
#include "panel.h"
#include "term.h"

/* Styles of transcript blocks. */
enum { UI_S_USER, UI_S_ANSWER, UI_S_REASONING, UI_S_NOTE, UI_S_ERROR, UI_S_MARK, UI_S_HEADER, UI_S_SUMMARY };

/* How long the storage ceiling is measured when the chat starts, in
 * pieces whose median is taken (ui_worker_submit): on the development
 * machine, sharing its disk with other work, five probes of the embedded
 * model spread 0.12-0.46 GB/s at 0.3 s, 0.14-0.40 at 2 s and 0.23-0.28 at
 * 4 s. A message sent meanwhile ends it early. */
#define UI_PROBE_SECONDS 4.0

/* Parts of the screen that need drawing in the next frame. */
enum {
    UI_D_LAYOUT = 1, UI_D_STATUS = 2, UI_D_ANSWER = 4, UI_D_REASONING = 8,
    UI_D_PANELS = 16, UI_D_INPUT = 32, UI_D_OVERLAY = 64, UI_D_ALL = 127
};

/* Full-screen pages (overlay.c). */
enum { UI_OVL_NONE, UI_OVL_HELP, UI_OVL_STATS, UI_OVL_TURNS };

/* A slash command (the table is slash.c's, slash.h): its name without the slash, another name
 * (NULL: none), its arguments as /help shows them (NULL: none), its help
 * line, and what runs it (arg: the rest of the line, trimmed; line: the
 * whole line, which goes back into the input when it cannot run now). */
typedef struct ui_tui ui_tui;
typedef struct ui_command {
    const char *name, *alias, *args, *what;
    void (*run)(ui_tui *a, const char *arg, const char *line);
} ui_command;

struct ui_tui {
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
    ui_panel_fit   fit[UI_PANELS_MAX];  /* the panel table's heights, for lopt */
    ui_router_view router;
    unsigned       dirty;
    int            generating, stopping, turns;
    int            busy_cmd;        /* a non-turn command is running */
    int            probing;         /* the storage probe is running (a busy_cmd) */
    double         probe_seconds;   /* how long the storage ceiling was measured; 0 not yet */
    double         device_gbps;     /* its median (the records carry the last piece's) */
    char          *queued;          /* a message sent while probing: it goes when the probe ends */
    int            text_lost;       /* a document could not take text (note.c) */
    size_t         turn_bytes[3];   /* text of this turn per channel (RM_CHAN_*) */
    int            reprefill_said;  /* this turn's full re-prefill has been announced */
    int            unsaved;         /* turns since the last /save, /load or /clear */
    int            welcome_pinned;  /* the answer pane shows the welcome from its top (until a turn or a scroll) */
    struct {                        /* the finished turns of this conversation, for /stats all */
        ui_turn_rec *v;
        int          n, cap;
    } turn_recs;
    struct {                        /* the last /find, and where its match was */
        char        *text;
        int          block;
        size_t       off;           /* a byte of the block */
    } find;
    struct {
        int          kind;          /* UI_OVL_*: a full-screen page is open */
        int          top;           /* its first row shown */
    } overlay;
    int            eof_armed;       /* Ctrl-D asked once; the next one quits */
    rm_gen_opts    gen;
    char          *system_text;     /* what the source has */
    char          *pending_system;  /* /system TEXT until the worker has set it */
    struct {                        /* the hint row (note.c) */
        char         text[512];
        int          role;
        double       until;         /* when it goes */
    } hint;
    int            quit;
    int            exit_status;     /* 128 + the signal that ended the chat, else 0 */
    int            worker_stuck;    /* ui_main_close: the worker did not stop in time */
    double         last_frame;
    double         panel_hz;        /* panel and status redraws per second at most */
    double         last_panels;     /* when they were last drawn */
    long           drawn_state;     /* the state the status line shows (loop.c) */
    uint64_t       panel_draws;     /* panel redraws, for the panels drawn every n-th (panels.c) */
    int            panels_all;      /* the next redraw draws every panel */
    uint64_t       frames;
    int            bench;           /* quit when the first turn ends */
    char           session[4096];   /* this chat's autosaved transcript; "" none */
    char           load_path[4096]; /* the transcript a /load (or --resume) is loading */
    int            resuming;        /* the load is --resume's: the probe follows it */
    int            autosaving;      /* the running command is the autosave */
    int            autosave_failed; /* the last autosave failed: unsaved turns are at risk */
    int            saved_clean;     /* the session's files hold the conversation as it is */
    char           quit_note[4600]; /* said on the way out: where the conversation is */
    const char    *resume_cmd;      /* what it says to type to go on (ui_main_opts) */
    /* The tokens in the model's context between turns (the status line's
     * "ctx"; -1 when the source cannot count them): the last turn's when
     * its prompt got in (ctx_from_turn: its prompt figures go with it), the
     * one before a prompt stopped, a load's, 0 after /clear. */
    int            ctx_tokens, ctx_from_turn;
    const ui_command *commands;     /* what /help lists (ui_commands; the overlay is given it) */
    int            ncommands;
};

/* main.c: sets up everything around a source (which the UI then owns);
 * in_fd < 0 means no keyboard (the benchmark). */
int  ui_main_open(ui_tui *a, ui_source *src, FILE *out, FILE *in, int in_fd, int mouse,
                 const char *history_path, const char *log_path, char *err, size_t errlen);
/* Stops the worker (waiting at most a second and a half for it), saves
 * what the autosave does not hold yet (where, or why not, in a->quit_note),
 * restores the terminal and merges the history. Returns 0; -1 when the
 * history could not be saved (why in err; the terminal is restored by then,
 * so the caller can print it); 1 when the conversation could not be saved.
 * When the worker did not stop in time, worker_stuck is set: the source was
 * left to it, not freed, and the caller must exit at once. */
int  ui_main_close(ui_tui *a, rm_err *err);

#endif
