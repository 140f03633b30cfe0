/* engine.h — the one public header of the Remora engine.
 *
 * app/ and ui/ include this file and nothing else from engine/, and every
 * function it declares is one they call (or a fuzz target does, or a helper
 * of the section shared by all three); what only the engine calls is in its
 * folder's header (tests/sh/layout.sh checks both). It opens a
 * model directory (Kimi K3 or Kimi-Linear checkpoint format), runs the forward
 * pass over token ids, tokenizes text, renders chats and publishes per-token
 * statistics. The engine never prints (rm_bench_kernels, the body of
 * `remora bench-kernels`, is the one exception): every failure comes back as
 * a non-zero return and a message in an rm_err naming the file or tensor at
 * fault. The engine's folders and their include order are README.md's "How
 * it works".
 */
#ifndef REMORA_ENGINE_H
#define REMORA_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* ---- errors ------------------------------------------------------------ */

typedef struct rm_err {
    char msg[1024];
    /* What kind of failure, when the engine knows it: RM_ERR_INPUT (bad
     * input: a malformed file or answer, a refused URL; exit 2) or
     * RM_ERR_RUNTIME (out of memory or file handles, a disk or network
     * failure; exit 1); 0: not classified (the command's own default). */
    int kind;
} rm_err;
enum { RM_ERR_RUNTIME = 1, RM_ERR_INPUT = 2 };

/* Formats msg into err (if err is non-NULL) and returns -1, so callers can
 * write `return rm_errf(err, "...")`. err->kind is left as it is. */
