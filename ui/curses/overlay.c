/* overlay.c — full-screen pages over the chat (htop's F1, weechat's help
 * buffer): the help (F1 or /help: keys, commands and a legend of every
 * panel's figures and colours), /stats all (a table of the turns) and,
 * while a reply streams, /stats. A page
 * covers everything below the status line, which keeps showing the state;
 * the reply goes on streaming underneath. Entries are two columns, a term
 * and what it means, wrapped with a hanging indent; on a wide screen the
 * help's keys and the rest sit side by side. F1, Esc, q or Enter closes a
 * page; PgUp, PgDn, Up and Down scroll it; other typed text closes it and
 * goes to the input line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tui.h"
#include "overlay.h"
#include "draw.h"
#include "panel.h"
#include "ui/wrap.h"

enum { E_HEAD, E_ITEM, E_TEXT, E_PRE };   /* E_PRE: a row drawn as it is (a table's) */

typedef struct entry {
    int         kind;
    const char *term;
    const char *what;
    int         role;       /* the term's colour (a sample of a panel's colour) */
} entry;

#define TERM_MAX 18         /* widest term column; longer terms take a row of their own */
#define TWO_COLS_MIN 150    /* screen width from which the help is two columns of entries */

#define LEGEND_MAX 64        /* entries of the panels' legends, their headings included */

/* The panels' figures and colours, from each panel's record (panel.h). */
static int legend_entries(entry *e)
{
    int n = 0;
    e[n++] = (entry){ E_HEAD, "Panels", NULL, 0 };
    e[n++] = (entry){ E_TEXT, NULL, "Per-token figures are over the window in the panel's title (the last 32 "
                                    "tokens); 'turn' figures over the whole reply. 1 MB = 10^6 bytes.", 0 };
    for (int p = 0; p < ui_npanels && n < LEGEND_MAX; p++) {
        e[n++] = (entry){ E_HEAD, ui_panels[p].title, NULL, 0 };
        for (const ui_legend_item *l = ui_panels[p].legend; l->term && n < LEGEND_MAX; l++)
            e[n++] = (entry){ E_ITEM, l->term, l->what, l->role };
    }
    return n;
}

/* One wrapped row of an entry's text. */
typedef struct rows_ctx {
    const char *s;
    size_t      a[64], b[64];
    int         n;
} rows_ctx;

static void take_row(void *ud, size_t a, size_t b, int width)
{
    (void)width;
    rows_ctx *c = ud;
    if (c->n < 64) { c->a[c->n] = a; c->b[c->n] = b; c->n++; }
}

/* Draws (draw != 0) the rows [skip, skip + r.h) of the entries into r, and
 * returns how many rows they take at r.w columns. */
static int render(const entry *e, int n, ui_rect r, int skip, int draw)
{
    int row = 0, tw = 0;
    for (int i = 0; i < n; i++)
        if (e[i].kind == E_ITEM) {
            int w = ui_text_width(e[i].term, strlen(e[i].term));
            if (w > tw && w <= TERM_MAX) tw = w;
        }
    if (tw > r.w / 3) tw = r.w / 3;
    int indent = tw + 3;
    for (int i = 0; i < n; i++) {
        int y = r.y + row - skip;
        int vis = draw && row >= skip && row - skip < r.h;
        if (e[i].kind == E_HEAD) {
            if (i > 0) { row++; y++; vis = draw && row >= skip && row - skip < r.h; }
            if (vis) ui_put(y, r.x, r.w, ui_attr(UI_C_TITLE), e[i].term);
            row++;
            continue;
        }
        if (e[i].kind == E_PRE) {
            if (vis) ui_put(y, r.x + 1, r.w - 1, ui_attr(e[i].role), e[i].what);
            row++;
            continue;
        }
        int ind = e[i].kind == E_TEXT ? 1 : indent;
        if (e[i].kind == E_ITEM) {
            int w = ui_text_width(e[i].term, strlen(e[i].term));
            if (vis) ui_put(y, r.x + 1, r.w - 1, ui_attr(e[i].role), e[i].term);
            if (w > tw) row++;                 /* a long term: its text starts on the next row */
        }
        rows_ctx c = { e[i].what, { 0 }, { 0 }, 0 };
        int ww = r.w - ind;
        if (ww < 8) ww = 8;
        ui_wrap(e[i].what, 0, strlen(e[i].what), ww, UI_WRAP_WORD, 1, take_row, &c);
        for (int k = 0; k < c.n; k++, row++) {
            if (!draw || row < skip || row - skip >= r.h) continue;
            char line[512];
            size_t len = c.b[k] - c.a[k] < sizeof line - 1 ? c.b[k] - c.a[k] : sizeof line - 1;
            memcpy(line, e[i].what + c.a[k], len);
            line[len] = 0;
            ui_put(r.y + row - skip, r.x + ind, r.w - ind, ui_attr(UI_C_TEXT), line);
        }
        if (!c.n) row++;
    }
    return row;
}

