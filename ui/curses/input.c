/* input.c — readline inside curses through its callback interface
 * ("Alternate Interface" in the GNU Readline Library manual, `info
 * readline`), with readline's terminal preparation, signal handling, input
 * and redisplay replaced by hooks (rl_prep_term_function, rl_catch_signals,
 * rl_getc_function, rl_redisplay_function), as input.h describes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <readline/readline.h>
#include <readline/history.h>
#include "engine.h"
#include "draw.h"
#include "input.h"
#include "ui/wrap.h"

#define HISTORY_MAX 1000
#define HISTORY_ENTRY_MAX (16 << 10)    /* longer lines (pastes) stay out of the history */
#define PROMPT "> "

static struct {
    rm_buf         q;           /* bytes waiting for readline */
    size_t         qhead;
    const char    *error;       /* for ui_input_error */
    ui_input_hooks hooks;
    char          *history_path;
    rm_err         history_err;     /* the first failure to add to the file */
    char           history_hint[1100];
    int            history_failed;
    char          *keep;            /* a line to put back (ui_input_keep) */
    int            dirty;
    FILE          *devnull;
} in;

static int queue_getc(FILE *f)
{
    (void)f;
    /* The UI hands readline only complete characters, so this does not run
     * dry in the middle of one; 0 is a harmless answer if it ever does. */
    return in.qhead < in.q.len ? (unsigned char)in.q.p[in.qhead++] : 0;
}

static int queue_available(void) { return in.qhead < in.q.len; }

static void mark_dirty(void) { in.dirty = 1; }

static void no_prep(int meta) { (void)meta; }
static void no_deprep(void) {}

/* Locks the history's folder (op LOCK_SH or LOCK_EX), trying for at most
 * half a second: another chat holding it that long is stuck, and a line is
 * better added unlocked than not at all. Returns the folder's fd or -1. */
static int lock_folder(const char *path, int op)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    else snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    for (int i = 0; i < 50; i++) {
        if (flock(fd, op | LOCK_NB) == 0) return fd;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    close(fd);
    return -1;
}

static void unlock_folder(int fd)
{
    if (fd >= 0) close(fd);     /* closing releases the lock */
}

/* The first failure is kept for ui_input_free and shown at once. */
static void history_fail(int e)
{
    if (in.history_failed++) return;
    if (e == EISDIR) rm_errf(&in.history_err, "%s: is a directory", in.history_path);
    else rm_errf(&in.history_err, "%s: cannot write: %s", in.history_path, strerror(e));
    snprintf(in.history_hint, sizeof in.history_hint, "the history is not being kept: %s", in.history_err.msg);
    in.error = in.history_hint;
}

/* Appends the newest history entry to the file (created 0600 if missing). */
static void history_append(void)
{
    if (!in.history_path) return;
    int lk = lock_folder(in.history_path, LOCK_SH);
    int fd = open(in.history_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) close(fd);
    if (!e) e = append_history(1, in.history_path);
    unlock_folder(lk);
    if (e) history_fail(e);
}

static void line_cb(char *line)
{
    if (line && *line && strlen(line) <= HISTORY_ENTRY_MAX) {
        HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
        if (!last || strcmp(last->line, line)) {
            add_history(line);
            history_append();
        }
    }
    in.dirty = 1;
    in.hooks.on_line(in.hooks.ud, line);
}

int ui_input_keep(const char *line)
{
    free(in.keep);
    in.keep = strdup(line);
    return in.keep ? 0 : -1;
}

/* After readline has finished with an entered line: the kept one back. */
static void restore_kept(void)
{
    if (!in.keep) return;
    rl_replace_line(in.keep, 0);
    rl_point = rl_end;
    free(in.keep);
    in.keep = NULL;
    in.dirty = 1;
}

/* Ctrl-X Ctrl-E: the line goes through $VISUAL/$EDITOR and comes back. */
static int edit_external(int count, int key)
{
    (void)count; (void)key;
    const char *tmpdir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/remora-edit-XXXXXX.txt", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemps(path, 4);
    if (fd < 0) return 0;
    size_t len = strlen(rl_line_buffer);
    int ok = write(fd, rl_line_buffer, len) == (ssize_t)len;
    close(fd);
    if (ok) {
        const char *ed = getenv("VISUAL");
        if (!ed || !*ed) ed = getenv("EDITOR");
        if (!ed || !*ed) ed = "vi";
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "%s '%s'", ed, path);
        if (in.hooks.leave_screen) in.hooks.leave_screen(in.hooks.ud);
        int rc = system(cmd);
        if (in.hooks.enter_screen) in.hooks.enter_screen(in.hooks.ud);
        FILE *f = rc == 0 ? fopen(path, "rb") : NULL;
        if (f) {
            rm_buf b = { 0 };
            char chunk[8192];
            size_t k;
            int bad = 0;
            while (!bad && (k = fread(chunk, 1, sizeof chunk, f)) > 0) bad = rm_buf_add(&b, chunk, k);
            bad = bad || ferror(f);
            fclose(f);
            if (bad) {
                in.error = "the edited text could not be read back (out of memory or a read error); "
                           "the line is unchanged";
            } else {
                if (b.len && b.p[b.len - 1] == '\n') b.p[--b.len] = 0;   /* editors add one */
                rl_replace_line(b.p ? b.p : "", 0);
                rl_point = rl_end;
            }
            rm_buf_free(&b);
        }
    }
    unlink(path);
    in.dirty = 1;
    return 0;
}

