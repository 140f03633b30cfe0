/* cmd_bench_tokenizer.c — `remora bench-tokenizer`: how fast the tokenizer
 * encodes, in MB/s on one thread.
 *
 * The text is built in memory from sentences in many scripts (Latin with
 * diacritics, Cyrillic, Greek, Han, kana, Hangul, Arabic, Hebrew, Devanagari,
 * Thai), code, numbers, emoji and whitespace runs, picked by a fixed
 * pseudo-random sequence so every run encodes the same bytes. It is encoded
 * several times; the best pass is reported (others include cache warm-up and
 * noise from other processes).
 */
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "opts.h"
#include "engine.h"

static const char *const samples[] = {
    "The quick brown fox jumps over the lazy dog. It's what we've all typed a hundred times. ",
    "Zażółć gęślą jaźń — Nguyễn Văn An, straße, Ærøskøbing, l'été à Paris. ",
    "Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю. ",
    "Γειά σου Κόσμε· Καλημέρα, τι κάνεις; ",
    "我们今天去公园散步，天气非常好。人工智能正在改变世界，大语言模型可以写代码。",
    "東京は日本の首都です。ひらがなとカタカナと漢字を混ぜて書きます。",
    "안녕하세요 세계! 한국어 문장을 토큰화합니다. ",
    "مرحبا بالعالم، هذه جملة عربية للاختبار. ",
    "שלום עולם, זה משפט בעברית. ",
    "नमस्ते दुनिया, यह एक परीक्षण वाक्य है। ",
    "สวัสดีชาวโลก นี่คือประโยคภาษาไทย ",
    "def fibonacci(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
    "int main(void) { printf(\"%d\\n\", 42); return 0; }\n",
    "{\"id\": 12345, \"values\": [3.14159, 2.71828, -1e-05], \"ok\": true}\n",
    "Invoice 2025-07-14T09:30:00Z: $1,234,567.89 due; call +7 (999) 123-45-67. ",
    "I ❤️ pizza 🍕 👍🏽 🇫🇷 👨‍👩‍👧‍👦 🚀🚀 ",
    "\n\n    indented line\r\n\t\ttabs and  double  spaces   \n",
};
#define NSAMPLES (sizeof samples / sizeof samples[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: remora bench-tokenizer --tokenizer DIR [--mb N] [--passes P]\n"
               "Encodes N MB (default 16) of mixed-script text P times (default 3) on one\n"
               "thread and prints the best throughput in MB/s.\n");
}

int cmd_bench_tokenizer(int argc, char **argv)
{
    const char *dir = NULL;
    double mb = 16;
    int passes = 3;
    enum { O_TOKENIZER = 256, O_MB, O_PASSES, O_HELP };
    static const struct option opts[] = {
        { "tokenizer", required_argument, 0, O_TOKENIZER }, { "mb", required_argument, 0, O_MB },
        { "passes", required_argument, 0, O_PASSES }, { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 } };
    int c;
    opterr = 0;
    while ((c = opts_next("bench-tokenizer", argc, argv, opts, NULL)) >= 0) {
        switch (c) {
        case O_TOKENIZER: dir = optarg; break;
        case O_MB: if (opts_real_arg("bench-tokenizer", "mb", optarg, 0, 1024, 1, &mb)) return 2; break;
        case O_PASSES: if (opts_int_arg("bench-tokenizer", "passes", optarg, 1, 1000000, &passes)) return 2; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) { usage(stderr); return 2; }
    if (!dir || mb <= 0 || mb > 1024 || passes < 1) {
        fprintf(stderr, "remora bench-tokenizer: need --tokenizer DIR, 0 < --mb <= 1024, --passes >= 1\n");
        return 2;
    }
    rm_err err;
    rm_tokenizer *t;
    if (rm_tokenizer_open(dir, &t, &err)) {
        fprintf(stderr, "remora bench-tokenizer: %s\n", err.msg);
        return 2;
    }
    size_t len = (size_t)(mb * 1024 * 1024), o = 0;
    char *text = malloc(len);
    if (!text) {
        fprintf(stderr, "remora bench-tokenizer: out of memory\n");
        rm_tokenizer_free(t);
        return 1;
    }
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    while (o < len) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const char *s = samples[(rng >> 33) % NSAMPLES];
        size_t l = strlen(s);
        if (l > len - o) l = len - o;
        memcpy(text + o, s, l);
        o += l;
    }
    double best = 0;
    int ntok = 0;
    for (int p = 0; p < passes; p++) {
        int32_t *ids;
        double t0 = rm_now();
        ntok = rm_tokenizer_encode(t, text, len, 0, &ids, &err);
        double dt = rm_now() - t0;
        if (ntok < 0) {
            fprintf(stderr, "remora bench-tokenizer: %s\n", err.msg);
            free(text);
            rm_tokenizer_free(t);
            return 1;
        }
        free(ids);
        double rate = len / 1e6 / dt;
        printf("pass %d: %.3f s, %.1f MB/s\n", p + 1, dt, rate);
        if (rate > best) best = rate;
    }
    printf("tokenizer: %.1f MB/s (best of %d) encoding %.1f MB of mixed-script text, "
           "%d tokens, %.2f bytes/token, vocabulary %d\n",
           best, passes, len / 1e6, ntok, (double)len / ntok, rm_tokenizer_vocab(t));
    free(text);
    rm_tokenizer_free(t);
    return 0;
}
