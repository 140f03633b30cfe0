/* source.h — what the chat talks to: a conversation that generates replies.
 *
 * Two implementations: the engine (source_engine.c, a thin wrapper of
 * rm_session) and a synthetic one (source_synth.c) that streams deterministic
 * reasoning and answer text with plausible, changing statistics at a chosen
 * rate (prompt progress, speculation passes and the end-of-message record
 * included), so the UI can be demonstrated, tested and benchmarked without a
 * model. The calls mirror rm_session's and run on the worker thread; the UI
 * thread reads only the fields of struct ui_source, which do not change
 * once the source is open.
 */
#ifndef REMORA_UI_SOURCE_H
#define REMORA_UI_SOURCE_H

#include "engine.h"

typedef struct ui_source ui_source;

typedef struct ui_source_vt {
    int  (*turn)(ui_source *s, const char *user, const rm_gen_opts *o, const rm_gen_events *ev,
                 volatile int *stop, rm_err *err);
    int  (*set_system)(ui_source *s, const char *text, rm_err *err);
    void (*clear)(ui_source *s);
    /* the conversation (with its state, where the source has one); a load
     * that fails changes nothing, and one that works may leave a note in
     * err->msg (where the state comes from) */
    int  (*save)(ui_source *s, const char *path, rm_err *err);
    int  (*load)(ui_source *s, const char *path, rm_err *err);
    int  (*messages)(ui_source *s, const rm_chat_msg **msgs);
    /* 0, RM_STOPPED_REPLY or RM_STOPPED_PROMPT (rm_session_last_interrupted) */
    int  (*last_interrupted)(ui_source *s);
    /* Measures the storage ceiling for about `seconds` (later records carry
     * it as device_gbps); returns GB/s, or -1 when it cannot be measured. */
    double (*probe)(ui_source *s, double seconds);
    void (*free)(ui_source *s);
} ui_source_vt;

struct ui_source {
    const ui_source_vt *vt;
    char label[256];        /* status line: model directory or "synthetic" */
    /* The model layer of the router's first MoE layer, and the model's
     * layers: router rows are numbered as the model's layers, as --trace
     * numbers them (MoE layers follow each other from route_layer0). */
    int  route_layer0, model_layers;
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
int ui_source_synth_open(const ui_synth_opts *o, ui_source **out, rm_err *err);

#endif