int ui_input_init(const char *history_path, const ui_input_hooks *hooks)
{
    memset(&in, 0, sizeof in);
    in.hooks = *hooks;
    in.devnull = fopen("/dev/null", "r+");
    if (!in.devnull) return -1;
    rl_readline_name = "remora";
    rl_instream = in.devnull;
    rl_outstream = in.devnull;
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_change_environment = 0;
    rl_prep_term_function = no_prep;
    rl_deprep_term_function = no_deprep;
    rl_getc_function = queue_getc;
    rl_input_available_hook = queue_available;
    rl_redisplay_function = mark_dirty;
    rl_initialize();
    rl_bind_keyseq("\\C-x\\C-e", edit_external);
    /* Home and End in the line, in every form terminals send (unless the
     * user's inputrc binds them otherwise) */
    static const char *const home[] = { "\\e[1~", "\\e[7~", "\\e[H", "\\eOH" };
    static const char *const end[] = { "\\e[4~", "\\e[8~", "\\e[F", "\\eOF" };
    for (int i = 0; i < 4; i++) {
        rl_bind_keyseq_if_unbound(home[i], rl_beg_of_line);
        rl_bind_keyseq_if_unbound(end[i], rl_end_of_line);
    }
    rl_callback_handler_install(PROMPT, line_cb);

    history_comment_char = '#';     /* marks the timestamp lines, as in bash */
    history_write_timestamps = 1;   /* lets multi-line entries survive a reload */
    history_multiline_entries = 1;
    stifle_history(HISTORY_MAX);
    if (history_path) {
        in.history_path = strdup(history_path);
        read_history(history_path);     /* a missing file is an empty history */
    }
    using_history();                    /* start browsing after the last entry */
    in.dirty = 1;
    return 0;
}

/* The file holds every chat's lines; past the limit it is rewritten with
 * the latest: readline writes them to a temporary name of
 * rm_atomic_tmp_name (mode 0600, as readline creates it), which is
 * committed the way rm_write_atomic commits: fsync, rename, folder fsync. */
static int merge_history(rm_err *err)
{
    if (in.history_failed) {
        if (err) *err = in.history_err;
        return -1;
    }
    if (!in.history_path) return 0;
    int lk = lock_folder(in.history_path, LOCK_EX);
    clear_history();
    unstifle_history();
    read_history(in.history_path);
    int rc = 0;
    if (history_length > HISTORY_MAX) {
        stifle_history(HISTORY_MAX);
        char tmp[4200];
        rm_atomic_tmp_name(in.history_path, tmp, sizeof tmp);
        int e = write_history(tmp);
        if (e) {
            rm_atomic_abort(tmp);
            rc = rm_errf(err, "%s: cannot write: %s", in.history_path, strerror(e));
        } else {
            rc = rm_atomic_commit(tmp, in.history_path, err);
        }
    }
    unlock_folder(lk);
    return rc;
}

int ui_input_free(rm_err *err)
{
    rl_callback_handler_remove();
    int rc = merge_history(err);
    clear_history();
    free(in.history_path);
    free(in.keep);
    rm_buf_free(&in.q);
    if (in.devnull) fclose(in.devnull);
    memset(&in, 0, sizeof in);
    return rc;
}

/* Readline moves by code points; the screen shows grapheme clusters (one
 * glyph, or one marker for an emoji sequence). A point left inside a
 * cluster goes to its end when it moved forward, else to its start, so the
 * cursor is always where a glyph begins and is drawn where readline is. */
static void snap_point(int before)
{
    const char *b = rl_line_buffer;
    int p = rl_point;
    if (p <= 0 || p >= rl_end) return;
    int line = p;
    while (line > 0 && b[line - 1] != '\n') line--;     /* clusters restart at a newline */
    size_t pos = (size_t)line;
    ui_glyph g;
    while (pos < (size_t)rl_end && ui_glyph_next(b + pos, (size_t)rl_end - pos, 1, &g)) {
        if (pos + g.len > (size_t)p) {
            if (pos != (size_t)p) rl_point = p > before ? (int)(pos + g.len) : (int)pos;
            return;
        }
        pos += g.len;
    }
}

int ui_input_feed(const char *bytes, size_t n)
{
    if (rm_buf_add(&in.q, bytes, n)) return -1;
    while (in.qhead < in.q.len) {
        int before = rl_point;
        rl_callback_read_char();
        restore_kept();
        snap_point(before);
    }
    rm_buf_reset(&in.q);
    in.qhead = 0;
    return 0;
}