int rm_errf(rm_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, marking the failure bad input (RM_ERR_INPUT). */
int rm_errf_input(rm_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, marking a runtime failure (RM_ERR_RUNTIME): out of memory or
 * file handles, a disk that refuses a write. */
int rm_errf_runtime(rm_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit status a failure deserves: err->kind, or dflt when unclassified. */
int rm_err_status(const rm_err *err, int dflt);

/* ---- helpers shared by the engine, ui/ and app/ ------------------------ */

/* One monotonic clock for every duration the program measures, in seconds. */
double rm_now(void);

/* bytes as "512 B", "12 kB", "3.4 MB", "1.23 GB", "2.00 TB" (SI units;
 * negative counts as 0) into buf; returns buf. The one byte formatter of
 * the CLI and the chat. */
const char *rm_fmt_bytes(char *buf, size_t cap, double bytes);

/* A growable byte buffer that cannot fail silently: every add either
 * appends all of its bytes or returns -1 and leaves the buffer as it was
 * (out of memory, or past `max` when max > 0). The bytes are always
 * NUL-terminated (p is NULL only while cap is 0). Zero-initialise to use. */
typedef struct rm_buf {
    char *p;
    size_t len, cap;
    size_t max;             /* 0: no limit beyond memory */
} rm_buf;
int  rm_buf_add(rm_buf *b, const void *data, size_t n) __attribute__((warn_unused_result));
int  rm_buf_adds(rm_buf *b, const char *s) __attribute__((warn_unused_result));
int  rm_buf_addf(rm_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), warn_unused_result));
/* Makes room for n more bytes without adding them. */
int  rm_buf_reserve(rm_buf *b, size_t n) __attribute__((warn_unused_result));
void rm_buf_reset(rm_buf *b);           /* len = 0, memory kept */
void rm_buf_free(rm_buf *b);
/* Hands the bytes to the caller (malloc'd, NUL-terminated; "" when empty)
 * and empties the buffer; NULL when out of memory. */
char *rm_buf_take(rm_buf *b, size_t *len);

/* Strict standard base64 with padding (RFC 4648): n a multiple of 4, out
 * room for n / 4 * 3 bytes. Returns the decoded length, or -1 when the
 * text is not base64. */
long rm_base64_decode(const char *text, size_t n, unsigned char *out);

/* Grows an array *p of *cap elements of `size` bytes so that it holds at
 * least `need` (doubling, starting at 8); returns -1 on overflow or out of
 * memory with *p and *cap unchanged. RM_GROW(arr, cap, need) for typed use. */
int rm_grow(void **p, int *cap, int need, size_t size) __attribute__((warn_unused_result));
#define RM_GROW(arr, cap, need) rm_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

/* Files a user cares about (transcripts, history, snapshots, caches,
 * configs) are replaced atomically: a reader or a crash sees the old file or
 * the whole new one, never a part. The bytes go to a temporary file in the
 * same folder ("NAME.tmp.PID.TID"), which is flushed, fsync'ed, checked for
 * its size, renamed over NAME, and the folder is fsync'ed. On any failure the
 * temporary file is removed, NAME is untouched and the message names NAME
 * (not the temporary file) with the reason. mode: permission bits of a new
 * file (0644 or 0600); a file that is there keeps its own. Only a regular
 * file is replaced: a character device or a FIFO at path (/dev/null,
 * /dev/full) is written in place with every error checked (a FIFO without
 * a reader is refused), anything else is refused. */
int rm_write_atomic(const char *path, const void *data, size_t len, int mode, rm_err *err);
/* For writers that produce a file through a path of their own (readline's
 * write_history, a FILE *): fill tmp (cap bytes) with the temporary name to
 * write, then commit it (fsync, rename over path, fsync of the folder) or
 * abort it (unlink). */
void rm_atomic_tmp_name(const char *path, char *tmp, size_t cap);
int  rm_atomic_commit(const char *tmp, const char *path, rm_err *err);
void rm_atomic_abort(const char *tmp);

/* ---- model ------------------------------------------------------------- */

typedef struct rm_model rm_model;
typedef struct rm_state rm_state;

typedef struct rm_open_opts {
    int threads;            /* compute threads; 0 = all cores */
    double ram_gb;          /* budget for weights in RAM; 0 = a safe share */
    int io_threads;         /* expert reader threads; 0 = default (8) */
    const char *trace_path; /* sessions: JSONL trace per token, or NULL */
    int prefill_chunk;      /* prompt tokens per layer-major pass; 0 = the planner's choice */
    int max_ctx;            /* sessions: the most tokens a context may hold; 0 = the model's
                             * max_position_embeddings (no limit when the config has none) */
    /* sessions: the prefix cache (README.md, "Snapshots"), bounded to this
     * many GB; 0 = $REMORA_PREFIX_CACHE_GB, else 4; negative = no cache */
    double prefix_cache_gb;
    const char *prefix_cache_dir;   /* NULL = $XDG_CACHE_HOME/remora/prefix (~/.cache/remora/prefix) */
    /* its RAM tier (the most recent entries in memory, the rest on the
     * disk), bounded to this many GB; 0 = $REMORA_PREFIX_RAM_GB, else 1 GB
     * but at most an eighth of the RAM budget and of 60% of the available
     * memory; negative = none */
    double prefix_ram_gb;
    /* the GPU of a CUDA build (README "The GPU"): RM_GPU_AUTO takes device 0
     * if there is one ($REMORA_GPU=auto|off|N replaces it), RM_GPU_OFF
     * computes on the CPU, RM_GPU_DEVICE takes gpu_device. The first model
     * opened in a process decides for the process. vram_gb bounds the
     * weights placed in VRAM (0 = the card's free memory less a margin). */
    int gpu;
    int gpu_device;
    double vram_gb;
    /* sessions: before the state is replaced by a prompt that does not go
     * on from it (a server's clients interleave conversations), it goes
     * into the prefix cache, so its conversation resumes from there */
    int keep_states;
} rm_open_opts;

enum { RM_GPU_AUTO = 0, RM_GPU_OFF = 1, RM_GPU_DEVICE = 2 };

/* What computes the products, and what it has done since the start of the
 * process (rm_gpu_get). Both sides give the same bits; only speed differs. */
typedef struct rm_gpu_figures {
    int active;                 /* products go to a GPU */
    const char *build;          /* "cuda" or "none" */
    char name[96];              /* the device, when active */
    char why[160];              /* when not active: why (off, no device, no CUDA in this build) */
    uint64_t vram_total, vram_budget, vram_resident;
    int units_resident;         /* matrices placed in VRAM */
    uint64_t vram_experts;      /* of vram_resident, routed experts' (placed beside the spine) */
    uint64_t expert_vram_reads; /* bytes of placed experts the products read, since the start */
    int min_tokens;             /* rows a product of streamed weights needs to go to the GPU */
    uint64_t h2d_bytes, d2h_bytes, products, flops;
    double seconds;             /* in device products, copies included */
} rm_gpu_figures;
void rm_gpu_get(rm_gpu_figures *out);
/* Opens the GPU for a process that opens no model (forecast): mode
 * RM_GPU_*, as rm_open_opts' gpu, gpu_device and vram_gb; the first open of
 * a process decides. Returns 1 when one is in use. */
int  rm_gpu_open(int mode, int device, double vram_gb);
/* bench-kernels' GPU rows, timed on the device with events on data already
 * in VRAM: the fp32 FMA peak of a register-only loop and the read-stream
 * ceiling; one product (kind 1 F32, 2 BF16, 3 MXFP4) as GFLOP/s and GB/s
 * of weights read. Each returns 0, or -1 without an open device. */
int rm_gpu_bench_peak(double *fma_gflops, double *read_gbs);
int rm_gpu_bench_product(int kind, int rows, int cols, int T, double *gflops, double *wgbs);
/* The pinned host-to-device copy rate in GB/s; -1 without a device. */
int rm_gpu_bench_h2d(double *gbs);

/* What a caller may want to know about an open model. */
typedef struct rm_model_info {
    const char *family;     /* "kimi_k3" or "kimi_linear" */
    int vocab_size;
    int hidden_size;
    int num_layers;
    int num_experts;        /* routed experts per MoE layer; 0 if none */
    int experts_per_token;
    int first_moe_layer;
    int max_position;       /* max_position_embeddings of the config; 0 if it has none */
    int bos_id, eos_id, pad_id;
    uint64_t total_weight_bytes;
    /* parameters (weights) of the whole model: every element of the spine's
     * tensors plus expert_weights for each of total_experts, so packed
     * formats (MXFP4 blocks and their scales) count as the weights they
     * hold (the chat's welcome says it) */
    uint64_t num_params;
    /* the RAM plan */
    uint64_t ram_budget;            /* bytes for spine + expert cache */
    uint64_t min_ram_budget;        /* the smallest budget this model accepts */
    uint64_t spine_bytes, spine_resident_bytes;
    uint64_t expert_bytes;          /* all routed experts on storage */
    uint64_t expert_cache_bytes;
    int expert_cache_slots, total_experts;
    uint64_t expert_weights;        /* weights of one routed expert (its three matrices) */
    int expert_mxfp4;               /* routed experts are MXFP4 (else bf16) */
    int direct_io;                  /* reads bypass the page cache */
    /* RAM used beside the budget, at most: sequence state for max_ctx
     * tokens, prefill activations, code, libraries and thread stacks */
    uint64_t overhead_bytes;
    int overhead_ctx;               /* the context length it assumes */
    /* the prefill planner: prompts are fed in layer-major passes of at most
     * prefill_chunk tokens (each pass reads every expert it needs once);
     * prefill_workspace_bytes is the activation memory of such a pass,
     * counted in overhead_bytes */
    int prefill_chunk;
    uint64_t prefill_workspace_bytes;
} rm_model_info;

int  rm_model_open(const char *dir, const rm_open_opts *opts, rm_model **out, rm_err *err);
void rm_model_free(rm_model *m);
const rm_model_info *rm_model_get_info(const rm_model *m);

/* Per-sequence state: KDA recurrent and conv states, MLA latent cache,
 * position. max_tokens bounds the MLA cache; it grows on demand past it. */
rm_state *rm_state_new(rm_model *m, rm_err *err);
void      rm_state_free(rm_state *s);

/* Router choices reported during a forward pass, one call per MoE layer and
 * position (pos counts from the start of the sequence). ids are ordered by
 * descending selection score; weights are the final routing weights. */
typedef void (*rm_route_fn)(void *ud, int layer, int pos, const int *ids,
                            const float *weights, int k, float margin);

/* Feeds n tokens at the end of the state's sequence. If logits is non-NULL it
 * receives n rows of vocab_size floats (every position); if last_logits is
 * non-NULL it receives the row of the last position only. */
int rm_forward(rm_model *m, rm_state *s, const int32_t *ids, int n,
               float *logits, float *last_logits,
               rm_route_fn on_route, void *route_ud, rm_err *err);

/* How a long prompt is going (rm_forward_ex's progress hook, and the
 * prompt records of rm_token_stats). Tokens count this prompt's tokens;
 * bytes are storage (or network) bytes of the pass in progress. */
typedef struct rm_prompt_figures {
    int ctx;                    /* tokens in the context once the prompt is in */
    int reused;                 /* of those, already in the state (earlier turns) */
    int restored;               /* of those, restored from a snapshot or prefix cache */
    int total;                  /* to compute now: ctx - reused - restored */
    int done;                   /* of total, consumed by complete passes */
    int chunk, chunks;          /* the pass in progress (0-based) and their number */
    int chunk_tokens;           /* tokens in the pass in progress */
    int layer, layers;          /* layers of the pass finished, and in all */
    int reprefill;              /* 1: the state could not be reused; the whole context is computed again */
    uint64_t chunk_bytes_read;  /* read so far by the pass in progress */
    uint64_t chunk_bytes_left;  /* estimated still to read by it */
    double elapsed;             /* seconds since the prompt began */
    double tok_per_s;           /* prompt tokens per second so far (0 until known) */
    double eta;                 /* seconds left, estimated; -1 unknown */
    /* the share of the prompt's work done (0..1, never going back): its
     * layers' flops and reads, each layer of each pass counted at the
     * seconds a flop and a byte have cost so far (so a dense layer, an MLA
     * layer late in a long prompt and a layer whose experts come from the
     * disk weigh what they take); 0 until a layer is done */
    double work;
    /* the prefix cache: of restored, the tokens from its RAM tier, and the
     * seconds the restore took (0: none); the state this prompt replaced,
     * kept in the cache first (rm_open_opts.keep_states): its tokens (0:
     * none), 1 when it went to the RAM tier, and the seconds that took */
    int restored_ram;
    double restore_s;
    int kept, kept_ram;
    double keep_s;
} rm_prompt_figures;

/* Control of a long feed (prompts). Every field may be zero. */
typedef struct rm_forward_ctl {
    volatile int *stop;         /* polled between layers, token blocks and experts */
    int chunk_tokens;           /* tokens per pass; 0 = the model's planner */
    /* called after every layer of every pass, on the calling thread; p->ctx,
     * reused, restored and reprefill are the caller's (copied from base) */
    void (*on_progress)(void *ud, const rm_prompt_figures *p);
    /* called after each complete pass with the tokens fed so far */
    void (*on_chunk)(void *ud, int fed);
    void *ud;
    rm_prompt_figures base;     /* ctx, reused, restored, reprefill to report */
    /* A position inside the feed (0 < capture < n; 0: none) whose state the
     * caller wants without a pass ending there (an extra pass would read
     * the experts again): the pass that holds it calls on_capture(ud, l)
     * for every layer l in order, as soon as that layer holds the state
     * after the first `capture` tokens of the feed (a KDA layer: its
     * recurrent and convolution state at that moment; an MLA layer: its
     * cache rows up to there, which later positions do not change). The
     * capture is complete when that pass is (on_chunk); a stopped pass
     * leaves it incomplete. A capture on a pass boundary is not called:
     * the state at on_chunk is that position's. Results are the same bits
     * with or without a capture. */
    int capture;
    void (*on_capture)(void *ud, int layer);
    /* 1: a stop or an error puts the state back where the feed began (*fed
     * = 0), not at the last complete pass — a chat turn stopped in its
     * prompt leaves that prompt out of the conversation (rm_conv_context).
     * Passes still complete one by one (on_chunk) on the way. */
    int stop_to_start;
} rm_forward_ctl;

/* rm_forward for prompts: feeds n tokens in passes of ctl->chunk_tokens (or
 * the planner's size), each pass layer-major (every layer sees all of its
 * tokens before the next layer starts), with bit-identical results to
 * rm_forward whatever the pass size. Returns 0 when all were fed, 1 when
 * *ctl->stop ended it: the state is then that of the last complete pass
 * (or of the start, with ctl->stop_to_start), and *fed (may be NULL) says
 * how many tokens it holds of the n; -1 on error (the state is then that of
 * the last complete pass, or the start, too). */
int rm_forward_ex(rm_model *m, rm_state *s, const int32_t *ids, int n,
                  float *logits, float *last_logits, rm_route_fn on_route, void *route_ud,
                  rm_forward_ctl *ctl, int *fed, rm_err *err);

/* ---- tokenizer (engine/text/tokenizer.c, pretok.c) ----------------------- */

typedef struct rm_tokenizer rm_tokenizer;

/* Opens DIR/tiktoken.model and DIR/tokenizer_config.json. */
int  rm_tokenizer_open(const char *dir, rm_tokenizer **out, rm_err *err);
void rm_tokenizer_free(rm_tokenizer *t);
int  rm_tokenizer_vocab(const rm_tokenizer *t);      /* ranks + specials */
/* Id of a special token by its text ("<|open|>"), or -1. */
int  rm_tokenizer_special_id(const rm_tokenizer *t, const char *text);
/* Encodes len bytes of text. With allow_special, special-token strings map to
 * their ids (leftmost match); otherwise they are plain text. Returns the
 * number of ids (*ids malloc'd, caller frees) or -1 on error. */
int  rm_tokenizer_encode(const rm_tokenizer *t, const char *text, size_t len,
                         int allow_special, int32_t **ids, rm_err *err);
/* The bytes of one token (special ids give their text). NULL if out of range.
 * As in tokenization_kimi.py, special names (and so encodings with
 * allow_special) cover two ids past the vocabulary: "<|reserved_token_{V}|>"
 * and "<|reserved_token_{V+1}|>" for vocabulary size V. */
const char *rm_tokenizer_token_bytes(const rm_tokenizer *t, int32_t id, size_t *len);

/* Streaming UTF-8 assembly of token bytes: feed token bytes, get complete
 * UTF-8 back; invalid sequences become U+FFFD. */
typedef struct rm_utf8_stream { unsigned char pend[8]; int npend; } rm_utf8_stream;
/* Appends to out (cap bytes) the complete characters now available; returns
 * the byte count written. flush=1 emits any pending incomplete tail as U+FFFD.
 * Invalid sequences give one U+FFFD per maximal invalid subpart (as Python's
 * errors="replace"). A cap of RM_UTF8_OUT_MAX(len) always suffices; with
 * less, output that does not fit is lost. */
#define RM_UTF8_OUT_MAX(len) (3 * ((size_t)(len) + 4))
size_t rm_utf8_stream_feed(rm_utf8_stream *s, const char *in, size_t len,
                           char *out, size_t cap, int flush);

/* Text that came from the network or a file, made safe before it reaches a
 * terminal or a log (the one helper for run's output, the chat's messages
 * and serve's log): C0 controls, DEL, the C1 controls U+0080..U+009F and a
 * bare CR become visible ASCII escapes (\x1b, \u009b, \r); invalid or cut
 * UTF-8 becomes U+FFFD; everything else is kept. With RM_SAFE_LINES, LF and
 * TAB are kept and CR LF becomes LF; without, they are escaped too (one log
 * line). Appends to out: 0, or -1 when out of memory. */
#define RM_SAFE_LINES 1u
int rm_text_safe(rm_buf *out, const char *in, size_t len, unsigned flags) __attribute__((warn_unused_result));

/* ---- chat formats (engine/text/template.c) ----------------------------- */

typedef enum { RM_CHAT_XTML = 1, RM_CHAT_IM = 2 } rm_chat_format;

typedef struct rm_chat_msg {
    const char *role;               /* "system", "user", "assistant", "tool" */
    const char *content;
    const char *reasoning_content;  /* assistant only; may be NULL */
    const char *name;               /* optional */
} rm_chat_msg;

typedef struct rm_chat_opts {
    int thinking;                   /* open the think channel (XTML) */
    const char *thinking_effort;    /* NULL: no thinking-effort note */
    int add_generation_prompt;
    const char *tools_json;         /* JSON array of tool schemas, or NULL */
} rm_chat_opts;

/* Chooses the format from the tokenizer's special tokens (XTML when <|open|>
 * exists, else the im format). */
rm_chat_format rm_chat_detect(const rm_tokenizer *t);
/* Renders a conversation to ids. Returns the count (*ids malloc'd) or -1. */
int rm_chat_render(const rm_tokenizer *t, rm_chat_format f, const rm_chat_msg *msgs,
                   int n, const rm_chat_opts *o, int32_t **ids, rm_err *err);
/* The same from a JSON conversation object (len bytes of text), the input of
 * `remora tokenize --chat`: {"messages": [...], "tools", "thinking",
 * "thinking_effort", "add_generation_prompt"} (optional "tool_choice",
 * "response_format"), messages as in OpenAI-style APIs, including
 * "tool_calls", "tool_call_id", "reasoning_content" and content parts.
 * Missing "thinking" and "add_generation_prompt" default to true; a missing
 * or null "thinking_effort" adds no thinking-effort note. */
int rm_chat_render_json(const rm_tokenizer *t, rm_chat_format f, const char *json, size_t len,
                        int32_t **ids, rm_err *err);

/* Tool calls read out of a reply as it streams (engine/text/toolcall.c):
 * K3's tools block (<|open|>tools<|sep|><|open|>call tool="NAME"
 * index="K"<|sep|><|open|>argument key="k" type="string"<|sep|>raw
 * <|close|>argument<|sep|>...<|close|>call<|sep|>...<|close|>tools<|sep|>)
 * and the im format's <|tool_calls_section_begin|> section. Per call:
 * RM_TOOL_BEGIN with its name, RM_TOOL_ARGS pieces whose concatenation is
 * the arguments as one compact JSON object (string arguments streamed as
 * they come, other types once whole and checked), RM_TOOL_END; then
 * RM_TOOL_DONE when the block closes. A call that does not follow the
 * format ends the block with RM_TOOL_BAD (calls before it stay whole). */
enum { RM_TOOL_BEGIN = 1, RM_TOOL_ARGS, RM_TOOL_END, RM_TOOL_DONE, RM_TOOL_BAD };
typedef struct rm_tool_event {
    int kind;                       /* RM_TOOL_* */
    int index;                      /* the call's 0-based place in the block */
    const char *text;               /* BEGIN: the name; ARGS: JSON text; BAD: the call's text, markers left out */
    size_t len;
    const char *why;                /* BAD: what was wrong */
} rm_tool_event;
typedef void (*rm_tool_fn)(void *ud, const rm_tool_event *e);

/* Streaming splitter of generated tokens into reasoning and answer text; never
 * emits control markers. */
typedef struct rm_chat_stream rm_chat_stream;
enum { RM_CHAN_REASONING = 1, RM_CHAN_ANSWER = 2 };
typedef void (*rm_chat_text_fn)(void *ud, int channel, const char *text, size_t len);
rm_chat_stream *rm_chat_stream_new(const rm_tokenizer *t, rm_chat_format f,
                                   int starts_in_think, rm_chat_text_fn fn, void *ud);
/* Feeds one generated id. Returns 1 when the id ends the message
 * (end-of-message or [EOS]), else 0. */
int  rm_chat_stream_feed(rm_chat_stream *s, int32_t id);
/* Adds an id that also ends the message (the model config's eos_token_id,
 * when it differs from the format's end-of-message token). */
void rm_chat_stream_add_stop(rm_chat_stream *s, int32_t id);
/* Tool calls go to fn (RM_TOOL_* events) instead of being dropped, and the
 * message ends where the tools block ends. */
void rm_chat_stream_on_tool(rm_chat_stream *s, rm_tool_fn fn, void *ud);
/* The reply starts inside a tools block whose text so far (after its
 * opening marker) is prime[0..n): a prompt that forced a tool call. */
void rm_chat_stream_open_tools(rm_chat_stream *s, const char *prime, size_t n);
void rm_chat_stream_finish(rm_chat_stream *s);
void rm_chat_stream_free(rm_chat_stream *s);

/* ---- per-token statistics ---------------------------------------------- */

/* Time phases of one token, in the order the worker spends them. */
enum {
    RM_PHASE_WAIT_IO,       /* waiting for expert/spine bytes */
    RM_PHASE_SPINE,         /* norms, projections, router, shared experts */
    RM_PHASE_ATTN,          /* KDA recurrence and MLA attention */
    RM_PHASE_EXPERTS,       /* routed expert arithmetic */
    RM_PHASE_LM_HEAD,
    RM_PHASE_COUNT
};
/* The name of a phase in figures and traces: "wait_io", "spine",
 * "attention", "experts", "lm_head" ("?" outside 0..RM_PHASE_COUNT-1). */
const char *rm_phase_name(int phase);

#define RM_MAX_ROUTE_LAYERS 128
#define RM_MAX_TOPK 32

/* One snapshot per emitted token, published by the engine and sampled by the
 * CLI and the TUI. Byte figures are bytes actually read from storage (or the
 * network) for this token; cache figures agree with them. */
/* What a record is (rm_token_stats.kind). */
enum {
    RM_REC_TOKEN = 0,       /* one emitted token */
    RM_REC_PROMPT = 1,      /* the prompt is in: its summary, before the first token */
    RM_REC_PROGRESS = 2,    /* the prompt is being processed: figures so far */
};

typedef struct rm_token_stats {
    uint64_t token_index;           /* tokens emitted in this turn so far */
    int      token_id;
    double   seconds;               /* wall time of this token */
    double   phase_seconds[RM_PHASE_COUNT];
    int      kind;                  /* RM_REC_* */
    int      prefill;               /* 1 for RM_REC_PROMPT and RM_REC_PROGRESS records */
    int      prompt_tokens;         /* tokens in the context (= prompt.ctx) */
    rm_prompt_figures prompt;       /* prompt and progress records: the prompt's figures */
    /* storage */
    uint64_t bytes_spine_read, bytes_expert_read, bytes_net;
    uint64_t bytes_expert_from_cache;
    uint64_t spine_resident_bytes, spine_total_bytes;
    uint64_t expert_cache_bytes, expert_cache_capacity;
    uint64_t expert_hits, expert_misses;   /* this token */
    double   retained_fraction;            /* of all experts, resident now */
    double   read_gbps;                    /* achieved this token */
    double   net_gbps;                     /* stream mode: achieved fetch bandwidth */
    double   device_gbps;                  /* measured ceiling, 0 if unknown */
    int      queue_depth;
    uint64_t prefetch_issued, prefetch_used;  /* expert reads started early */
    double   read_busy_seconds;            /* wall time with expert reads in flight (read_gbps's divisor) */
    uint64_t flops;                        /* matrix-product flops of this record's work */
    /* the GPU (0 without one): bytes copied to it for this record's work,
     * seconds in its products (copies included), weights placed in VRAM */
    uint64_t gpu_h2d_bytes;
    double   gpu_seconds;
    uint64_t vram_resident_bytes;
    /* speculation */
    uint64_t spec_drafted, spec_accepted;  /* cumulative in this turn */
    uint64_t spec_passes;                  /* verify passes, cumulative in this turn */
    /* drafts found but not verified, cumulative in this turn: the cost gate
     * predicted that a plain step yields more tokens per second */
    uint64_t spec_declined;
    /* tokens emitted from one verify pass share its bytes and time: spec_pass
     * numbers the pass in this turn (0 for a plain step), spec_pass_pos is
     * the token's place in it (0, 1, ...); seconds and byte figures of a
     * pass's tokens are its totals divided among them, routes are each
     * token's own */
    int      spec_pass, spec_pass_pos;
    /* router: the last position's choices, per MoE layer */
    int      route_layers;                 /* number of MoE layers filled */
    int      route_k;
    int      num_experts;
    int16_t  route_ids[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
    /* routed-expert bytes this record's work asked storage for (cache
     * misses), per MoE layer, rows as route_ids */
    uint64_t layer_bytes_read[RM_MAX_ROUTE_LAYERS];
    /* how each expert of route_ids was found when its layer last ran
     * (RM_ROUTE_*): the cache residency the chat's router map marks */
    uint8_t  route_state[RM_MAX_ROUTE_LAYERS][RM_MAX_TOPK];
} rm_token_stats;

/* rm_token_stats.route_state: resident (a cache hit), in flight (its read
 * had started before it was needed: a prefetch), or read for this token. */
enum { RM_ROUTE_UNKNOWN, RM_ROUTE_RESIDENT, RM_ROUTE_INFLIGHT, RM_ROUTE_READ };

/* A record as one JSON object (engine/session/stats_json.c): the `remora`
 * object of `remora serve`'s stats extension, which a chat client of the
 * server reads back with rm_token_stats_parse. Every field of
 * rm_token_stats is a key of the same name, with these exceptions: "kind"
 * is "token", "prompt" or "progress"; "prefill" is a boolean;
 * "phase_seconds" is an object keyed by rm_phase_name; "prompt" (prompt and
 * progress records only) is an object of the rm_prompt_figures fields, with
 * "reprefill" and "kept_ram" booleans; "route_ids" is an array of route_layers arrays of
 * route_k ids, "route_state" likewise of RM_ROUTE_* values, and
 * "layer_bytes_read" an array of route_layers byte counts. Appends the object (no newline) to out; -1 out of memory. */
int rm_token_stats_json(const rm_token_stats *st, rm_buf *out) __attribute__((warn_unused_result));
/* Reads such an object back into *st (zeroed first): a missing key leaves
 * its field 0 and unknown keys are ignored (a newer server may send more);
 * a value of the wrong type or range is refused with the key's name. */
int rm_token_stats_parse(const char *json, size_t len, rm_token_stats *st, rm_err *err);

/* ---- session: conversation, generation loop ---------------------------- */

typedef struct rm_session rm_session;

/* Speculation modes (rm_gen_opts.spec); auto is the zero value. */
enum { RM_SPEC_AUTO = 0, RM_SPEC_OFF = 1, RM_SPEC_ON = 2 };

typedef struct rm_gen_opts {
    int      max_new;               /* 0 = until end of message */
    float    temperature;           /* 0 = greedy */
    float    top_p;                 /* 1 = off */
    uint64_t seed;                  /* sampling: a conversation's first turn starts from it, later
                                     * turns from seeds mixed from it and the turn's number */
    int      think;                 /* 1: open the think channel */
    const char *thinking_effort;    /* NULL: none */
    int      spec;                  /* RM_SPEC_*: n-gram drafts (greedy only) */
} rm_gen_opts;

typedef struct rm_gen_events {
    void *ud;
    /* streamed text, channel RM_CHAN_REASONING or RM_CHAN_ANSWER */
    void (*on_text)(void *ud, int channel, const char *text, size_t len);
    /* one call per emitted token, RM_REC_PROGRESS records while the prompt
     * is processed (after every layer of every pass), and one RM_REC_PROMPT
     * record when the prompt is in */
    void (*on_stats)(void *ud, const rm_token_stats *st);
    /* tool calls of a chat reply (rm_tool_event); NULL: dropped, and the
     * reply goes on after the tools block */
    void (*on_tool)(void *ud, const rm_tool_event *e);
} rm_gen_events;

int  rm_session_open(const char *model_dir, const rm_open_opts *o, rm_session **out, rm_err *err);
void rm_session_free(rm_session *s);
rm_model *rm_session_model(rm_session *s);
const rm_tokenizer *rm_session_tokenizer(rm_session *s);
int  rm_session_set_system(rm_session *s, const char *system_text);
void rm_session_clear(rm_session *s);
/* Appends a message to the conversation without generating (a history to
 * continue from): role "user", "assistant" or "tool"; reasoning (assistant
 * only, may be NULL) is kept as its reasoning_content. */
int  rm_session_add_message(rm_session *s, const char *role, const char *content, const char *reasoning,
                            rm_err *err);
/* A context (the rendered conversation, or a completion's prompt) longer
 * than the session's limit (rm_open_opts.max_ctx, else the model's
 * max_position_embeddings) is refused before any of it is computed, as bad
 * input (err->kind RM_ERR_INPUT) giving the token count and the limit.
 * Appends a user message, generates the assistant reply, appends it. *stop is
 * polled between tokens and, while the prompt is processed, between layers
 * and experts; when it becomes non-zero the turn ends there, the partial
 * reply is kept and marked interrupted (rm_session_last_interrupted tells
 * where). Returns 0 (also when stopped), -1 on error. */
int  rm_session_turn(rm_session *s, const char *user_text, const rm_gen_opts *o,
                     const rm_gen_events *ev, volatile int *stop, rm_err *err);
/* Raw completion: encodes text without a chat template (special-token
 * strings stay text) and streams the continuation as answer text, ending at
 * end-of-message or [EOS]. The conversation is not changed. */
int  rm_session_complete(rm_session *s, const char *text, const rm_gen_opts *o,
                         const rm_gen_events *ev, volatile int *stop, rm_err *err);
/* Measures the storage ceiling (rm_bench_device) for `seconds`; later
 * per-token records carry it as device_gbps. Returns GB/s or -1. */
double rm_session_probe_device(rm_session *s, double seconds);
/* The conversation so far. */
int  rm_session_messages(const rm_session *s, const rm_chat_msg **msgs);
/* How the last reply ended: 0 complete, RM_STOPPED_REPLY (stopped while
 * generating), RM_STOPPED_PROMPT (stopped while the prompt was processed;
 * the reply is empty and the state holds the prompt's complete passes). */
enum { RM_STOPPED_REPLY = 1, RM_STOPPED_PROMPT = 2 };
int  rm_session_last_interrupted(const rm_session *s);
/* How entry i of rm_session_messages' view ended (rm_conv_interrupted). */
int  rm_session_interrupted(const rm_session *s, int i);

/* ---- replies to a conversation given whole (engine/session/reply.c) ---- */

/* A server's clients resend the whole conversation with every request; a
 * reply is generated for a prompt the caller gives whole, and the state is
 * reused when the prompt extends the tokens it has consumed (the previous
 * prompt and its reply, when the client sends that reply back as it was
 * given). The session's own message list is neither used nor changed. */

/* How a prompt is read back (rm_prompt.mode). */
enum {
    RM_REPLY_ANSWER = 0,    /* a chat prompt; the reply starts as answer text */
    RM_REPLY_REASONING,     /* a chat prompt that opens the think channel */
    RM_REPLY_RAW,           /* no chat format: token bytes are the answer, up to
                             * end-of-message or [EOS] */
    RM_REPLY_TOOLS,         /* a chat prompt that opens the tools block (a forced
                             * tool choice): the reply starts as tool calls */
};

typedef struct rm_prompt {
    int32_t *ids;           /* malloc'd; rm_prompt_free */
    int n;
    int mode;               /* RM_REPLY_* */
    int gen_start;          /* where the generation prompt begins (n: none) */
    char *prime;            /* RM_REPLY_TOOLS: the block's text in the prompt (a named
                             * call's opening), malloc'd; NULL: none */
} rm_prompt;

/* The prompt of a JSON conversation (len bytes), the object that
 * rm_chat_render_json reads, in the session's chat format: OpenAI-style
 * messages with tool calls, tool results and reasoning_content, plus
 * "tools", "thinking", "thinking_effort", "tool_choice",
 * "response_format". These three only read the tokenizer, so any thread
 * may call them, also while another one generates on the session. */
int  rm_session_render(const rm_session *s, const char *conv_json, size_t len, rm_prompt *p, rm_err *err);
/* A raw prompt: text without a chat template (special-token strings stay
 * text), or token ids (each checked against the vocabulary). Empty prompts
 * are refused. */
int  rm_session_prompt_text(const rm_session *s, const char *text, size_t len, rm_prompt *p, rm_err *err);
int  rm_session_prompt_ids(const rm_session *s, const int32_t *ids, int n, rm_prompt *p, rm_err *err);
void rm_prompt_free(rm_prompt *p);

/* How a reply ended (rm_reply_info.finish). */
enum {
    RM_FINISH_STOP = 1,     /* the model ended its message (end-of-message or [EOS]) */
    RM_FINISH_LENGTH,       /* o->max_new tokens were generated */
    RM_FINISH_STOPPED,      /* *stop ended it, in the prompt or in the reply */
};

/* A reply's figures, as an API's usage reports them. */
typedef struct rm_reply_info {
    int prompt_tokens;      /* tokens of the prompt */
    int cached_tokens;      /* of those, not computed again: reused from the state */
    int restored_tokens;    /* of those, restored from the prefix cache or a snapshot */
    int restored_ram;       /* of those, from the prefix cache's RAM tier */
    double restore_s;       /* seconds the restore took */
    int kept, kept_ram;     /* the state the prompt replaced, kept first (rm_prompt_figures) */
    double keep_s;
    int completion_tokens;  /* tokens generated, the one that ended the message included */
    int reasoning_tokens;   /* of those, the ones before the answer text began (the
                             * think channel and the markers closing it); with no
                             * answer text, up to the last reasoning text */
    int finish;             /* RM_FINISH_* */
} rm_reply_info;

/* Generates the reply to p, streaming text and figures through ev as
 * rm_session_turn does (o->think is not used: p says whether the reply
 * starts as reasoning). *stop is polled as in rm_session_turn. info (may
 * be NULL) receives the figures, also when stopped. Returns 0 (also when
 * stopped) or -1 on error. */
int  rm_session_reply(rm_session *s, const rm_prompt *p, const rm_gen_opts *o, const rm_gen_events *ev,
                      volatile int *stop, rm_reply_info *info, rm_err *err);
/* The tokens the state stands for after a reply: its prompt, then the
 * reply's own tokens (the last one included). Valid until the session is
 * used again. */
const int32_t *rm_session_tokens(const rm_session *s, int *n);

/* ---- snapshots: a conversation's state on disk (engine/session/snapshot.c) */

/* A snapshot holds what the model has consumed of a conversation — its
 * token ids, the KDA recurrent and convolution states, the MLA latent cache,
 * the next-token logits, the speculation estimates and the router choices
 * of every position — so that a conversation goes on
 * after a restart exactly (bit for bit) as it would have without one,
 * without computing it again. README.md's "Snapshots" has the format. A
 * snapshot is used only when it was made by this model (its fingerprint),
 * is whole (every size, and its CRC) and its tokens are a prefix of the
 * conversation as rendered now; otherwise the conversation is computed
 * again at the next turn, and the reason is reported. */

/* The snapshot that goes with a transcript: PATH with a final ".jsonl"
 * replaced by ".state", else PATH + ".state". -1 if it does not fit. */
int rm_snapshot_path(const char *transcript, char *out, size_t cap);

/* What a load did with the state. */
typedef struct rm_resume {
    int found;          /* there was a snapshot (restored, or refused for r->why) */
    int restored;       /* tokens of the conversation restored from the snapshot; 0 none */
    int ctx;            /* tokens of the conversation as rendered (without a generation prompt) */
    uint64_t bytes;     /* the snapshot's size, when there was one */
    double seconds;     /* the load's time (rm_now), transcript and snapshot */
    char why[1024];     /* when nothing was restored: why, naming the snapshot */
} rm_resume;

/* The transcript at PATH (rm_session_save) and the snapshot beside it
 * (rm_snapshot_path). The transcript is written first: returns 0 when both
 * were written, 1 when the transcript was but its snapshot was not (disk
 * full, ...: the message says why; the previous snapshot is left whole, and
 * a later load uses it as far as it fits the conversation, or refuses it),
 * -1 when nothing was written. */
int rm_session_save_with_state(rm_session *s, const char *path, rm_err *err);
/* Loads the transcript at PATH and its snapshot. When the transcript
 * cannot be read, -1 and nothing changes. Otherwise the conversation is
 * replaced (0), and the state comes from the snapshot when it can be used
 * (r->restored tokens); when it cannot (none, damaged, other model, other
 * conversation), r->restored is 0, r->why says why, and the next turn
 * computes the conversation again. */
int rm_session_load_with_state(rm_session *s, const char *path, rm_resume *r, rm_err *err);

/* ---- transcripts (engine/session/transcript.c) ------------------------- */

/* A conversation as JSONL, one object per line: {"role", "content"}, plus
 * "reasoning_content" when a message has one and "interrupted": true for a
 * reply stopped before its end (with "stopped_in": "prompt" when it was
 * stopped while the prompt was processed: interrupted[i] ==
 * RM_STOPPED_PROMPT); the system prompt (when not NULL) is the
 * first line, role "system". Roles are system, user, assistant or tool;
 * msgs[i].name is not written. interrupted may be NULL (none). Text beyond
 * ASCII is written as JSON \u escapes; bytes that are not valid UTF-8 are
 * stored as U+FFFD. The file is replaced atomically (rm_write_atomic, mode
 * 0600 when new: it holds a conversation). */
int rm_transcript_save(const char *path, const rm_chat_msg *msgs, const int *interrupted, int n,
                       const char *system, rm_err *err);

/* A transcript read back; every string is owned by it. */
typedef struct rm_transcript {
    char *system;               /* the system prompt, or NULL */
    rm_chat_msg *msgs;          /* the other messages, in order */
    int *interrupted;           /* [n]: RM_STOPPED_REPLY or RM_STOPPED_PROMPT for a reply stopped before its end */
    int n;
} rm_transcript;
/* Reads what rm_transcript_save writes (or a hand-written file of the same
 * form): blank lines are skipped and CRLF line ends accepted; "system"
 * lines before the first other message set the system prompt (the last one
 * wins), later ones are messages; "reasoning_content" may be null. On any
 * bad line the load fails with "PATH:LINE: what is wrong" and *t is left
 * empty. PATH must be a regular file (a FIFO or a folder is refused). */
int  rm_transcript_load(const char *path, rm_transcript *t, rm_err *err);
/* The same from len bytes of text in memory; name stands for PATH. */
int  rm_transcript_parse(const char *text, size_t len, const char *name, rm_transcript *t, rm_err *err);
void rm_transcript_free(rm_transcript *t);

/* ---- conversations (engine/session/conv.c) ---------------------------- */

/* The one conversation type: the session's, the chat's synthetic and
 * endpoint sources', the snapshot reader's. The system prompt, the
 * messages with their reasoning and how each reply ended, two views of it
 * (everything, for the chat and /save; the context the model is given, for
 * prompts and requests) and the transcript format. Zero-initialise to use. */
typedef struct rm_conv_msg {
    char *role, *content;
    char *reasoning;            /* NULL: none */
    int   interrupted;          /* 0, RM_STOPPED_REPLY or RM_STOPPED_PROMPT */
} rm_conv_msg;

typedef struct rm_conv {
    char        *system;        /* NULL: none */
    rm_conv_msg *msgs;
    int          n, cap;
    rm_chat_msg *view;          /* the views', kept as large as the messages need */
    int          vcap;
} rm_conv;

/* Appends copies of the strings; -1 out of memory, the conversation as it
 * was. */
int  rm_conv_push(rm_conv *c, const char *role, const char *content, const char *reasoning, int interrupted);
/* Drops the last message, if any. */
void rm_conv_pop(rm_conv *c);
/* Drops every message; the system prompt stays (as with rm_session_clear). */
void rm_conv_clear(rm_conv *c);
/* text NULL or "": no system prompt. -1 out of memory, unchanged. */
int  rm_conv_set_system(rm_conv *c, const char *text);
/* The system prompt, then the messages; valid until the next change. */
int  rm_conv_view(rm_conv *c, const rm_chat_msg **out);
/* The same without what later turns do not give the model: a reply
 * stopped while its prompt was processed, and the user message it
 * answered. A stop in the prompt says "do not compute this"; both messages
 * stay in the conversation, on screen and in transcripts, and the next turn
 * goes on from the state before them instead of computing the stopped
 * prompt again. -1 out of memory, else the count. */
int  rm_conv_context(rm_conv *c, const rm_chat_msg **out);
/* How the last reply ended (0 when the last message is not a reply). */
int  rm_conv_last_interrupted(const rm_conv *c);
/* How entry i of rm_conv_view's view ended (0 for the system prompt, a
 * message that is not a reply, or i out of range). */
int  rm_conv_interrupted(const rm_conv *c, int i);
int  rm_conv_save(const rm_conv *c, const char *path, rm_err *err);
/* Replaces the conversation, system prompt included, only when the whole
 * file was read; otherwise nothing changes and *err says why. */
int  rm_conv_load(rm_conv *c, const char *path, rm_err *err);
void rm_conv_free(rm_conv *c);

/* ---- synthetic checkpoints and benchmarks ------------------------------ */

/* What rm_synth_k3 will write (dir is created if need be): layers <= 0:
 * 3; experts <= 0: sized to exceed physical RAM where the disk allows,
 * never more than half of the free disk (refused past it). */
typedef struct rm_synth_info {
    int layers, experts;
    uint64_t bytes;             /* the whole checkpoint */
    uint64_t expert_bytes;      /* of which routed experts */
    uint64_t disk_free, ram;
} rm_synth_info;
int rm_synth_plan(const char *dir, int layers, int experts, rm_synth_info *plan, rm_err *err);
/* Writes that K3-format checkpoint with random weights at K3 widths into
 * dir. progress (may be NULL) is called after each shard with its name and
 * the fraction done. *stop (may be NULL) becoming non-zero ends it within
 * one 8 MB write: the shard being written is removed (finished ones stay)
 * and -1 comes back. */
int rm_synth_k3(const char *dir, int layers, int experts, uint64_t seed,
                void (*progress)(void *ud, const char *shard, double frac), void *ud, volatile int *stop,
                rm_err *err);

/* The storage figures of the tokens fed since the last call (bytes read for
 * spine and experts, cache hits, bandwidth, phase times), then reset. */
void rm_model_take_stats(rm_model *m, rm_token_stats *st);
/* Measures the device's random-read bandwidth at the engine's block size
 * (one expert) and queue depth (the expert reader threads) by reading random
 * experts of the model for about `seconds`. Returns GB/s, or -1. */
double rm_bench_device(rm_model *m, double seconds, int *block_bytes, int *queue_depth, rm_err *err);
/* Measures the device's rate for the spine as the stream ring reads it: the
 * model's spine in order, in the ring's pieces and at its queue depth, for
 * about `seconds` (what the forecast's in-order probe predicts). Read-ahead
 * in flight is awaited first. Returns GB/s, or -1. */
double rm_bench_spine(rm_model *m, double seconds, rm_err *err);
/* Storage bytes one read of expert `expert` of `layer` takes (its aligned
 * spans), 0 for a layer without experts. */
uint64_t rm_model_expert_read_bytes(const rm_model *m, int layer, int expert);
/* Waits until the expert cache's memory is faulted in (a background thread
 * at the lowest priority touches it from the start, so that reads do not
 * pay the first touch); returns the seconds waited. For benchmarks that
 * measure the prompt path rather than the first touch of the budget's RAM
 * (on the development machine's VM, 10 GB of it took 9-18 s of CPU). */
double rm_model_wait_memory(rm_model *m);

/* ---- forecast: how fast a model would run here (engine/tools/forecast.c) */

/* A model's shapes as the forecast sees them: Kimi K3 or Kimi-Linear-48B
 * from their published configs, or a checkpoint's config.json (the index
 * gives its size on disk). Nothing is read but the config. */
typedef struct rm_fmodel rm_fmodel;
/* which: "k3" or "kimi-linear" */
int  rm_fmodel_builtin(const char *which, rm_fmodel **out, rm_err *err);
int  rm_fmodel_open(const char *dir, rm_fmodel **out, rm_err *err);
void rm_fmodel_free(rm_fmodel *f);

typedef struct rm_fmodel_info {
    char name[256];                 /* "Kimi K3", "Kimi-Linear-48B-A3B" or the folder */
    int layers, moe_layers, experts, topk, expert_mxfp4;
    uint64_t spine_bytes;           /* the planner's units: every matrix a token uses */
    uint64_t largest_unit;          /* a stream ring holds two of these */
    uint64_t expert_slot_bytes;     /* one read of one routed expert */
    uint64_t all_expert_bytes;      /* every routed expert */
    uint64_t disk_bytes;            /* all shards (full mode) */
    uint64_t stream_disk_bytes;     /* what stream mode keeps locally: everything but the experts */
    uint64_t min_budget;            /* the smallest RAM budget the engine accepts */
    uint64_t spine_budget;          /* the smallest budget with the whole spine resident */
} rm_fmodel_info;
const rm_fmodel_info *rm_fmodel_get_info(const rm_fmodel *f);

/* This machine, as the forecast measures it (about 15 s in all). */
/* The row counts the prefill gemms are measured at (16, 64 and 256: a
 * pass's products run at its own, and an expert at the rows that chose it). */
#define RM_GEMM_POINTS 3
extern const int rm_gemm_rows[RM_GEMM_POINTS];

typedef struct rm_machine {
    double disk_gbps;               /* random O_DIRECT reads of expert-sized blocks, queue_depth deep */
    uint64_t disk_block;
    int disk_qd, disk_direct;       /* direct: 0 when the filesystem refused O_DIRECT */
    double spine_gbps;              /* the same file read in order in 2 MB pieces, as the spine streams */
    double mem_gbps;                /* DRAM read ceiling, all compute threads */
    double gemv_bf16_gbps;          /* decode: the bf16 gemv, GB/s of weights from DRAM */
    double gemv_expert_gbps;        /* decode: the experts' gemv (MXFP4 or bf16) */
    double gemm_bf16_gflops;        /* prefill: the bf16 gemm at T = 256 */
    double gemm_expert_gflops;      /* prefill: the experts' gemm at T = 256 */
    double gemm_bf16_best_gflops, gemm_expert_best_gflops;  /* the same windows' best: bench's ceiling figure */
    /* the gemms at the row counts of rm_gemm_rows (the last is the two above) */
    double gemm_bf16_by_rows[RM_GEMM_POINTS], gemm_expert_by_rows[RM_GEMM_POINTS];
    /* prefill's work beside the products, by the engine's own code at the
     * model's shapes: the GLU (s per element, all threads), a KDA layer's
     * convolution and recurrence (s per position), an MLA layer's per-head
     * attention (s per position and per (position, context row) score),
     * and the first touch of fresh memory (the pass's buffers) */
    double glu_s_per_element, kda_s_per_token, mla_s_per_token, mla_s_per_score, fresh_gbps;
    int threads;                    /* compute threads */
    uint64_t ram_total, ram_available, disk_free;
    char disk_dir[1024];            /* where the disk was measured */
    /* the GPU products would go to (gpu 0: none, gpu_why says why) */
    int gpu, gpu_min_tokens;        /* rows a product of streamed weights needs to go to it */
    char gpu_name[96], gpu_why[160];
    uint64_t gpu_vram_budget;       /* for weights (the spine placed there) */
    double gpu_fma_gflops, gpu_read_gbps, gpu_h2d_gbps;    /* its ceilings, and pinned host-to-device copies */
    double gpu_gemv_bf16_gbps, gpu_gemv_expert_gbps;       /* decode: one position, weights in VRAM */
    double gpu_gemm_bf16_gflops, gpu_gemm_expert_gflops;   /* prefill: 256 positions */
    double seconds;                 /* the measurement's time */
} rm_machine;

/* Measures the machine for model f, the disk in the filesystem of dir (a
 * probe file of expert-sized blocks written there and removed). The
 * kernels' figures are their median windows: a forecast is of a long run
 * on cores shared as they are now. `seconds` is the time for each figure
 * (0: the default, 1.5). */
int rm_machine_probe(const rm_fmodel *f, const char *dir, double seconds, rm_machine *mc, rm_err *err);

/* What resource bounds a figure (rm_prediction.*_bound). */
enum { RM_BOUND_STORAGE = 0, RM_BOUND_MEMORY, RM_BOUND_COMPUTE };
const char *rm_bound_name(int bound);

/* The forecast for one RAM budget, from the planner the engine uses. */
typedef struct rm_prediction {
    double ram_gb;
    int fits;                       /* 0: below min_budget (nothing else is filled) */
    uint64_t spine_resident, ring, expert_cache;
    int cache_slots, units_streamed, spine_all_resident;
    double hit_rate;                /* routed experts found in the cache (routes taken as uniform) */
    /* decode, one token */
    double decode_s;
    double gb_spine_per_token, gb_experts_per_token;
    double decode_io_s, decode_mem_s;   /* its storage and its DRAM/gemv seconds */
    int decode_bound;
    /* a prompt of prompt_tokens */
    int prompt_tokens, prefill_chunk, prefill_passes;
    double prefill_s;               /* for prompt_tokens */
    double prefill_s_per_1k_tokens;
    double prefill_gb;              /* read from storage for it */
    double prefill_io_s, prefill_compute_s;
    double prefill_other_s;         /* of prefill_compute_s: the work beside the products */
    int prefill_bound;
    uint64_t overhead, peak_rss;    /* RAM beside the budget (4096-token context); their sum */
    uint64_t spine_vram;            /* with a GPU: spine bytes placed in VRAM */
} rm_prediction;

/* Predicts decode and the prefill of a prompt of prompt_tokens (0: 1000)
 * of f on mc under a budget of ram_gb (0: the engine's default, 60% of the
 * available RAM). Returns -1 (p->fits 0) when the budget is below the
 * model's minimum. With mc NULL it only plans (what is resident, the cache,
 * the passes): a budget is judged before the machine is measured. */
int rm_forecast(const rm_fmodel *f, const rm_machine *mc, double ram_gb, int prompt_tokens, rm_prediction *p);

/* ---- stream mode: models set up from a URL (engine/remote/) ------------ */

/* Progress of a download: `what` names the phase ("files", "headers",
 * "spine", "shards", "experts"); bytes done so far and in all. Called from
 * worker threads, one call at a time. */
typedef void (*rm_progress_fn)(void *ud, const char *what, uint64_t done, uint64_t total);

/* The default source, https://huggingface.co/moonshotai/Kimi-K3/resolve/main,
 * with the host from $REMORA_HF_HOST (a host or an origin such as
 * http://127.0.0.1:8080) and the path from $REMORA_HF_PATH when set. */
void rm_default_source(char *buf, size_t cap);

typedef enum { RM_SETUP_AUTO, RM_SETUP_FULL, RM_SETUP_STREAM } rm_setup_mode;

typedef struct rm_setup_opts {
    const char *source;     /* base URL; NULL: the one DIR was set up from, else the default */
    rm_setup_mode mode;     /* AUTO: full when the free disk allows */
    int connections;        /* downloads at once; 0 = 8 */
} rm_setup_opts;

typedef struct rm_setup_result {
    int full;                   /* 1: every byte was downloaded; 0: stream mode */
    char source[1024];
    uint64_t model_bytes;       /* all shards */
    uint64_t spine_bytes;       /* every non-expert byte, headers included */
    uint64_t full_needs;        /* bytes not local yet (what full mode would still fetch) */
    uint64_t disk_free;         /* free bytes in DIR at the decision */
    uint64_t downloaded;        /* bytes this call fetched */
    int rebuilt;                /* damaged metadata rebuilt: 1 source.json, 2 manifest.json (bits) */
} rm_setup_result;

/* Sets DIR up from a source URL: config, tokenizer and index files, every
 * shard's header (range requests), local shards as sparse files of full size
 * holding the headers and the spine, and DIR/.remora/source.json, which puts
 * the model in stream mode (experts not on disk are fetched on first use).
 * Full mode downloads the experts into the shards as well. Resumable: run it
 * again after an interruption. source.json records every file's ETag; a file
 * that changed upstream since (or during) an earlier run is started over.
 * A damaged source.json or manifest.json is rebuilt. err->kind tells bad
 * input (RM_ERR_INPUT) from a download or disk failure. */
int rm_setup(const char *dir, const rm_setup_opts *o, rm_progress_fn fn, void *ud, rm_setup_result *res,
             rm_err *err);

/* How much of the routed-expert pool is on local disk. */
typedef struct rm_pool_status {
    int stream;                 /* 1: missing experts are fetched from `source` */
    char source[1024];
    int experts_total, experts_local;   /* local: in the shards or the disk cache */
    uint64_t bytes_total, bytes_local;
    uint64_t disk_free;         /* free bytes in the model directory */
} rm_pool_status;

/* For any open model (a local model reports everything local, stream 0). */
int rm_model_pool_status(const rm_model *m, rm_pool_status *st, rm_err *err);

typedef struct rm_fetch_opts {
    int first_layer, last_layer;    /* inclusive, 0-based model layers; -1: from the first / to the last */
    int connections;                /* downloads at once; 0 = 8 */
    int dry_run;                    /* only fill the status */
} rm_fetch_opts;

/* Completes the local pool of a stream-mode model in DIR: every missing
 * expert of the layers goes into the disk cache. *st (may be NULL) receives
 * the status before fetching. Resumable: cached experts are skipped, and
 * leftovers of an interrupted fetch are removed. */
int rm_pool_fetch(const char *dir, const rm_fetch_opts *o, rm_pool_status *st, rm_progress_fn fn, void *ud,
                  rm_err *err);

/* ---- an OpenAI-compatible endpoint's HTTP (engine/remote/endpoint.c) --- */

/* Whether host (a URL's or a Host header's, a port and IPv6 brackets
 * allowed) names a loopback address: localhost, *.localhost, 127.0.0.0/8 or
 * ::1. The one rule of the endpoint client (where an API key may go in
 * clear, what skips a proxy) and of `remora serve` (which Host and Origin
 * headers a loopback bind answers). */
int rm_host_is_loopback(const char *host);

/* The transfer under the chat's endpoint source and `remora run
 * --endpoint`: one kept-alive connection to a server, requests run on the
 * calling thread and polled every 50 ms for the stop flag and the stall
 * clock. The API key is never printed and goes in an Authorization header
 * only to the endpoint's own host and port, over HTTPS or to a loopback
 * address; redirects are followed here (up to 5, never from https to
 * http), so the header is left out of every request to another host. */
typedef struct rm_endpoint rm_endpoint;

/* Opens url (an API base …/v1, a server's root, where /v1 is added, or the
 * chat URL itself): {base}/chat/completions and {base}/models. timeout:
 * seconds without a byte before a request fails (<= 0: 300). Returns 0,
 * -2 for a bad URL or a key that would cross the network in clear text
 * (bad input), or -1 (libcurl could not start). Sends nothing yet. */
int  rm_endpoint_open(const char *url, const char *api_key, double timeout, rm_endpoint **out, rm_err *err);
void rm_endpoint_free(rm_endpoint *e);      /* the key is wiped */
const char *rm_endpoint_chat_url(const rm_endpoint *e);
const char *rm_endpoint_models_url(const rm_endpoint *e);
const char *rm_endpoint_host(const rm_endpoint *e);
const char *rm_endpoint_port(const rm_endpoint *e);
int  rm_endpoint_has_key(const rm_endpoint *e);

/* What one request got back. */
typedef struct rm_http_reply {
    long status;
    rm_buf body;                /* a reply other than 2xx: its first 256 KiB (for its message) */
    char retry_after[64];       /* the Retry-After header as sent ("" when none) */
    double retry_after_s;       /* its seconds; -1 when none or a date */
    char content_type[128];
    uint64_t bytes;             /* body bytes so far (live while the sink runs) */
} rm_http_reply;

/* One request to url (body NULL: GET for JSON; else a POST of the JSON
 * body that asks for an event stream). The body of a 2xx reply goes to
 * sink as it arrives (non-zero ends the transfer, which is not an error);
 * timeout > 0 overrides the endpoint's for this request. Returns 0 when a
 * reply came (r->status says which), 1 when *stop was set, -1 on a failure
 * that names the URL (DNS, connection, TLS, no answer in time, a stall,
 * too many or refused redirects). r is reset first; the caller frees
 * r->body. */
int  rm_endpoint_request(rm_endpoint *e, const char *url, const char *body, double timeout, volatile int *stop,
                         int (*sink)(void *ud, const char *p, size_t n), void *ud, rm_http_reply *r,
                         rm_err *err);

/* ---- kernels (benchmarks and self-checks) ------------------------------ */

/* Runs the kernel benchmark of `remora bench-kernels`, printing to stdout:
 * the FMA peak and the read bandwidth on 1 and nthreads threads, then the
 * tables asked for (RM_BENCH_*), the best of `seconds`-long windows per
 * figure. The options are app/cmd_bench_kernels.c's. 0, or 1 when out of
 * memory. */
enum { RM_BENCH_GEMV = 1, RM_BENCH_GEMM = 2 };
int rm_bench_kernels(int nthreads, double seconds, int tables);
/* The gemm kernel's rate in GFLOP/s over T positions of a rows x cols
 * matrix (MXFP4 when mxfp4, else bf16), the best of ten windows in about
 * `seconds`, on the compute pool as it is set; -1 when it cannot run. */
double rm_bench_gemm(int mxfp4, int T, int rows, int cols, double seconds);
/* The memory read ceiling in GB/s (a 1 GiB buffer, all compute threads):
 * the best window of about `seconds`, or the median one with `typical`;
 * -1 when it cannot run. */
double rm_bench_memory(double seconds, int typical);

#endif
