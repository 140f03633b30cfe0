/* term.c — curses setup, signals, stderr capture, suspend (see term.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>
#include "draw.h"
#include "term.h"

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_bits;

static void on_signal(int sig)
{
    int saved = errno;
    sig_bits |= sig == SIGWINCH ? UI_SIG_WINCH : sig == SIGINT ? UI_SIG_INT
              : sig == SIGCONT ? UI_SIG_CONT : sig == SIGHUP ? UI_SIG_HUP : UI_SIG_TERM;
    if (sig_pipe[1] >= 0) {
        ssize_t r = write(sig_pipe[1], "", 1);
        (void)r;    /* a full pipe already wakes the loop */
    }
    errno = saved;
}

int ui_term_signal_fd(void) { return sig_pipe[0]; }

int ui_term_take_signals(void)
{
    char buf[64];
    while (read(sig_pipe[0], buf, sizeof buf) > 0) {}
    int b = sig_bits;
    sig_bits = 0;
    return b;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    int sigs[] = { SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGCONT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

static void restore_signals(void)
{
    int sigs[] = { SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGCONT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
}

/* Terminal modes curses does not manage: bracketed paste and mouse. */
static void modes(ui_term *t, int on)
{
    fputs(on ? "\033[?2004h" : "\033[?2004l", t->out);
    if (t->mouse) fputs(on ? "\033[?1000h\033[?1006h" : "\033[?1006l\033[?1000l", t->out);
    fflush(t->out);
}

static void stderr_to_log(ui_term *t)
{
    if (t->log_fd < 0 || t->saved_stderr >= 0) return;
    fflush(stderr);
    t->saved_stderr = dup(2);
    if (t->saved_stderr >= 0) dup2(t->log_fd, 2);
}

static void stderr_back(ui_term *t)
{
    if (t->saved_stderr < 0) return;
    fflush(stderr);
    dup2(t->saved_stderr, 2);
    close(t->saved_stderr);
    t->saved_stderr = -1;
}

/* Whether terminfo knows `term` as one that can address the cursor; an
 * unknown terminal is left to newterm, which says so. */
static int can_address(const char *term, int fd)
{
    int e = 0;
    TERMINAL *saved = cur_term;
    if (setupterm(term, fd, &e) != OK) return 1;
    const char *cup = tigetstr("cup");
    int ok = cup && cup != (char *)-1 && tigetflag("hc") <= 0;
    del_curterm(cur_term);
    set_curterm(saved);
    return ok;
}

void ui_term_learn_keys(ui_keyparser *kp)
{
    for (int i = 1; i <= 12; i++) {
        char cap[16], key[16];
        snprintf(cap, sizeof cap, "kf%d", i);
        snprintf(key, sizeof key, "F%d", i);
        const char *seq = tigetstr(cap);
        if (seq && seq != (char *)-1) ui_keys_add(kp, seq, key);
    }
}

int ui_term_open(ui_term *t, FILE *out, FILE *in, int mouse, const char *log_path,
                 char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->out = out;
    t->in = in;
    t->mouse = mouse;
    t->saved_stderr = -1;
    t->log_fd = -1;
    if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if (log_path) {
        t->log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (t->log_fd < 0) {
            snprintf(err, errlen, "%s: %s", log_path, strerror(errno));
            return -1;
        }
    }
    const char *term = getenv("TERM");
    if (!term || !*term) term = "xterm";
    if (!can_address(term, fileno(out))) {
        snprintf(err, errlen, "the terminal cannot move its cursor (TERM=%s); the chat needs a terminal "
                 "that can, such as xterm or linux; `remora run` answers one prompt without one", term);
        if (t->log_fd >= 0) close(t->log_fd);
        return -2;
    }
    install_signals();          /* before curses, so it keeps ours for SIGWINCH */
    SCREEN *s = newterm(term, out, in);
    if (!s) {
        snprintf(err, errlen, "cannot initialise the terminal (TERM=%s)", term ? term : "");
        restore_signals();
        if (t->log_fd >= 0) close(t->log_fd);
        return -1;
    }
    t->screen = s;
    raw();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, FALSE);      /* we parse keys ourselves */
    typeahead(-1);              /* never cut a refresh short to peek at input */
    leaveok(stdscr, FALSE);
    /* Mode 2026 is asked of every terminal but the Linux console: the
     * terminals that know it (kitty, foot, WezTerm, iTerm2, tmux 3.4,
     * Windows Terminal...) draw a frame whole, and an unknown DEC private
     * mode is ignored by the others (ECMA-48), as xterm does. */
    t->sync = strncmp(term, "linux", 5) != 0 && !getenv("REMORA_NO_SYNC");
    t->civis = tigetstr("civis");
    t->cnorm = tigetstr("cnorm");
    if (t->civis == (char *)-1 || t->cnorm == (char *)-1 || !t->civis || !t->cnorm) t->civis = t->cnorm = NULL;
    t->color = has_colors() && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
    if (t->color) start_color();
    ui_theme_init(t->color);
    modes(t, 1);
    stderr_to_log(t);
    t->active = 1;
    return 0;
}

/* The terminal has no alternate screen (the Linux console, TERM=linux:
 * no smcup): whatever the chat drew stays under the shell's prompt. */
static int no_alternate_screen(void)
{
    const char *smcup = tigetstr("smcup");
    return !smcup || smcup == (char *)-1 || !*smcup;
}

void ui_term_leave(ui_term *t)
{
    if (!t->active) return;
    /* Clear the frame there, so the shell comes back on an empty screen
     * rather than over the last frame, whose input line ("> /quit") the
     * prompt would half overwrite (tui_terminals failed so under load). */
    if (no_alternate_screen()) {
        erase();
        refresh();
    }
    modes(t, 0);
    endwin();
    stderr_back(t);
    t->active = 0;
}

void ui_term_enter(ui_term *t)
{
    if (t->active) return;
    stderr_to_log(t);
    reset_prog_mode();
    modes(t, 1);
    clearok(curscr, TRUE);
    refresh();
    t->active = 1;
}

void ui_term_suspend(ui_term *t)
{
    ui_term_leave(t);
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTSTP, &dfl, &old);
    raise(SIGTSTP);             /* stops here until the shell continues us */
    sigaction(SIGTSTP, &old, NULL);
    ui_term_enter(t);
    ui_term_resize(t);          /* the size may have changed meanwhile */
}

int ui_term_write(ui_term *t, const char *s, size_t n)
{
    if (!t->active) return -1;
    fflush(t->out);
    return fwrite(s, 1, n, t->out) == n && fflush(t->out) == 0 ? 0 : -1;
}

void ui_term_frame_begin(ui_term *t)
{
    if (!t->active) return;
    if (t->sync) fputs("\033[?2026h", t->out);
    if (t->civis) fputs(t->civis, t->out);
    fflush(t->out);
}

void ui_term_frame_end(ui_term *t)
{
    if (!t->active) return;
    if (t->cnorm) fputs(t->cnorm, t->out);
    if (t->sync) fputs("\033[?2026l", t->out);
    fflush(t->out);
}

void ui_term_resize(ui_term *t)
{
    struct winsize ws;
    if (ioctl(fileno(t->out), TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
}

void ui_term_close(ui_term *t)
{
    if (!t->screen) return;
    ui_term_leave(t);
    delscreen((SCREEN *)t->screen);
    t->screen = NULL;
    restore_signals();
    if (t->log_fd >= 0) close(t->log_fd);
    t->log_fd = -1;
}
