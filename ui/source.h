/* source.h — what the chat talks to: a conversation that generates replies.
 *
 * Three implementations: the engine (source_engine.c, a thin wrapper of
 * rm_session), an OpenAI-compatible server (source_endpoint.c: vLLM,
 * SGLang, Moonshot, a remote `remora serve`) and a synthetic one
 * (source_synth.c) that streams deterministic reasoning and answer text
 * with plausible, changing statistics at a chosen rate (prompt progress,
 * speculation passes and the end-of-message record included), so the UI
 * can be demonstrated, tested and benchmarked without a model. The calls
 * mirror rm_session's and run on the worker thread; the UI thread reads
 * only the fields of struct ui_source, which do not change once the
 * source is open.
 */
#ifndef REMORA_UI_SOURCE_H
#define REMORA_UI_SOURCE_H

#include "engine.h"

typedef struct ui_source ui_source;

typedef struct ui_source_vt {
    /* a turn that works may leave a note in err->msg (what the server sent
     * that could not be shown) */
    int  (*turn)(ui_source *s, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                 volatile int *stop, rm_err *err);
    int  (*set_system)(ui_source *s, const char *text, rm_err *err);
    void (*clear)(ui_source *s);
    /* the conversation (with its state, where the source has one); a load
     * that fails changes nothing, and one that works may leave a note in
     * err->msg (where the state comes from) */
    int  (*save)(ui_source *s, const char *path, rm_err *err);
    /* *ctx: the tokens of the loaded conversation as the model is given
     * it, -1 when the source cannot count them */
    int  (*load)(ui_source *s, const char *path, int *ctx, rm_err *err);
    int  (*messages)(ui_source *s, const rm_chat_msg **msgs);
    /* 0, RM_STOPPED_REPLY or RM_STOPPED_PROMPT (rm_session_last_interrupted) */
    int  (*last_interrupted)(ui_source *s);
    /* the same for entry i of messages()'s view (rm_conv_interrupted) */
    int  (*interrupted)(ui_source *s, int i);
    /* Measures the storage ceiling for about `seconds` (later records carry
     * it as device_gbps); returns GB/s, or -1 when it cannot be measured. */
    double (*probe)(ui_source *s, double seconds);
    void (*free)(ui_source *s);
} ui_source_vt;

/* Figures a source may not report (ui_source.unreported): a panel whose
 * figures are among them and that got none says "not reported by this
 * endpoint" instead of drawing zeros. */
enum {
    UI_FIG_PHASES  = 1,     /* where a token's time went */
    UI_FIG_CACHE   = 2,     /* spine and expert cache */
    UI_FIG_SPEC    = 4,     /* speculation */
    UI_FIG_ROUTER  = 8,     /* routed experts */
    UI_FIG_STORAGE = 16,    /* storage reads (network bytes are reported) */
};

struct ui_source {
    const ui_source_vt *vt;
    char label[256];        /* status line: the model's name, "HOST:PORT MODEL" or "synthetic N tok/s" */
    /* The model layer of the router's first MoE layer, and the model's
     * layers: router rows are numbered as the model's layers, as --trace
     * numbers them (MoE layers follow each other from route_layer0). */
    int  route_layer0, model_layers;
    unsigned unreported;    /* UI_FIG_* this source may not report; 0 for a local model */
    /* What the welcome and the status line say about the model: its name
     * (the model card's title, README.md's first heading up to a colon, else
     * the directory's last component) and the engine's figures (the
     * synthetic source's are shaped like Kimi K3's). */
    char name[96];
    rm_model_info info;
};

typedef struct ui_synth_opts {
    double rate;            /* tokens per second; <= 0: as fast as possible */
    int    reasoning_tokens, answer_tokens;
    /* prompt tokens per second, processed in passes and reported after
     * every layer (RM_REC_PROGRESS) with the stop flag looked at between
     * layers; <= 0: prompts take no time */
    double prompt_rate;
} ui_synth_opts;

int ui_source_engine_open(const char *model_dir, const rm_open_opts *o, ui_source **out, rm_err *err);
/* What a model in dir is called: the first heading of its README.md (up
 * to a colon), else the folder's name. The chat's welcome and the server's
 * model id both use it. */
void ui_model_name(const char *dir, char *out, size_t n);
typedef struct ui_endpoint_opts {
    const char *url;        /* the API's base (…/v1), a server's root, or the chat URL */
    const char *model;      /* NULL: the first of GET /v1/models */
    const char *api_key;    /* NULL: none; sent only to the endpoint's host over HTTPS or loopback */
    double timeout;         /* seconds without a byte before a request fails; <= 0: 300 */
} ui_endpoint_opts;

/* Opens the endpoint: asks GET {base}/models for the model (and whether the
 * server is remora serve, whose per-token figures are then requested).
 * Returns 0, -2 for a bad URL or a key that would cross the network in
 * clear text (bad input), or -1 when the server cannot be used. */
int ui_source_endpoint_open(const ui_endpoint_opts *o, ui_source **out, rm_err *err);
int ui_source_synth_open(const ui_synth_opts *o, ui_source **out, rm_err *err);

#endif
