/* tui.h — the state of the running terminal UI (struct ui_tui), shared by
 * the front end's own files: main.c (start-up and teardown), loop.c (event
 * loop and drawing), slash.c (the slash commands), turn.c (messages and
 * what the worker's commands end with), note.c (notes and the hint row),
 * autosave.c (the conversation kept on disk) and bench.c. Not for app/,
 * which calls ui/main.h. */
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

/* A slash command (slash.c): its name without the slash, another name
 * (NULL: none), its arguments as /help shows them (NULL: none), its help
 * line, and what runs it (arg: the rest of the line, trimmed; line: the
 * whole line, which goes back into the input when it cannot run now). */
typedef struct ui_tui ui_tui;
typedef struct ui_command {
    const char *name, *alias, *args, *what;
    void (*run)(ui_tui *a, const char *arg, const char *line);
} ui_command;
extern const ui_command ui_commands[];
extern const int ui_ncommands;

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
    ui_turn_rec   *turn_recs;       /* the finished turns of this conversation, for /stats all */
    int            nturn_recs, cap_turn_recs;
    char          *find_text;       /* the last /find, and where its match was (block, byte) */
    int            find_block;
    size_t         find_off;
    int            overlay;         /* UI_OVL_*: a full-screen page is open */
    int            overlay_top;     /* its first row shown */
    int            eof_armed;       /* Ctrl-D asked once; the next one quits */
    rm_gen_opts    gen;
    char          *system_text;     /* what the source has */
    char          *pending_system;  /* /system TEXT until the worker has set it */
    char           hint[512];
    int            hint_role;
    double         hint_until;
    int            quit;
    int            exit_status;     /* 128 + the signal that ended the chat, else 0 */
    int            worker_stuck;    /* ui_main_close: the worker did not stop in time */
    double         last_frame;
    double         panel_hz;        /* panel and status redraws per second at most */
    double         last_panels;     /* when they were last drawn */
    int            drawn_state;     /* the state the status line shows (loop.c) */
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

/* loop.c */
int    ui_loop_run(ui_tui *a);
/* After a quit: while the autosave writes (a large snapshot on a slow disk
 * takes long), the screen stays up, its status line and hint row say what
 * is waited for, and the save's end is taken as in the loop (its note, the
 * session kept clean); at most WORKER_SAVE_WAIT_S. */
void   ui_loop_finish_save(ui_tui *a);

/* overlay.c: opens page `kind` (or closes it when it is the one open);
 * draws the open page below the status line; takes a key while a page is
 * open (returns 1 when the key was the page's). */
void ui_overlay_open(ui_tui *a, int kind);
void ui_overlay_draw(ui_tui *a);
int  ui_overlay_key(ui_tui *a, int type, const char *data, size_t len);

/* slash.c: readline's line handler (a command, or a message for turn.c) */
void ui_slash_line(void *ud, char *line);

/* turn.c */
void ui_turn_submit(ui_tui *a, const char *text);    /* sends a message */
/* A message: sent now, queued behind the storage probe or the autosave,
 * or kept in the input line (line) while the worker is taken. */
void ui_turn_message(ui_tui *a, const char *text, const char *line);
/* Whether the worker is taken; if so, line goes back to the input. */
int  ui_turn_busy(ui_tui *a, const char *line);
/* Starts worker command cmd with arg; the hint says `what` meanwhile. */
void ui_turn_command(ui_tui *a, int cmd, const char *arg, const char *what);
void ui_turn_done(ui_tui *a, const ui_done *d);      /* a worker command ended */
/* Starts the storage probe (a busy command). */
void ui_turn_probe(ui_tui *a);
/* The answer pane's opening note (ui/welcome.h). */
void ui_turn_welcome(ui_tui *a);
/* Records that have arrived: announces a full re-prefill once per turn. */
void ui_turn_records(ui_tui *a);
/* Ctrl-D at an empty prompt: quits, or first asks once when a reply is
 * being generated or turns are not saved. */
void ui_turn_eof(ui_tui *a);

/* note.c */
void ui_note_hint(ui_tui *a, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Puts a line the UI could not act on back into the input line, and says
 * why in the hint row. */
void ui_note_keep(ui_tui *a, int role, const char *line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A pane's document could not take text (out of memory): says so, stops a
 * streaming turn, and leaves an error note when the turn ends. */
void ui_note_lost(ui_tui *a);
/* rc of a document call: a failure is reported (ui_note_lost). */
void ui_note_check(ui_tui *a, int rc);
int  ui_note_role(int style);
/* A note in the transcript pane (the hint row while a reply streams). */
void ui_note_add(ui_tui *a, int style, const char *text);

/* autosave.c */
/* Picks this chat's session file; resume (NULL: none, "": the last session,
 * else a transcript) is loaded through the worker. */
void ui_autosave_open(ui_tui *a, const char *resume);
/* Loads a transcript and its snapshot through the worker (/load, --resume). */
void ui_autosave_load(ui_tui *a, const char *path);
/* The file /load ARG means: ARG, or for "last" the latest other session.
 * Returns 0, or -1 when there is none. */
int  ui_autosave_resolve(ui_tui *a, const char *arg, char *out, size_t n);
/* A load worked: a session brought back goes on in its own file. */
void ui_autosave_loaded(ui_tui *a);
/* The conversation changed (a message, /system, /clear). */
void ui_autosave_changed(ui_tui *a);
/* A turn ended: the worker saves the conversation with its state. */
void ui_autosave_turn(ui_tui *a);
/* A message sent while the autosave writes the snapshot (a large model's
 * takes a while) is queued (a->queued) and goes when it ends: returns 1
 * then. */
int  ui_autosave_queue(ui_tui *a, const char *text);
/* 1 when d was the autosave (a failure is a note; the chat goes on; the
 * caller sends a queued message). */
int  ui_autosave_done(ui_tui *a, const ui_done *d);
/* Whether a quit keeps every turn: the autosave works and saves at the end. */
int  ui_autosave_covers(const ui_tui *a);
/* On the way out, the worker stopped: saves what the last autosave did
 * not hold and says where in a->quit_note. -1 when it could not. */
int  ui_autosave_close(ui_tui *a);
/* The /stats line of the sessions folder. */
void ui_autosave_stats(ui_tui *a, char *buf, size_t n);

#endif
