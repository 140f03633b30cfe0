/* source_engine.c — the chat's source backed by the engine: every call goes
 * straight to the rm_session of the model directory; saving and loading
 * keep the conversation's snapshot beside its transcript. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "source.h"

typedef struct engine_source {
    ui_source   base;
    rm_session *ses;
} engine_source;

static rm_session *ses(ui_source *s) { return ((engine_source *)s)->ses; }

static int turn(ui_source *s, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                volatile int *stop, rm_err *err)
{
    return rm_session_turn(ses(s), user, o, ev, stop, err);
}

static int set_system(ui_source *s, const char *text, rm_err *err)
{
    if (rm_session_set_system(ses(s), text)) return rm_errf(err, "cannot set the system prompt");
    return 0;
}

static void clear(ui_source *s) { rm_session_clear(ses(s)); }
/* The transcript and its snapshot; a snapshot that could not be written
 * (the transcript was) fails the save with the message that says so. */
static int save(ui_source *s, const char *path, rm_err *err)
{
    return rm_session_save_with_state(ses(s), path, err) ? -1 : 0;
}

/* The transcript and its snapshot; the note of a load that worked says
 * where the conversation's state comes from. */
static int load(ui_source *s, const char *path, int *ctx, rm_err *err)
{
    rm_resume r;
    if (rm_session_load_with_state(ses(s), path, &r, err)) return -1;
    *ctx = r.ctx;
    if (r.restored)
        rm_errf(err, "its state restored from the snapshot (%d tokens, %.1f MB, in %.2f s)", r.restored,
                (double)r.bytes / 1e6, r.seconds);
    else rm_errf(err, "its state is computed again at the next message (%s)", r.why);
    return 0;
}
static int messages(ui_source *s, const rm_chat_msg **m) { return rm_session_messages(ses(s), m); }
static int last_interrupted(ui_source *s) { return rm_session_last_interrupted(ses(s)); }
static int interrupted(ui_source *s, int i) { return rm_session_interrupted(ses(s), i); }
static double probe(ui_source *s, double seconds) { return rm_session_probe_device(ses(s), seconds); }

static void destroy(ui_source *s)
{
    rm_session_free(ses(s));
    free(s);
}

static const ui_source_vt engine_vt = {
    turn, set_system, clear, save, load, messages, last_interrupted, interrupted, probe, destroy,
};

/* The model's name: the model card's title (README.md's first line,
 * "# NAME: what it is" or "# NAME"), else the directory's last component. */
void ui_model_name(const char *dir, char *out, size_t n)
{
    char path[4096], line[256] = "";
    snprintf(path, sizeof path, "%s/README.md", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    if (!strncmp(line, "# ", 2)) {
        size_t len = strcspn(line + 2, ":\r\n");
        while (len && line[2 + len - 1] == ' ') len--;
        if (len) { snprintf(out, n, "%.*s", (int)len, line + 2); return; }
    }
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    size_t start = len;
    while (start && dir[start - 1] != '/') start--;
    snprintf(out, n, "%.*s", (int)(len - start), dir + start);
}

int ui_source_engine_open(const char *model_dir, const rm_open_opts *o, ui_source **out, rm_err *err)
{
    engine_source *e = calloc(1, sizeof *e);
    if (!e) return rm_errf(err, "out of memory");
    if (rm_session_open(model_dir, o, &e->ses, err)) { free(e); return -1; }
    const rm_model_info *mi = rm_model_get_info(rm_session_model(e->ses));
    e->base.route_layer0 = mi->first_moe_layer;
    e->base.model_layers = mi->num_layers;
    e->base.vt = &engine_vt;
    ui_model_name(model_dir, e->base.name, sizeof e->base.name);
    snprintf(e->base.label, sizeof e->base.label, "%s", e->base.name);
    e->base.info = *mi;
    *out = &e->base;
    return 0;
}