int ui_input_insert(const char *text, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return -1;
    memcpy(s, text, n);
    s[n] = 0;
    rl_insert_text(s);
    free(s);
    in.dirty = 1;
    return 0;
}

const char *ui_input_error(void)
{
    const char *e = in.error;
    in.error = NULL;
    return e;
}

int ui_input_empty(void) { return rl_end == 0; }

void ui_input_cancel(void)
{
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_cleanup_after_signal();
    rl_callback_handler_remove();
    rl_replace_line("", 0);
    rl_point = rl_end = 0;
    rl_callback_handler_install(PROMPT, line_cb);
    in.dirty = 1;
}

int ui_input_dirty(void) { return in.dirty; }

/* The prompt and line joined, with the cursor's byte offset in it. */
static char *joined(size_t *len, size_t *cursor)
{
    const char *p = rl_display_prompt ? rl_display_prompt : PROMPT;
    size_t pl = strlen(p), ll = (size_t)rl_end;
    char *s = malloc(pl + ll + 1);
    if (!s) return NULL;
    memcpy(s, p, pl);
    memcpy(s + pl, rl_line_buffer, ll);
    s[pl + ll] = 0;
    *len = pl + ll;
    *cursor = pl + (size_t)rl_point;
    return s;
}

struct lines { size_t a[4096], b[4096]; int w[4096]; int n; };

static void collect(void *ud, size_t a, size_t b, int w)
{
    struct lines *l = ud;
    if (l->n == 4096) {     /* keep the latest lines: the cursor is near the end */
        memmove(l->a, l->a + 2048, 2048 * sizeof l->a[0]);
        memmove(l->b, l->b + 2048, 2048 * sizeof l->b[0]);
        memmove(l->w, l->w + 2048, 2048 * sizeof l->w[0]);
        l->n = 2048;
    }
    l->a[l->n] = a; l->b[l->n] = b; l->w[l->n] = w; l->n++;
}

/* Wraps the joined text; the cursor's row and column go to *crow, *ccol. */
static struct lines *layout_text(const char *s, size_t len, size_t cursor, int width,
                                 int *crow, int *ccol)
{
    struct lines *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    ui_wrap(s, 0, len, width, UI_WRAP_CHAR, 1, collect, l);
    if (l->n == 0) collect(l, 0, 0, 0);
    /* A line ending in '\n' is followed by an empty line for the cursor. */
    if (len && s[len - 1] == '\n') collect(l, len, len, 0);
    int i = l->n - 1;
    while (i > 0 && l->a[i] > cursor) i--;
    size_t upto = cursor < l->b[i] ? cursor : l->b[i];
    *crow = i;
    *ccol = upto > l->a[i] ? ui_text_width(s + l->a[i], upto - l->a[i]) : 0;
    if (*ccol >= width) { (*crow)++; *ccol = 0; }
    return l;
}

int ui_input_rows(int width, int max_rows)
{
    size_t len, cur;
    char *s = joined(&len, &cur);
    if (!s) return 1;
    int crow, ccol;
    struct lines *l = layout_text(s, len, cur, width > 1 ? width : 1, &crow, &ccol);
    int rows = l ? (crow + 1 > l->n ? crow + 1 : l->n) : 1;
    free(l);
    free(s);
    return rows < max_rows ? rows : max_rows;
}

void ui_input_draw(ui_rect r, const char *hint, int hint_role, int *cy, int *cx)
{
    in.dirty = 0;
    if (!ui_rect_visible(r)) return;
    ui_fill(r, A_NORMAL);
    attrset(ui_attr(UI_C_RULE));
    for (int x = r.x; x < r.x + r.w; x++) mvaddstr(r.y, x, ui_sym(UI_SYM_HLINE));
    if (hint && *hint) ui_putf(r.y, r.x + 1, r.w - 2, ui_attr(hint_role), " %s ", hint);
    size_t len, cur;
    char *s = joined(&len, &cur);
    *cy = r.y + 1;
    *cx = r.x;
    if (!s) return;
    int rows = r.h - 1, crow, ccol;
    struct lines *l = layout_text(s, len, cur, r.w, &crow, &ccol);
    if (l) {
        size_t plen = strlen(rl_display_prompt ? rl_display_prompt : PROMPT);
        int first = crow - rows + 1 > 0 ? crow - rows + 1 : 0;
        for (int i = 0; i < rows && first + i < l->n; i++) {
            int li = first + i, col = 0;
            size_t pos = l->a[li];
            ui_glyph g;
            while (pos < l->b[li] && ui_glyph_next(s + pos, l->b[li] - pos, 1, &g)) {
                pos += g.len;
                int role = li == 0 && pos <= plen ? UI_C_USER : UI_C_TEXT;
                col += ui_put_glyph(r.y + 1 + i, r.x + col, r.x + r.w, &g, ui_attr(role));
            }
        }
        *cy = r.y + 1 + (crow - first);
        *cx = r.x + ccol;
        free(l);
    }
    free(s);
}