/* The help's keys and commands, built from their tables (the commands as
 * the chat was given them: a->commands); names[i] holds "/name args". */
static void help_entries(const ui_tui *a, entry *keys, int *nkeys, entry *cmds, int *ncmds, char (*names)[40])
{
    int nk = 0, nc = 0;
    keys[nk++] = (entry){ E_HEAD, "Keys", NULL, 0 };
    for (int i = 0; i < ui_nkeybindings && nk < 64; i++)
        keys[nk++] = (entry){ E_ITEM, ui_keybindings[i].key, ui_keybindings[i].what, UI_C_VALUE };
    cmds[nc++] = (entry){ E_HEAD, "Commands", NULL, 0 };
    for (int i = 0; i < a->ncommands && nc < 32; i++) {
        const ui_command *c = &a->commands[i];
        snprintf(names[i], sizeof names[i], "/%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
        cmds[nc++] = (entry){ E_ITEM, names[i], c->what, UI_C_VALUE };
    }
    cmds[nc++] = (entry){ E_TEXT, NULL, "//text sends a message that starts with /. A line that cannot run now "
                                        "(a reply is streaming) stays in the input line.", 0 };
    *nkeys = nk;
    *ncmds = nc;
}

/* The stats page: the live figures of the reply in progress. */
static int stats_entries(const ui_tui *a, entry *e, char (*buf)[200])
{
    ui_summary s;
    ui_stats_summary(a->stats, &s);
    int n = 0;
    e[n++] = (entry){ E_HEAD, "This turn so far (live)", NULL, 0 };
    char med[32], p90[32], io[32], cache[32];
    ui_fmt_secs(med, sizeof med, s.median);
    ui_fmt_secs(p90, sizeof p90, s.p90);
    rm_fmt_bytes(io, sizeof io, s.bytes_per_token);
    rm_fmt_bytes(cache, sizeof cache, s.cache_bytes_per_token);
    if (s.prompt_state != UI_PROMPT_NONE) {
        ui_fmt_prompt(buf[n], sizeof buf[n], &s);
        e[n] = (entry){ E_ITEM, "prompt", buf[n], UI_C_VALUE }; n++;
    }
    snprintf(buf[n], sizeof buf[n], "%d tokens at %.1f tok/s", s.tokens, s.tok_per_s);
    e[n] = (entry){ E_ITEM, "tokens", buf[n], UI_C_VALUE }; n++;
    snprintf(buf[n], sizeof buf[n], "median %s, p90 %s per token (last %d tokens)", med, p90, s.window);
    e[n] = (entry){ E_ITEM, "time", buf[n], UI_C_VALUE }; n++;
    snprintf(buf[n], sizeof buf[n], "storage %s/token, cache %s/token", io, cache);
    e[n] = (entry){ E_ITEM, "bytes", buf[n], UI_C_VALUE }; n++;
    snprintf(buf[n], sizeof buf[n], "%.1f%% (turn)", s.hit_rate >= 0 ? s.hit_rate * 100 : 0.0);
    e[n] = (entry){ E_ITEM, "hit rate", buf[n], UI_C_VALUE }; n++;
    snprintf(buf[n], sizeof buf[n], "%llu of %llu drafted accepted", (unsigned long long)s.accepted,
             (unsigned long long)s.drafted);
    e[n] = (entry){ E_ITEM, "speculation", buf[n], UI_C_VALUE }; n++;
    return n;
}

void ui_overlay_open(ui_tui *a, int kind)
{
    a->overlay.kind = a->overlay.kind == kind ? 0 : kind;
    a->overlay.top = 0;
    a->dirty |= UI_D_LAYOUT;
}

/* /stats all: the conversation's turns, one row each, and the turn in
 * progress as the last. */
static int turns_page(ui_tui *a, ui_rect body, int draw)
{
    int n = a->turn_recs.n + 3;
    entry *e = calloc((size_t)n, sizeof *e);
    char (*buf)[200] = calloc((size_t)n, sizeof *buf);
    if (!e || !buf) { free(e); free(buf); return 0; }
    int k = 0;
    e[k++] = (entry){ E_HEAD, "Turns of this conversation", NULL, 0 };
    ui_fmt_turn_header(buf[k], sizeof buf[k]);
    e[k] = (entry){ E_PRE, NULL, buf[k], UI_C_TITLE }; k++;
    for (int i = 0; i < a->turn_recs.n; i++, k++) {
        ui_fmt_turn_row(buf[k], sizeof buf[k], &a->turn_recs.v[i]);
        e[k] = (entry){ E_PRE, NULL, buf[k], UI_C_VALUE };
    }
    if (a->generating) {
        ui_turn_rec r;
        ui_stats_turn(a->stats, a->turns, 0, &r);
        ui_fmt_turn_row(buf[k], sizeof buf[k], &r);
        snprintf(buf[k] + strlen(buf[k]), sizeof buf[k] - strlen(buf[k]), " (in progress)");
        e[k] = (entry){ E_PRE, NULL, buf[k], UI_C_TEXT }; k++;
    }
    int rows = render(e, k, body, a->overlay.top, draw);
    free(e);
    free(buf);
    return rows;
}

/* Rows the page's body takes (for scrolling) and draws it from overlay.top. */
static int page(ui_tui *a, ui_rect body, int draw)
{
    if (a->overlay.kind == UI_OVL_TURNS) return turns_page(a, body, draw);
    if (a->overlay.kind == UI_OVL_STATS) {
        entry e[16];
        char buf[16][200];
        int n = stats_entries(a, e, buf);
        return render(e, n, body, a->overlay.top, draw);
    }
    entry keys[64], cmds[40];
    char names[32][40];
    int nk, nc;
    help_entries(a, keys, &nk, cmds, &nc, names);
    entry rest[40 + LEGEND_MAX];
    memcpy(rest, cmds, (size_t)nc * sizeof *cmds);
    int nr = nc + legend_entries(rest + nc);
    if (body.w >= TWO_COLS_MIN) {
        int lw = (body.w - 3) / 2;
        ui_rect l = { body.y, body.x, body.h, lw }, r = { body.y, body.x + lw + 3, body.h, body.w - lw - 3 };
        int hl = render(keys, nk, l, a->overlay.top, draw);
        int hr = render(rest, nr, r, a->overlay.top, draw);
        return hl > hr ? hl : hr;
    }
    entry all[64 + 40 + LEGEND_MAX];
    memcpy(all, keys, (size_t)nk * sizeof *keys);
    memcpy(all + nk, rest, (size_t)nr * sizeof *rest);
    return render(all, nk + nr, body, a->overlay.top, draw);
}

void ui_overlay_draw(ui_tui *a)
{
    ui_rect full = { 1, 0, LINES - 1, COLS };
    ui_fill(full, A_NORMAL);
    ui_rect title = { 1, 0, 1, COLS };
    ui_rect body = { 2, 1, LINES - 3, COLS - 2 };
    int total = page(a, body, 0);
    int max_top = total > body.h ? total - body.h : 0;
    if (a->overlay.top > max_top) a->overlay.top = max_top;
    char t[160];
    snprintf(t, sizeof t, "%s %s F1/Esc closes%s",
             a->overlay.kind == UI_OVL_STATS ? "Statistics" : a->overlay.kind == UI_OVL_TURNS ? "Statistics, all turns" : "Help",
             ui_sym(UI_SYM_VLINE), max_top ? "  PgUp/PgDn/Up/Down scroll" : "");
    ui_put_title(title, t, 1);
    page(a, body, 1);
    if (max_top) {
        char pos[48];
        snprintf(pos, sizeof pos, "[%d-%d/%d]", a->overlay.top + 1,
                 a->overlay.top + body.h < total ? a->overlay.top + body.h : total, total);
        ui_put(LINES - 1, COLS - 1 - (int)strlen(pos), (int)strlen(pos), ui_attr(UI_C_DIM), pos);
    }
}

int ui_overlay_key(ui_tui *a, int type, const char *data, size_t len)
{
    if (!a->overlay.kind) return 0;
    int step = 0;
    if (type == UI_IN_KEY) {
        int act = ui_keys_action(data);
        if (act == UI_ACT_HELP) { a->overlay.kind = 0; a->dirty |= UI_D_LAYOUT; return 1; }
        if (act == UI_ACT_PAGE_UP) step = -(LINES - 4);
        else if (act == UI_ACT_PAGE_DOWN) step = LINES - 4;
        else if (act == UI_ACT_TOP) step = -1000000;
        else if (act == UI_ACT_BOTTOM) step = 1000000;
        else return 0;                   /* Ctrl-C, Ctrl-D and the rest act as always */
    } else if (type == UI_IN_BYTES) {
        if ((len == 1 && (data[0] == 0x1b || data[0] == 'q' || data[0] == '\r' || data[0] == '\n'))) {
            a->overlay.kind = 0;
            a->dirty |= UI_D_LAYOUT;
            return 1;
        }
        if (len == 3 && !memcmp(data, "\x1b[A", 3)) step = -1;
        else if (len == 3 && !memcmp(data, "\x1b[B", 3)) step = 1;
        else if (len == 3 && !memcmp(data, "\x1bOA", 3)) step = -1;
        else if (len == 3 && !memcmp(data, "\x1bOB", 3)) step = 1;
        else goto close_and_type;
    } else if (type == UI_IN_PASTE) {
        goto close_and_type;
    } else {
        return 0;
    }
    a->overlay.top += step;
    if (a->overlay.top < 0) a->overlay.top = 0;
    a->dirty |= UI_D_OVERLAY;
    return 1;
close_and_type:
    /* typed text closes the page and goes to the input line, as always */
    a->overlay.kind = 0;
    a->dirty |= UI_D_LAYOUT;
    return 0;
}
