/* fuzz_chat_stream.c — libFuzzer target for the streaming reasoning/answer
 * splitter. The first byte picks the format, the starting channel and
 * whether tool calls are taken (then checked as they come); each
 * following pair of bytes is one generated id (including out-of-range ids).
 * Every piece of text handed out must be valid UTF-8 on a valid channel, and
 * once the splitter reports the end of the message it must keep doing so. */
#include "fuzz_common.h"

static rm_tokenizer *tok, *tok_im;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    tok = fuzz_tokenizer(0);
    tok_im = fuzz_tokenizer(1);
    return 0;
}

static void on_text(void *ud, int chan, const char *s, size_t n)
{
    if ((chan != RM_CHAN_REASONING && chan != RM_CHAN_ANSWER) || n == 0) abort();
    check_utf8(s, n);
}

/* Tool-call events: valid kinds, whole UTF-8 text. */
static void on_tool(void *ud, const rm_tool_event *e)
{
    if (e->kind < RM_TOOL_BEGIN || e->kind > RM_TOOL_BAD || e->index < 0) abort();
    if (e->len) check_utf8(e->text, e->len);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    int im = data[0] & 1;
    const rm_tokenizer *t = im ? tok_im : tok;
    rm_chat_stream *s = rm_chat_stream_new(t, im ? RM_CHAT_IM : RM_CHAT_XTML, (data[0] >> 1) & 1,
                                           on_text, NULL);
    if (!s) abort();
    if ((data[0] >> 2) & 1) rm_chat_stream_on_tool(s, on_tool, NULL);
    int vocab = rm_tokenizer_vocab(t), ended = 0;
    for (size_t i = 1; i + 1 < size; i += 2) {
        int32_t id = (int32_t)((data[i] << 8 | data[i + 1]) % (vocab + 8)) - 4;
        int r = rm_chat_stream_feed(s, id);
        if (ended && !r) abort();
        ended |= r;
    }
    rm_chat_stream_finish(s);
    rm_chat_stream_free(s);
    return 0;
}
