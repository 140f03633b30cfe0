/* reply.c — replies to a prompt the caller gives whole: a JSON conversation
 * rendered in the model's chat format, raw text or token ids
 * (rm_session_render, rm_session_prompt_text/ids), and the reply to it with
 * the figures an API's usage reports (rm_session_reply).
 *
 * `remora serve` is the caller: its clients resend the whole conversation
 * with every request, so the session keeps no message list here; the
 * prefill of generate.c compares the new prompt with the tokens the state
 * has consumed and feeds only what extends them. The prompt tokens that
 * were not computed again are the usage's cached tokens.
 */
#include <stdlib.h>
#include <string.h>
#include "session/session.h"
#include "session/generate.h"
#include "text/template.h"

int rm_session_render(const rm_session *s, const char *conv_json, size_t len, rm_prompt *p, rm_err *err)
{
    memset(p, 0, sizeof *p);
    chat_render_info info;
    int n = chat_render_json(s->tok, s->fmt, conv_json, len, &info, &p->ids, err);
    if (n < 0) return -1;
    if (n == 0) {
        rm_prompt_free(p);
        return rm_errf(err, "chat: the conversation renders to no tokens");
    }
    p->n = n;
    p->gen_start = info.gen_start;
    p->mode = info.opens_tools ? RM_REPLY_TOOLS : info.opens_think ? RM_REPLY_REASONING : RM_REPLY_ANSWER;
    if (info.opens_tools && !(p->prime = strdup(info.prime))) {
        rm_prompt_free(p);
        return rm_errf(err, "out of memory");
    }
    return 0;
}

int rm_session_prompt_text(const rm_session *s, const char *text, size_t len, rm_prompt *p, rm_err *err)
{
    memset(p, 0, sizeof *p);
    int n = rm_tokenizer_encode(s->tok, text, len, 0, &p->ids, err);
    if (n < 0) return -1;
    if (n == 0) {
        rm_prompt_free(p);
        return rm_errf(err, "the prompt is empty");
    }
    p->n = p->gen_start = n;
    p->mode = RM_REPLY_RAW;
    return 0;
}

int rm_session_prompt_ids(const rm_session *s, const int32_t *ids, int n, rm_prompt *p, rm_err *err)
{
    memset(p, 0, sizeof *p);
    if (n <= 0) return rm_errf(err, "the prompt is empty");
    const int V = s->m->cfg.vocab_size;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return rm_errf(err, "token id %d at position %d is outside the vocabulary (0..%d)", ids[i], i, V - 1);
    if (!(p->ids = malloc((size_t)n * sizeof *p->ids))) return rm_errf(err, "out of memory");
    memcpy(p->ids, ids, (size_t)n * sizeof *ids);
    p->n = p->gen_start = n;
    p->mode = RM_REPLY_RAW;
    return 0;
}

void rm_prompt_free(rm_prompt *p)
{
    free(p->ids);
    free(p->prime);
    memset(p, 0, sizeof *p);
}

/* Between the caller's events and the generation loop: finds where the
 * answer begins. A token's text reaches on_text before its record reaches
 * on_stats (the token that ends the message has no text, nor a record
 * after a plain step), so while text arrives, ntok is its token's index. */
typedef struct reply_ctx {
    const rm_gen_events *ev;
    rm_reply_info info;
    int ntok;                   /* token records so far */
    int first_answer;           /* index of the first token with answer text, or -1 */
    int last_reasoning;         /* index of the last token with reasoning text, or -1 */
} reply_ctx;

static void reply_text(void *ud, int channel, const char *text, size_t len)
{
    reply_ctx *r = ud;
    if (channel == RM_CHAN_ANSWER) {
        if (r->first_answer < 0) r->first_answer = r->ntok;
    } else {
        r->last_reasoning = r->ntok;
    }
    if (r->ev && r->ev->on_text) r->ev->on_text(r->ev->ud, channel, text, len);
}

static void reply_stats(void *ud, const rm_token_stats *st)
{
    reply_ctx *r = ud;
    if (st->kind == RM_REC_PROMPT) {
        r->info.prompt_tokens = st->prompt.ctx;
        r->info.cached_tokens = st->prompt.reused + st->prompt.restored;
        r->info.restored_tokens = st->prompt.restored;
        r->info.restored_ram = st->prompt.restored_ram;
        r->info.restore_s = st->prompt.restore_s;
        r->info.kept = st->prompt.kept;
        r->info.kept_ram = st->prompt.kept_ram;
        r->info.keep_s = st->prompt.keep_s;
    } else if (st->kind == RM_REC_TOKEN) {
        r->ntok++;
    }
    if (r->ev && r->ev->on_stats) r->ev->on_stats(r->ev->ud, st);
}

static void reply_tool(void *ud, const rm_tool_event *e)
{
    reply_ctx *r = ud;
    r->ev->on_tool(r->ev->ud, e);
}

int rm_session_reply(rm_session *s, const rm_prompt *p, const rm_gen_opts *o, const rm_gen_events *ev,
                     volatile int *stop, rm_reply_info *info, rm_err *err)
{
    if (!p || p->n <= 0) return rm_errf(err, "the prompt is empty");
    reply_ctx r = { ev, { 0 }, 0, -1, -1 };
    rm_gen_events mine = { &r, reply_text, reply_stats, ev && ev->on_tool ? reply_tool : NULL };
    gen_end end;
    int rc = session_generate(s, p->ids, p->n, p->mode != RM_REPLY_RAW, p->mode == RM_REPLY_REASONING,
                              p->mode == RM_REPLY_TOOLS ? (p->prime ? p->prime : "") : NULL, 0, o, &mine, stop, NULL,
                              &end, err);
    r.info.completion_tokens = end.tokens;
    r.info.reasoning_tokens = r.first_answer >= 0 ? r.first_answer : r.last_reasoning + 1;
    r.info.finish = end.interrupted ? RM_FINISH_STOPPED : end.message ? RM_FINISH_STOP : RM_FINISH_LENGTH;
    if (info) *info = r.info;
    return rc;
}

const int32_t *rm_session_tokens(const rm_session *s, int *n)
{
    *n = s->nseq;
    return s->seq;
}
